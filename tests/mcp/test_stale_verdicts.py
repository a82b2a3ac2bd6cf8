"""The MCP tools never trust a stored pass given by another version of the verifier
(adversary round 2, "store trust"), and `export` verifies the bytes it writes.

A run directory may hold verdicts of an older verifier that a soundness fix would now refuse;
evolve re-verifies them (its chain of proofs checks ``VERIFIER_VERSION``, its final check
verifies again).  Here a rejected candidate's row is rewritten as an older verifier's accept.
"""

from __future__ import annotations

import json
import pathlib
import sqlite3

from asmevo.mcp.session import Session
from asmevo.verify import VERIFIER_VERSION

EX = pathlib.Path(__file__).resolve().parents[2] / "examples"
SUB = {"edits": [{"from": 17, "to": 18, "asm": ["v_sub_f32_e32 v2, v6, v7"]}]}


def _session(run_dir):
    s = Session(str(run_dir))
    s.load_kernel(str(EX / "vadd_f32.co"), str(EX / "vadd_f32.json"))
    return s


def _forge_old_accept(s: Session, h: str) -> None:
    """Rewrite ``h``'s row as an older verifier's accept, with the cycles the timing model
    gives it (so only a verifier can tell)."""
    from asmevo.evolve.score import Scorer
    lin = s.lineages["k1"]
    m, name, _, _ = s._find(h)
    cycles = Scorer(name, s.kernels["k1"].harness).score(m).cycles
    db = sqlite3.connect(lin.run.store.path)
    v = json.loads(db.execute("SELECT verdict FROM candidates WHERE hash=?", (h,)).fetchone()[0])
    v.update(status="accepted", outcome="accepted", verifier=VERIFIER_VERSION - 1,
             message="(an older verifier) no difference found")
    db.execute("UPDATE candidates SET status='accepted', outcome='accepted', accepted=1, cycles=?, "
               "verdict=? WHERE hash=?", (cycles, json.dumps(v), h))
    db.commit()
    db.close()


def test_stale_accept_is_not_trusted(tmp_path):
    run = tmp_path / "run"
    s = _session(run)
    bad = s.propose_edit("k1", edit=SUB, hypothesis="sub")
    assert bad["status"] == "rejected-counterexample"
    h = bad["hash"]
    _forge_old_accept(s, h)
    s.close()

    s = _session(run)
    # best / lineage: the stale row is not reported as accepted
    best = s.best("k1")["best"][0]
    assert best["hash"] != h and best["accepted"] is True
    rows = {c["hash"]: c for c in s.lineage("k1", top=100)["lineages"][0]["candidates"]}
    assert rows[h]["accepted"] is False and rows[h]["status"] == "stale", rows[h]
    assert s.lineage("k1")["lineages"][0]["best"] != h
    # export verifies the bytes it would write: refused, nothing written
    out = tmp_path / "stale.co"
    try:
        s.export(h[:16], str(out))
    except Exception as e:  # noqa: BLE001
        assert "rejected" in str(e) or "not exported" in str(e), e
    else:
        raise AssertionError("a stale accept of a wrong candidate was exported")
    assert not out.exists()
    # proposing it again verifies it again, and the store keeps the new verdict
    again = s.propose_edit("k1", edit=SUB, hypothesis="again")
    assert again["accepted"] is False and again["status"] == "rejected-counterexample", again
    row = s.lineages["k1"].run.store.candidate(h, blocks=False)
    assert row["accepted"] == 0 and row["verdict"]["verifier"] == VERIFIER_VERSION
    s.close()


def test_export_patches_in_place_and_writes_verified_bytes(tmp_path):
    from asmevo.verify import verify
    s = Session(str(tmp_path / "run"))
    s.load_kernel(str(EX / "vadd_f32_O0.co"), str(EX / "vadd_f32_O0.json"))
    good = s.propose_edit("k1", pipeline="kernel(sched)", hypothesis="schedule")
    assert good["outcome"] == "accepted" or good["status"] == "rejected-slower", good
    out = tmp_path / "cand.co"
    ex = s.export(good["candidate_id"], str(out))
    # sched only moves instructions: K0 patched in place, as the gate built it (docs/mcp.md)
    assert ex["how"] == "patched", ex
    assert ex["verified"] in ("accepted", "unknown-unproved")
    v = verify(str(EX / "vadd_f32_O0.co"), str(out), harness=str(EX / "vadd_f32_O0.json"),
               level="all")
    assert v.outcome == "accepted", v.text()
    s.close()


def test_export_refused_by_the_reference_says_so(tmp_path):
    """The verifier accepts the candidate (it is K0's equal) but the final check's numpy
    reference does not match: the error says that, not 'accepted: ...' as if the verdict
    were the reason (helper finding)."""
    import shutil
    d = tmp_path / "k"
    d.mkdir()
    for f in ("vadd_f32.co", "vadd_f32.json"):
        shutil.copy(EX / f, d / f)
    # right for the inputs K0 is checked on when loaded (seed 0), wrong for the final
    # check's (seed 1, whose a[0] differs)
    from asmevo.emu import harness as H
    a0 = float(H.make_inputs(H.load_harness(str(EX / "vadd_f32.json")), 0)["a"][0])
    (d / "ref.py").write_text(f"def vadd_f32(a, b, n, **_):\n"
                              f"    return {{'c': a + b if float(a[0]) == {a0!r} else a - b}}\n")
    h = json.loads((d / "vadd_f32.json").read_text())
    h["reference"] = "ref.py:vadd_f32"
    (d / "vadd_f32.json").write_text(json.dumps(h))
    s = Session(str(tmp_path / "run"))
    s.load_kernel(str(d / "vadd_f32.co"), str(d / "vadd_f32.json"))
    c = s.propose_edit("k1", pipeline="kernel(sched)", hypothesis="schedule")
    out = tmp_path / "out.co"
    try:
        s.export(c["candidate_id"], str(out))
    except Exception as e:  # noqa: BLE001
        msg = str(e)
    else:
        raise AssertionError("exported a candidate whose outputs differ from the reference")
    assert "the verifier accepted it, but" in msg and "numpy reference" in msg, msg
    assert not out.exists()
    s.close()

"""Adversarial round 3 against the loop's lineage and the MCP session built on it."""

from __future__ import annotations

import pathlib

import pytest

from asmevo.errors import AsmevoError

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_mcp_export_refuses_a_rejected_candidate(tmp_path):
    """``Session.export`` wrote any stored candidate as a code object, a rejected one too
    (``v_add_f32`` -> ``v_sub_f32``, ``rejected-counterexample``), and its answer carried no
    status: a wrong kernel left the session as a deliverable without its receipt.  Now only
    a candidate whose receipt passed (accepted, or verified but slower) is exported, and
    the answer names the status."""
    from asmevo.mcp.session import Session
    s = Session(run_dir=str(tmp_path / "runs"))
    kid = s.load_kernel(str(ROOT / "examples" / "vadd_f32.co"),
                        harness=str(ROOT / "examples" / "vadd_f32.json"))["kernel_id"]
    rows = s.listing(kid)["rows"]
    i = next(r["index"] for r in rows if r["text"].startswith("v_add_f32"))
    p = s.propose_edit(kid, edit={"edits": [{"from": i, "to": i + 1,
                                             "asm": ["v_sub_f32_e32 v2, v6, v7"]}]},
                       hypothesis="subtract")
    assert p["status"] == "rejected-counterexample"
    out = tmp_path / "wrong.co"
    with pytest.raises(AsmevoError, match="did not pass the verifier"):
        s.export(p["candidate_id"], str(out))
    assert not out.exists()
    best = s.best(kid)["best"][0]
    ok = s.export(best["candidate_id"], str(tmp_path / "good.co"))
    assert ok["status"] == "accepted" and (tmp_path / "good.co").is_file()


def _tamper_fake_fast_k0_copy(run: pathlib.Path) -> None:
    """Insert a candidate row that is K0's own code under another hash, marked accepted with
    1 estimated cycle (as a crafted or corrupted lineage.sqlite could hold)."""
    import sqlite3
    db = sqlite3.connect(str(run / "lineage.sqlite"))
    k0h = db.execute("SELECT hash FROM candidates WHERE step=-1").fetchone()[0]
    cols = [r[1] for r in db.execute("PRAGMA table_info(candidates)")]
    row = dict(zip(cols, db.execute("SELECT * FROM candidates WHERE step=-1").fetchone()))
    row.update(hash="ef" * 32, parent=k0h, step=0, operator="mutate", status="accepted",
               outcome="accepted", accepted=1, cycles=1.0, hypothesis="tampered timing")
    db.execute(f"INSERT INTO candidates ({','.join(row)}) VALUES ({','.join('?' * len(row))})",
               list(row.values()))
    db.commit()
    db.close()


def test_resume_on_a_store_with_a_forged_cycle_count(tmp_path):
    """``asmevo evolve --resume`` on a lineage.sqlite holding a forged row (K0's blocks under
    another hash, ``accepted=1``, ``cycles=1``): the final check verifies the code (correct:
    it is K0) and makes it the winner with ``best_cycles`` 1 and ``speedup_estimated``
    1366.  A wrong *kernel* in such a row is caught (dropped, ``rejected-counterexample``);
    the timing receipt was not.  Fixed (asmevo/evolve/report.py ``final_check``): the stored
    code must hash to the row's key, and the winner (and K0) are scored again instead of
    trusting the stored cycles; the forged row is dropped."""
    import json
    from evolve_helpers import VADD_CO, VADD_JSON, evolve_cli
    run = tmp_path / "run"
    r = evolve_cli(VADD_CO, "--harness", VADD_JSON, "--out", run, "--budget", 1, "--quiet",
                   "--json", timeout=600)
    assert r.returncode == 0, r.stderr
    _tamper_fake_fast_k0_copy(run)
    r = evolve_cli(VADD_CO, "--harness", VADD_JSON, "--out", run, "--budget", 1, "--quiet",
                   "--json", "--resume", timeout=600)
    assert r.returncode == 0, r.stderr
    rep = json.loads((run / "report.json").read_text())
    assert rep["best_cycles"] == rep["k0_cycles"], (rep["best_cycles"], rep["winner"])
    assert "ef" * 32 in [d["hash"] for d in rep["dropped"]]

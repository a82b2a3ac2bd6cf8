"""The final check's lineage proof (asmevo/evolve/report.py ``prove_lineage``): a winner whose
windows against K0 z3 cannot decide (here one window would hold an LDS store and a later
LDS load, whose other lanes' stores the per-lane model does not see) is proved link by link
along its lineage -- each link moves one LDS access past a move, which z3 proves -- every
ancestor rebuilt from the stored code; a link that is wrong, or stored code that is not what
its key says, leaves it unproved."""

from __future__ import annotations

import types

import pytest

from moves_helpers import KERNEL, build, swap_lines

K0_BODY = """
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	s_load_dwordx2 s[8:9], s[0:1], 0x10
	v_lshlrev_b32_e32 v1, 2, v0
	s_waitcnt lgkmcnt(0)
	global_load_dword v2, v1, s[4:5]
	s_waitcnt vmcnt(0)
	ds_write_b32 v1, v2
	v_mov_b32_e32 v5, 7
	v_mov_b32_e32 v6, 9
	ds_read_b32 v7, v1 offset:256
	s_waitcnt lgkmcnt(0)
	v_add_u32_e32 v4, v7, v2
	v_add_u32_e32 v4, v4, v5
	v_add_u32_e32 v4, v4, v6
	global_store_dword v1, v4, s[8:9]
	s_endpgm
"""


P_BODY = swap_lines(K0_BODY, "ds_write_b32 v1, v2", "v_mov_b32_e32 v5, 7")
C_BODY = swap_lines(P_BODY, "v_mov_b32_e32 v6, 9", "ds_read_b32 v7, v1 offset:256")
#: the same last link, but it also reads the wrong LDS address
BAD_BODY = C_BODY.replace("ds_read_b32 v7, v1 offset:256", "ds_read_b32 v7, v1 offset:260")


@pytest.fixture(scope="module")
def kernels(tmp_path_factory, llvm_mc):
    d = tmp_path_factory.mktemp("lineage")
    return {n: build(d, n, b, lds=1024) for n, b in
            (("k0", K0_BODY), ("p", P_BODY), ("c", C_BODY), ("bad", BAD_BODY))}


def _run(kernels, lineage, tamper=None):
    """A stand-in for asmevo.evolve.loop.Run: K0, the store's records and blocks."""
    import copy
    from asmevo.evolve.candidate import content_hash
    k0co, _, k0 = kernels["k0"]
    hashes = {n: content_hash(kernels[n][2].kernel(KERNEL)) for n in ("k0",) + lineage}
    recs, parent = {}, hashes["k0"]
    for i, n in enumerate(lineage):
        recs[hashes[n]] = {"hash": hashes[n], "parent": parent, "step": i}
        parent = hashes[n]
    recs[hashes["k0"]] = {"hash": hashes["k0"], "parent": None, "step": -1}
    by_hash = {hashes[n]: n for n in hashes}

    def load_blocks(h):
        n = tamper.get(by_hash[h], by_hash[h]) if tamper else by_hash[h]
        return copy.deepcopy(kernels[n][2].kernel(KERNEL).blocks)
    store = types.SimpleNamespace(candidate=lambda h, blocks=False: recs.get(h))
    cfg = types.SimpleNamespace(z3_timeout_ms=3000, kernel_file=str(k0co))
    run = types.SimpleNamespace(k0=k0, kernel=KERNEL, k0_hash=hashes["k0"], cfg=cfg,
                                store=store, _load_blocks=load_blocks)
    return run, recs[hashes[lineage[-1]]]


def test_k0_against_the_winner_is_undecided(kernels):
    from asmevo.verify import verify
    v = verify(kernels["k0"][2], kernels["c"][2], harness=str(kernels["k0"][1]), level="all")
    from asmevo.evolve.report import _only_unproved
    assert v.status.value == "unknown-unproved" and _only_unproved(v)


def test_the_winner_is_proved_link_by_link(kernels, tmp_path):
    from asmevo.evolve.report import _lineage_verdict, prove_lineage
    from asmevo.verify import verify
    run, rec = _run(kernels, ("p", "c"))
    links, why = prove_lineage(run, rec, kernels["c"][2], str(tmp_path / "link.co"))
    assert links == [{"hash": rec["parent"], "against": "parent"},
                     {"hash": rec["hash"], "against": "parent"}], why
    v = verify(kernels["k0"][2], kernels["c"][2], harness=str(kernels["k0"][1]), level="all")
    lv = _lineage_verdict(v, links)
    assert lv.accepted and "2 link(s)" in lv.message and "no difference" in lv.message
    assert not (tmp_path / "link.co").exists()


def test_a_wrong_link_is_not_proved(kernels, tmp_path):
    from asmevo.evolve.report import prove_lineage
    run, rec = _run(kernels, ("p", "bad"))
    links, why = prove_lineage(run, rec, kernels["bad"][2], str(tmp_path / "link.co"))
    assert links is None and "link 2 of 2" in why


def test_stored_code_that_is_not_its_key_is_not_trusted(kernels, tmp_path):
    """The parent's stored blocks replaced by K0's (its key unchanged): refused."""
    from asmevo.evolve.report import prove_lineage
    run, rec = _run(kernels, ("p", "c"), tamper={"p": "k0"})
    links, why = prove_lineage(run, rec, kernels["c"][2], str(tmp_path / "link.co"))
    assert links is None and "does not hash to its key" in why


def test_session_totals_add_up_a_resumed_run(tmp_path):
    """report.md of a resumed run gives the whole run's search time and rate beside the last
    session's (newcomer test: only the resumed session's 1 s and 0.0/min were shown)."""
    import json
    from asmevo.evolve.report import _time_line, session_totals
    ev = tmp_path / "events.jsonl"
    rows = [{"t": 100.0, "event": "start"}] + [{"t": 100.0 + i, "event": "candidate"}
                                                for i in range(1, 41)]
    rows += [{"t": 160.0, "event": "interrupted"}, {"t": 500.0, "event": "resume"},
             {"t": 501.0, "event": "stop"}, {"t": 530.0, "event": "final"}]
    ev.write_text("\n".join(json.dumps(r) for r in rows) + "\nnot json\n")
    ss = session_totals(str(ev))
    assert ss == {"count": 2, "loop_seconds": 61.0, "candidates": 40,
                  "candidates_per_minute": 40 / (61.0 / 60)}
    line = _time_line({"elapsed_seconds": 1.2, "candidates_per_minute": 0.0, "sessions": ss})
    assert "this session" in line and "over its 2 sessions: 40 candidates in 61 s" in line
    assert session_totals(str(tmp_path / "missing.jsonl")) is None
    assert "session" not in _time_line({"elapsed_seconds": 5, "candidates_per_minute": 8.0,
                                        "sessions": {"count": 1}})

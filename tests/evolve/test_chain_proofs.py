"""The gate's chain of proofs (asmevo/evolve/gate.py, ``GateContext._chained``): a child of a
parent proved equivalent to K0 is proved against that parent, and tested against K0 itself.

What could go wrong, each a test: the chain accepts where the full check would not (a parent
that is *not* equivalent to K0 -- the store lied, or a proof was wrong -- must not carry a
wrong child through: testing against K0 rejects it); a wrong edit against the parent is
accepted; the loop starts a chain from a parent that was only tested; the receipt does not
say which parent the proof went through."""

from __future__ import annotations

import copy
import json
import sqlite3
import types

import pytest

from moves_helpers import KERNEL, build, swap_lines

K0_BODY = """
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	s_load_dwordx2 s[8:9], s[0:1], 0x10
	v_lshlrev_b32_e32 v1, 2, v0
	s_waitcnt lgkmcnt(0)
	global_load_dword v2, v1, s[4:5]
	global_load_dword v3, v1, s[6:7]
	v_mov_b32_e32 v5, 7
	v_mov_b32_e32 v6, 9
	v_mov_b32_e32 v7, 11
	s_waitcnt vmcnt(0)
	v_add_u32_e32 v4, v2, v3
	global_store_dword v1, v4, s[8:9]
	s_endpgm
"""


MOV5, MOV6, MOV7 = ("v_mov_b32_e32 v5, 7", "v_mov_b32_e32 v6, 9", "v_mov_b32_e32 v7, 11")
#: proved equivalent to K0: two independent moves swapped
PARENT_BODY = swap_lines(K0_BODY, MOV5, MOV6)
#: the parent's child: two more independent moves swapped
CHILD_BODY = swap_lines(PARENT_BODY, MOV5, MOV7)
#: not equivalent to K0 (subtracts); its child differs from it by the same harmless swap
WRONG_PARENT_BODY = swap_lines(K0_BODY, MOV5, MOV6).replace("v_add_u32_e32 v4, v2, v3",
                                                        "v_sub_u32_e32 v4, v2, v3")
WRONG_CHILD_BODY = swap_lines(WRONG_PARENT_BODY, MOV5, MOV7)
#: the parent with a wrong edit (a move that changes nothing observable... and the add)
BAD_EDIT_BODY = PARENT_BODY.replace("v_add_u32_e32 v4, v2, v3", "v_add_u32_e32 v4, v2, v2")


@pytest.fixture(scope="module")
def kernels(tmp_path_factory, llvm_mc):
    d = tmp_path_factory.mktemp("chain")
    out = {}
    for name, body in (("k0", K0_BODY), ("parent", PARENT_BODY), ("child", CHILD_BODY),
                       ("wrong_parent", WRONG_PARENT_BODY), ("wrong_child", WRONG_CHILD_BODY),
                       ("bad_edit", BAD_EDIT_BODY)):
        out[name] = build(d, name, body)
    return out


@pytest.fixture(scope="module")
def gate(kernels):
    from asmevo.evolve.gate import GateContext
    co, h, _ = kernels["k0"]
    g = GateContext({"k0": str(co), "harness": str(h), "kernel": KERNEL, "trials": 4})
    yield g
    g.close()


def _task(kernels, cand: str, parent: str | None):
    from asmevo.evolve.candidate import content_hash, kernel_blocks
    _, _, m = kernels[cand]
    t = {"hash": content_hash(m.kernel(KERNEL)), "blocks": kernel_blocks(m.kernel(KERNEL)),
         "seed": 5}
    if parent is not None:
        _, _, pm = kernels[parent]
        t.update(parent=content_hash(pm.kernel(KERNEL)),
                 chain_parent_blocks=copy.deepcopy(pm.kernel(KERNEL).blocks))
    return t, (t.get("parent") or "")


def build_module(g, blocks):
    m, _, _ = g.build_image(blocks)
    return m


def _kinds(res):
    return [e["kind"] for e in res["verdict"]["evidence"]]


def test_the_parent_is_proved_against_k0_directly(gate, kernels):
    t, _ = _task(kernels, "parent", None)
    res = gate.evaluate(t)
    assert res["status"] == "accepted", res["verdict"]["message"]
    assert "chain" not in _kinds(res)


def test_a_child_is_proved_through_its_parent(gate, kernels):
    t, ph = _task(kernels, "child", "parent")
    res = gate.evaluate(t)
    assert res["status"] == "accepted", res["verdict"]["message"]
    chain = [e for e in res["verdict"]["evidence"] if e["kind"] == "chain"]
    assert chain and chain[0]["data"]["parent"] == ph
    assert ph[:12] in res["verdict"]["message"]
    assert "trials" in _kinds(res)          # tested against K0 as well
    assert res["gate"] == "proved"


def test_a_wrong_parent_cannot_carry_its_child_through(gate, kernels):
    """z3 proves the child equal to the (wrong) parent; testing against K0 must reject it."""
    t, _ = _task(kernels, "wrong_child", "wrong_parent")
    res = gate.evaluate(t)
    assert res["outcome"] == "rejected", res["verdict"]
    assert not res["passed"]
    assert any("contradicted" in n for n in res["verdict"]["notes"])


def test_a_wrong_edit_against_the_parent_falls_back_and_is_rejected(gate, kernels):
    t, _ = _task(kernels, "bad_edit", "parent")
    res = gate.evaluate(t)
    assert res["outcome"] == "rejected", res["verdict"]
    assert not res["passed"]
    assert "chain" not in _kinds(res)


def test_only_proved_parents_start_a_chain():
    """``Run._proved``: accepted (proved) yes; K0, tested-only (unknown-unproved), slower or
    unknown candidates no."""
    from asmevo.evolve.loop import Run
    db = sqlite3.connect(":memory:")
    from asmevo.verify import VERIFIER_VERSION
    db.execute("CREATE TABLE candidates (hash TEXT PRIMARY KEY, status TEXT, accepted INTEGER, "
               "verdict TEXT)")
    now = json.dumps({"status": "accepted", "verifier": VERIFIER_VERSION})
    db.executemany("INSERT INTO candidates VALUES (?, ?, ?, ?)",
                   [("k0", "accepted", 1, now), ("proved", "accepted", 1, now),
                    ("tested", "unknown-unproved", 1, now), ("slower", "rejected-slower", 0, now),
                    ("stale", "accepted", 1, json.dumps({"verifier": VERIFIER_VERSION - 1})),
                    ("unstamped", "accepted", 1, json.dumps({"status": "accepted"})),
                    ("garbled", "accepted", 1, "not json")])
    run = types.SimpleNamespace(k0_hash="k0", store=types.SimpleNamespace(db=db))
    names = ("k0", "proved", "tested", "slower", "stale", "unstamped", "garbled", "missing", None)
    got = {h: Run._proved(run, h) for h in names}
    assert got == {h: h == "proved" for h in names}


def test_a_parent_whose_code_is_not_its_key_starts_no_chain(kernels):
    """The blocks sent as the parent must hash to the parent's key (the store is not
    trusted): a wrong parent's code under a proved parent's key is refused, and the child
    is checked against K0 directly."""
    from asmevo.evolve.candidate import content_hash
    t, _ = _task(kernels, "wrong_child", "wrong_parent")
    _, _, good = kernels["parent"]
    t["parent"] = content_hash(good.kernel(KERNEL))      # a key the blocks do not hash to
    from asmevo.evolve.gate import GateContext
    co, h, _ = kernels["k0"]
    g = GateContext({"k0": str(co), "harness": str(h), "kernel": KERNEL, "trials": 4})
    try:                 # a new gate: nothing cached under that key
        assert g._chained(t, build_module(g, t["blocks"])) is None
        res = g.evaluate(t)
    finally:
        g.close()
    assert res["outcome"] == "rejected" and "chain" not in _kinds(res)
    assert not any("contradicted" in n for n in res["verdict"]["notes"])


def test_gate_verdicts_carry_the_verifier_version(gate, kernels):
    from asmevo.verify import VERIFIER_VERSION
    t, _ = _task(kernels, "child", "parent")
    assert gate.evaluate(t)["verdict"]["verifier"] == VERIFIER_VERSION


def test_the_chain_proofs_option_validates(tmp_path):
    """``chain_proofs`` (``--no-chain-proofs``) takes a boolean only."""
    from asmevo.evolve.config import BadOption, EvolveConfig
    c = EvolveConfig(kernel_file="k.co", harness="h.json", out=str(tmp_path), chain_proofs=False)
    assert c.validate().chain_proofs is False
    with pytest.raises(BadOption):
        EvolveConfig(kernel_file="k.co", harness="h.json", out=str(tmp_path),
                     chain_proofs="yes").validate()


def test_resuming_with_the_other_chain_option_names_the_flags(tmp_path):
    """A resumed run must keep --chain-proofs; the refusal names the flags as the user gives
    them (newcomer test: it said 'chain_proofs=True')."""
    import pathlib
    from evolve_helpers import VADD_CO, VADD_JSON, evolve_cli
    run = tmp_path / "run"
    p = evolve_cli(VADD_CO, "--harness", VADD_JSON, "--out", run, "--budget", 1,
                   "--final-trials", 2, "--quiet")
    assert p.returncode == 0, p.stderr
    p = evolve_cli(VADD_CO, "--harness", VADD_JSON, "--out", run, "--budget", 1,
                   "--final-trials", 2, "--quiet", "--resume", "--no-chain-proofs")
    assert p.returncode == 2
    assert "(--chain-proofs; now --no-chain-proofs)" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr and pathlib.Path(run / "best.co").exists()

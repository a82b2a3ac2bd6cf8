"""The ``interleave`` move: a reduction chain on one VGPR split over two accumulators, only
for exact integer operations; checked by the verifier, refused for float add/max."""

from __future__ import annotations

import pytest
from moves_helpers import blocks_of, build, env_of, gate, run_move, static_ok, text

CHAIN = """
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	s_load_dwordx2 s[8:9], s[0:1], 0x10
	v_lshlrev_b32_e32 v1, 2, v0
	s_waitcnt lgkmcnt(0)
	global_load_dword v2, v1, s[4:5]
	global_load_dword v3, v1, s[6:7]
	global_load_dword v5, v1, s[4:5] offset:256
	global_load_dword v6, v1, s[6:7] offset:256
	v_mov_b32_e32 v7, 7
	s_waitcnt vmcnt(3)
	OP v7, v7, v2
	s_waitcnt vmcnt(2)
	OP v7, v3, v7
	s_waitcnt vmcnt(1)
	OP v7, v7, v5
	s_waitcnt vmcnt(0)
	OP v7, v7, v6
	global_store_dword v1, v7, s[8:9]
	s_endpgm
"""


@pytest.mark.parametrize("op", ["v_add_u32_e32", "v_xor_b32_e32", "v_max_i32_e32"])
def test_interleave_exact_integer_chain(tmp_path, llvm_mc, op):
    co, h, m = build(tmp_path, "chain", CHAIN.replace("OP", op))
    out = run_move(m, "interleave")
    assert out is not None
    blocks, desc = out
    assert desc["links"] == 4
    t = desc["t"]
    new = text(blocks)
    old = text(blocks_of(m))
    assert len(new) == len(old)                      # one link removed, one combine added
    base = op[:-4]
    assert any(x.startswith(base) and x.split()[1].rstrip(",") == t and "v3" in x and "v5" in x
               for x in new)                         # t = x2 (op) x3 at link 3
    assert any(x.startswith(base) and x.split()[1] == "v7," and t in x for x in new[-3:])
    assert static_ok(m, blocks)
    if op == "v_add_u32_e32":
        r = gate(co, h, blocks)
        # t is a VGPR the window writes: the window proof compares it, so the relational
        # proof or differential testing decides -- never a counterexample
        assert r["status"] in ("accepted", "unknown-unproved"), r["verdict"]
        assert r["verdict"]["layers"].get("diff") in (None, "pass"), r["verdict"]


@pytest.mark.parametrize("op", ["v_add_f32_e32", "v_max_f32_e32", "v_min_f32_e32", "v_mul_f32_e32",
                                "v_sub_u32_e32", "v_add_co_u32_e32"])
def test_interleave_refuses_inexact_or_noncommutative_ops(tmp_path, llvm_mc, op):
    body = CHAIN.replace("OP", op)
    if op == "v_add_co_u32_e32":
        body = body.replace(op + " v7,", op + " v7, vcc,")
    co, h, m = build(tmp_path, "chain_f", body)
    assert run_move(m, "interleave") is None


def test_interleave_refuses_modifiers_and_exec_changes(tmp_path, llvm_mc):
    from asmevo.evolve.mutations_interleave import find_chain, interleave_chain
    body = CHAIN.replace("OP v7, v7, v5", "v_add_u32_e64 v7, v7, v5 clamp").replace("OP", "v_add_u32_e32")
    co, h, m = build(tmp_path, "clamp", body)
    ins = blocks_of(m)[0].instructions
    i = next(j for j, x in enumerate(ins) if x.text() == "v_add_u32_e32 v7, v7, v2")
    assert len(find_chain(ins, i)) == 2                # the clamped link ends the chain
    body = CHAIN.replace("\ts_waitcnt vmcnt(1)\n", "\ts_waitcnt vmcnt(1)\n\ts_mov_b64 exec, -1\n") \
        .replace("OP", "v_add_u32_e32")
    co, h, m = build(tmp_path, "exec", body)
    ins = blocks_of(m)[0].instructions
    i = next(j for j, x in enumerate(ins) if x.text() == "v_add_u32_e32 v7, v7, v2")
    c = find_chain(ins, i)
    assert len(c) == 2
    assert isinstance(interleave_chain(env_of(m).view(blocks_of(m)), 0, c), str)
    # with no free VGPR for t the chain is left alone
    co, h, m = build(tmp_path, "full", CHAIN.replace("OP", "v_add_u32_e32"), vgprs=8)
    ins = blocks_of(m)[0].instructions
    i = next(j for j, x in enumerate(ins) if x.text() == "v_add_u32_e32 v7, v7, v2")
    c = find_chain(ins, i)
    from asmevo.ir.operands import Reg
    why = interleave_chain(env_of(m).view(blocks_of(m)), 0, c, t=Reg("v", 0))
    assert isinstance(why, str) and "not free" in why   # v0: work-item ids (ABI)

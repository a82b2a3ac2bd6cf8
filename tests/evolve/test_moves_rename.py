"""The ``rename`` move: one value moved to a free register; its output checked by the verifier
and its legality checks refusing misaligned tuples, live registers, ABI registers, registers
beyond the allocation, EXEC changes and cross-lane reads."""

from __future__ import annotations

import pytest
from moves_helpers import blocks_of, build, env_of, gate, run_move, static_ok, text

from asmevo.ir.operands import Reg

#: a reused VGPR (v2: a WAR/WAW on it) and SGPR pairs
BODY = """
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	s_load_dwordx2 s[8:9], s[0:1], 0x10
	v_lshlrev_b32_e32 v1, 2, v0
	s_waitcnt lgkmcnt(0)
	global_load_dword v2, v1, s[4:5]
	s_waitcnt vmcnt(0)
	v_add_u32_e32 v3, 5, v2
	global_load_dword v2, v1, s[6:7]
	s_waitcnt vmcnt(0)
	v_xor_b32_e32 v3, v3, v2
	global_store_dword v1, v3, s[8:9]
	s_endpgm
"""


def _value(m, snippet):
    from asmevo.evolve.mutations_rename import value_range
    view = env_of(m).view(blocks_of(m))
    i = next(j for j, x in enumerate(blocks_of(m)[0].instructions) if x.text() == snippet)
    return view, value_range(view, 0, i)


def test_rename_sgpr_and_vgpr_values_pass_the_gate(tmp_path, llvm_mc):
    co, h, m = build(tmp_path, "ren", BODY)
    sg = run_move(m, "rename", seeds=range(100), want=lambda d: d["old"].startswith("s"))
    vg = run_move(m, "rename", seeds=range(100), want=lambda d: d["old"] == "v2"
                  and d["inst"] == "global_load_dword v2, v1, s[4:5]")
    assert sg is not None and vg is not None
    for (blocks, desc), ok in ((sg, ("accepted",)), (vg, ("accepted", "unknown-unproved"))):
        assert static_ok(m, blocks)
        new = Reg(desc["new"][0], int(desc["new"].strip("sv[]").split(":")[0]))
        assert new.index % (2 if ":" in desc["new"] else 1) == 0
        r = gate(co, h, blocks)
        assert r["status"] in ok, r["verdict"]
    # the first v2 is renamed, its reads follow, the second v2 is untouched
    t = text(vg[0])
    nv = vg[1]["new"]
    assert f"global_load_dword {nv}, v1, s[4:5]" in t and f"v_add_u32_e32 v3, 5, {nv}" in t
    assert "global_load_dword v2, v1, s[6:7]" in t and "v_xor_b32_e32 v3, v3, v2" in t
    assert "global_load_dword v2, v1, s[4:5]" in text(blocks_of(m))   # parent untouched


def test_rename_then_hoist_breaks_the_false_dependence(tmp_path, llvm_mc):
    """After renaming the second v2, the second load can move above the first add."""
    from asmevo.evolve.mutations_rename import free_targets, rename_edits, value_range
    co, h, m = build(tmp_path, "war", BODY)
    view = env_of(m).view(blocks_of(m))
    ins = blocks_of(m)[0].instructions
    i = next(j for j, x in enumerate(ins) if x.text() == "global_load_dword v2, v1, s[6:7]")
    val = value_range(view, 0, i)
    new = free_targets(view, 0, val.index, val.last, "v", 1)[0]
    edits = rename_edits(view, val, new)
    from asmevo.evolve.mutations import independent
    assert not independent(ins[i - 1], ins[i])          # v_add reads v2, the load writes it
    assert independent(ins[i - 1], edits[i])            # renamed: no dependence left


def test_rename_refusals(tmp_path, llvm_mc):
    from asmevo.evolve.mutations_rename import target_problem
    co, h, m = build(tmp_path, "ref", BODY)
    view, val = _value(m, "s_load_dwordx2 s[8:9], s[0:1], 0x10")
    assert val.reg == Reg("s", 8, 2)
    assert "not aligned" in target_problem(view, val, Reg("s", 11, 2))
    assert "ABI" in target_problem(view, val, Reg("s", 0, 2))          # kernarg pointer
    assert "ABI" in target_problem(view, val, Reg("s", 2, 2))          # work-group id x
    assert "allocation" in target_problem(view, val, Reg("s", 16, 2))  # next_free_sgpr 16
    assert "live" in target_problem(view, val, Reg("s", 4, 2))         # the a pointer
    assert target_problem(view, val, Reg("s", 12, 2)) is None
    view, val = _value(m, "global_load_dword v2, v1, s[4:5]")
    assert "ABI" in target_problem(view, val, Reg("v", 0))             # work-item ids
    assert "live" in target_problem(view, val, Reg("v", 1))            # the address
    assert "allocation" in target_problem(view, val, Reg("v", 16))
    assert target_problem(view, val, Reg("v", 9)) is None
    # a 64-bit VGPR value needs an even pair
    body = BODY.replace("\tv_lshlrev_b32_e32 v1, 2, v0\n",
                        "\tv_lshlrev_b32_e32 v1, 2, v0\n\tv_lshlrev_b64 v[4:5], 2, v[0:1]\n"
                        "\tv_mov_b32_e32 v6, v5\n\tv_mov_b32_e32 v7, v4\n")
    co, h, m = build(tmp_path, "pair", body)
    view, val = _value(m, "v_lshlrev_b64 v[4:5], 2, v[0:1]")
    assert "not aligned" in target_problem(view, val, Reg("v", 9, 2))
    assert target_problem(view, val, Reg("v", 10, 2)) is None


@pytest.mark.parametrize("between,why", [
    ("\ts_mov_b64 exec, s[4:5]\n", "EXEC"),
    ("\tv_mov_b32_dpp v9, v2 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf\n", "other lanes"),
])
def test_rename_refuses_exec_changes_and_cross_lane_reads(tmp_path, llvm_mc, between, why):
    body = BODY.replace("\tv_add_u32_e32 v3, 5, v2\n", between + "\tv_add_u32_e32 v3, 5, v2\n")
    co, h, m = build(tmp_path, "x", body)
    view, val = _value(m, "global_load_dword v2, v1, s[4:5]")
    assert isinstance(val, str) and why in val


def test_rename_never_touches_special_registers(tmp_path, llvm_mc):
    """VCC/EXEC/M0/SCC writes are no renamable values; the move never names them."""
    from asmevo.evolve.mutations_rename import def_operand
    from asmevo.frontend.asm_parser import parse_instruction as P
    for t in ("v_cmp_gt_i32_e32 vcc, s3, v0", "s_mov_b64 exec, s[4:5]", "s_mov_b32 m0, -1",
              "s_and_b64 vcc, exec, s[4:5]"):
        assert def_operand(P(t)) is None, t
    body = BODY.replace("\ts_waitcnt vmcnt(0)\n\tv_add_u32_e32 v3, 5, v2\n",
                        "\ts_waitcnt vmcnt(0)\n\tv_cmp_gt_i32_e32 vcc, 5, v2\n\ts_nop 1\n"
                        "\tv_cndmask_b32_e32 v3, 5, v2, vcc\n")
    co, h, m = build(tmp_path, "vcc", body)
    for s in range(30):
        out = run_move(m, "rename", seeds=[s])
        if out is not None:
            assert out[1]["old"][0] in "sv" and "vcc" not in out[1]["new"]
            assert static_ok(m, out[0])


def test_default_env_renames_sgprs_only(tmp_path, llvm_mc):
    """The operator's default: VGPR values stay (a renamed VGPR needs the relational proof)."""
    co, h, m = build(tmp_path, "sonly", BODY)
    seen = set()
    for s in range(60):
        out = run_move(m, "rename", seeds=[s], vgpr_renames=False)
        if out is not None:
            seen.add(out[1]["old"][0])
    assert seen == {"s"}
    from asmevo.evolve.operators import MutateOperator, ProposeContext
    assert MutateOperator().env(ProposeContext(m, "vadd_f32")).vgpr_renames is False


def test_rename_skips_values_the_window_proof_cannot_execute(tmp_path, llvm_mc):
    """A value whose range crosses s_barrier would leave an unprovable window: skipped."""
    from asmevo.evolve.mutations_rename import z3_modelled
    body = BODY.replace("\ts_waitcnt vmcnt(0)\n\tv_add_u32_e32 v3, 5, v2\n",
                        "\ts_waitcnt vmcnt(0)\n\ts_barrier\n\tv_add_u32_e32 v3, 5, v2\n")
    co, h, m = build(tmp_path, "bar", body)
    ins = blocks_of(m)[0].instructions
    i = next(j for j, x in enumerate(ins) if x.text() == "global_load_dword v2, v1, s[4:5]")
    assert not z3_modelled(ins[i:i + 4]) and z3_modelled(ins[i:i + 2])
    for s in range(40):
        out = run_move(m, "rename", seeds=[s])
        assert out is None or out[1]["index"] != i

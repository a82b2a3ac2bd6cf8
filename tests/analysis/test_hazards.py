"""Hazard analysis: one producer/consumer pair per rule of the gfx940 table (ISA_NOTES section 7),
checked with 0..N wait states in between; pairs from PITFALLS BR-17, BR-19 and BR-21."""

import subprocess

import pytest

from asmevo.analysis.hazards import RULES, HazardAnalysis

MFMA8 = "v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15]"

# (rule, producer, consumer, required wait states)
CASES = [
    (1, "v_readfirstlane_b32 s4, v1", "buffer_load_dword v2, v0, s[4:7], 0 offen", 5),
    (2, "v_cmp_eq_u32_e32 vcc, v0, v1", "v_div_fmas_f32 v2, v3, v4, v5", 4),
    (3, "s_setreg_b32 hwreg(HW_REG_MODE, 0, 4), s1", "s_getreg_b32 s2, hwreg(HW_REG_MODE, 0, 4)", 2),
    (4, "s_setreg_b32 hwreg(HW_REG_MODE, 0, 4), s1", "s_setreg_b32 hwreg(HW_REG_MODE, 4, 4), s2", 2),
    (5, "s_setreg_b32 hwreg(HW_REG_TRAPSTS, 0, 4), s1", "s_rfe_b64 s[0:1]", 1),
    (6, "v_readfirstlane_b32 s4, v1", "v_readlane_b32 s5, v2, s4", 4),
    (7, "v_mov_b32_e32 v1, v2",
     "v_mov_b32_dpp v3, v1 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf", 2),
    (8, "v_cmpx_eq_u32_e32 vcc, v0, v1",
     "v_mov_b32_dpp v3, v4 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf", 5),
    (9, "s_mov_b32 m0, s1", "buffer_load_dword v2, s[4:7], 0 offen lds", 1),
    (9, "s_mov_b32 m0, s1", "s_sendmsg sendmsg(MSG_INTERRUPT)", 1),
    # BR-17: soffset literal -> 2, SGPR soffset -> 1 on the gfx940 family
    (10, "buffer_store_dwordx4 v[4:7], v0, s[8:11], 0 offen",
     "v_pk_mul_f32 v[4:5], v[10:11], v[12:13]", 2),
    (10, "buffer_store_dwordx4 v[4:7], v0, s[8:11], s12 offen",
     "v_pk_mul_f32 v[4:5], v[10:11], v[12:13]", 1),
    (10, "global_store_dwordx4 v[0:1], v[4:7], off", "v_mov_b32_e32 v7, 0", 2),
    # BR-21
    (11, "v_rcp_f32_e32 v1, v0", "v_mul_f32_e32 v2, v1, v3", 1),
    (12, "v_mov_b32_sdwa v1, v2 dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:DWORD",
     "v_add_f32_e32 v3, v1, v1", 1),
    (13, "v_cmp_eq_u32_e64 s[4:5], v0, v1", "v_cndmask_b32_e64 v2, v3, v4, s[4:5]", 2),
    (14, "v_cmpx_eq_u32_e32 vcc, v0, v1", "v_readfirstlane_b32 s4, v1", 4),
    (15, "v_mov_b32_e32 v1, v2", "v_readfirstlane_b32 s4, v1", 1),
    (16, "v_cmpx_eq_u32_e32 vcc, v0, v1", MFMA8, 4),
    (17, "v_mov_b32_e32 v1, 0", MFMA8, 2),
    (18, MFMA8, "v_mfma_f32_32x32x8_f16 a[32:47], v[0:1], v[2:3], a[8:23]", 9),
    (19, "v_mfma_f32_32x32x2_f32 a[0:15], v0, v1, a[0:15]",
     "v_mfma_f32_32x32x2_f32 a[32:47], v0, v1, a[8:23]", 16),
    (20, "v_mfma_f32_4x4x4_16b_f16 a[0:3], v[0:1], v[2:3], a[0:3]",
     "v_mfma_f32_4x4x4_16b_f16 a[0:3], v[0:1], v[2:3], a[0:3]", 2),
    (21, "v_mfma_f64_16x16x4_f64 v[0:7], v[8:9], v[10:11], v[0:7]",
     "v_mfma_f64_16x16x4_f64 v[12:19], v[8:9], v[10:11], v[4:11]", 9),
    (22, "v_mfma_f32_32x32x8_f16 v[0:15], v[16:17], v[18:19], v[0:15]", MFMA8, 11),
    (23, MFMA8, "v_accvgpr_read_b32 v4, a0", 11),
    # BR-19: f64 16x16x4 result read by FLAT needs 18
    (23, "v_mfma_f64_16x16x4_f64 v[0:7], v[8:9], v[10:11], v[0:7]", "flat_load_dword v20, v[0:1]",
     18),
    (24, MFMA8, "v_accvgpr_write_b32 a0, v1", 11),
    (25, "v_mfma_f32_32x32x8_f16 a[16:31], v[0:1], v[2:3], a[0:15]", "v_accvgpr_write_b32 a0, v1",
     7),
    (26, "v_dot2_f32_f16 v1, v2, v3, v4", "v_add_f32_e32 v5, v1, v1", 3),
    (27, "v_mfma_f64_4x4x4_4b_f64 v[0:1], v[2:3], v[4:5], v[0:1]",
     "v_fma_f64 v[10:11], v[12:13], v[14:15], v[16:17]", 2),
    (28, "s_load_dwordx2 s[4:5], s[0:1], 0x0", "s_load_dwordx2 s[0:1], s[0:1], 0x8", 1),
]


def _nops(n: int) -> str:
    out = []
    while n > 0:
        k = min(n, 8)
        out.append(f"s_nop {k - 1}")
        n -= k
    return "\n".join(out)


def _kernel(kern, prod, cons, n):
    return kern(f"k:\n{prod}\n{_nops(n)}\n{cons}\ns_endpgm\n")


def test_every_rule_has_a_case():
    assert {c[0] for c in CASES} == set(RULES) == set(range(1, 29))
    assert all(r.source.startswith("llvm/lib/Target/AMDGPU/") for r in RULES.values())


@pytest.mark.parametrize("rule,prod,cons,req", CASES, ids=[f"r{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_rule(kern, rule, prod, cons, req):
    for n in range(0, req + 1):
        k, am = _kernel(kern, prod, cons, n)
        h = am.get(HazardAnalysis, k)
        mine = [v for v in h.violations if v.rule == rule]
        cons_inst = k.blocks[0].instructions[-2]
        if n < req:
            assert mine, (n, [v.to_json() for v in h.violations])
            v = mine[0]
            assert (v.required, v.available) == (req, n)
            assert v.inst is cons_inst and v.producer.text() == prod
            # the nop run before the consumer must provide `req` wait states in total
            assert h.required_nops(cons_inst) >= req
        else:
            assert not mine, [v.to_json() for v in mine]


def test_all_cases_assemble(llvm_mc):
    """The pairs are valid gfx942 assembly (llvm-mc accepts them)."""
    text = "\n".join(line for c in CASES for line in c[1:3]) + "\n"
    r = subprocess.run([llvm_mc, "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx942"],
                       input=text, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_no_hazard_when_xdl_reads_smfma_srcc_and_full_srcc(kern):
    # rule 19: a non-XDL writer, an XDL reader of an overlapping SrcC: no wait
    k, am = kern("""
        k:
            v_mfma_f32_32x32x2_f32 a[0:15], v0, v1, a[0:15]
            v_mfma_f32_32x32x8_f16 a[32:47], v[0:1], v[2:3], a[8:23]
            s_endpgm
    """)
    assert [v.rule for v in am.get(HazardAnalysis, k).violations] == []
    # rule 20: back-to-back accumulation into the same registers with an 8-pass writer
    k, am = kern(f"k:\n{MFMA8}\n{MFMA8}\ns_endpgm\n")
    assert am.get(HazardAnalysis, k).violations == []


def test_across_blocks_minimum_over_predecessors(kern):
    src = """
        k:
            s_cbranch_scc1 .Lb
            v_mov_b32_e32 v1, v2
            {pad}
            s_branch .Lj
        .Lb:
            s_nop 7
        .Lj:
            v_readfirstlane_b32 s4, v1
            s_endpgm
    """
    # one predecessor path has the write 1 instruction (s_branch) before the read: ok (rule 15: 1)
    k, am = kern(src.format(pad=""))
    assert am.get(HazardAnalysis, k).violations == []
    # a path where the VALU writes EXEC right before the branch needs 4 wait states (rule 14)
    k, am = kern(src.replace("v_mov_b32_e32 v1, v2", "v_cmpx_eq_u32_e32 vcc, v0, v1").format(pad=""))
    hz = am.get(HazardAnalysis, k).violations
    assert [(v.rule, v.available) for v in hz] == [(14, 1)]


def test_soft_clause_broken_by_nop(kern):
    k, am = kern("""
        k:
            s_load_dwordx2 s[4:5], s[0:1], 0x0
            s_nop 0
            s_load_dwordx2 s[0:1], s[0:1], 0x8
            s_endpgm
    """)
    assert am.get(HazardAnalysis, k).violations == []


def test_required_nops_br19(kern):
    """BR-19: the f64 16x16x4 result read by FLAT needs 18 wait states, emitted by LLVM as
    s_nop 7, s_nop 7, s_nop 1; required_nops gives the size of the nop run before the read."""
    mfma = "v_mfma_f64_16x16x4_f64 v[0:7], v[8:9], v[10:11], v[0:7]"
    load = "flat_load_dword v20, v[0:1]"
    k, am = kern(f"k:\n{mfma}\ns_nop 7\ns_nop 7\ns_nop 1\n{load}\ns_endpgm\n")
    h = am.get(HazardAnalysis, k)
    cons = k.blocks[0].instructions[4]
    assert h.violations == [] and h.required_nops(cons) == 18
    # an independent instruction in between provides one wait state: the run may shrink to 17
    k, am = kern(f"k:\n{mfma}\nv_mov_b32_e32 v30, 0\ns_nop 7\ns_nop 7\ns_nop 1\n{load}\ns_endpgm\n")
    h = am.get(HazardAnalysis, k)
    assert h.required_nops(k.blocks[0].instructions[5]) == 17
    # no hazard at all: nothing required
    k, am = kern(f"k:\nv_mov_b32_e32 v30, 0\ns_nop 3\n{load}\ns_endpgm\n")
    h = am.get(HazardAnalysis, k)
    assert h.required_nops(k.blocks[0].instructions[2]) == 0


def test_loop_back_edge_into_same_block(kern):
    """The producer at the bottom of a loop body reaches the consumer at its top."""
    src = """
        k:
            s_mov_b32 s0, 0
        .Lloop:
            v_readfirstlane_b32 s4, v1
            s_add_u32 s0, s0, 1
            s_cmp_lg_u32 s0, 4
            v_mov_b32_e32 v1, v2
            {pad}
            s_cbranch_scc1 .Lloop
            s_endpgm
    """
    k, am = kern(src.format(pad=""))
    hz = am.get(HazardAnalysis, k).violations
    # v_mov writes v1; across the back edge only s_cbranch (1 wait state) separates it from the
    # v_readfirstlane reading v1 (rule 15 needs 1): fine.  v_cmpx writing EXEC needs 4 (rule 14).
    assert hz == []
    k, am = kern(src.replace("v_mov_b32_e32 v1, v2", "v_cmpx_eq_u32_e32 vcc, v1, v2")
                 .format(pad="s_nop 0"))
    hz = am.get(HazardAnalysis, k).violations
    assert [(v.rule, v.required, v.available) for v in hz] == [(14, 4, 2)]

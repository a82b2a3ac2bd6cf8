"""Type checking against the ISA table and register files; llvm-mc agrees on every case."""

from __future__ import annotations

import subprocess

import pytest

from asmevo.errors import AsmSyntaxError
from asmevo.frontend.asm_parser import parse_asm, parse_instruction
from asmevo.frontend.typecheck import check_instruction, check_module, check_register
from asmevo.llvm import MCPU, TRIPLE


def _llvm_rejects(llvm_mc: str, text: str) -> bool:
    r = subprocess.run([llvm_mc, f"-triple={TRIPLE}", f"-mcpu={MCPU}", "-show-encoding"],
                       input=(text + "\n").encode(), capture_output=True, timeout=60)
    return b"error:" in r.stderr


@pytest.mark.parametrize("text, fragment", [
    ("v_add_f32_e32 v256, v1, v2", "register index is out of range: v256"),
    ("v_accvgpr_write_b32 a256, v0", "register index is out of range: a256"),
    ("s_mov_b32 s102, 0", "s102 is not available on gfx942"),
    ("s_mov_b32 ttmp16, 0", "out of range: ttmp16"),
    ("s_mov_b64 s[1:2], 0", "invalid register alignment: s[1:2]"),
    ("s_load_dwordx4 s[6:9], s[0:1], 0", "s[6:9] must start at a multiple of 4"),
    ("v_mov_b64 v[1:2], v[4:5]", "VGPR tuples must be 64-bit aligned"),
])
def test_register_checks_need_no_table(text, fragment, llvm_mc):
    inst = parse_instruction(text)
    msgs = [check_register(op) for op in inst.operands]
    assert any(m and fragment in m for m in msgs), msgs
    assert _llvm_rejects(llvm_mc, text)


def test_mfma_small_overlap_is_allowed(llvm_mc, isa_table):
    """llvm-mc only forbids partial src2/dst overlap for MFMAs wider than 4 dwords."""
    text = "v_mfma_f32_16x16x16_f16 v[0:3], v[4:5], v[6:7], v[2:5]"
    assert not _llvm_rejects(llvm_mc, text)
    check_instruction(parse_instruction(text))


def test_register_checks_accept_edges():
    for text in ["v_mov_b32 v255, s101", "s_load_dwordx8 s[4:11], s[0:1], 0",
                 "v_mov_b64 v[254:255], v[2:3]", "s_mov_b64 ttmp[14:15], 0"]:
        assert all(check_register(op) is None for op in parse_instruction(text).operands)


@pytest.fixture
def isa_table():
    """The ISA table module; skips while asmevo/isa.py does not exist."""
    return pytest.importorskip("asmevo.isa")


@pytest.mark.parametrize("text, col, fragment", [
    ("s_load_dwordx2 s[4:6], s[0:1], 0x0", 17, "s[4:6] is 3 dwords wide; expected 2"),
    ("v_add_f32_e32 v0, v1, s2", 24, "s2 is not a VGPR"),
    ("v_add_f32_e32 v0, v1", 2, "wrong number of operands for v_add_f32_e32: expected 3"),
    ("v_add_f23_e32 v0, v1, v2", 2, "did you mean v_add_f32_e32"),
    ("v_cmp_gt_i32_e32 s[0:1], v0, v1", 19, "s[0:1] is not 'vcc'"),
    ("s_mov_b32 a0, 0", 12, "a0 is not an SGPR"),
    ("ds_read_b32 v0, s1", 18, "s1 is not a VGPR"),
    ("s_add_u32 s0, v1, s2", 16, "v1 is not an SGPR"),
    ("s_and_b64 vcc_lo, s[0:1], s[2:3]", 12, "vcc_lo is 1 dword wide; expected 2"),
    ("v_mfma_f32_32x32x8_f16 v[0:15], v[16:17], v[18:19], v[2:17]", 54,
     "must not partially overlap"),
    ("v_mfma_f32_16x16x16_f16 v[0:3], v[4:5], v[6:7], a[0:3]", 50, "same register file"),
    ("v_add_f32_e64 v0, s1, s2", 24, "constant bus"),
    ("v_add_f32_e64 v0, v1, 0x1234", 24, "is not a VGPR, SGPR or inline constant"),
    ("s_add_u32 s0, 0x1234, 0x1235", 24, "only one unique literal"),
    ("v_and_b32_e32 v0, -0xffff0000, v1", 20, "does not fit in 32 bits"),
    ("v_add_u32_e64 v0, -v1, v2", 20, "applies to floating-point operations"),
    ("v_add_f32_e32 v0, -v1, v2", 20, "not _e32"),
    ("v_add_f32_e64 v0, sext(v1), v2", 20, "SDWA and DPP sources (sext)"),
    ("v_pk_add_f32 v[0:1], -v[2:3], v[4:5]", 23, "packed math uses neg_lo/neg_hi"),
    ("s_mov_b32 s0, -s1", 16, "applies to VALU instructions"),
])
def test_table_errors(text, col, fragment, llvm_mc, isa_table):
    inst = parse_instruction(text, line=7)
    with pytest.raises(AsmSyntaxError) as ei:
        check_instruction(inst, "t.s")
    e = ei.value
    assert (e.file, e.line, e.column) == ("t.s", 7, col)
    assert fragment in e.message
    assert _llvm_rejects(llvm_mc, text)


def test_columns_from_source_line(isa_table):
    text = "k:\n    s_load_dwordx2   s[4:6], s[0:1], 0x0\n"
    with pytest.raises(AsmSyntaxError) as ei:
        check_module(parse_asm(text, "m.s"), "m.s", text)
    assert (ei.value.line, ei.value.column) == (2, 22)
    with pytest.raises(AsmSyntaxError) as ei:
        parse_asm(text, "m.s", check=True)
    assert (ei.value.file, ei.value.line, ei.value.column) == ("m.s", 2, 22)


@pytest.mark.parametrize("text", [
    "v_mov_b32 v0, v1", "global_load_dword v1, v[2:3], off", "global_load_dword v1, v2, s[2:3]",
    "scratch_load_dword v1, off, s33 offset:16", "s_load_dword s0, s[2:3], s4",
    "s_waitcnt vmcnt(0) lgkmcnt(0)", "s_endpgm", "v_readlane_b32 s0, v1, 3",
    "v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15]",
    "v_add_f32_e64 v0, -v1, |s2|", "buffer_load_dword v1, v0, s[0:3], 0 offen",
])
def test_valid_instructions_pass(text, llvm_mc, isa_table):
    assert not _llvm_rejects(llvm_mc, text)
    check_instruction(parse_instruction(text))


@pytest.mark.corpus
def test_corpus_type_checks(corpus_dir, isa_table):
    """Every instruction of the clang and Triton corpus passes the checker."""
    files = sorted(corpus_dir.glob("*.s")) + sorted((corpus_dir / "triton").glob("*.amdgcn"))
    n = 0
    for f in files:
        text = f.read_text()
        m = parse_asm(text, str(f))
        check_module(m, str(f), text)
        n += sum(k.num_instructions() for k in m.kernels)
    assert n > 3000


@pytest.mark.parametrize("text, col, fragment", [
    ("v_add_f32_e32 v0, v1, v2 glc", 27, "modifier 'glc' is not valid for v_add_f32_e32"),
    ("v_add_f32_e32 v0, v1, v2 row_mask:0xf", 27, "applies to DPP (_dpp) instructions"),
    ("global_load_dword v1, v[2:3], off offset0:4", 36, "applies to two-address DS"),
    ("ds_read2_b32 v[0:1], v2 offset:4", 26, "single-address DS instructions"),
    ("ds_write_b32 v1, v2 gds", 22, "GDS is not supported"),
    ("ds_write2_b32 v1, a2, v3", 24, "data and dst should be all VGPR or all AGPR"),
    ("global_atomic_add v1, v[2:3], a3, off sc0", 32, "all VGPR or all AGPR"),
    ("v_add3_u32 v0, v1, v2, v3 op_sel_hi:[1,0,0]", 28, "packed-math (VOP3P)"),
    ("v_and_b32_e64 v0, v1, v2 clamp", 27, "not MFMA, lane or bitwise"),
    ("v_cmp_eq_f32_e64 s[0:1], v1, v2 mul:2", 34, "not compares"),
    ("v_add_f32_e32 v0, v1, v2 clamp", 27, "applies to VOP3 (_e64) and SDWA"),
    ("v_add_f32_e64 v0, v1, v2 cbsz:1", 27, "applies to MFMA instructions"),
])
def test_modifier_errors(text, col, fragment, llvm_mc, isa_table):
    with pytest.raises(AsmSyntaxError) as ei:
        check_instruction(parse_instruction(text), "t.s")
    assert ei.value.column == col and fragment in ei.value.message
    assert _llvm_rejects(llvm_mc, text)

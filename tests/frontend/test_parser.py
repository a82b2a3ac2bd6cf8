"""Parser tests: operand forms, file structure, corpus round trips (llvm-mc is the oracle)."""

from __future__ import annotations

import pytest

from asmevo.errors import AsmSyntaxError
from asmevo.frontend.asm_parser import ANON_PREFIX, parse_asm, parse_instruction
from asmevo.ir import (AmdhsaKernel, Directive, Expr, Func, FuncList, Imm, Kernel, Label, LabelDef,
                       MetadataBlock, Reg, Special, Src, print_instruction, print_module)

from test_parser_mc import assemble_sections, fix_target


def _corpus_files(corpus_dir):
    return sorted(corpus_dir.glob("*.s")) + sorted((corpus_dir / "triton").glob("*.amdgcn"))


@pytest.mark.parametrize("text, operands, modifiers", [
    ("v_add_f32_e32 v0, v1, v2", [Reg("v", 0), Reg("v", 1), Reg("v", 2)], []),
    ("s_load_dwordx2 s[4:5], s[0:1], 0x0", [Reg("s", 4, 2), Reg("s", 0, 2), Imm(0, "0x0")], []),
    ("v_mfma_f32_32x32x8_f16 a[0:15], v[2:3], v[4:5], a[0:15]",
     [Reg("a", 0, 16), Reg("v", 2, 2), Reg("v", 4, 2), Reg("a", 0, 16)], []),
    ("s_mov_b64 ttmp[4:5], exec", [Reg("ttmp", 4, 2), Special("exec")], []),
    ("s_mov_b32 m0, vcc_lo", [Special("m0"), Special("vcc_lo")], []),
    ("v_mov_b32_e32 v0, src_shared_base", [Reg("v", 0), Special("src_shared_base")], []),
    ("s_mov_b32 s0, -1", [Reg("s", 0), Imm(-1, "-1")], []),
    ("v_mov_b32_e32 v4, --1", [Reg("v", 4), Imm(1, "--1")], []),
    ("v_mov_b32_e32 v0, -0.5", [Reg("v", 0), Imm(-0.5, "-0.5")], []),
    ("v_mul_f32_e32 v1, 0.15915494, v1", [Reg("v", 1), Imm(0.15915494, "0.15915494"), Reg("v", 1)], []),
    ("v_mul_f32_e32 v1, 0x3e22f983, v1", [Reg("v", 1), Imm(0x3e22f983, "0x3e22f983"), Reg("v", 1)], []),
    ("s_cbranch_scc1 .LBB0_21", [Label(".LBB0_21")], []),
    ("s_add_u32 s0, s0, sym@rel32@lo+4", [Reg("s", 0), Reg("s", 0), Expr("sym@rel32@lo+4")], []),
    ("s_add_u32 s0, s0, (a-b)/4", [Reg("s", 0), Reg("s", 0), Expr("(a-b)/4")], []),
    ("s_add_u32 s0, s0, .L1+8", [Reg("s", 0), Reg("s", 0), Label(".L1", 8)], []),
    ("s_waitcnt vmcnt(0) lgkmcnt(0)",
     [FuncList((Func("vmcnt", (0,)), Func("lgkmcnt", (0,))))], []),
    ("s_waitcnt 0", [Imm(0, "0")], []),
    ("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 4), 3",
     [Func("hwreg", ("HW_REG_MODE", 0, 4)), Imm(3, "3")], []),
    ("s_sendmsg sendmsg(MSG_INTERRUPT)", [Func("sendmsg", ("MSG_INTERRUPT",))], []),
    ("s_set_gpr_idx_on s0, gpr_idx(SRC0,DST)", [Reg("s", 0), Func("gpr_idx", ("SRC0", "DST"))], []),
    ("v_fma_f32 v1, -v2, |v3|, -|v4| clamp mul:2",
     [Reg("v", 1), Src(Reg("v", 2), neg=True), Src(Reg("v", 3), abs=True),
      Src(Reg("v", 4), neg=True, abs=True)], [("clamp", True), ("mul", 2)]),
    ("v_cubeid_f32 v10, -|-8|, |v171|, neg(-0.5) mul:2",
     [Reg("v", 10), Src(Imm(-8, "-8"), neg=True, abs=True), Src(Reg("v", 171), abs=True),
      Src(Imm(-0.5, "-0.5"), neg=True, style="func")], [("mul", 2)]),
    ("v_add_f32_e64 v0, neg(v1), abs(v2) div:2",
     [Reg("v", 0), Src(Reg("v", 1), neg=True, style="func"), Src(Reg("v", 2), abs=True, style="func")],
     [("div", 2)]),
    ("v_mov_b32_sdwa v1, sext(v2) dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:BYTE_0",
     [Reg("v", 1), Src(Reg("v", 2), sext=True)],
     [("dst_sel", "WORD_1"), ("dst_unused", "UNUSED_PAD"), ("src0_sel", "BYTE_0")]),
    ("global_store_dword v[0:1], v2, off sc0 sc1 nt",
     [Reg("v", 0, 2), Reg("v", 2), Special("off")], [("sc0", True), ("sc1", True), ("nt", True)]),
    ("buffer_inv sc1", [], [("sc1", True)]),
    ("ds_write2_b32 v1, v2, v3 offset0:4 offset1:8 gds",
     [Reg("v", 1), Reg("v", 2), Reg("v", 3)], [("offset0", 4), ("offset1", 8), ("gds", True)]),
    ("ds_swizzle_b32 v1, v2 offset:swizzle(QDMode, 0, 1, 2, 3)",
     [Reg("v", 1), Reg("v", 2)], [("offset", Func("swizzle", ("QDMode", 0, 1, 2, 3)))]),
    ("v_pk_fma_f16 v0, v1, v2, v3 op_sel:[0,1,0] op_sel_hi:[1,0,1] neg_lo:[1,0,0] neg_hi:[0,0,1]",
     [Reg("v", 0), Reg("v", 1), Reg("v", 2), Reg("v", 3)],
     [("op_sel", (0, 1, 0)), ("op_sel_hi", (1, 0, 1)), ("neg_lo", (1, 0, 0)), ("neg_hi", (0, 0, 1))]),
    ("v_add_f32_dpp v0, v1, v2 quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf bound_ctrl:1",
     [Reg("v", 0), Reg("v", 1), Reg("v", 2)],
     [("quad_perm", (0, 1, 2, 3)), ("row_mask", 15), ("bank_mask", 15), ("bound_ctrl", 1)]),
    ("v_mov_b32_dpp v0, v1 row_bcast:15 row_mask:0xa bank_mask:0xf",
     [Reg("v", 0), Reg("v", 1)], [("row_bcast", 15), ("row_mask", 10), ("bank_mask", 15)]),
    ("v_mov_b32_dpp v0, v1 row_half_mirror row_mask:0xf bank_mask:0xf",
     [Reg("v", 0), Reg("v", 1)], [("row_half_mirror", True), ("row_mask", 15), ("bank_mask", 15)]),
    ("v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15] cbsz:1 abid:2 blgp:3",
     [Reg("a", 0, 16), Reg("v", 0, 2), Reg("v", 2, 2), Reg("a", 0, 16)],
     [("cbsz", 1), ("abid", 2), ("blgp", 3)]),
    ("tbuffer_load_format_x v1, off, s[4:7], 0 format:[BUF_FMT_32_FLOAT]",
     [Reg("v", 1), Special("off"), Reg("s", 4, 4), Imm(0, "0")], [("format", ("BUF_FMT_32_FLOAT",))]),
    ("buffer_load_dword v1, v0, s[0:3], 0 offen offset:16 glc slc",
     [Reg("v", 1), Reg("v", 0), Reg("s", 0, 4), Imm(0, "0")],
     [("offen", True), ("offset", 16), ("glc", True), ("slc", True)]),
    ("s_endpgm", [], []),
])
def test_operand_forms(text, operands, modifiers):
    inst = parse_instruction(text)
    assert inst.opcode == text.split()[0]
    assert inst.operands == operands
    assert inst.modifiers == modifiers
    # parse(print(x)) == x
    assert parse_instruction(print_instruction(inst)) == inst


def test_comments_ignored():
    a = parse_instruction("v_add_f32_e32 v0, v1, v2 ; comment")
    b = parse_instruction("v_add_f32_e32 v0, /* inline */ v1, v2 // addr: 000000001234")
    c = parse_instruction("v_add_f32_e32 v0, /* ; not a comment start */ v1, v2")
    assert a == b == c == parse_instruction("v_add_f32_e32 v0, v1, v2")


SNIPPET = """\
\t.text
\t.globl\tk ; -- Begin function k
\t.type\tk,@function
k:
\ts_load_dword s0, s[0:1], 0x0   ; load
\ts_waitcnt lgkmcnt(0)
\ts_cmp_eq_u32 s0, 0
\ts_cbranch_scc1 .LBB0_2
; %bb.1:
\tv_mov_b32_e32 v0, s0
\t.p2align 6
\tv_mov_b32_e32 v1, 1.0
/* a block
   comment */
.LBB0_2:
\ts_endpgm
.Lfunc_end0:
\t.size\tk, .Lfunc_end0-k
\t.section\t.rodata,"a",@progbits
\t.amdhsa_kernel k
\t\t.amdhsa_next_free_vgpr 2
\t\t.amdhsa_next_free_sgpr 8
\t.end_amdhsa_kernel
\t.amdgpu_metadata
---
amdhsa.version: [1, 2]
...
\t.end_amdgpu_metadata
"""


def test_module_structure():
    m = parse_asm(SNIPPET, "snip.s")
    kinds = [type(it).__name__ for it in m.items]
    assert kinds == ["Directive", "Directive", "Directive", "Kernel", "LabelDef", "Directive",
                     "Directive", "AmdhsaKernel", "MetadataBlock"]
    k = m.kernel("k")
    assert k.is_kernel
    assert [(b.label, len(b), [d.text() for d in b.directives]) for b in k.blocks] == [
        ("k", 4, []), (None, 1, []), (None, 1, [".p2align\t6"]), (".LBB0_2", 1, [])]
    assert k.blocks[0].instructions[0].line == 5
    assert m.items[4] == LabelDef(".Lfunc_end0", 17)
    assert m.items[5].name == ".size" and m.items[5].args == "k, .Lfunc_end0-k"
    ak = m.items[7]
    assert isinstance(ak, AmdhsaKernel) and ak.fields == {
        ".amdhsa_next_free_vgpr": "2", ".amdhsa_next_free_sgpr": "8"}
    assert m.items[8] == MetadataBlock("---\namdhsa.version: [1, 2]\n...\n", 24)
    again = parse_asm(print_module(m))
    assert [list(b.instructions) for b in again.kernel("k").blocks] == \
        [list(b.instructions) for b in k.blocks]


def test_listing_without_type_makes_functions():
    m = parse_asm("foo:\n\ts_nop 0\n\ts_endpgm\nbar:\n\ts_endpgm\n")
    assert [k.name for k in m.kernels] == ["foo", "bar"]
    loop = parse_asm("k:\n\ts_nop 0\nloop:\n\ts_sub_u32 s0, s0, 1\n\ts_cbranch_scc1 loop\n"
                     "\ts_endpgm\n")
    assert [k.name for k in loop.kernels] == ["k"]
    assert [b.label for b in loop.kernels[0].blocks] == ["k", "loop", None]
    anon = parse_asm("\ts_nop 1\n\ts_endpgm\n")
    assert len(anon.kernels) == 1 and anon.kernels[0].num_instructions() == 2
    again = parse_asm(print_module(anon))
    assert list(again.kernels[0].instructions()) == list(anon.kernels[0].instructions())


@pytest.mark.corpus
def test_corpus_round_trip_bytes(corpus_dir, llvm_mc):
    """print(parse(file)) assembles to the same .text and .rodata as the file itself."""
    files = _corpus_files(corpus_dir)
    assert len(files) >= 40
    for f in files:
        text = fix_target(f.read_text())
        m = parse_asm(text, str(f))
        assert m.kernels, f
        printed = print_module(m)
        want = assemble_sections(text, (".text", ".rodata"))
        got = assemble_sections(printed, (".text", ".rodata"))
        assert want[".text"], f
        assert got == want, f


@pytest.mark.corpus
def test_corpus_reparse_identity(corpus_dir):
    """parse(print(x)) == x for every instruction of every corpus file."""
    for f in _corpus_files(corpus_dir):
        m = parse_asm(fix_target(f.read_text()), str(f))
        m2 = parse_asm(print_module(m))
        a = [i for k in m.kernels for i in k.instructions()]
        b = [i for k in m2.kernels for i in k.instructions()]
        assert a == b, f
        for inst in a:
            assert parse_instruction(print_instruction(inst)) == inst


@pytest.mark.parametrize("text, line, col, fragment", [
    ("v_add_f32 v0, v1,", 1, 18, "unexpected end of line; expected an operand"),
    ("v_add_f32 v0 v1", 1, 14, "unexpected 'v1'; expected a modifier, ',' or end of line"),
    ("v_add_f32 v0, v1, v2 foo:3", 1, 22, "unexpected 'foo:'"),
    ("k:\n  s_nop 0\n  v_add_f32 v0, , v1", 3, 17, "unexpected ','"),
    ("s_waitcnt vmcnt(0", 1, 18, "expected ')' or ','"),
    ("v_add_f32 v0, v1, v2 offset:", 1, 29, "unexpected end of line"),
    ("v_mov_b32 v0, |v2", 1, 18, "expected '|'"),
    ("\t.amdhsa_kernel k\n\t.amdhsa_next_free_vgpr 1\n", 1, 1, "without .end_amdhsa_kernel"),
    ("\t.amdgpu_metadata\n---\n", 1, 1, "without .end_amdgpu_metadata"),
    ("\ts_nop 0\n\ts_nop 0\n\ts_mov_b64 s[3:2], 0\n", 3, 12, "ends before it starts"),
])
def test_syntax_errors(text, line, col, fragment):
    with pytest.raises(AsmSyntaxError) as ei:
        parse_asm(text, "bad.s")
    e = ei.value
    assert (e.file, e.line, e.column) == ("bad.s", line, col)
    assert fragment in e.message
    assert str(e).startswith(f"bad.s:{line}:{col}: error: ")


TWO_FUNCS = """\
\t.text
\t.type\tf,@function
f:
\ts_setpc_b64 s[30:31]
.Lfunc_end0:
\t.size\tf, .Lfunc_end0-f
\t.p2align\t8
\t.type\tg,@function
g:
\ts_nop 0
\t.section\t.rodata,"a",@progbits
tbl:
\t.long\t1, 2
\t.text
\ts_endpgm
"""


def test_functions_end_at_size_and_section_change():
    m = parse_asm(TWO_FUNCS, "two.s")
    summary = [(type(it).__name__, getattr(it, "name", "")) for it in m.items]
    assert summary == [
        ("Directive", ".text"), ("Directive", ".type"), ("Kernel", "f"), ("LabelDef", ".Lfunc_end0"),
        ("Directive", ".size"), ("Directive", ".p2align"), ("Directive", ".type"),
        ("Kernel", "g"), ("Directive", ".section"), ("LabelDef", "tbl"), ("Directive", ".long"),
        ("Directive", ".text"), ("Kernel", ANON_PREFIX + "1")]
    assert [str(i) for i in m.kernel("f").instructions()] == ["s_setpc_b64 s[30:31]"]
    assert [str(i) for i in m.kernel("g").instructions()] == ["s_nop 0"]
    assert m.kernel("f").is_kernel  # no .amdhsa_kernel block in the file: the default
    again = parse_asm(print_module(m))
    assert [(type(it).__name__, getattr(it, "name", "")) for it in again.items] == summary

"""Property: for random IR instructions built from every operand and modifier kind,
parse(print(x)) == x (no LLVM needed; the syntax only)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from asmevo.frontend.asm_parser import parse_instruction
from asmevo.ir import (Expr, Func, FuncList, Imm, Instruction, Label, Reg, Special, Src,
                       print_instruction)
from asmevo.ir.operands import SPECIAL_NAMES

FILES = {"v": 255, "s": 101, "a": 255, "ttmp": 15}


@st.composite
def regs(draw):
    f = draw(st.sampled_from(sorted(FILES)))
    count = draw(st.sampled_from([1, 1, 2, 3, 4, 8, 16]))
    index = draw(st.integers(0, max(0, FILES[f] - count + 1)))
    return Reg(f, index, count)


def _int_imm(v: int, hexa: bool) -> Imm:
    if hexa and v >= 0:
        return Imm(v, hex(v))
    return Imm(v, str(v))


imms = st.one_of(
    st.builds(_int_imm, st.integers(-(2**31), 2**32 - 1), st.booleans()),
    st.sampled_from([0.5, -0.5, 1.0, -4.0, 0.15915494, 2.5e-05, 1.0e+10]).map(
        lambda f: Imm(f, repr(f))),
)
ident = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True).filter(
    lambda s: s not in SPECIAL_NAMES and s not in ("neg", "abs", "sext")
    and not __import__("re").fullmatch(r"(?:ttmp|[vsa])\d+", s))
labels = st.builds(Label, ident.map(lambda s: ".L" + s), st.integers(-64, 64))
exprs = st.sampled_from(["sym@rel32@lo+4", "sym@rel32@hi+12", "(.LBB0_2-.Lpost_getpc0)&4294967295",
                         "(.LBB0_2-.Lpost_getpc0)>>32", "(a-b)/4", "~0x10", "x*2+1"]).map(Expr)
funcs = st.one_of(
    st.builds(lambda a, b: Func("hwreg", ("HW_REG_MODE", a, b)), st.integers(0, 31),
              st.integers(1, 32)),
    st.sampled_from([Func("sendmsg", ("MSG_INTERRUPT",)), Func("gpr_idx", ("SRC0", "DST")),
                     Func("gpr_idx", ()), Func("sendmsg", ("MSG_GS_DONE", "GS_OP_NOP"))]),
)
funclists = st.lists(st.builds(lambda n, v: Func(n, (v,)), st.sampled_from(["vmcnt", "expcnt",
                                                                           "lgkmcnt"]),
                               st.integers(0, 63)), min_size=2, max_size=3).map(
    lambda fs: FuncList(tuple(fs)))
specials = st.sampled_from(sorted(SPECIAL_NAMES)).map(Special)
bases = st.one_of(regs(), specials, imms, labels, exprs, funcs)


@st.composite
def srcs(draw):
    b = draw(st.one_of(regs(), imms, specials))
    style = draw(st.sampled_from(["bar", "func"]))
    neg, ab, sext = draw(st.booleans()), draw(st.booleans()), draw(st.booleans())
    if not (neg or ab or sext):
        return b
    if isinstance(b, Imm) and neg and style == "bar" and not ab:
        neg = False  # "-5" is the constant -5, not a modifier (llvm-mc reads it so too)
        if not sext:
            return b
    if sext and (neg or ab) and style == "bar" and isinstance(b, Imm) and b.value < 0:
        sext = False
    if not (neg or ab):
        style = "bar"  # style only spells neg/abs; sext(x) alone prints the same either way
    return Src(b, neg=neg, abs=ab, sext=sext, style=style)


modifiers = st.lists(st.one_of(
    st.sampled_from(["glc", "slc", "nt", "sc0", "sc1", "lds", "gds", "tfe", "offen", "idxen",
                     "addr64", "clamp", "row_mirror", "row_half_mirror"]).map(lambda n: (n, True)),
    st.tuples(st.sampled_from(["offset", "offset0", "offset1", "mul", "div", "row_shl",
                               "row_shr", "row_ror", "wave_shl", "wave_shr", "wave_rol",
                               "wave_ror", "row_bcast", "row_newbcast", "row_mask", "bank_mask",
                               "bound_ctrl", "fi", "cbsz", "abid", "blgp", "format"]),
              st.integers(-4096, 65535)),
    st.tuples(st.sampled_from(["op_sel", "op_sel_hi", "neg_lo", "neg_hi", "quad_perm"]),
              st.lists(st.integers(0, 3), min_size=2, max_size=4).map(tuple)),
    st.tuples(st.sampled_from(["dst_sel", "src0_sel", "src1_sel"]),
              st.sampled_from(["BYTE_0", "BYTE_3", "WORD_1", "DWORD"])),
    st.tuples(st.just("dst_unused"), st.sampled_from(["UNUSED_PAD", "UNUSED_SEXT",
                                                      "UNUSED_PRESERVE"])),
    st.tuples(st.just("format"), st.sampled_from([("BUF_FMT_32_FLOAT",),
                                                  ("BUF_DATA_FORMAT_32", "BUF_NUM_FORMAT_FLOAT")])),
    st.tuples(st.just("offset"), st.sampled_from([Func("swizzle", ("QDMode", 0, 1, 2, 3)),
                                                   Func("swizzle", ("BITMASK_PERM", '"01pip"')),
                                                   Func("swizzle", ("BROADCAST", 8, 1))])),
), max_size=4)

mnemonics = st.from_regex(r"[vs]_[a-z0-9]{1,8}(_[a-z0-9]{1,6}){0,3}", fullmatch=True)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(mnemonics, st.lists(st.one_of(bases, srcs(), funclists), max_size=5), modifiers)
def test_print_then_parse_is_identity(opcode, operands, mods):
    inst = Instruction(opcode, operands, mods)
    text = print_instruction(inst)
    assert parse_instruction(text) == inst, text


def test_every_special_name_parses_as_special():
    for name in sorted(SPECIAL_NAMES):
        inst = parse_instruction(f"s_mov_b32 s0, {name}")
        assert inst.operands[1] == Special(name), name

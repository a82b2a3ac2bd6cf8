"""Differential test of the type checker against llvm-mc on mutated corpus instructions.

Valid corpus instructions get one random change (register file, width, alignment,
range, a 1000 literal, an operand dropped or added).  llvm-mc is the oracle:

* no false errors: whatever the checker rejects, llvm-mc rejects too (except the
  known llvm-mc laxness of accepting a wider VGPR tuple in 32-bit DPP operands);
* coverage: of the mutants llvm-mc rejects, the checker rejects at least 95%.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from asmevo.errors import AsmSyntaxError
from asmevo.frontend.asm_parser import parse_asm
from asmevo.frontend.typecheck import check_instruction
from asmevo.ir import Imm, Reg, Src, print_instruction

from test_parser_random import NO_SHRINK, encode_each

_CORPUS_INSTS: list = []


def _corpus_instructions(corpus_dir):
    if not _CORPUS_INSTS:
        seen = set()
        files = sorted(corpus_dir.glob("*.s")) + sorted((corpus_dir / "triton").glob("*.amdgcn"))
        for f in files:
            for k in parse_asm(f.read_text(), str(f)).kernels:
                for i in k.instructions():
                    if i not in seen:
                        seen.add(i)
                        _CORPUS_INSTS.append(i)
    return _CORPUS_INSTS


def mutate(inst, rnd: random.Random):
    """One random operand change, or ``None`` when the chosen change does not apply."""
    ops = list(inst.operands)
    if not ops:
        return None
    k = rnd.randrange(len(ops))
    op = ops[k]
    b = op.base if isinstance(op, Src) else op
    how = rnd.choice(["file", "width", "align", "range", "literal", "drop", "add"])
    if how == "drop":
        del ops[k]
    elif how == "add":
        ops.append(Reg("v", 3))
    elif isinstance(b, Reg):
        if how == "file":
            nb = Reg(rnd.choice([f for f in "vsa" if f != b.file]), b.index - b.index % 4, b.count)
        elif how == "width":
            nb = Reg(b.file, b.index - b.index % 4, rnd.choice([1, 2, 3, 4, 8]))
        elif how == "align":
            nb = Reg(b.file, b.index | 1, b.count)
        elif how == "range":
            nb = Reg(b.file, rnd.choice([250, 254, 100, 101]), b.count)
        else:
            nb = Imm(1000, "1000")
        ops[k] = Src(nb, op.neg, op.abs, op.sext, op.style) if isinstance(op, Src) else nb
    else:
        return None
    return inst.evolve(operands=ops)


def _llvm_lax(text: str) -> bool:
    return "_dpp" in text.split()[0]


@pytest.mark.corpus
@settings(phases=NO_SHRINK, max_examples=3, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_checker_agrees_with_llvm_mc(seed, corpus_dir, llvm_mc):
    pytest.importorskip("asmevo.isa")
    rnd = random.Random(seed)
    insts = _corpus_instructions(corpus_dir)
    texts = []
    for inst in rnd.sample(insts, min(600, len(insts))):
        m = mutate(inst, rnd)
        if m is not None:
            texts.append(print_instruction(m).strip())
    mc = encode_each(texts)
    false_errors, caught, llvm_rejects, missed = [], 0, 0, []
    for text, enc in zip(texts, mc):
        from asmevo.frontend.asm_parser import parse_instruction
        try:
            check_instruction(parse_instruction(text))
            ours = True
        except AsmSyntaxError as e:
            ours = False
            if enc is not None and not _llvm_lax(text):
                false_errors.append((text, e.message))
        if enc is None:
            llvm_rejects += 1
            caught += not ours
            if ours:
                missed.append(text)
    assert not false_errors, false_errors[:5]
    assert llvm_rejects > 50
    assert caught == llvm_rejects, (caught, llvm_rejects, missed[:5])  # parity (issue 14)


MODIFIERS = [("glc", True), ("slc", True), ("nt", True), ("sc0", True), ("sc1", True),
             ("offen", True), ("idxen", True), ("lds", True), ("gds", True), ("offset", 16),
             ("offset0", 4), ("offset1", 8), ("clamp", True), ("mul", 2), ("div", 2),
             ("op_sel", (0, 0, 1)), ("op_sel_hi", (1, 1, 0)), ("quad_perm", (0, 1, 2, 3)),
             ("row_mask", 15), ("bank_mask", 15), ("row_shr", 1), ("dst_sel", "WORD_1"),
             ("src0_sel", "BYTE_0"), ("cbsz", 1), ("abid", 1), ("blgp", 1),
             ("format", ("BUF_FMT_32_FLOAT",)), ("bound_ctrl", 1)]


@pytest.mark.corpus
@settings(phases=NO_SHRINK, max_examples=2, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_modifier_checks_agree_with_llvm_mc(seed, corpus_dir, llvm_mc):
    """A random extra modifier: no false errors; at least 95% of the misplaced modifiers
    llvm-mc rejects are caught."""
    pytest.importorskip("asmevo.isa")
    from asmevo.frontend.asm_parser import parse_instruction
    rnd = random.Random(seed)
    texts = []
    for inst in rnd.sample(_corpus_instructions(corpus_dir), 600):
        name, value = rnd.choice(MODIFIERS)
        if not inst.has_mod(name):
            m = inst.evolve(modifiers=list(inst.modifiers) + [(name, value)])
            texts.append(print_instruction(m).strip())
    mc = encode_each(texts)
    false_errors, caught, rejects, missed = [], 0, 0, []
    for text, enc in zip(texts, mc):
        try:
            check_instruction(parse_instruction(text))
            ours = True
        except AsmSyntaxError as e:
            ours = False
            if enc is not None:
                false_errors.append((text, e.message))
        if enc is None:
            rejects += 1
            caught += not ours
            if ours:
                missed.append(text)
    assert not false_errors, false_errors[:5]
    assert rejects > 100 and caught == rejects, (caught, rejects, missed[:5])  # parity


@pytest.mark.corpus
@settings(phases=NO_SHRINK, max_examples=2, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_source_modifier_checks_agree_with_llvm_mc(seed, corpus_dir, llvm_mc):
    """A random source modifier (-x, |x|, neg(x), sext(x)) on a random source operand:
    no false errors; at least 95% of the ones llvm-mc rejects are caught."""
    pytest.importorskip("asmevo.isa")
    from asmevo.frontend.asm_parser import parse_instruction
    rnd = random.Random(seed)
    texts = []
    for inst in rnd.sample(_corpus_instructions(corpus_dir), 600):
        if len(inst.operands) < 2:
            continue
        k = rnd.randrange(1, len(inst.operands))
        op = inst.operands[k]
        if isinstance(op, Src):
            continue
        new = rnd.choice([Src(op, neg=True), Src(op, abs=True), Src(op, sext=True),
                          Src(op, neg=True, style="func")])
        ops = list(inst.operands)
        ops[k] = new
        texts.append(print_instruction(inst.evolve(operands=ops)).strip())
    mc = encode_each(texts)
    false_errors, caught, rejects, missed = [], 0, 0, []
    for text, enc in zip(texts, mc):
        try:
            check_instruction(parse_instruction(text))
            ours = True
        except AsmSyntaxError as e:
            ours = False
            if enc is not None:
                false_errors.append((text, e.message))
        if enc is None:
            rejects += 1
            caught += not ours
            if ours:
                missed.append(text)
    assert not false_errors, false_errors[:5]
    assert rejects > 100 and caught == rejects, (caught, rejects, missed[:5])  # parity


IMMEDIATES = [Imm(0x3F800000, "0x3f800000"), Imm(0x3C00, "0x3c00"), Imm(0.5, "0.5"),
              Imm(100, "100"), Imm(-17, "-17"), Imm(0x3FF0000000000000, "0x3ff0000000000000"),
              Imm(3.0, "3.0"), Imm(0xFFFFFFFF, "0xffffffff"), Imm(-1, "-1"),
              Imm(0.15915494, "0.15915494"), Imm(0x3118, "0x3118"), Imm(0xFFFFFFF0, "0xfffffff0")]


@pytest.mark.corpus
@settings(phases=NO_SHRINK, max_examples=2, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_constant_checks_agree_with_llvm_mc(seed, corpus_dir, llvm_mc):
    """A random constant (inline or literal, f16/f32/f64 bit patterns, out-of-range
    values) in place of a random non-destination operand: no false errors; at least 97%
    of the ones llvm-mc rejects are caught (typed inline constants, literal rules)."""
    pytest.importorskip("asmevo.isa")
    from asmevo.frontend.asm_parser import parse_instruction
    rnd = random.Random(seed)
    texts = []
    for inst in rnd.sample(_corpus_instructions(corpus_dir), 600):
        if len(inst.operands) < 2 or not inst.opcode.startswith(("v_", "s_")):
            continue
        ops = list(inst.operands)
        ops[rnd.randrange(1, len(ops))] = rnd.choice(IMMEDIATES)
        texts.append(print_instruction(inst.evolve(operands=ops)).strip())
    mc = encode_each(texts)
    false_errors, caught, rejects, missed = [], 0, 0, []
    for text, enc in zip(texts, mc):
        try:
            check_instruction(parse_instruction(text))
            ours = True
        except AsmSyntaxError as e:
            ours = False
            if enc is not None:
                false_errors.append((text, e.message))
        if enc is None:
            rejects += 1
            caught += not ours
            if ours:
                missed.append(text)
    assert not false_errors, false_errors[:5]
    assert rejects > 100 and caught == rejects, (caught, rejects, missed[:5])  # parity


# ---------------------------------------------------------------------------------------
# Issue 14, "invalid text accepted": gfx90a cache bits and DOT op_sel on gfx942.  llvm-mc
# refuses each line; so must the type checker (at the modifier), and `asmevo equiv` must
# call the text bad input rather than equivalent to the plain instruction.

INVALID_ON_GFX942 = [
    ("global_load_dword v1, v[2:3], off glc", "glc"),
    ("global_load_dword v1, v[2:3], off slc", "slc"),
    ("global_store_dword v[2:3], v4, off glc slc", "glc"),
    ("flat_load_dword v1, v[2:3] glc", "glc"),
    ("scratch_load_dword v1, off, s2 slc", "slc"),
    ("buffer_load_dword v1, v2, s[4:7], s5 offen glc", "glc"),
    ("buffer_store_dword v1, v2, s[4:7], s5 offen slc", "slc"),
    ("global_atomic_add v1, v[2:3], v4, off glc", "glc"),
    ("s_load_dword s1, s[2:3], 0x0 sc0", "sc0"),
    ("s_load_dword s1, s[2:3], 0x0 slc", "slc"),
    ("v_dot4_i32_i8 v1, v2, v3, v4 op_sel:[0,0,1]", "op_sel"),
    ("v_dot8_i32_i4 v1, v2, v3, v4 op_sel:[1,0,0]", "op_sel"),
    ("v_dot2_f32_f16 v1, v2, v3, v4 op_sel:[1,0,0]", "op_sel"),
    ("v_dot4_u32_u8 v1, v2, v3, v4 op_sel_hi:[1,1,1]", "op_sel_hi"),
    ("v_fma_f32 v1, v2, v3, v4 op_sel:[1,0,0,0]", "op_sel"),
    ("v_cmp_eq_u32_e64 s[0:1], v1, v2 clamp", "clamp"),
    ("v_mov_b32_e64 v1, v2 mul:2", "mul"),
    ("global_load_dword v1, v[2:3], off sc0 offset:16", "offset"),
    ("v_mov_b32_dpp v1, v2 quad_perm:[1,0,3,2] row_shr:1", "row_shr"),
    ("global_atomic_add v[2:3], v4, off sc0", "sc0"),
    ("s_mov_b32 s0, null", "null"),
]
VALID_ON_GFX942 = [
    "global_load_dword v1, v[2:3], off sc0 sc1 nt",
    "s_load_dword s1, s[2:3], 0x0 glc",
    "buffer_load_dword v1, v2, s[4:7], s5 offen offset:16 sc0 nt",
    "v_dot2_f32_f16 v1, v2, v3, v4 neg_lo:[1,0,0]",
    "v_pk_fma_f16 v1, v2, v3, v4 op_sel:[1,0,0] op_sel_hi:[0,1,1]",
    "v_mad_u16 v1, v2, v3, v4 op_sel:[0,0,0,1] clamp",
    "global_atomic_add v1, v[2:3], v4, off sc0",
]


def test_gfx90a_cache_bits_and_dot_op_sel_refused(llvm_mc):
    from asmevo.frontend.asm_parser import parse_instruction
    mc = encode_each([t for t, _w in INVALID_ON_GFX942] + VALID_ON_GFX942)
    assert all(e is None for e in mc[:len(INVALID_ON_GFX942)]), "oracle: llvm-mc refuses"
    assert all(e is not None for e in mc[len(INVALID_ON_GFX942):]), "oracle: llvm-mc accepts"
    for text, word in INVALID_ON_GFX942:
        with pytest.raises(AsmSyntaxError) as ei:
            check_instruction(parse_instruction(text), "<t>", text)
        col = ei.value.column
        assert col is not None and text[col - 1:].startswith(word), (text, ei.value.message)
    for text in VALID_ON_GFX942:
        check_instruction(parse_instruction(text))


@pytest.mark.parametrize("text", ["global_load_dword v1, v[2:3], off glc",
                                  "v_dot4_i32_i8 v1, v2, v3, v4 op_sel:[0,0,1]"])
def test_equiv_refuses_invalid_text(tmp_path, capsys, text):
    """`asmevo equiv` no longer calls invalid text equivalent to the plain instruction."""
    from asmevo.cli import main
    plain = text.split(" glc")[0].split(" op_sel")[0]
    a, b = tmp_path / "a.s", tmp_path / "b.s"
    a.write_text(f"k:\n\t{text}\n\ts_endpgm\n")
    b.write_text(f"k:\n\t{plain}\n\ts_endpgm\n")
    assert main(["equiv", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert "a.s:2:" in err and ("not valid" in err or "invalid" in err), err

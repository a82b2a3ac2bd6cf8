"""The IR holds nothing it does not model (adversary report 2): a directive that repeats or
conditionally includes lines, or emits bytes among a function's instructions, is refused at
file:line:column or modelled as the bytes it is -- never kept as a block annotation that the
emulator, z3 and the in-place patcher ignore."""

from __future__ import annotations

import pytest

from asmevo.errors import AsmSyntaxError
from asmevo.evolve.candidate import content_hash
from asmevo.frontend.asm_parser import parse_asm
from asmevo.ir.printer import print_module

HEAD = "\t.text\n\t.globl k\n\t.p2align 8\n\t.type k,@function\nk:\n\tv_mov_b32_e32 v1, 0\n"
TAIL = "\ts_endpgm\n.Lend:\n\t.size k, .Lend-k\n"


def _parse(body: str):
    return parse_asm(HEAD + body + TAIL, "t.s", check=True)


@pytest.mark.parametrize("body, name", [
    ("\t.rept 2\n\tv_add_f32_e32 v2, v1, v1\n\t.endr\n", ".rept"),
    ("\t.if 0\n\tv_add_f32_e32 v2, v1, v1\n\t.endif\n", ".if"),
    ("\t.irp r, 1, 2\n\tv_mov_b32 v\\r, 0\n\t.endr\n", ".irp"),
    ("\t.byte 0x80, 0x02, 0x04, 0x7e\n", ".byte"),
    ("\t.short 0x0280, 0x7e04\n", ".short"),
    ("\t.quad 0x7e0402807e040280\n", ".quad"),
    ("\t.fill 1, 4, 0x7e040280\n", ".fill"),
    ("\t.zero 4\n", ".zero"),
    ("\t.skip 4\n", ".skip"),
    ("\t.space 4\n", ".space"),
    ("\t.incbin \"x.bin\"\n", ".incbin"),
    ("\t.p2align 4, 0x0\n", ".p2align"),
    ("\t.long sym\n", ".long"),
])
def test_refused_at_its_line_and_column(body, name):
    with pytest.raises(AsmSyntaxError) as e:
        _parse(body)
    assert e.value.file == "t.s" and e.value.line == 7 and e.value.column == 2, str(e.value)
    assert name in str(e.value)


def test_control_directives_are_refused_outside_functions_too():
    with pytest.raises(AsmSyntaxError) as e:
        parse_asm("\t.if 0\n" + HEAD + TAIL + "\t.endif\n", "t.s")
    assert e.value.line == 1 and ".if" in str(e.value)


def test_a_long_word_in_code_is_an_opaque_raw_instruction():
    m = _parse("\t.long 0x7e040280, 0x7e060280\n")
    insts = list(m.kernel("k").instructions())
    assert [i.opcode for i in insts] == ["v_mov_b32_e32", ".long", ".long", "s_endpgm"]
    assert insts[1].raw and insts[1].encoding == bytes.fromhex("8002047e")
    assert insts[2].encoding == bytes.fromhex("8002067e")
    # printed as the same words, so it reassembles to the same bytes
    text = print_module(m)
    assert "0x7e040280" in text and "0x7e060280" in text


def test_the_dis_raw_form_keeps_its_instruction_and_its_bytes():
    m = _parse("\t.long\t0x7e0002ff, 0x3f800000\t; v_mov_b32_e32 v0, 0x3f800000\n")
    i = list(m.kernel("k").instructions())[1]
    assert i.opcode == "v_mov_b32_e32" and i.raw
    assert i.encoding == bytes.fromhex("ff02007e0000803f")
    assert ".long\t0x7e0002ff, 0x3f800000" in print_module(m)


def test_the_content_hash_covers_raw_words():
    a = _parse("\t.long 0x7e040280 ; v_mov_b32_e32 v2, 0\n")
    b = _parse("\t.long 0x7e040281 ; v_mov_b32_e32 v2, 0\n")
    c = _parse("\tv_mov_b32_e32 v2, 0\n")
    ha, hb, hc = (content_hash(x.kernel("k")) for x in (a, b, c))
    assert len({ha, hb, hc}) == 3


def test_directives_that_emit_nothing_and_plain_alignment_are_kept():
    m = _parse("\t.loc 1 2 3\n\t.cfi_startproc\n\t.set X, 4\n\t.p2align 8\n"
               "\tv_mov_b32_e32 v2, 0\n")
    names = [d.name for b in m.kernel("k").blocks for d in b.directives]
    assert names == [".loc", ".cfi_startproc", ".set", ".p2align"]

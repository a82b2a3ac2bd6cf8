"""Instruction construction."""

from asmevo.ir.instruction import Instruction, decoded_instruction
from asmevo.ir.operands import Reg


def test_decoded_instruction_sets_every_slot_as_init():
    ops, mods = (Reg("v", 0), Reg("v", 1)), (("offset", 16),)
    a = Instruction("v_mov_b32_e32", ops, mods, encoding=b"\1\2\3\4", address=0x100)
    b = decoded_instruction("v_mov_b32_e32", ops, mods, b"\1\2\3\4", 0x100)
    assert type(b) is Instruction
    for name in Instruction.__slots__:
        assert getattr(a, name) == getattr(b, name), name
    assert type(b.operands) is list and type(b.modifiers) is list
    assert b.operands is not ops

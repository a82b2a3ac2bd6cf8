"""Immediates compare by kind and bits (adversary round 2, lesser item 5): ``1`` and ``1.0``,
``0`` and ``-0.0`` encode differently, and the emulator's compiled programs are cached by
``Instruction.key()``, so they must not be equal (nor share a hash)."""

from asmevo.ir.instruction import Instruction
from asmevo.ir.operands import Imm, Reg


def test_int_and_float_differ():
    assert Imm(1, "") != Imm(1.0, "")
    assert Imm(0, "") != Imm(-0.0, "")
    assert Imm(0.0, "") != Imm(-0.0, "")
    assert len({Imm(1, ""), Imm(1.0, ""), Imm(0, ""), Imm(0.0, ""), Imm(-0.0, "")}) == 5


def test_equal_values_stay_equal():
    assert Imm(1, "") == Imm(1, "") and hash(Imm(1, "")) == hash(Imm(1, ""))
    assert Imm(0.5, "0.5") == Imm(0.5, "0.5")
    nan = float("nan")
    assert Imm(nan, "") == Imm(nan, "")          # reflexive, so usable as a cache key
    assert Imm(16, "16") != Imm(16, "0x10")      # spelling still counts


def test_instruction_keys_differ():
    a = Instruction("v_mov_b32_e32", [Reg("v", 0, 1), Imm(1, "")], [])
    b = Instruction("v_mov_b32_e32", [Reg("v", 0, 1), Imm(1.0, "")], [])
    assert a.key() != b.key() and a != b

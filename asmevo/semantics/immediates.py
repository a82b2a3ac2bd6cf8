"""Immediate operands -> bit patterns of the operand's type (shared by both backends).

Rules (CDNA3 ISA guide, "Inline constants" and "Literal constants"; LLVM
AMDGPUAsmGFX940 operand docs):

* integer inline constants (-16..64) are integers whatever the operand type
  (an ``f32`` operand ``1`` is the bit pattern 0x00000001); for 64-bit operands
  they are sign-extended;
* floating inline constants (0.5, 1.0, 2.0, 4.0, their negatives, 1/(2*pi))
  are encoded in the operand's format (binary16/32/64; integer and bit types
  take the format of their width);
* a 32-bit literal for a 64-bit floating-point operand supplies the high 32
  bits (the low 32 bits are zero); for 64-bit integer operands it is
  sign-extended as written.
"""

from __future__ import annotations

import struct

INV_2PI = {16: 0x3118, 32: 0x3E22F983, 64: 0x3FC45F306DC9C882}


def float_bits(x: float, bits: int) -> int:
    """IEEE bit pattern of ``x`` in binary16/32/64."""
    if bits == 16:
        return struct.unpack("<H", struct.pack("<e", x))[0]
    if bits == 32:
        return struct.unpack("<I", struct.pack("<f", x))[0]
    return struct.unpack("<Q", struct.pack("<d", x))[0]


class UnsupportedImmediate(ValueError):
    """An immediate whose value as this operand the hardware documentation does not settle
    (both backends refuse it: z3 as Unsupported, the emulator as "cannot be emulated")."""


def imm_bits(value, ty: str, text: str = "") -> int:
    """Bit pattern (unsigned, width of ``ty``) of an immediate used as an operand of type ``ty``.

    ``ty`` is a registry type name (``f32``, ``b64``, ``u16``, ``lm``...).

    Raises:
        UnsupportedImmediate: a float constant for a 16-bit integer operand (``v_add_u16 v0,
            1.0, v1``): LLVM does not read it as the f16 pattern (llvm-mc encodes 0x3c00 there
            as a literal, and getInlineEncodingV216 says integer 16-bit instructions get "the
            corresponding single-precision float value"), and what the instruction then
            computes with 32 bits is not documented."""
    from .registry import width
    w = width(ty) if ty != "lm" else 64
    mask = (1 << w) - 1
    if isinstance(value, float) and ty in ("u16", "i16", "b16"):
        raise UnsupportedImmediate(f"a float constant ({text or value}) for a 16-bit integer "
                                   "operand is not supported (its value is not documented)")
    if isinstance(value, float):
        t = text.strip().lstrip("-")
        if t.startswith("0.15915494") or t.startswith("0.1591549"):
            b = INV_2PI[w if w in INV_2PI else 32]
            return (b | (1 << (w - 1))) & mask if value < 0 else b
        return float_bits(value, w if w in (16, 32, 64) else 32)
    v = int(value)
    if w == 64 and ty == "f64" and not (-16 <= v <= 64):
        return ((v & 0xFFFFFFFF) << 32) & mask
    return v & mask


def packed_inline_halves(value, ety: str, text: str = ""):
    """The two halves ``(lo, hi)`` of an inline constant used by a packed (VOP3P) instruction
    whose elements have type ``ety``; ``hi`` is None where the hardware's value is not
    established (then a backend must refuse the form).

    The constant is one 32-bit operand, and op_sel / op_sel_hi pick its halves as they pick a
    register's (LLVM AMDGPUBaseInfo ``getInlineEncodingV216``: "integer encodings (-16 .. 64)
    are always produced as sign-extended 32-bit values"; float encodings are "for F16
    instructions: corresponding half-precision float values in the LSBs, 0 in the MSBs", "for
    UI16 instructions: corresponding single-precision float value"; llc-19 selects
    ``v_pk_add_u16 v0, v0, 1`` for ``add <1, 0>`` and adds ``op_sel_hi:[1,0]`` for the splat).
    For 32-bit elements (``v_pk_*_f32``, ``v_pk_mov_b32``: a 64-bit operand) the low half is
    the 32-bit constant; what the high half holds is not documented (LLVM selects an inline
    constant there only with op_sel_hi = 0), so it is None."""
    from .registry import width
    w = width(ety)
    if isinstance(value, float):
        bits = imm_bits(value, ety if ety[0] == "f" else "f32", text)
    else:
        bits = int(value) & 0xFFFFFFFF
    if w == 16:
        return bits & 0xFFFF, (bits >> 16) & 0xFFFF
    return bits & 0xFFFFFFFF, None


def imm_bits16(value, ty: str, text: str = "", hi: bool = False) -> int:
    """The 16-bit value of an inline constant read by a 16-bit operand, its low half or (op_sel)
    its high half: the constant is one 32-bit value, integers sign-extended (LLVM
    getInlineEncodingV216: "integer encodings (-16 .. 64) are always produced as
    sign-extended 32-bit values"; so the high half of ``-1`` is 0xffff), f16 constants the
    half in the low 16 bits and 0 above."""
    lo = imm_bits(value, ty, text)
    if not hi:
        return lo
    if isinstance(value, float):
        return 0
    return (int(value) & 0xFFFFFFFF) >> 16


def vop3p_form_unsupported(inst) -> str | None:
    """Why a non-packed instruction in the VOP3P encoding (``v_dot*``) uses a form neither
    backend models, or None: ``neg_lo``/``neg_hi`` (per-half negation of packed sources),
    ``op_sel``/``op_sel_hi`` (half selection), or a float constant (its packed value: LLVM
    getInlineEncodingV216, f16 instructions take the half in the low 16 bits).  The value
    semantics read such sources as plain 32-bit values."""
    for m in ("neg_lo", "neg_hi"):
        v = inst.mod(m)
        if v is not None and any(v):
            return f"{m} on a non-packed VOP3P instruction is not modelled"
    if inst.mod("op_sel_hi") is not None:
        return "op_sel_hi on a non-packed VOP3P instruction is not modelled"
    if inst.opcode.startswith("v_dot"):
        from ..ir.operands import Imm, base_of
        if inst.mod("op_sel") is not None and any(inst.mod("op_sel")):
            return "op_sel on a v_dot instruction is not modelled"
        for op in inst.operands[1:]:
            b = base_of(op)
            if isinstance(b, Imm) and isinstance(b.value, float):
                return "a float constant of a v_dot instruction (a packed operand) is not modelled"
    return None

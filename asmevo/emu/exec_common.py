"""Operands, helpers, DPP/SDWA lane maps shared by the instruction families of the
emulator (:mod:`asmevo.emu.executor`): readers and writers of registers compiled per operand,
the lane count of a batched run, the exceptions and the compile context.
"""

from __future__ import annotations

import sys

import numpy as np

from ..ir.operands import Func, FuncList, Imm, Label, Reg, Special, Src, base_of
from ..semantics.immediates import imm_bits, imm_bits16
from ..semantics.intbackend import TYPES as ITYPES
from ..semantics.npbackend import NP
from ..semantics.registry import width
from .state import (EXEC, LANES, PRIVATE_APERTURE_HI, SHARED_APERTURE_HI, SPECIAL_SGPR,
    TTMP_BASE, VCC, lane_mask)


U32, U64, U16, U8 = np.uint32, np.uint64, np.uint16, np.uint8
_LE = sys.byteorder == "little"     # a uint64 viewed as two uint32: low dword first
BARRIER, ENDPGM = -1, -2
_DT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
_SIGN = {16: 0x8000, 32: 0x80000000, 64: 1 << 63}


class CompileError(Exception):
    """Internal: an instruction form the emulator cannot run (reported when executed)."""


class Context:
    """What closures need beyond the wave: global memory and the kernel's layout."""

    def __init__(self, mem, labels: dict, addresses: list):
        self.mem = mem
        self.labels = labels
        self.addresses = addresses


# ----------------------------------------------------------------------------- operands
def _sgpr_index(op) -> int | None:
    op = base_of(op)
    if isinstance(op, Reg):
        if op.file == "s":
            return op.index
        if op.file == "ttmp":
            return TTMP_BASE + op.index
        return None
    if isinstance(op, Special) and op.name in SPECIAL_SGPR:
        return SPECIAL_SGPR[op.name]
    return None


def _special_const(name: str) -> int | None:
    n = name[4:] if name.startswith("src_") else name
    return {"shared_base": SHARED_APERTURE_HI, "shared_limit": SHARED_APERTURE_HI | 0xFFFF,
            "private_base": PRIVATE_APERTURE_HI, "private_limit": PRIVATE_APERTURE_HI | 0xFFFF,
            "pops_exiting_wave_id": 0, "null": 0}.get(n)


def _const_reader(bits: int, w: int):
    c = np.array([bits], dtype=_DT[w])
    return lambda wv: c


def pair_u64(R, i: int):
    """Registers ``i`` and ``i+1`` of the register file ``R`` (shape (registers, lanes),
    uint32) as one new uint64 per lane: the two dwords interleaved into one buffer, seen as
    uint64.  Only on a little-endian host (``_LE``); the caller may modify the result."""
    out = np.empty((R.shape[1], 2), U32)
    out[:, 0] = R[i]
    out[:, 1] = R[i + 1]
    return out.view(U64).reshape(-1)


def reader(op, ty: str, *, hi16: bool = False, vector_ok: bool = True):
    """A closure ``r(wave) -> value`` for source operand ``op`` of type ``ty``.

    Values: ``(64,)`` for VGPR/AGPR sources, ``(1,)`` for scalars and constants;
    dtype of the type's width; ``lm`` sources give a bool ``(64,)`` mask.
    ``hi16`` selects bits [31:16] of a 16-bit source (op_sel)."""
    b = base_of(op)
    w = width(ty)
    if ty == "lm":
        # (in a lockstep group of W waves, asmevo.emu.lockstep: W*64 lanes, each wave's mask)
        if isinstance(b, Imm):
            bits = imm_bits(b.value, "b64", b.text)
            m = np.unpackbits(np.array([bits], np.uint64).view(np.uint8), bitorder="little").view(bool)
            return lambda wv: m if LANE_COUNT[0] == 64 else np.tile(m, LANE_COUNT[0] // 64)
        i = _sgpr_index(b)
        if i is None:
            raise CompileError(f"lane-mask operand {b} must be an SGPR pair or VCC")

        def rd(wv):
            if LANE_COUNT[0] != 64:
                return np.unpackbits(np.ascontiguousarray(wv.sfile[:, i:i + 2]).view(np.uint8),
                                     axis=1, bitorder="little").view(bool).reshape(-1)
            return lane_mask(wv.s.item(i) | (wv.s.item(i + 1) << 32))
        return rd
    r = _raw_reader(b, ty, w, hi16, vector_ok)
    if isinstance(op, Src) and (op.neg or op.abs) and ty[0] == "f":
        sign = _DT[w](_SIGN[w])
        mag = _DT[w](_SIGN[w] - 1)
        if op.abs and op.neg:
            return lambda wv: (r(wv) & mag) | sign
        if op.abs:
            return lambda wv: r(wv) & mag
        return lambda wv: r(wv) ^ sign
    if isinstance(op, Src) and op.neg and ty[0] in "iu":
        return lambda wv: (~r(wv)) + _DT[w](1)
    return r


def _raw_reader(b, ty, w, hi16=False, vector_ok=True):
    if isinstance(b, Imm):
        # 16 bits: one 32-bit constant whose halves op_sel picks (semantics.immediates);
        # a float constant for a 16-bit integer operand raises (ValueError: not supported)
        bits = imm_bits16(b.value, ty, b.text, hi16) if w == 16 else imm_bits(b.value, ty, b.text)
        return _const_reader(bits, w)
    if isinstance(b, (Label, Func, FuncList)) or not isinstance(b, (Reg, Special)):
        raise CompileError(f"operand {b} cannot be read as a value")
    if isinstance(b, Special) and _sgpr_index(b) is None:
        if b.name in ("scc", "src_scc"):
            return lambda wv: np.array([int(wv.scc)], _DT[w])
        if b.name in ("vccz", "src_vccz"):
            return lambda wv: np.array([int(not wv.s[VCC:VCC + 2].any())], _DT[w])
        if b.name in ("execz", "src_execz"):
            return lambda wv: np.array([int(not wv.exec_any)], _DT[w])
        c = _special_const(b.name)
        if c is None:
            raise CompileError(f"special register {b.name} cannot be read")
        return _const_reader(c, w)
    if isinstance(b, Reg) and b.file in ("v", "a"):
        if not vector_ok:
            raise CompileError("a vector register cannot be a scalar source")
        i = b.index
        f = b.file
        if w == 32:
            return (lambda wv: wv.v[i]) if f == "v" else (lambda wv: wv.a[i])
        if w == 64:
            if _LE:
                return (lambda wv: pair_u64(wv.v, i)) if f == "v" else \
                    (lambda wv: pair_u64(wv.a, i))
            if f == "v":
                return lambda wv: wv.v[i].astype(U64) | (wv.v[i + 1].astype(U64) << U64(32))
            return lambda wv: wv.a[i].astype(U64) | (wv.a[i + 1].astype(U64) << U64(32))
        if w == 16:
            if hi16:
                return (lambda wv: (wv.v[i] >> U32(16)).astype(U16)) if f == "v" else \
                    (lambda wv: (wv.a[i] >> U32(16)).astype(U16))
            return (lambda wv: wv.v[i].astype(U16)) if f == "v" else (lambda wv: wv.a[i].astype(U16))
        if w == 8:
            return lambda wv: wv.v[i].astype(U8)
        raise CompileError(f"unsupported width {w}")
    i = _sgpr_index(b)
    if w == 32:
        return lambda wv: wv.s[i:i + 1]
    if w == 64:
        return lambda wv: wv.s[i:i + 2].view(U64)
    if w == 16:
        if hi16:
            return lambda wv: (wv.s[i:i + 1] >> U32(16)).astype(U16)
        return lambda wv: wv.s[i:i + 1].astype(U16)
    raise CompileError(f"unsupported width {w}")


def vwriter(op, ty: str, *, hi16: bool = False, preserve: bool = False):
    """A closure ``wr(wave, value, mask)`` writing a VALU result to a VGPR/AGPR.

    ``mask`` is None for "all lanes" or a bool (64,) array.  16-bit results go to
    bits [15:0] with bits [31:16] zeroed (GFX9), or to [31:16] preserving [15:0]
    when ``hi16`` (op_sel destination bit)."""
    b = base_of(op)
    w = width(ty)
    if not (isinstance(b, Reg) and b.file in ("v", "a")):
        raise CompileError(f"destination {b} is not a vector register")
    i, f = b.index, b.file

    def rows(wv):
        return wv.v if f == "v" else wv.a

    if w == 32:
        if f == "v":
            def wr(wv, val, mask):
                if mask is None:
                    wv.v[i] = val
                else:
                    np.copyto(wv.v[i], val, where=mask, casting="unsafe")
            return wr

        def wr(wv, val, mask):
            if mask is None:
                wv.a[i] = val
            else:
                np.copyto(wv.a[i], val, where=mask, casting="unsafe")
        return wr
    if w == 64:
        def wr(wv, val, mask):
            R = rows(wv)
            if _LE and val.dtype == U64 and val.flags.c_contiguous and val.ndim == 1:
                # both halves in one strided copy: (lanes, 2) dwords, low dword first
                pair = val.view(U32).reshape(-1, 2).T
                if mask is None:
                    R[i:i + 2] = pair
                else:
                    np.copyto(R[i:i + 2], pair, where=mask)
                return
            lo = val.astype(U32)
            hi = (val >> U64(32)).astype(U32)
            if mask is None:
                R[i] = lo
                R[i + 1] = hi
            else:
                np.copyto(R[i], lo, where=mask)
                np.copyto(R[i + 1], hi, where=mask)
        return wr
    if w in (16, 8):
        def wr(wv, val, mask):
            R = rows(wv)
            v32 = val.astype(U32)
            if hi16:
                v32 = (R[i] & U32(0xFFFF)) | (v32 << U32(16))
            elif preserve:
                v32 = (R[i] & U32(0xFFFF0000)) | v32
            if mask is None:
                R[i] = v32
            else:
                np.copyto(R[i], v32, where=mask)
        return wr
    raise CompileError(f"unsupported destination width {w}")


def lm_writer(op):
    """Writer of a per-lane boolean result into an SGPR pair / VCC (inactive lanes -> 0)."""
    b = base_of(op)
    if isinstance(b, Special) and b.name == "null":
        return lambda wv, val, mask: None
    i = _sgpr_index(b)
    if i is None:
        raise CompileError(f"lane-mask destination {b} must be an SGPR pair or VCC")
    is_exec = i in (EXEC, EXEC + 1)

    def wr(wv, val, mask):
        v = _b64(val)
        if mask is not None:
            v = v & mask
        if v.shape[0] != 64:    # a lockstep group (asmevo.emu.lockstep): a mask per wave
            words = np.packbits(v.reshape(-1, 64), axis=1, bitorder="little").view(U32)
            r = wv.srun
            wv.sfile[r, i:i + 2] = words[r]
            return
        wv.s[i:i + 2] = np.packbits(v, bitorder="little").view(U32)
        if is_exec:
            wv.sync_exec()
    return wr


# ----------------------------------------------------------------------------- helpers
#: lanes of the state closures run on: 64, or W*64 while asmevo.emu.lockstep runs a
#: lane-independent instruction for W waves at once
LANE_COUNT = [64]


def _b64(x):
    """``x`` as a (lanes,) array (repeating a (1,) uniform value); np.broadcast_to is slow."""
    if x.shape[0] != 1:
        return x
    return x.repeat(LANE_COUNT[0])


def _mask_of(wv):
    return None if wv.exec_all else wv.exec_mask


def _regs_of(op):
    b = base_of(op)
    if not isinstance(b, Reg):
        raise CompileError(f"{b} is not a register")
    return b


def _clamp_omod(inst, ty):
    clamp = bool(inst.mod("clamp"))
    mul = inst.mod("mul")
    div = inst.mod("div")
    if not clamp and not mul and not div:
        return None
    if ty[0] != "f":
        if clamp:
            raise CompileError("integer clamp is not supported by the emulator")
        return None
    fw = width(ty)
    scale = None
    if mul:
        scale = np.array([{16: np.float16, 32: np.float32, 64: np.float64}[fw](mul)])
    elif div:
        scale = np.array([{16: np.float16, 32: np.float32, 64: np.float64}[fw](1.0 / div)])

    def post(val):
        if scale is not None:
            val = NP.fmul(val, scale.view(val.dtype))
        if clamp:
            val = NP.fclamp01(val)
        return val
    return post


# ----------------------------------------------------------------------------- DPP / SDWA
def dpp_map(inst):
    """(source lane per lane (64,), valid (64,) bool, write-enable (64,) bool, bound_ctrl)
    for the DPP controls of ``inst`` (CDNA3 ISA guide, "DPP"; row = 16 lanes)."""
    lane = LANES
    row = lane & ~15
    r = lane & 15
    src = lane.copy()
    valid = np.ones(64, bool)
    qp = inst.mod("quad_perm")
    if qp is not None:
        src = (lane & ~3) | np.array(qp)[lane & 3]
    elif inst.mod("row_shl") is not None:
        n = inst.mod("row_shl")
        src = lane + n
        valid = r + n < 16
    elif inst.mod("row_shr") is not None:
        n = inst.mod("row_shr")
        src = lane - n
        valid = r - n >= 0
    elif inst.mod("row_ror") is not None:
        n = inst.mod("row_ror")
        src = row | ((r - n) & 15)
    elif inst.mod("wave_shl") is not None:
        src = lane + 1
        valid = lane < 63
    elif inst.mod("wave_shr") is not None:
        src = lane - 1
        valid = lane > 0
    elif inst.mod("wave_rol") is not None:
        src = (lane + 1) & 63
    elif inst.mod("wave_ror") is not None:
        src = (lane - 1) & 63
    elif inst.has_mod("row_mirror"):
        src = row | (15 - r)
    elif inst.has_mod("row_half_mirror"):
        src = (lane & ~7) | (7 - (lane & 7))
    elif inst.mod("row_bcast") is not None:
        n = inst.mod("row_bcast")
        if n == 15:
            src = row - 1
            valid = lane >= 16
        elif n == 31:
            src = np.full(64, 31)
            valid = lane >= 32
        else:
            raise CompileError(f"row_bcast:{n}")
    elif inst.mod("row_newbcast") is not None:
        src = row | inst.mod("row_newbcast")
    src = np.where(valid, src, lane) & 63
    rm = inst.mod("row_mask", 0xF)
    bm = inst.mod("bank_mask", 0xF)
    enable = (((rm >> (lane >> 4)) & 1) != 0) & (((bm >> ((lane >> 2) & 3)) & 1) != 0)
    bc = inst.has_mod("bound_ctrl")
    return src, valid, enable, bc


_DPP_MODS = ("quad_perm", "row_shl", "row_shr", "row_ror", "row_bcast", "row_mirror",
             "row_half_mirror", "row_newbcast", "wave_shl", "wave_shr", "wave_rol", "wave_ror")


def _no_dpp(inst, what):
    if inst.opcode.endswith("_dpp") or any(inst.has_mod(m) for m in _DPP_MODS):
        raise CompileError(f"DPP on {what} instructions is not emulated")


_SEL = {"BYTE_0": (0, 8), "BYTE_1": (8, 8), "BYTE_2": (16, 8), "BYTE_3": (24, 8),
        "WORD_0": (0, 16), "WORD_1": (16, 16), "DWORD": (0, 32)}



# ----------------------------------------------------------------------------- SALU
def _s_imm_fix(inst, op, ty):
    """SOPK 16-bit immediates: sign-extended for _i32 forms, zero-extended for _u32."""
    b = base_of(op)
    if isinstance(b, Imm) and inst.opcode.startswith(("s_movk_", "s_cmpk_", "s_addk_", "s_mulk_",
                                                      "s_cmovk_")):
        v = int(b.value) & 0xFFFF
        if not inst.opcode.endswith("_u32") and v & 0x8000:
            v -= 0x10000
        return Imm(v)
    return op


def sreader(op, ty: str):
    """Scalar source as a Python-int value (:mod:`asmevo.semantics.intbackend`)."""
    b = base_of(op)
    w = width(ty)
    T = ITYPES[w]
    if isinstance(b, Imm):
        c = T(imm_bits(b.value, ty, b.text))
        return lambda wv: c
    if isinstance(b, Reg) and b.file in ("v", "a"):
        raise CompileError("a vector register cannot be a scalar source")
    if isinstance(b, Special) and _sgpr_index(b) is None:
        if b.name in ("scc", "src_scc"):
            return lambda wv: T(int(wv.scc))
        if b.name in ("execz", "src_execz"):
            return lambda wv: T(int(not wv.exec_any))
        if b.name in ("vccz", "src_vccz"):
            return lambda wv: T(int(not (wv.s.item(VCC) or wv.s.item(VCC + 1))))
        c = _special_const(b.name)
        if c is None:
            raise CompileError(f"special register {b.name} cannot be read")
        c = T(c & T.M)
        return lambda wv: c
    if not isinstance(b, (Reg, Special)):
        raise CompileError(f"operand {b} cannot be read as a value")
    i = _sgpr_index(b)
    if w == 64:
        return lambda wv: T(wv.s.item(i) | (wv.s.item(i + 1) << 32))
    if w == 32:
        return lambda wv: T(wv.s.item(i))
    return lambda wv: T(wv.s.item(i) & T.M)


def swriter(op, ty: str):
    """Writer ``wr(wave, value)`` of a scalar result into SGPRs: ``value`` a Python int of
    ``ty``'s width (unsigned; a 64-bit value goes to the register pair low dword first);
    EXEC writes refresh the wave's mask cache; ``null`` discards the value.

    Raises:
        CompileError: ``op`` is not an SGPR (or TTMP, VCC, EXEC, M0...) destination.
    """
    b = base_of(op)
    if isinstance(b, Special) and b.name == "null":
        return lambda wv, val: None
    i = _sgpr_index(b)
    if i is None:
        raise CompileError(f"scalar destination {b} is not an SGPR")
    w = width(ty)
    touches_exec = i in (EXEC, EXEC + 1) or (w == 64 and i + 1 == EXEC)
    if w == 64:
        if touches_exec:
            def wr(wv, val):
                wv.s[i] = val & 0xFFFFFFFF
                wv.s[i + 1] = val >> 32
                wv.sync_exec()
        else:
            def wr(wv, val):
                wv.s[i] = val & 0xFFFFFFFF
                wv.s[i + 1] = val >> 32
    elif touches_exec:
        def wr(wv, val):
            wv.s[i] = val
            wv.sync_exec()
    else:
        def wr(wv, val):
            wv.s[i] = val
    return wr


def _wscc(wv, val):
    wv.scc = bool(val)



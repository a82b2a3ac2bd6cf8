"""Hand-written closures for a few hot VALU forms (address arithmetic, f32 FMA).

The general closures of :mod:`.exec_valu` evaluate an instruction's semantics through the
registry's backend-neutral function (:mod:`asmevo.semantics`), a handful of Python calls and
temporary arrays per instruction.  For the forms below -- no modifiers, plain register or
constant operands -- the same values are computed with fewer numpy operations:

* ``v_lshl_add_u64 vD, vA, shift, src``: ``(vA << (shift & 7)) + src`` on uint64 (a VGPR pair
  in, a VGPR pair out; ``shift`` a constant);
* ``v_add/sub/subrev_u32``, ``v_and/or/xor_b32``, ``v_add/sub/subrev/mul_f32``, ``v_mov_b32``
  and the shifts ``v_lshlrev_b32`` / ``v_lshrrev_b32`` / ``v_ashrrev_i32`` by a constant: the
  backend's one numpy operation, without the registry function's calls;
* ``v_max_f32`` / ``v_min_f32`` of one register with itself (a float canonicalization): the
  register, unless a lane is a NaN;
* ``v_fmac_f32`` / ``v_fma_f32``: the float64 sum of the exact product and the addend,
  rounded to binary32, under the same test as :func:`asmevo.semantics.npbackend._fma32`
  (a float64 result on a binary32 rounding midpoint or in the binary32 subnormal range);
  when any lane fails it, the whole instruction goes through ``_fma32`` itself.

Both read their sources with :func:`.exec_common.reader` (so a lockstep group's per-lane
SGPRs work as in the general closures) and write as :func:`.exec_common.vwriter` does
(every lane when EXEC is full, else the active lanes).  ``tests/emu/test_exec_fast.py``
checks them against the general closures.
"""

from __future__ import annotations

import numpy as np

from ..ir.operands import Imm, Reg, Src
from ..semantics.immediates import imm_bits
from ..semantics.npbackend import _fma32
from .exec_common import U32, U64, _LE, pair_u64, reader

F32, F64 = np.float32, np.float64
_LOW = U64(0x1FFFFFFF)
_MID = U64(0x10000000)
_EXPM = U64(0x7FF0000000000000)
_TINY = U64(0x3810000000000000)


def _put(wv, di: int, val) -> None:
    """Write ``val`` (64 lanes) to VGPR ``di`` in the lanes EXEC enables (all of them: one
    assignment)."""
    if wv.exec_all:
        wv.v[di] = val
    else:
        np.copyto(wv.v[di], val, where=wv.exec_mask, casting="unsafe")


def _plain(op) -> bool:
    """A source without neg/abs/sext."""
    return not isinstance(op, Src) or not (op.neg or op.abs or op.sext)


def _vreg(op, count=None):
    b = op.base if isinstance(op, Src) else op
    if isinstance(b, Reg) and b.file == "v" and (count is None or b.count == count):
        return b
    return None


def fast_valu(inst, spec, nxt):
    """A closure ``f(wave) -> nxt`` for ``inst`` (VALU, its registry entry ``spec``), or None
    when it has no fast form here."""
    if inst.modifiers or not _LE or inst.opcode.endswith(("_dpp", "_sdwa")) or \
            not all(_plain(op) for op in inst.operands):
        return None
    name = spec.name
    if name in _BIN32:
        return _binary32(inst, spec, nxt)
    if name in _SHIFT32:
        return _shift32(inst, spec, nxt)
    if name == "v_mov_b32":
        return _mov32(inst, spec, nxt)
    if name == "v_lshl_add_u64":
        return _lshl_add_u64(inst, nxt)
    if name in ("v_fmac_f32", "v_fma_f32"):
        return _fma_f32(inst, spec, nxt)
    if name in ("v_max_f32", "v_min_f32"):
        return _minmax_same(inst, spec, nxt)
    return None


def _minmax_same(inst, spec, nxt):
    """``v_max_f32 vD, vX, vX`` (and v_min): LLVM's canonicalization of a float -- every lane
    that is not a NaN gives ``vX`` itself (equal operands: ``a & b`` = ``a | b`` = ``a``);
    when a lane is a NaN the registry semantics run instead."""
    ops = inst.operands
    if len(ops) != 3:
        return None
    d, x, y = _vreg(ops[0], 1), _vreg(ops[1], 1), _vreg(ops[2], 1)
    if d is None or x is None or y is None or x.index != y.index:
        return None
    fn = spec.fn
    xi, di = x.index, d.index
    from ..semantics.npbackend import NP

    def run(wv):
        v = wv.v[xi]
        if np.count_nonzero(np.isnan(v.view(F32))):
            v = fn(NP, v, v)
        elif xi == di:
            return nxt          # (the value is already there)
        _put(wv, di, v)
        return nxt
    return run


def _lshl_add_u64(inst, nxt):
    ops = inst.operands
    if len(ops) != 4:
        return None
    d, a = _vreg(ops[0], 2), _vreg(ops[1], 2)
    b = ops[2].base if isinstance(ops[2], Src) else ops[2]
    if d is None or a is None or not isinstance(b, Imm):
        return None
    k = imm_bits(b.value, "u32", b.text) & 7
    K = U64(k)
    rc = reader(ops[3], "u64")
    di, ai = d.index, a.index

    def run(wv):
        R = wv.v
        x = pair_u64(R, ai)
        if k:
            x <<= K
        x += rc(wv)
        pair = x.view(U32).reshape(-1, 2).T
        if wv.exec_all:
            R[di:di + 2] = pair
        else:
            np.copyto(R[di:di + 2], pair, where=wv.exec_mask)
        return nxt
    return run


def _fma_f32(inst, spec, nxt):
    ops = inst.operands
    tied = bool(spec.extra.get("tied"))
    if len(ops) != (3 if tied else 4):
        return None
    d = _vreg(ops[0], 1)
    if d is None:
        return None
    srcs = list(ops[1:]) + ([ops[0]] if tied else [])
    r0, r1, r2 = (reader(op, "f32") for op in srcs)
    di = d.index

    def run(wv):
        a = r0(wv).view(F32)
        b = r1(wv).view(F32)
        c = r2(wv).view(F32)
        s = a.astype(F64) * b       # the exact product (24 + 24 bits)
        if s.shape == c.shape:
            s += c
        else:                       # (a product of two scalars, e.g. an SGPR and a constant)
            s = s + c
        sb = s.view(U64)
        if np.count_nonzero(((sb & _LOW) == _MID) | ((sb & _EXPM) < _TINY)):
            val = _fma32(a, b, c).view(U32)
        else:
            val = s.astype(F32).view(U32)
        _put(wv, di, val)
        return nxt
    return run


#: two-source 32-bit VALU operations as the registry's numpy backend computes them
#: (asmevo.semantics.valu: B.add, B.sub, B.and_/or_/xor, B.fadd/fsub/fmul on float32 views)
_BIN32 = {
    "v_add_u32": np.add, "v_sub_u32": np.subtract,
    "v_subrev_u32": lambda a, b: b - a,
    "v_and_b32": np.bitwise_and, "v_or_b32": np.bitwise_or, "v_xor_b32": np.bitwise_xor,
    "v_add_f32": lambda a, b: (a.view(F32) + b.view(F32)).view(U32),
    "v_sub_f32": lambda a, b: (a.view(F32) - b.view(F32)).view(U32),
    "v_subrev_f32": lambda a, b: (b.view(F32) - a.view(F32)).view(U32),
    "v_mul_f32": lambda a, b: (a.view(F32) * b.view(F32)).view(U32),
}
#: shifts by a constant (the registry masks the amount to 5 bits: _mask_sh)
_SHIFT32 = ("v_lshlrev_b32", "v_lshrrev_b32", "v_ashrrev_i32")
_I32 = np.int32


def _binary32(inst, spec, nxt):
    ops = inst.operands
    d = _vreg(ops[0], 1) if len(ops) == 3 else None
    if d is None or len(spec.src) != 2 or spec.imp_in or spec.extra.get("tied"):
        return None
    r0, r1 = (reader(op, ty) for op, ty in zip(ops[1:], spec.src))
    f = _BIN32[spec.name]
    di = d.index

    def run(wv):
        val = f(r0(wv), r1(wv))
        _put(wv, di, val)
        return nxt
    return run


def _shift32(inst, spec, nxt):
    ops = inst.operands
    d = _vreg(ops[0], 1) if len(ops) == 3 else None
    k = ops[1].base if isinstance(ops[1], Src) else ops[1]
    if d is None or not isinstance(k, Imm):
        return None
    sh = imm_bits(k.value, spec.src[0], k.text) & 31
    r1 = reader(ops[2], spec.src[1])
    di = d.index
    name = spec.name
    if name == "v_ashrrev_i32":
        S = _I32(sh)

        def shift(x):
            return (x.view(_I32) >> S).view(U32)
    elif name == "v_lshlrev_b32":
        S = U32(sh)

        def shift(x):
            return x << S
    else:
        S = U32(sh)

        def shift(x):
            return x >> S

    def run(wv):
        val = shift(r1(wv))
        _put(wv, di, val)
        return nxt
    return run


def _mov32(inst, spec, nxt):
    ops = inst.operands
    d = _vreg(ops[0], 1) if len(ops) == 2 else None
    if d is None:
        return None
    r0 = reader(ops[1], spec.src[0])
    di = d.index

    def run(wv):
        val = r0(wv)
        _put(wv, di, val)
        return nxt
    return run

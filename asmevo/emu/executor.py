"""Compile a kernel's instructions into Python closures and run waves.

Each instruction is translated once per kernel into a closure ``f(wave) -> next
index`` (``-1``: the wave reached ``s_barrier``; ``-2``: ``s_endpgm``).  Operand
decoding (register numbers, inline constants, modifiers, DPP lane maps) happens
at compile time; at run time a closure only moves numpy rows.  Per-lane value
semantics come from the registry (:mod:`asmevo.semantics`) evaluated with the
numpy backend; memory, branches and cross-lane instructions are implemented
here by ``kind``.

An instruction without semantics (or with an unsupported form) compiles to a
closure that raises :class:`EmuError` when it is executed, naming it: nothing
is skipped silently.
"""

from __future__ import annotations

import functools

import numpy as np

from ..ir.operands import Func, FuncList, Imm, Label, Reg, Special, Src, base_of
from ..semantics.immediates import imm_bits
from ..semantics.intbackend import INT
from ..semantics.intbackend import TYPES as ITYPES
from ..semantics.npbackend import NP
from ..semantics.lanes import swizzle_map as _swizzle_map
from ..semantics.registry import lookup, width
from .memory import EmuError, MemoryFault
from .state import (EXEC, LANES, M0, PRIVATE_APERTURE_HI, SHARED_APERTURE_HI, SPECIAL_SGPR,
                    TTMP_BASE, VCC, lane_mask)

U32, U64, U16, U8 = np.uint32, np.uint64, np.uint16, np.uint8
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


def reader(op, ty: str, *, hi16: bool = False, vector_ok: bool = True):
    """A closure ``r(wave) -> value`` for source operand ``op`` of type ``ty``.

    Values: ``(64,)`` for VGPR/AGPR sources, ``(1,)`` for scalars and constants;
    dtype of the type's width; ``lm`` sources give a bool ``(64,)`` mask.
    ``hi16`` selects bits [31:16] of a 16-bit source (op_sel)."""
    b = base_of(op)
    w = width(ty)
    if ty == "lm":
        if isinstance(b, Imm):
            bits = imm_bits(b.value, "b64", b.text)
            m = np.unpackbits(np.array([bits], np.uint64).view(np.uint8), bitorder="little").view(bool)
            return lambda wv: m
        i = _sgpr_index(b)
        if i is None:
            raise CompileError(f"lane-mask operand {b} must be an SGPR pair or VCC")
        return lambda wv: lane_mask(wv.s.item(i) | (wv.s.item(i + 1) << 32))
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
        bits = imm_bits(b.value, ty, b.text)
        if hi16:
            bits = 0
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


# ----------------------------------------------------------------------------- VALU
def compile_valu(inst, spec, ctx, nxt):
    ops = inst.operands
    nd = len(spec.dst)
    ns = len(spec.src)
    if len(ops) != nd + ns:
        raise CompileError(f"expected {nd} destination(s) and {ns} source(s), got {len(ops)} operands")
    is_dpp = inst.opcode.endswith("_dpp") or any(
        inst.has_mod(m) for m in ("quad_perm", "row_shl", "row_shr", "row_ror", "row_bcast",
                                  "row_mirror", "row_half_mirror", "row_newbcast", "wave_shl",
                                  "wave_shr", "wave_rol", "wave_ror"))
    is_sdwa = inst.opcode.endswith("_sdwa")
    op_sel = inst.mod("op_sel") or ()
    readers = []
    for k, (op, ty) in enumerate(zip(ops[nd:], spec.src)):
        hi = bool(op_sel[k]) if k < len(op_sel) and width(ty) == 16 else False
        if is_sdwa and ty != "lm":
            readers.append(_sdwa_reader(op, ty, inst.mod(f"src{k}_sel", "DWORD")))
        else:
            readers.append(reader(op, ty, hi16=hi))
    if spec.extra.get("tied"):
        readers.append(reader(ops[0], spec.dst[0]))
    for imp in spec.imp_in:
        if imp == "vcc":
            readers.append(reader(Special("vcc"), "lm"))
        else:
            raise CompileError(f"implicit input {imp}")
    if is_dpp:
        src_lane, valid, enable, bc = dpp_map(inst)
        r0 = readers[0]

        def dpp_reader(wv, r0=r0):
            x = _b64(r0(wv))[src_lane]
            if bc:
                ok = valid & wv.exec_mask[src_lane]
                x = np.where(ok, x, x.dtype.type(0))
            return x
        readers[0] = dpp_reader
    writers = []
    for op, ty in zip(ops[:nd], spec.dst):
        if ty == "lm":
            writers.append(("lm", lm_writer(op)))
        elif is_sdwa:
            writers.append(("v", _sdwa_writer(op, inst)))
        else:
            hi = bool(op_sel[-1]) if (op_sel and width(ty) == 16 and len(op_sel) > ns) else False
            writers.append(("v", vwriter(op, ty, hi16=hi, preserve=bool(spec.extra.get("preserve_half")))))
    if spec.extra.get("preserve_half") and inst.has_mod("clamp"):
        # clamp on a float -> fp8 conversion saturates instead of producing NaN
        fn_sat = {"v_cvt_pk_fp8_f32": "fp8", "v_cvt_pk_bf8_f32": "bf8"}[spec.name]
        spec = type(spec)(spec.name, lambda B, a, b, _f=fn_sat: B.trunc(
            B.or_(B.f2fp8(a, _f, True), B.shl(B.f2fp8(b, _f, True), B.const(8, 32))), 16),
            spec.kind, spec.dst, spec.src, spec.imp_in, spec.imp_out, spec.extra)
        inst = inst.evolve(modifiers=[(n, v) for n, v in inst.modifiers if n != "clamp"])
    post = _clamp_omod(inst, spec.dst[0]) if nd else None
    fn = spec.fn

    if is_dpp:
        def mask_fn(wv):
            m = enable & wv.exec_mask
            if not bc:
                m = m & valid & wv.exec_mask[src_lane]
            return m
    else:
        mask_fn = _mask_of

    if nd == 1 and writers[0][0] == "v" and post is None and not is_dpp:
        wr = writers[0][1]
        if len(readers) == 1:
            (r0,) = readers

            def run(wv):
                wr(wv, fn(NP, r0(wv)), None if wv.exec_all else wv.exec_mask)
                return nxt
        elif len(readers) == 2:
            r0, r1 = readers

            def run(wv):
                wr(wv, fn(NP, r0(wv), r1(wv)), None if wv.exec_all else wv.exec_mask)
                return nxt
        elif len(readers) == 3:
            r0, r1, r2 = readers

            def run(wv):
                wr(wv, fn(NP, r0(wv), r1(wv), r2(wv)), None if wv.exec_all else wv.exec_mask)
                return nxt
        else:
            def run(wv):
                wr(wv, fn(NP, *[r(wv) for r in readers]), None if wv.exec_all else wv.exec_mask)
                return nxt
        return run
    if nd == 1 and writers[0][0] == "v" and post is None:
        wr = writers[0][1]
        if len(readers) == 1:
            (r0,) = readers

            def run(wv):
                wr(wv, fn(NP, r0(wv)), mask_fn(wv))
                return nxt
        elif len(readers) == 2:
            r0, r1 = readers

            def run(wv):
                wr(wv, fn(NP, r0(wv), r1(wv)), mask_fn(wv))
                return nxt
        elif len(readers) == 3:
            r0, r1, r2 = readers

            def run(wv):
                wr(wv, fn(NP, r0(wv), r1(wv), r2(wv)), mask_fn(wv))
                return nxt
        else:
            def run(wv):
                wr(wv, fn(NP, *[r(wv) for r in readers]), mask_fn(wv))
                return nxt
        return run

    def run(wv):
        res = fn(NP, *[r(wv) for r in readers])
        if nd == 1:
            res = (res,)
        m = mask_fn(wv)
        for k, (kind, wr) in enumerate(writers):
            val = res[k]
            if k == 0 and post is not None:
                val = post(val)
            if kind == "lm":
                wr(wv, val, wv.exec_mask if m is None else m)
            else:
                wr(wv, val, m)
        return nxt
    return run


def _sdwa_reader(op, ty, sel):
    b = base_of(op)
    sext = isinstance(op, Src) and op.sext
    w = width(ty)
    r32 = reader(b, "b32")
    sh, n = _SEL[sel]
    neg = isinstance(op, Src) and op.neg
    ab = isinstance(op, Src) and op.abs

    def rd(wv):
        x = r32(wv)
        if n < 32:
            x = (x >> U32(sh)) & U32((1 << n) - 1)
            if sext:
                x = ((x.view(np.int32) << np.int32(32 - n)) >> np.int32(32 - n)).view(U32)
        x = x.astype(_DT[w]) if w != 32 else x
        if ty[0] == "f" and (neg or ab):
            sign = _DT[w](_SIGN[w])
            if ab:
                x = x & _DT[w](_SIGN[w] - 1)
            if neg:
                x = x ^ sign
        return x
    return rd


def _sdwa_writer(op, inst):
    b = _regs_of(op)
    i = b.index
    sel = inst.mod("dst_sel", "DWORD")
    unused = inst.mod("dst_unused", "UNUSED_PAD")
    sh, n = _SEL[sel]
    fmask = U32(((1 << n) - 1) << sh) if n < 32 else U32(0xFFFFFFFF)

    def wr(wv, val, mask):
        v = val.astype(U32)
        if n < 32:
            v = (v & U32((1 << n) - 1)) << U32(sh)
            if unused == "UNUSED_PRESERVE":
                v = v | (wv.v[i] & ~fmask)
            elif unused == "UNUSED_SEXT":
                top = (v >> U32(sh + n - 1)) & U32(1)
                hi_mask = U32((0xFFFFFFFF << (sh + n)) & 0xFFFFFFFF)
                v = np.where(top != 0, v | hi_mask, v)
        if mask is None:
            wv.v[i] = v
        else:
            np.copyto(wv.v[i], v, where=mask)
    return wr


def compile_vopc(inst, spec, ctx, nxt):
    _no_dpp(inst, "VOPC")
    ops = inst.operands
    if inst.opcode.endswith("_e32") or len(ops) == 2:
        if len(ops) == 2:
            ops = [Special("vcc")] + list(ops)
    if len(ops) != 3:
        raise CompileError("VOPC expects a destination and two sources")
    is_sdwa = inst.opcode.endswith("_sdwa")
    op_sel = inst.mod("op_sel") or ()
    rds = []
    for k, (op, ty) in enumerate(zip(ops[1:], spec.src)):
        if is_sdwa:
            rds.append(_sdwa_reader(op, ty, inst.mod(f"src{k}_sel", "DWORD")))
        else:
            rds.append(reader(op, ty, hi16=bool(op_sel[k]) if k < len(op_sel) and width(ty) == 16
                              else False))
    r0, r1 = rds
    wr = lm_writer(ops[0])
    fn = spec.fn
    cmpx = spec.extra.get("cmpx")

    def run(wv):
        res = _b64(fn(NP, r0(wv), r1(wv))) & wv.exec_mask
        wr(wv, res, None)
        if cmpx:
            wv.set_exec(res)
        return nxt
    run.vopc = (fn, r0, r1)     # for asmevo.emu.lockstep: the comparison of W waves at once
    return run


def compile_vop3p(inst, spec, ctx, nxt):
    _no_dpp(inst, "packed (VOP3P)")
    if inst.opcode.endswith("_sdwa"):
        raise CompileError("SDWA on packed instructions")
    ops = inst.operands
    ety = spec.dst[0]
    ew = width(ety)
    ns = len(spec.src)
    if len(ops) != 1 + ns:
        raise CompileError("packed instruction operand count")
    _ = ns
    op_sel = inst.mod("op_sel") or (0,) * ns
    op_sel_hi = inst.mod("op_sel_hi") or (1,) * ns
    neg_lo = inst.mod("neg_lo") or (0,) * ns
    neg_hi = inst.mod("neg_hi") or (0,) * ns
    pair_ty = "b64" if ew == 32 else "b32"
    halves = []
    for k, op in enumerate(ops[1:]):
        b = base_of(op)
        if isinstance(b, Imm):
            bits = imm_bits(b.value, ety, b.text)
            c = np.array([bits], _DT[ew])
            halves.append((lambda wv, c=c: c, lambda wv, c=c: c))
            continue
        r = reader(b, pair_ty)
        if ew == 32:
            lo = lambda wv, r=r: r(wv).astype(U32)  # noqa: E731
            hi = lambda wv, r=r: (r(wv) >> U64(32)).astype(U32)  # noqa: E731
        else:
            lo = lambda wv, r=r: r(wv).astype(U16)  # noqa: E731
            hi = lambda wv, r=r: (r(wv) >> U32(16)).astype(U16)  # noqa: E731
        halves.append((lo, hi))
    sign = _DT[ew](_SIGN[ew])
    isf = ety[0] == "f"

    def pick(k, hi_result):
        lo, hi = halves[k]
        sel = (op_sel_hi if hi_result else op_sel)[k] if k < len(op_sel) else 0
        f = hi if sel else lo
        neg = (neg_hi if hi_result else neg_lo)[k] if k < len(neg_lo) else 0
        if neg and isf:
            return lambda wv, f=f: f(wv) ^ sign
        return f
    lo_rd = [pick(k, False) for k in range(ns)]
    hi_rd = [pick(k, True) for k in range(ns)]
    if spec.extra.get("tied"):      # v_pk_fmac: the destination's own halves
        rdst = reader(base_of(ops[0]), pair_ty)
        if ew == 32:
            lo_rd.append(lambda wv: rdst(wv).astype(U32))
            hi_rd.append(lambda wv: (rdst(wv) >> U64(32)).astype(U32))
        else:
            lo_rd.append(lambda wv: rdst(wv).astype(U16))
            hi_rd.append(lambda wv: (rdst(wv) >> U32(16)).astype(U16))
    if spec.name == "v_pk_mov_b32":
        # D.lo = src0 half op_sel[0], D.hi = src1 half op_sel[1] (op_sel_hi unused)
        sel = list(inst.mod("op_sel") or (0, 0))
        lo_rd[0] = halves[0][1] if sel[0] else halves[0][0]
        hi_rd[1] = halves[1][1] if sel[1] else halves[1][0]
    d = _regs_of(ops[0])
    wr = vwriter(d, "b64" if ew == 32 else "b32")
    fn = spec.fn
    is_mov = spec.name == "v_pk_mov_b32"
    clamp = bool(inst.mod("clamp")) and isf

    def run(wv):
        lo = fn(NP, *[r(wv) for r in lo_rd])
        hi = fn(NP, *[r(wv) for r in hi_rd])
        if is_mov:
            lo, hi = lo[0], hi[1]
        if clamp:
            lo, hi = NP.fclamp01(lo), NP.fclamp01(hi)
        if ew == 32:
            val = _b64(lo).astype(U64) | (_b64(hi).astype(U64) << U64(32))
        else:
            val = _b64(lo).astype(U32) | (_b64(hi).astype(U32) << U32(16))
        wr(wv, val, _mask_of(wv))
        return nxt
    return run


def compile_mix(inst, spec, ctx, nxt):
    """V_FMA_MIX*: sources are f32, or f16 halves (op_sel) widened to f32 where op_sel_hi
    is set; neg/abs apply after widening; mixlo/mixhi round the f32 result to f16 into
    the low/high half of the destination, keeping the other half."""
    _no_dpp(inst, "mixed-precision")
    ops = inst.operands
    if len(ops) != 4:
        raise CompileError("v_fma_mix* takes a destination and three sources")
    op_sel = inst.mod("op_sel") or (0, 0, 0)
    op_sel_hi = inst.mod("op_sel_hi") or (0, 0, 0)
    rds = []
    for k, op in enumerate(ops[1:]):
        if op_sel_hi[k]:
            r16 = reader(base_of(op), "f16", hi16=bool(op_sel[k]))
            r = (lambda wv, r16=r16: NP.fcvt(r16(wv), 32))
        else:
            r = reader(base_of(op), "f32")
        if isinstance(op, Src) and (op.abs or op.neg):
            ab, ng = op.abs, op.neg
            r = (lambda wv, r=r, ab=ab, ng=ng: _fmods(r(wv), ab, ng))
        rds.append(r)
    mode = spec.extra["mix"]
    d = _regs_of(ops[0])
    clamp = bool(inst.mod("clamp"))
    fn = spec.fn
    r0, r1, r2 = rds
    if mode == "f32":
        wr = vwriter(d, "f32")
    else:
        wr = vwriter(d, "f16", hi16=(mode == "hi"), preserve=(mode == "lo"))

    def run(wv):
        v = fn(NP, r0(wv), r1(wv), r2(wv))
        if mode != "f32":
            v = NP.fcvt(v, 16)
        if clamp:
            v = NP.fclamp01(v)
        wr(wv, v, None if wv.exec_all else wv.exec_mask)
        return nxt
    return run


def _fmods(x, ab, ng):
    if ab:
        x = x & U32(0x7FFFFFFF)
    if ng:
        x = x ^ U32(0x80000000)
    return x


def compile_swap(inst, spec, ctx, nxt):
    """V_SWAP_B32 vdst, vsrc: exchange the two VGPRs in active lanes."""
    a, b = _regs_of(inst.operands[0]), _regs_of(inst.operands[1])
    if a.file != "v" or b.file != "v":
        raise CompileError("v_swap_b32 operands must be VGPRs")
    i, j = a.index, b.index

    def run(wv):
        x, y = wv.v[i].copy(), wv.v[j].copy()
        m = None if wv.exec_all else wv.exec_mask
        if m is None:
            wv.v[i], wv.v[j] = y, x
        else:
            np.copyto(wv.v[i], y, where=m)
            np.copyto(wv.v[j], x, where=m)
        return nxt
    return run


def compile_movrel(inst, spec, ctx, nxt):
    """S_MOVRELS (sdst = SGPR[ssrc + M0]) and S_MOVRELD (SGPR[sdst + M0] = ssrc)."""
    ops = inst.operands
    n = spec.extra["size"] // 4
    d, src = _sgpr_index(ops[0]), _sgpr_index(ops[1])
    if d is None or (src is None and spec.name.startswith("s_movrels")):
        raise CompileError("s_movrel operands must be SGPRs")
    rel_src = spec.name.startswith("s_movrels")
    sr = None if rel_src else sreader(ops[1], "b64" if n == 2 else "b32")

    def run(wv):
        m0 = wv.s.item(M0)
        if rel_src:
            j = src + m0
            if j + n > 102:
                raise EmuError(f"kernel: s_movrels reads SGPR {j} beyond s101 (M0={m0})")
            for k in range(n):
                wv.s[d + k] = wv.s[j + k]
        else:
            j = d + m0
            if j + n > 102:
                raise EmuError(f"kernel: s_movreld writes SGPR {j} beyond s101 (M0={m0})")
            v = int(sr(wv))
            for k in range(n):
                wv.s[j + k] = (v >> (32 * k)) & 0xFFFFFFFF
        return nxt
    return run


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


def compile_salu(inst, spec, ctx, nxt):
    ops = inst.operands
    nd = len(spec.dst)
    ns = len(spec.src)
    if len(ops) != nd + ns:
        raise CompileError(f"expected {nd} destination(s) and {ns} source(s), got {len(ops)} operands")
    rds = [sreader(_s_imm_fix(inst, op, ty), ty) for op, ty in zip(ops[nd:], spec.src)]
    if spec.extra.get("tied"):
        rds.append(sreader(ops[0], spec.dst[0]))
    for imp in spec.imp_in:
        if imp == "scc":
            rds.append(lambda wv: wv.scc)
        elif imp == "exec":
            rds.append(lambda wv: ITYPES[64](wv.s.item(EXEC) | (wv.s.item(EXEC + 1) << 32)))
        else:
            raise CompileError(f"implicit input {imp}")
    wrs = [swriter(op, ty) for op, ty in zip(ops[:nd], spec.dst)]
    for imp in spec.imp_out:
        if imp == "scc":
            wrs.append(_wscc)
        elif imp == "exec":
            wrs.append(swriter(Special("exec"), "b64"))
        else:
            raise CompileError(f"implicit output {imp}")
    fn = spec.fn
    nout = len(wrs)
    B = INT
    if nout == 1:
        w0 = wrs[0]
        if len(rds) == 1:
            r0 = rds[0]

            def run(wv):
                w0(wv, fn(B, r0(wv)))
                return nxt
            return run
        if len(rds) == 2:
            r0, r1 = rds

            def run(wv):
                w0(wv, fn(B, r0(wv), r1(wv)))
                return nxt
            return run
    if nout == 2 and len(rds) == 2:
        w0, w1 = wrs
        r0, r1 = rds

        def run(wv):
            a, b = fn(B, r0(wv), r1(wv))
            w0(wv, a)
            w1(wv, b)
            return nxt
        return run

    def run(wv):
        res = fn(B, *[r(wv) for r in rds])
        if nout == 1:
            res = (res,)
        # destinations are written before the implicit outputs (saveexec: sdst gets the old EXEC)
        for w_, v in zip(wrs, res):
            w_(wv, v)
        return nxt
    return run


def compile_sopc(inst, spec, ctx, nxt):
    ops = inst.operands
    rds = [sreader(_s_imm_fix(inst, op, ty), ty) for op, ty in zip(ops, spec.src)]
    r0, r1 = rds
    fn = spec.fn

    def run(wv):
        wv.scc = bool(fn(INT, r0(wv), r1(wv)))
        return nxt
    return run


# ----------------------------------------------------------------------------- flow
def compile_branch(inst, spec, ctx, nxt):
    op = inst.operands[0] if inst.operands else None
    b = base_of(op)
    if not isinstance(b, Label):
        raise CompileError("branch target must be a label")
    if b.name not in ctx.labels:
        raise CompileError(f"branch to unknown label {b.name}")
    if b.addend:
        raise CompileError("branch target with an addend")
    t = ctx.labels[b.name]
    name = spec.name
    if name == "s_branch":
        return lambda wv: t
    if name == "s_cbranch_scc0":
        return lambda wv: nxt if wv.scc else t
    if name == "s_cbranch_scc1":
        return lambda wv: t if wv.scc else nxt
    if name == "s_cbranch_vccz":
        return lambda wv: nxt if wv.s[VCC] or wv.s[VCC + 1] else t
    if name == "s_cbranch_vccnz":
        return lambda wv: t if wv.s[VCC] or wv.s[VCC + 1] else nxt
    if name == "s_cbranch_execz":
        return lambda wv: nxt if wv.exec_any else t
    if name == "s_cbranch_execnz":
        return lambda wv: t if wv.exec_any else nxt
    raise CompileError(name)


def compile_lane(inst, spec, ctx, nxt):
    ops = inst.operands
    name = spec.name
    if name == "v_readfirstlane_b32":
        wr = swriter(ops[0], "b32")
        r = reader(ops[1], "b32")

        def run(wv):
            x = _b64(r(wv))
            ln = int(np.argmax(wv.exec_mask)) if wv.exec_any else 0
            wr(wv, x.item(ln))
            return nxt
        return run
    if name == "v_readlane_b32":
        src = base_of(ops[1])
        di = _sgpr_index(ops[0])
        lsel = base_of(ops[2])
        if isinstance(src, Reg) and src.file in ("v", "a") and di is not None and di < EXEC \
                and di != VCC and di != VCC + 1:
            si, sf = src.index, src.file
            if isinstance(lsel, Imm):
                ln0 = int(lsel.value) & 63

                def run(wv):
                    wv.s[di] = (wv.v if sf == "v" else wv.a)[si, ln0]
                    return nxt
                return run
            li = _sgpr_index(lsel)
            if li is not None:
                def run(wv):
                    wv.s[di] = (wv.v if sf == "v" else wv.a)[si, wv.s[li] & 63]
                    return nxt
                return run
        wr = swriter(ops[0], "b32")
        r = reader(ops[1], "b32")
        sel = reader(ops[2], "u32", vector_ok=False)

        def run(wv):
            x = _b64(r(wv))
            ln = int(sel(wv)[0]) & 63
            wr(wv, x.item(ln))
            return nxt
        return run
    if name == "v_writelane_b32":
        d = _regs_of(ops[0])
        r = reader(ops[1], "b32", vector_ok=False)
        sel = reader(ops[2], "u32", vector_ok=False)
        i = d.index

        def run(wv):
            wv.v[i, int(sel(wv)[0]) & 63] = r(wv)[0]
            return nxt
        return run
    raise CompileError(name)


_GPR_IDX = {"SRC0": 1, "SRC1": 2, "SRC2": 4, "DST": 8}


def _gpr_idx_bits(op) -> int:
    b = base_of(op)
    if isinstance(b, Func) and b.name == "gpr_idx":
        return sum(_GPR_IDX[str(a).upper()] for a in b.args)
    if isinstance(b, Imm):
        return int(b.value) & 0xF
    raise CompileError("expected gpr_idx(...)")


def _indexed(inst, spec, ctx, nxt, comp):
    """A VALU instruction inside s_set_gpr_idx_on/off: VGPR operands named by the
    M0[15:12] mode bits are offset by M0[7:0] at run time (compiled once per offset)."""
    cache = {}
    plain = comp(inst, spec, ctx, nxt)
    nd = 1 if spec.kind in ("vopc", "lane") else len(spec.dst)

    def shifted(off, modes):
        ops = list(inst.operands)
        for k, op in enumerate(ops):
            if k < nd:
                on = modes & 8
            else:
                on = modes & (1 << min(k - nd, 2))
            b = base_of(op)
            if on and isinstance(b, Reg) and b.file == "v":
                nb = Reg("v", b.index + off, b.count)
                ops[k] = Src(nb, op.neg, op.abs, op.sext, op.style) if isinstance(op, Src) else nb
        return comp(inst.evolve(operands=ops), spec, ctx, nxt)

    def run(wv):
        if wv.gpr_idx is None:
            return plain(wv)
        m0 = wv.s.item(M0)
        key = m0 & 0xF0FF
        f = cache.get(key)
        if f is None:
            f = cache[key] = shifted(m0 & 0xFF, (m0 >> 12) & 0xF)
        return f(wv)
    return run


def compile_sys(inst, spec, ctx, nxt):
    name = spec.name
    ops = inst.operands
    if name == "s_getpc_b64":
        addr = ctx.addresses[nxt] if nxt < len(ctx.addresses) and ctx.addresses[nxt] is not None else None
        if addr is None:
            raise CompileError("s_getpc_b64 needs instruction addresses")
        wr = swriter(ops[0], "b64")
        return lambda wv: (wr(wv, addr), nxt)[1]
    if name in ("s_getreg_b32", "s_setreg_b32", "s_setreg_imm32_b32"):
        f = base_of(ops[1] if name == "s_getreg_b32" else ops[0])
        if not isinstance(f, Func) or f.name != "hwreg":
            raise CompileError("expected hwreg(...)")
        reg = f.args[0]
        off = int(f.args[1]) if len(f.args) > 1 else 0
        size = int(f.args[2]) if len(f.args) > 2 else 32
        if reg not in ("HW_REG_MODE", 1, "1"):
            raise CompileError(f"hardware register {reg} is not emulated")
        m = ((1 << size) - 1) << off
        if name == "s_getreg_b32":
            wr = swriter(ops[0], "b32")
            return lambda wv: (wr(wv, (wv.mode & m) >> off), nxt)[1]
        src = reader(ops[1], "b32", vector_ok=False) if name == "s_setreg_b32" else \
            (lambda wv, c=np.array([int(base_of(ops[1]).value) & 0xFFFFFFFF], U32): c)

        def run(wv):
            v = int(src(wv)[0])
            new = (wv.mode & ~m) | ((v << off) & m)
            if (new & 0xF) != 0:
                raise EmuError(f"s_setreg to MODE selects a rounding mode other than "
                               f"round-to-nearest-even ({new & 0xF:#x}); not emulated")
            wv.mode = new
            return nxt
        return run
    if name == "s_set_gpr_idx_on":
        # M0[7:0] = index, M0[15:12] = enabled operands; VGPR indexing on (CDNA3 ISA guide,
        # "VGPR indexing"); the indexed VALU instructions are compiled in Program._compile
        src = sreader(ops[0], "u32")
        bits = _gpr_idx_bits(ops[1])

        def run(wv):
            m0 = wv.s.item(M0)
            wv.s[M0] = (m0 & 0xFFFF0F00) | (int(src(wv)) & 0xFF) | (bits << 12)
            wv.gpr_idx = True
            return nxt
        return run
    if name == "s_set_gpr_idx_off":
        def run(wv):
            wv.gpr_idx = None
            return nxt
        return run
    if name == "s_set_gpr_idx_mode":
        bits = _gpr_idx_bits(ops[0])

        def run(wv):
            wv.s[M0] = (wv.s.item(M0) & 0xFFFF0FFF) | (bits << 12)
            return nxt
        return run
    if name in ("s_memtime", "s_memrealtime"):
        wr = swriter(ops[0], "b64")
        return lambda wv: (wr(wv, wv.count & 0xFFFFFFFFFFFFFFFF), nxt)[1]
    if name == "s_trap":
        # the emulator has no trap handler: a trap ends the run with an error naming the
        # trap id (CDNA3 ISA guide, SOPP S_TRAP: enter the trap handler with TRAPID=SIMM16[7:0])
        tid = int(base_of(ops[0]).value) & 0xFF if ops else 0

        def run(wv):
            raise EmuError(f"s_trap {tid}: the wave entered the trap handler (wave {wv.index} of "
                           f"workgroup {wv.group.id}); the emulator has no trap handler")
        return run
    if name == "s_sendmsg":
        # compute waves on gfx942: messages (MSG_INTERRUPT, MSG_SYSMSG, MSG_DEALLOC_VGPRS...)
        # have no effect on the wave's registers or memory
        return lambda wv: nxt
    if name in ("s_setpc_b64", "s_swappc_b64"):
        # indirect jump to a byte address inside this kernel (CDNA3 ISA guide, SOP1 S_SETPC_B64,
        # S_SWAPPC_B64: SDST = address of the next instruction, PC = SSRC)
        addrs = ctx.addresses
        if any(a is None for a in addrs):
            raise CompileError(f"{name} needs instruction addresses")
        index = {a: k for k, a in enumerate(addrs)}
        src = sreader(ops[-1], "b64")
        wr = None
        if name == "s_swappc_b64":
            if nxt >= len(addrs):
                raise CompileError("s_swappc_b64 is the last instruction")
            wr = swriter(ops[0], "b64")
            ret = addrs[nxt]

        def run(wv):
            target = int(src(wv))
            k = index.get(target)
            if k is None:
                raise EmuError(f"{name}: target {target:#x} is not an instruction address of "
                               "this kernel")
            if wr is not None:
                wr(wv, ret)
            return k
        return run
    raise CompileError(f"{name} is not emulated")


# ----------------------------------------------------------------------------- memory
def _to_dwords(data: np.ndarray) -> np.ndarray:
    """uint8 (n, 4k) -> uint32 (n, k)."""
    return np.ascontiguousarray(data).view("<u4")


def _ext(data: np.ndarray, size: int, signed: bool) -> np.ndarray:
    """uint8 (n, 1|2) -> uint32 (n,) zero/sign-extended."""
    if size == 1:
        v = data[:, 0]
        return v.view(np.int8).astype(np.int32).view(U32) if signed else v.astype(U32)
    v = np.ascontiguousarray(data).view("<u2")[:, 0]
    return v.view(np.int16).astype(np.int32).view(U32) if signed else v.astype(U32)


def _load_into(wv, dst: Reg, data: np.ndarray, lanes: np.ndarray, spec) -> None:
    """Write loaded bytes (n, size) to the destination registers of active ``lanes``."""
    R = wv.v if dst.file == "v" else wv.a
    size = data.shape[1]
    ex = spec.extra
    if ex.get("d16"):
        v = _ext(data, size, ex.get("signed", False)) & U32(0xFFFF)
        old = R[dst.index, lanes]
        if ex.get("d16_hi"):
            R[dst.index, lanes] = (old & U32(0xFFFF)) | (v << U32(16))
        else:
            R[dst.index, lanes] = (old & U32(0xFFFF0000)) | v
        return
    if size < 4:
        R[dst.index, lanes] = _ext(data, size, ex.get("signed", False))
        return
    dw = _to_dwords(data)
    for k in range(dw.shape[1]):
        R[dst.index + k, lanes] = dw[:, k]


def _store_data(wv, src: Reg, lanes: np.ndarray, size: int, d16_hi=False) -> np.ndarray:
    """Bytes (n, size) to store from the data registers of active ``lanes``."""
    R = wv.v if src.file == "v" else wv.a
    if size < 4:
        v = R[src.index, lanes]
        if d16_hi:
            v = v >> U32(16)
        return np.ascontiguousarray(v.astype(U32)).view(U8).reshape(-1, 4)[:, :size]
    n = size // 4
    dw = np.stack([R[src.index + k, lanes] for k in range(n)], axis=1)
    return np.ascontiguousarray(dw).view(U8).reshape(len(lanes), size)


_DWS = {k: np.arange(k, dtype=np.uint32)[:, None] for k in (1, 2, 3, 4)}


_ALL_LANES = {64: LANES}


def _active(wv):
    """Indices of the active lanes (all LANE_COUNT lanes when EXEC is full)."""
    n = LANE_COUNT[0]
    lanes = _ALL_LANES.get(n)
    if lanes is None:
        lanes = _ALL_LANES[n] = np.arange(n)
    return lanes[wv.exec_mask] if not wv.exec_all else lanes


def _load_words(wv, dst: Reg, words: np.ndarray, lanes: np.ndarray, all_lanes: bool) -> None:
    """Write uint32 (n, k) loaded words to registers dst..dst+k-1 of ``lanes``."""
    R = wv.v if dst.file == "v" else wv.a
    k = words.shape[1]
    if all_lanes:
        R[dst.index:dst.index + k] = words.T
    else:
        for j in range(k):
            R[dst.index + j, lanes] = words[:, j]


def _store_words(wv, src: Reg, lanes: np.ndarray, ndw: int, all_lanes: bool) -> np.ndarray:
    R = wv.v if src.file == "v" else wv.a
    if all_lanes:
        return R[src.index:src.index + ndw].T
    return R[src.index:src.index + ndw][:, lanes].T


def compile_smem(inst, spec, ctx, nxt):
    ops = inst.operands
    dst = _regs_of(ops[0])
    size = spec.extra["size"]
    off_op = base_of(ops[2]) if len(ops) > 2 else Imm(0)
    off_imm = inst.mod("offset", 0)
    if isinstance(off_op, Imm):
        off_r = _const_reader(int(off_op.value) & 0xFFFFFFFF, 32)
    else:
        off_r = reader(off_op, "u32", vector_ok=False)
    base_i = _sgpr_index(ops[1])
    is_buf = spec.extra.get("buffer")
    di = _sgpr_index(dst)
    n = size // 4
    if spec.extra.get("store") or spec.extra.get("atomic"):
        aop = spec.extra.get("atomic")
        ret = inst.has_mod("glc") or inst.has_mod("sc0")

        def run(wv):
            base = wv.s.item(base_i) | (wv.s.item(base_i + 1) << 32)
            off = int(off_r(wv)[0])
            if off & 0x80000000 and not is_buf and isinstance(off_op, Imm):
                off -= 1 << 32   # a signed immediate offset, as for loads
            addr = (base + off + off_imm) & ~3 & ((1 << 64) - 1)
            a = np.array([addr], U64)
            if aop is None:
                data = wv.s[di:di + n].copy().view(U8).reshape(1, size)
                ctx.mem.write(a, data, np.array([0]))
                return nxt
            old = int.from_bytes(ctx.mem.read_scalar(addr, size), "little")
            nd_ = size // 4
            val = sum(wv.s.item(di + k) << (32 * k) for k in range(nd_))
            if aop == "cmpswap":
                cmpv = sum(wv.s.item(di + nd_ + k) << (32 * k) for k in range(nd_))
                new = val if old == cmpv else old
            else:
                new = _atomic_apply(aop, old, val, size=size)
            ctx.mem.write(a, np.frombuffer(new.to_bytes(size, "little"), U8).reshape(1, size),
                      np.array([0]))
            if ret:
                for k in range(nd_):
                    wv.s[di + k] = (old >> (32 * k)) & 0xFFFFFFFF
            return nxt
        return run

    def run(wv):
        if is_buf:
            base = (int(wv.s[base_i]) | ((int(wv.s[base_i + 1]) & 0xFFFF) << 32))
        else:
            base = int(wv.s[base_i]) | (int(wv.s[base_i + 1]) << 32)
        off = int(off_r(wv)[0])
        if off & 0x80000000 and not is_buf and isinstance(off_op, Imm):
            off -= 1 << 32
        addr = (base + off + off_imm) & ~3 & ((1 << 64) - 1)
        if is_buf:
            nrec = int(wv.s[base_i + 2])
            o = (off + off_imm) & ~3
            vals = np.zeros(n, U32)
            for k in range(n):
                if o + 4 * k + 4 <= nrec:
                    vals[k] = np.frombuffer(ctx.mem.read_scalar(addr + 4 * k, 4), "<u4")[0]
        else:
            vals = np.frombuffer(ctx.mem.read_scalar(addr, size), "<u4")
        wv.s[di:di + n] = vals
        if di <= EXEC + 1 < di + n or di <= EXEC < di + n:
            wv.sync_exec()
        return nxt
    return run


def compile_vmem(inst, spec, ctx, nxt):
    """FLAT / GLOBAL / SCRATCH loads and stores (CDNA3 ISA guide, "Flat memory instructions")."""
    ex = spec.extra
    seg, size, load = ex["seg"], ex["size"], ex["load"]
    ops = inst.operands
    if load:
        dst, vaddr = _regs_of(ops[0]), base_of(ops[1])
        saddr = base_of(ops[2]) if len(ops) > 2 else Special("off")
        data_r = None
    else:
        vaddr, data_r = base_of(ops[0]), _regs_of(ops[1])
        saddr = base_of(ops[2]) if len(ops) > 2 else Special("off")
        dst = None
    lds_dma = bool(ex.get("lds"))
    if lds_dma:
        vaddr = base_of(ops[0])
        saddr = base_of(ops[1]) if len(ops) > 1 else Special("off")
        dst = None
    offset = int(inst.mod("offset", 0))
    s_off = isinstance(saddr, Special) and saddr.name == "off"
    v_off = isinstance(vaddr, Special) and vaddr.name == "off"
    if seg == "scratch":
        vr = None if v_off else reader(vaddr, "u32")
        sr = None if s_off else reader(saddr, "u32", vector_ok=False)

        def addr_fn(wv, lanes):
            a = np.full(len(lanes), offset, np.int64)
            if vr is not None:
                a += _b64(vr(wv))[lanes].astype(np.int64)
            if sr is not None:
                a += int(sr(wv)[0])
            return a & 0xFFFFFFFF
    elif s_off:
        vr = reader(vaddr, "u64")
        uoff = U64(offset & 0xFFFFFFFFFFFFFFFF)

        def addr_fn(wv, lanes):
            a = vr(wv)
            if not wv.exec_all or a.shape[0] != 64:
                a = _b64(a)[lanes]
            return a + uoff if offset else a
    else:
        vr = reader(vaddr, "u32")
        sr = reader(saddr, "u64", vector_ok=False)
        uoff = U64(offset & 0xFFFFFFFFFFFFFFFF)

        def addr_fn(wv, lanes):
            a = vr(wv)
            if not wv.exec_all or a.shape[0] != 64:
                a = _b64(a)[lanes]
            return a.astype(U64) + (sr(wv)[0] + uoff)

    def space_read(wv, a, lanes):
        if seg == "scratch":
            if wv.scratch is None:
                raise MemoryFault(int(lanes[0]), int(a[0]), size, "scratch (kernel has no private segment)")
            return wv.scratch.read(a, size, lanes)
        if seg == "flat":
            return _flat(wv, ctx.mem, a, lanes, size, None)
        return ctx.mem.read(a, size, lanes)

    def space_write(wv, a, data, lanes):
        if seg == "scratch":
            if wv.scratch is None:
                raise MemoryFault(int(lanes[0]), int(a[0]), size, "scratch (kernel has no private segment)")
            return wv.scratch.write(a, data, lanes)
        if seg == "flat":
            return _flat(wv, ctx.mem, a, lanes, size, data)
        return ctx.mem.write(a, data, lanes)

    d16_hi = ex.get("d16_hi", False)
    if lds_dma:
        def run(wv):
            if not wv.exec_any:
                return nxt
            lanes = _active(wv)
            data = space_read(wv, addr_fn(wv, lanes), lanes)
            if size < 4:   # sub-dword loads are zero/sign-extended to a dword in LDS
                data = np.ascontiguousarray(_ext(data, size, ex.get("signed", False))).view(U8).reshape(-1, 4)
            o = (wv.s.item(M0) & 0xFFFF) + offset + lanes.astype(np.int64) * 4
            wv.group.lds.write(o, data, lanes)
            return nxt
        return run
    words_ok = size % 4 == 0 and not ex.get("d16")
    ndw = size // 4
    if seg == "scratch" and v_off and words_ok:
        # uniform address (SGPR + offset): same offset in every lane's private memory
        def uaddr(wv):
            o = offset + (int(sr(wv)[0]) if sr is not None else 0)
            if o & 3 or wv.scratch is None:
                return None
            return o
        if load:
            def run(wv):
                if not wv.exec_any:
                    return nxt
                o = uaddr(wv)
                if o is None:
                    lanes = _active(wv)
                    _load_into(wv, dst, space_read(wv, addr_fn(wv, lanes), lanes), lanes, spec)
                    return nxt
                wds = wv.scratch.read_words_uniform(o, ndw)
                R = wv.v if dst.file == "v" else wv.a
                if wv.exec_all:
                    R[dst.index:dst.index + ndw] = wds.T
                else:
                    np.copyto(R[dst.index:dst.index + ndw], wds.T, where=wv.exec_mask)
                return nxt
        else:
            def run(wv):
                if not wv.exec_any:
                    return nxt
                o = uaddr(wv)
                if o is None:
                    lanes = _active(wv)
                    space_write(wv, addr_fn(wv, lanes), _store_data(wv, data_r, lanes, size), lanes)
                    return nxt
                R = wv.v if data_r.file == "v" else wv.a
                wv.scratch.write_words_uniform(o, R[data_r.index:data_r.index + ndw],
                                               None if wv.exec_all else wv.exec_mask)
                return nxt
        return run
    if seg == "global" and words_ok:
        if load:
            def run(wv):
                if not wv.exec_any:
                    return nxt
                lanes = _active(wv)
                _load_words(wv, dst, ctx.mem.read_words(addr_fn(wv, lanes), ndw, lanes), lanes, wv.exec_all)
                return nxt
        else:
            def run(wv):
                if not wv.exec_any:
                    return nxt
                lanes = _active(wv)
                ctx.mem.write_words(addr_fn(wv, lanes), _store_words(wv, data_r, lanes, ndw, wv.exec_all),
                                lanes)
                return nxt
        return run
    if load:
        def run(wv):
            if not wv.exec_any:
                return nxt
            lanes = _active(wv)
            data = space_read(wv, addr_fn(wv, lanes), lanes)
            _load_into(wv, dst, data, lanes, spec)
            return nxt
    else:
        def run(wv):
            if not wv.exec_any:
                return nxt
            lanes = _active(wv)
            space_write(wv, addr_fn(wv, lanes), _store_data(wv, data_r, lanes, size, d16_hi), lanes)
            return nxt
    return run


def _flat(wv, mem, a, lanes, size, data):
    """FLAT access: shared aperture -> LDS, private aperture -> scratch, else global."""
    hi = (a >> U64(32)).astype(np.int64)
    sh = hi == SHARED_APERTURE_HI
    pr = hi == PRIVATE_APERTURE_HI
    if not sh.any() and not pr.any():
        return mem.read(a, size, lanes) if data is None else mem.write(a, data, lanes)
    if sh.all():
        o = (a & U64(0xFFFFFFFF)).astype(np.int64)
        return wv.group.lds.read(o, size, lanes) if data is None else wv.group.lds.write(o, data, lanes)
    if pr.all() and wv.scratch is not None:
        o = (a & U64(0xFFFFFFFF)).astype(np.int64)
        return wv.scratch.read(o, size, lanes) if data is None else wv.scratch.write(o, data, lanes)
    raise MemoryFault(int(lanes[0]), int(a[0]), size, "flat (mixed apertures)")


def _atomic_apply(op, old, val, cmp=None, size=4):
    """One atomic update on Python ints (32/64-bit). Returns the new memory value."""
    bits = size * 8
    m = (1 << bits) - 1

    def s(x):
        return x - (1 << bits) if x >> (bits - 1) else x
    if op == "add":
        return (old + val) & m
    if op == "sub":
        return (old - val) & m
    if op == "rsub":
        return (val - old) & m
    if op == "swap":
        return val
    if op in ("cmpswap", "cmpst"):
        return val if old == cmp else old
    if op in ("smin", "min_i32"):
        return old if s(old) <= s(val) else val
    if op in ("smax", "max_i32"):
        return old if s(old) >= s(val) else val
    if op in ("umin", "min_u32"):
        return min(old, val)
    if op in ("umax", "max_u32"):
        return max(old, val)
    if op == "and":
        return old & val
    if op == "or":
        return old | val
    if op == "xor":
        return old ^ val
    if op == "inc":
        return 0 if old >= val else old + 1
    if op == "dec":
        return val if (old == 0 or old > val) else old - 1
    if op in ("add_f32", "min_f32", "max_f32"):
        a = np.array([old], U32).view(np.float32)
        b = np.array([val], U32).view(np.float32)
        r = a + b if op == "add_f32" else (np.fmin(a, b) if op == "min_f32" else np.fmax(a, b))
        return int(r.astype(np.float32).view(U32)[0])
    if op in ("add_f64", "min_f64", "max_f64"):
        a = np.array([old], U64).view(np.float64)
        b = np.array([val], U64).view(np.float64)
        r = a + b if op == "add_f64" else (np.fmin(a, b) if op == "min_f64" else np.fmax(a, b))
        return int(r.view(U64)[0])
    if op == "pk_add_f16":
        a = np.array([old], U32).view(np.float16)
        b = np.array([val], U32).view(np.float16)
        return int((a + b).view(U32)[0])
    if op == "pk_add_bf16":
        a = np.array([old], U32).view(U16).astype(U32) << U32(16)
        b = np.array([val], U32).view(U16).astype(U32) << U32(16)
        r = a.view(np.float32) + b.view(np.float32)
        rb = r.view(U32)
        rb = (rb + U32(0x7FFF) + ((rb >> U32(16)) & U32(1))) >> U32(16)  # RNE to bf16
        return int(rb[0]) | (int(rb[1]) << 16)
    raise CompileError(f"atomic {op}")


def compile_vmem_atomic(inst, spec, ctx, nxt):
    ex = spec.extra
    op, seg = ex["op"], ex["seg"]
    size = 8 if (inst.opcode.endswith("_x2") or op.endswith("f64")) else 4
    ops = inst.operands
    ret = inst.has_mod("sc0") or inst.has_mod("glc")
    if ret:
        dst, vaddr, data, saddr = _regs_of(ops[0]), base_of(ops[1]), _regs_of(ops[2]), base_of(ops[3])
    else:
        dst, vaddr, data, saddr = None, base_of(ops[0]), _regs_of(ops[1]), base_of(ops[2])
    offset = int(inst.mod("offset", 0))
    s_off = isinstance(saddr, Special) and saddr.name == "off"
    vr = reader(vaddr, "u64" if s_off else "u32")
    sr = None if s_off else reader(saddr, "u64", vector_ok=False)
    nd = size // 4
    cmp = op == "cmpswap"

    def run(wv):
        if not wv.exec_any:
            return nxt
        lanes = _active(wv)
        a = _b64(vr(wv))[lanes].astype(U64) + U64(offset)
        if sr is not None:
            a = a + sr(wv)[0]
        for j, ln in enumerate(lanes):
            aj = a[j:j + 1]
            old_b = ctx.mem.read(aj, size, lanes[j:j + 1]) if seg != "flat" else _flat(wv, ctx.mem, aj, lanes[j:j + 1], size, None)
            old = int.from_bytes(old_b.tobytes(), "little")
            val = sum(int(wv.v[data.index + k, ln]) << (32 * k) for k in range(nd))
            cv = sum(int(wv.v[data.index + nd + k, ln]) << (32 * k) for k in range(nd)) if cmp else None
            new = _atomic_apply(op, old, val, cv, size) if not cmp else (val if old == cv else old)
            nb = np.frombuffer(new.to_bytes(size, "little"), U8).reshape(1, size)
            if seg == "flat":
                _flat(wv, ctx.mem, aj, lanes[j:j + 1], size, nb)
            else:
                ctx.mem.write(aj, nb, lanes[j:j + 1])
            if dst is not None:
                for k in range(nd):
                    wv.v[dst.index + k, ln] = (old >> (32 * k)) & 0xFFFFFFFF
        return nxt
    return run


#: V# DATA_FORMAT (word3 bits [18:15], GFX9) -> (bits per component, components); the packed
#: 10/11-bit formats (6-9) are not emulated (CDNA3 ISA guide, "Buffer resource")
_BUF_DFMT = {1: (8, 1), 2: (16, 1), 3: (8, 2), 4: (32, 1), 5: (16, 2), 10: (8, 4), 11: (32, 2),
             12: (16, 4), 13: (32, 3), 14: (32, 4)}
_BUF_NFMT = {0: "unorm", 1: "snorm", 2: "uscaled", 3: "sscaled", 4: "uint", 5: "sint", 7: "float"}


_DFMT_NAMES = {"INVALID": 0, "8": 1, "16": 2, "8_8": 3, "32": 4, "16_16": 5, "10_11_11": 6,
               "11_11_10": 7, "10_10_10_2": 8, "2_10_10_10": 9, "8_8_8_8": 10, "32_32": 11,
               "16_16_16_16": 12, "32_32_32": 13, "32_32_32_32": 14, "RESERVED_15": 15}
_NFMT_NAMES = {"UNORM": 0, "SNORM": 1, "USCALED": 2, "SSCALED": 3, "UINT": 4, "SINT": 5,
               "RESERVED_6": 6, "FLOAT": 7}


def _mtbuf_word3(inst) -> int:
    """V# word-3 format bits of an MTBUF instruction's ``format`` (GFX9: DFMT = bits [3:0],
    NFMT = bits [6:4] of the 7-bit field, default 1 = BUF_DATA_FORMAT_8, UNORM; LLVM
    AMDGPUAsmParser / SIDefines MTBUFFormat)."""
    f = inst.mod("format", 1)
    dfmt, nfmt = 1, 0
    if isinstance(f, (tuple, list)):
        for name in f:
            name = str(name)
            if name.startswith("BUF_DATA_FORMAT_") and name[16:] in _DFMT_NAMES:
                dfmt = _DFMT_NAMES[name[16:]]
            elif name.startswith("BUF_NUM_FORMAT_") and name[15:] in _NFMT_NAMES:
                nfmt = _NFMT_NAMES[name[15:]]
            else:
                raise CompileError(f"unknown buffer format {name}")
    else:
        v = int(f)
        dfmt, nfmt = v & 0xF, (v >> 4) & 0x7
    return (dfmt << 15) | (nfmt << 12)


def _buf_format(word3: int):
    """(bits, components, numeric format) of a V#'s word 3; EmuError for other formats."""
    dfmt, nfmt = (word3 >> 15) & 0xF, (word3 >> 12) & 0x7
    if dfmt not in _BUF_DFMT or nfmt not in _BUF_NFMT:
        raise EmuError(f"buffer format access with DATA_FORMAT {dfmt} NUM_FORMAT {nfmt} is "
                       "not emulated")
    bits, nc = _BUF_DFMT[dfmt]
    nf = _BUF_NFMT[nfmt]
    if nf == "float" and bits == 8:
        raise EmuError("8-bit float buffer format is not valid")
    return bits, nc, nf


def _fmt_decode(raw: np.ndarray, bits: int, nf: str) -> np.ndarray:
    """Components (n, c) as unsigned ints of ``bits`` -> uint32 results (n, c)."""
    raw = raw.astype(np.int64)
    sg = np.where(raw >= (1 << (bits - 1)), raw - (1 << bits), raw) if bits < 64 else raw
    if nf == "uint" or (nf == "float" and bits == 32):
        return raw.astype(U32)
    if nf == "sint":
        return sg.astype(np.int64).astype(U32)
    if nf == "float":
        return raw.astype(U16).view(np.float16).astype(np.float32).view(U32)
    if nf == "unorm":
        f = raw / float((1 << bits) - 1)
    elif nf == "snorm":
        f = np.maximum(sg / float((1 << (bits - 1)) - 1), -1.0)
    elif nf == "uscaled":
        f = raw.astype(np.float64)
    else:
        f = sg.astype(np.float64)
    return f.astype(np.float32).view(U32)


def _fmt_encode(vals: np.ndarray, bits: int, nf: str) -> np.ndarray:
    """uint32 register values (n, c) -> components (n, c) as unsigned ints of ``bits``."""
    m = (1 << bits) - 1
    if nf in ("uint", "sint") or (nf == "float" and bits == 32):
        return vals.astype(np.int64) & m
    f = vals.astype(U32).view(np.float32).astype(np.float64)
    if nf == "float":
        return f.astype(np.float16).view(U16).astype(np.int64)
    if nf == "unorm":
        q = np.rint(np.clip(np.nan_to_num(f), 0.0, 1.0) * m)
    elif nf == "snorm":
        h = (1 << (bits - 1)) - 1
        q = np.rint(np.clip(np.nan_to_num(f), -1.0, 1.0) * h)
    else:
        lo, hi = (0, m) if nf == "uscaled" else (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
        q = np.clip(np.trunc(np.nan_to_num(f)), lo, hi)
    return q.astype(np.int64) & m


def compile_mubuf(inst, spec, ctx, nxt):
    """MUBUF with a buffer resource (V#): base, stride, num_records; out-of-range
    loads return 0 and out-of-range stores are dropped (CDNA3 ISA guide, "Buffer
    instructions", range checking)."""
    ex = spec.extra
    size, load = ex["size"], ex.get("load", False)
    if inst.has_mod("tfe") or inst.has_mod("lwe") or inst.has_mod("addr64"):
        raise CompileError("tfe/lwe/addr64 buffer forms are not emulated")
    ops = list(inst.operands)
    if inst.has_mod("lds") and len(ops) == 3:
        ops = [None] + ops          # LDS DMA: no vdata operand (vaddr, srsrc, soffset)
    dst_or_data = _regs_of(ops[0]) if ops[0] is not None else None
    vaddr = base_of(ops[1])
    rsrc_i = _sgpr_index(ops[2])
    if rsrc_i is None:
        raise CompileError(f"buffer resource {ops[2]} is not an SGPR quad")
    soff = base_of(ops[3]) if len(ops) > 3 else Imm(0)
    soff_r = _const_reader(int(soff.value) & 0xFFFFFFFF, 32) if isinstance(soff, Imm) else \
        reader(soff, "u32", vector_ok=False)
    offen, idxen = inst.has_mod("offen"), inst.has_mod("idxen")
    ioff = int(inst.mod("offset", 0))
    lds = inst.has_mod("lds")
    v_off = isinstance(vaddr, Special) and vaddr.name == "off"
    vr = None if v_off else reader(vaddr, "b64" if (offen and idxen) else "u32")
    is_atomic = spec.kind == "mubuf_atomic"

    nfmt_c = ex.get("format", 0)
    t_word3 = _mtbuf_word3(inst) if ex.get("tbuffer") else None

    def addrs(wv, lanes, size=size):
        r = wv.s[rsrc_i:rsrc_i + 4]
        base = int(r[0]) | ((int(r[1]) & 0xFFFF) << 32)
        stride = (int(r[1]) >> 16) & 0x3FFF
        nrec = int(r[2])
        add_tid = (int(r[3]) >> 23) & 1
        so = int(soff_r(wv)[0])
        v = _b64(vr(wv))[lanes].astype(np.int64) if vr is not None else np.zeros(len(lanes), np.int64)
        if offen and idxen:
            vv = _b64(vr(wv))[lanes]
            idx = (vv & U64(0xFFFFFFFF)).astype(np.int64)
            off = (vv >> U64(32)).astype(np.int64)
        elif idxen:
            idx, off = v & 0xFFFFFFFF, np.zeros(len(lanes), np.int64)
        elif offen:
            idx, off = np.zeros(len(lanes), np.int64), v & 0xFFFFFFFF
        else:
            idx, off = np.zeros(len(lanes), np.int64), np.zeros(len(lanes), np.int64)
        if add_tid:
            idx = idx + lanes
        off = off + ioff
        if stride == 0 and not idxen and not add_tid:
            inr = off + size <= nrec
        else:
            inr = idx < nrec
        a = (np.int64(base) + so + idx * stride + off).astype(U64)
        return a, inr

    def run(wv):
        if not wv.exec_any:
            return nxt
        lanes = _active(wv)
        if nfmt_c:
            # buffer_*_format_*: element of the V#'s format; components the instruction names
            # beyond the format's read as 0 (x, y, z) / 1 (w), and are not written by stores
            bits, nc, nf = _buf_format(wv.s.item(rsrc_i + 3) if t_word3 is None else t_word3)
            esz = bits * nc // 8
            a, inr = addrs(wv, lanes, esz)
            R = wv.v if dst_or_data.file == "v" else wv.a
            di = dst_or_data.index
            nuse = min(nc, nfmt_c)
            if load:
                data = np.zeros((len(lanes), esz), U8)
                if np.count_nonzero(inr):
                    data[inr] = ctx.mem.read(a[inr], esz, lanes[inr])
                comp = np.ascontiguousarray(data).view({8: U8, 16: U16, 32: U32}[bits])
                out = _fmt_decode(comp[:, :nuse], bits, nf)
                one = U32(0x3F800000) if nf not in ("uint", "sint") else U32(1)
                for k in range(nfmt_c):
                    if k < nuse:
                        R[di + k, lanes] = np.where(inr, out[:, k], U32(0))
                    else:
                        R[di + k, lanes] = one if k == 3 else U32(0)
            else:
                vals = np.stack([R[di + k, lanes] for k in range(nuse)], axis=1)
                enc = _fmt_encode(vals, bits, nf).astype({8: U8, 16: U16, 32: U32}[bits])
                if nuse < nc:
                    full = np.zeros((len(lanes), nc), enc.dtype)
                    full[:, :nuse] = enc
                    enc = full
                    # components the instruction does not name keep their memory bytes
                    keep = np.ascontiguousarray(ctx.mem.read(a[inr], esz, lanes[inr])).view(
                        enc.dtype) if np.count_nonzero(inr) else None
                    if keep is not None:
                        enc[inr, nuse:] = keep[:, nuse:]
                data = np.ascontiguousarray(enc).view(U8).reshape(len(lanes), esz)
                if np.count_nonzero(inr):
                    ctx.mem.write(a[inr], data[inr], lanes[inr])
            return nxt
        a, inr = addrs(wv, lanes)
        if is_atomic:
            # operands: vdata (old value returned there with glc/sc0), vaddr, srsrc, soffset;
            # out-of-range lanes do nothing and return 0
            aop = ex["op"]
            ret = inst.has_mod("glc") or inst.has_mod("sc0")
            R = wv.v if dst_or_data.file == "v" else wv.a
            di, ndw = dst_or_data.index, size // 4
            for j, ln in enumerate(lanes):
                if not inr[j]:
                    if ret:
                        R[di:di + ndw, ln] = 0
                    continue
                aj = a[j:j + 1]
                old = int.from_bytes(ctx.mem.read(aj, size, lanes[j:j + 1]).tobytes(), "little")
                val = sum(int(R[di + k, ln]) << (32 * k) for k in range(ndw))
                if aop == "cmpswap":
                    cmpv = sum(int(R[di + ndw + k, ln]) << (32 * k) for k in range(ndw))
                    new = val if old == cmpv else old
                else:
                    new = _atomic_apply(aop, old, val, size=size)
                ctx.mem.write(aj, np.frombuffer(new.to_bytes(size, "little"), U8).reshape(1, size),
                          lanes[j:j + 1])
                if ret:
                    for k in range(ndw):
                        R[di + k, ln] = (old >> (32 * k)) & 0xFFFFFFFF
            return nxt
        if load:
            data = np.zeros((len(lanes), size), U8)
            if np.count_nonzero(inr):
                data[inr] = ctx.mem.read(a[inr], size, lanes[inr])
            if lds:
                # LDS DMA: LDS byte address = M0[15:0] + instruction offset + lane * size (the
                # immediate offset applies to both addresses; LLVM llvm.amdgcn.raw.buffer.load.lds)
                o = (wv.s.item(M0) & 0xFFFF) + ioff + lanes.astype(np.int64) * size
                wv.group.lds.write(o, data, lanes)
            else:
                _load_into(wv, dst_or_data, data, lanes, spec)
        else:
            data = _store_data(wv, dst_or_data, lanes, size, ex.get("d16_hi", False))
            if np.count_nonzero(inr):
                ctx.mem.write(a[inr], data[inr], lanes[inr])
        return nxt
    return run


def compile_ds(inst, spec, ctx, nxt):
    """LDS instructions (CDNA3 ISA guide, "Data share operations")."""
    ex = spec.extra
    op = ex["op"]
    size = ex["size"]
    ops = inst.operands
    offset = inst.mod("offset", 0)
    if op == "append":
        wr = vwriter(ops[0], "b32")
        off0 = int(offset or 0)
        sign = ex["sign"]

        def run(wv):
            if not wv.exec_any:
                return nxt
            lds = wv.group.lds
            n = int(np.count_nonzero(wv.exec_mask))
            a = np.array([(wv.s.item(M0) + off0) & 0xFFFFFFFF], np.int64)
            lane = _active(wv)[:1]
            old = lds.read_words(a, 1, lane)[0, 0]
            lds.write_words(a, np.array([[(int(old) + sign * n) & 0xFFFFFFFF]], U32), lane)
            wr(wv, np.full(64, old, U32), _mask_of(wv))
            return nxt
        return run
    if op == "swizzle":
        dst = _regs_of(ops[0])
        src = reader(ops[1], "b32")
        smap = _swizzle_map(offset)

        def run(wv):
            x = _b64(src(wv))
            # lanes whose source lane is inactive read 0
            v = np.where(wv.exec_mask[smap], x[smap], U32(0))
            m = _mask_of(wv)
            if m is None:
                wv.v[dst.index] = v
            else:
                np.copyto(wv.v[dst.index], v, where=m)
            return nxt
        return run
    if op in ("permute", "bpermute"):
        dst = _regs_of(ops[0])
        ar = reader(ops[1], "u32")
        dr = reader(ops[2], "b32")
        off = int(offset or 0)

        def run(wv):
            addr = ((_b64(ar(wv)).astype(np.int64) + off) >> 2) & 63
            data = _b64(dr(wv))
            act = wv.exec_mask
            if op == "bpermute":
                v = np.where(act[addr], data[addr], U32(0))
            else:
                v = np.zeros(64, U32)
                for ln in LANES[act]:
                    v[addr[ln]] = data[ln]
            np.copyto(wv.v[dst.index], v, where=act)
            return nxt
        return run
    off0 = int(offset or 0)
    if op in ("read", "write") and size % 4 == 0:
        ndw = size // 4
        if op == "read":
            dst, ar = _regs_of(ops[0]), reader(ops[1], "u32")
        else:
            ar, src = reader(ops[0], "u32"), _regs_of(ops[1])
        uoff = U32(off0)

        def run(wv):
            if not wv.exec_any:
                return nxt
            lds = wv.group.lds
            a = ar(wv)
            if off0:
                a = a + uoff
            if wv.exec_all and a.shape[0] == 64:
                w = lds.word_index(a, ndw)
                if w is not None:
                    if op == "read":
                        F = wv.v if dst.file == "v" else wv.a
                        if ndw == 1:
                            F[dst.index] = lds.words[w]
                        else:
                            F[dst.index:dst.index + ndw] = lds.words[w[None, :] + _DWS[ndw]]
                    else:
                        F = wv.v if src.file == "v" else wv.a
                        if ndw == 1:
                            lds.words[w] = F[src.index]
                        else:
                            lds.words[w[None, :] + _DWS[ndw]] = F[src.index:src.index + ndw]
                    return nxt
            lanes = _active(wv)
            aa = _b64(a)[lanes].astype(np.int64)
            if op == "read":
                _load_words(wv, dst, lds.read_words(aa, ndw, lanes), lanes, wv.exec_all)
            else:
                lds.write_words(aa, _store_words(wv, src, lanes, ndw, wv.exec_all), lanes)
            return nxt
        return run
    if op in ("read", "write", "atomic"):
        if op == "read":
            dst, ar = _regs_of(ops[0]), reader(ops[1], "u32")
        elif op == "write":
            ar, src = reader(ops[0], "u32"), _regs_of(ops[1])
        else:
            if ex["ret"]:
                dst, ar, src = _regs_of(ops[0]), reader(ops[1], "u32"), _regs_of(ops[2])
            else:
                dst, ar, src = None, reader(ops[0], "u32"), _regs_of(ops[1])
            src2 = _regs_of(ops[-1]) if ex["aop"] == "cmpst" else None

        def run(wv):
            if not wv.exec_any:
                return nxt
            lanes = _active(wv)
            a = _b64(ar(wv))[lanes].astype(np.int64) + off0
            lds = wv.group.lds
            if op == "read":
                if size % 4 == 0:
                    _load_words(wv, dst, lds.read_words(a, size // 4, lanes), lanes, wv.exec_all)
                else:
                    _load_into(wv, dst, lds.read(a, size, lanes), lanes, spec)
            elif op == "write":
                if size % 4 == 0:
                    lds.write_words(a, _store_words(wv, src, lanes, size // 4, wv.exec_all), lanes)
                else:
                    lds.write(a, _store_data(wv, src, lanes, size, ex.get("d16_hi", False)), lanes)
            else:
                lds.check(a, size, lanes)
                aop = ex["aop"]
                ndw = size // 4

                def rd(reg, ln):
                    return sum(int(wv.v[reg.index + k, ln]) << (32 * k) for k in range(ndw))
                for j, ln in enumerate(lanes):
                    o = int(a[j])
                    old = int.from_bytes(lds.data[o:o + size].tobytes(), "little")
                    if aop == "cmpst":
                        # ds_cmpst: data0 = compare, data1 = new value
                        new = rd(src2, ln) if old == rd(src, ln) else old
                    else:
                        new = _atomic_apply(aop, old, rd(src, ln), size=size)
                    lds.data[o:o + size] = np.frombuffer(int(new).to_bytes(size, "little"), U8)
                    if dst is not None:
                        for k in range(ndw):
                            wv.v[dst.index + k, ln] = (old >> (32 * k)) & 0xFFFFFFFF
            return nxt
        return run
    if op in ("read2", "write2"):
        o0 = int(inst.mod("offset0", 0))
        o1 = int(inst.mod("offset1", 0))
        st = ex["stride"] * size
        if op == "read2":
            dst, ar = _regs_of(ops[0]), reader(ops[1], "u32")
        else:
            ar, d0, d1 = reader(ops[0], "u32"), _regs_of(ops[1]), _regs_of(ops[2])
        nd = size // 4

        u0, u1 = U32(o0 * st), U32(o1 * st)

        def run(wv):
            if not wv.exec_any:
                return nxt
            lds = wv.group.lds
            if wv.exec_all:
                a32 = _b64(ar(wv))
                wa = lds.word_index(a32 + u0, nd)
                wb = lds.word_index(a32 + u1, nd)
                if wa is not None and wb is not None:
                    if op == "read2":
                        F = wv.v if dst.file == "v" else wv.a
                        if nd == 1:
                            F[dst.index] = lds.words[wa]
                            F[dst.index + 1] = lds.words[wb]
                        else:
                            F[dst.index:dst.index + nd] = lds.words[wa[None, :] + _DWS[nd]]
                            F[dst.index + nd:dst.index + 2 * nd] = lds.words[wb[None, :] + _DWS[nd]]
                    else:
                        for w_, d_ in ((wa, d0), (wb, d1)):
                            F = wv.v if d_.file == "v" else wv.a
                            if nd == 1:
                                lds.words[w_] = F[d_.index]
                            else:
                                lds.words[w_[None, :] + _DWS[nd]] = F[d_.index:d_.index + nd]
                    return nxt
            lanes = _active(wv)
            a = _b64(ar(wv))[lanes].astype(np.int64)
            if op == "read2":
                x = lds.read_words(a + o0 * st, nd, lanes)
                y = lds.read_words(a + o1 * st, nd, lanes)
                _load_words(wv, dst, np.concatenate([x, y], axis=1), lanes, wv.exec_all)
            else:
                lds.write_words(a + o0 * st, _store_words(wv, d0, lanes, nd, wv.exec_all), lanes)
                lds.write_words(a + o1 * st, _store_words(wv, d1, lanes, nd, wv.exec_all), lanes)
            return nxt
        return run
    raise CompileError(f"DS operation {op}")


# ----------------------------------------------------------------------------- MFMA
def _unpack_elems(raw: np.ndarray, ty: str):
    """Lane-major uint32 (64, nregs) -> float64/int64 elements (64, n)."""
    b = np.ascontiguousarray(raw)
    if ty == "f16":
        return b.view(np.float16).astype(np.float64)
    if ty == "bf16":
        h = b.view(U16).astype(U32) << U32(16)
        return h.view(np.float32).astype(np.float64)
    if ty == "f32":
        return b.view(np.float32).astype(np.float64)
    if ty == "f64":
        return b.view(np.float64)
    if ty == "i8":
        return b.view(np.int8).astype(np.int64)
    if ty in ("fp8", "bf8"):
        # gfx942 FNUZ formats, decoded by the same table the v_cvt_f32_fp8 semantics use
        return NP.fp82f(b.view(U8).astype(U32), ty).view(np.float32).astype(np.float64)
    raise CompileError(f"MFMA element type {ty}")


@functools.lru_cache(maxsize=None)
def mfma_maps(M: int, N: int, K: int, blocks: int = 1, f64_out: bool = False):
    """Lane/item index maps of a gfx9 MFMA with ``blocks`` independent M x N x K products
    (CDNA3 ISA guide, "Matrix arithmetic"; the same register layout as AMD's
    matrix instruction calculator for gfx9).

    Returns ``(Ai, Ak, Bl, Bk, Dl, Dk)``: int arrays of shapes (blocks, M, K), (blocks, K, N)
    and (blocks, M, N).  A[b][i][k] is element ``Ak`` (of the lane's packed elements) in lane
    ``Ai`` = b*M + M*blocks*(k // KL) + i with KL = K*M*blocks/64 elements per lane and
    ``Ak`` = k % KL; B likewise with N.  D[b][i][j] is accumulator element ``Dk`` of lane
    ``Dl``: rows come in groups of ``h`` (4, or 1 for f64 results), 64/N groups side by side
    across the lanes; with r = (i // h) % (64 // N), c = ceil(64 / (M*N/h)) blocks share a
    register: lane = (b % c)*N + r*c*N + j, element = b*M*N/64 + (i // (h*64/N))*h + i % h."""
    B = blocks
    KLa = K * M * B // 64
    KLb = K * N * B // 64
    b = np.arange(B)[:, None, None]
    i = np.arange(M)[None, :, None]
    k = np.arange(K)[None, None, :]
    Ai = b * M + M * B * (k // KLa) + i
    Ak = np.broadcast_to(k % KLa, Ai.shape)
    kk = np.arange(K)[None, :, None]
    j = np.arange(N)[None, None, :]
    Bl = b * N + N * B * (kk // KLb) + j
    Bk = np.broadcast_to(kk % KLb, Bl.shape)
    h = 1 if f64_out else 4
    mpr = 64 // N
    c = -(-64 // (M * N // h))
    ii = np.arange(M)[None, :, None]
    Dl = (b % c) * N + ((ii // h) % mpr) * c * N + j
    Dk = b * (M * N // 64) + (ii // (h * mpr)) * h + ii % h + 0 * j
    return Ai, Ak, Bl, Bk, Dl, Dk


def _blgp_src(blgp: int) -> np.ndarray:
    """Source lane of each lane's B operand under BLGP (AMD matrix instruction calculator,
    _get_blgp_transformed_lane): 0 normal, 1/2 broadcast lanes 0-31 / 32-63 to both
    halves, 3 rotate down by 16 lanes (lane l reads l+16 mod 64), 4-7 broadcast the
    16-lane group blgp-4 to all four groups."""
    lane = LANES
    return {0: lane, 1: lane & 31, 2: (lane & 31) + 32, 3: (lane + 16) & 63,
            4: lane & 15, 5: (lane & 15) + 16, 6: (lane & 15) + 32, 7: (lane & 15) + 48}[blgp]


def compile_mfma(inst, spec, ctx, nxt):
    """MFMA: D = C + A @ B per block, products and sums in float64 (int64 for i8), rounded
    once to the accumulator type.  CBSZ/ABID (multi-block forms): block b uses the A block
    (b // 2**cbsz) * 2**cbsz + abid; BLGP permutes the B lanes (f64 forms: NEG bits)."""
    ex = spec.extra
    if ex.get("sparse"):
        return _compile_smfmac(inst, spec, ctx, nxt)
    M, N, K, ty, tyb, acc = ex["M"], ex["N"], ex["K"], ex["ty"], ex["tyb"], ex["acc"]
    nb = ex.get("blocks", 1)
    cbsz = int(inst.mod("cbsz", 0) or 0)
    abid = int(inst.mod("abid", 0) or 0)
    if cbsz or abid:
        if nb == 1 or (1 << cbsz) > nb or abid >= (1 << cbsz):
            raise CompileError(f"MFMA cbsz:{cbsz} abid:{abid} is not valid for {nb} block(s)")
    a_block = (np.arange(nb) >> cbsz << cbsz) + abid
    blgp = int(inst.mod("blgp", 0) or 0)
    # CDNA3 f64 MFMA: the BLGP field holds NEG[2:0] (negate A, B, C), printed by LLVM as
    # neg:[a,b,c] (AMD matrix instruction calculator, CDNA3 FP64 negation)
    negs = (0, 0, 0)
    neg_mod = inst.mod("neg", None)
    if acc == "f64":
        if neg_mod:
            negs = tuple(int(x) for x in (tuple(neg_mod) + (0, 0, 0))[:3])
        elif blgp:
            negs = (blgp & 1, (blgp >> 1) & 1, (blgp >> 2) & 1)
        blgp = 0
    elif neg_mod and any(neg_mod):
        raise CompileError("neg on a non-f64 MFMA")
    blgp_src = _blgp_src(blgp)
    ops = inst.operands
    d = _regs_of(ops[0])
    A, Bop = _regs_of(ops[1]), _regs_of(ops[2])
    C = base_of(ops[3])
    nacc = nb * M * N // 64                 # accumulator elements per lane
    nregs = nacc * (2 if acc == "f64" else 1)
    Ai, Ak, Bl, Bk, Dl, Dk = mfma_maps(M, N, K, nb, acc == "f64")
    Ai, Ak = Ai[a_block], Ak[a_block]

    def regs(wv, r):
        F = wv.v if r.file == "v" else wv.a
        return F[r.index:r.index + r.count].T  # (64, count)

    cconst = None
    if isinstance(C, Imm):
        cconst = imm_bits(C.value, "f64" if acc == "f64" else acc, C.text)

    def run(wv):
        ea = _unpack_elems(regs(wv, A), ty)
        eb = _unpack_elems(regs(wv, Bop), tyb)
        if blgp:
            eb = eb[blgp_src]
        if negs[0]:
            ea = -ea
        if negs[1]:
            eb = -eb
        Am = ea[Ai, Ak]
        Bm = eb[Bl, Bk]
        if cconst is not None:
            cm = np.full((64, nacc), cconst, U64 if acc == "f64" else U32)
        else:
            cm = np.ascontiguousarray(regs(wv, C))
        if acc == "f32":
            cv = cm.view(np.float32).astype(np.float64)[Dl, Dk]
            Dm = (cv + Am @ Bm).astype(np.float32).view(U32)
        elif acc == "f64":
            # f64 MFMA: products and sums in float64, summed in k order
            cv = cm.view(np.float64)[Dl, Dk]
            if negs[2]:
                cv = -cv
            Dm = (cv + Am @ Bm).view(U64)
        else:
            cv = cm.view(np.int32).astype(np.int64)[Dl, Dk]
            Dm = ((cv + Am @ Bm) & 0xFFFFFFFF).astype(U32)
        out = np.zeros((64, nacc), Dm.dtype)
        out[Dl, Dk] = Dm
        F = wv.v if d.file == "v" else wv.a
        F[d.index:d.index + nregs] = np.ascontiguousarray(out).view(U32).T
        return nxt
    return run


@functools.lru_cache(maxsize=None)
def smfmac_maps(M: int, K: int, esize: int, abid: int):
    """Index maps of the compressed A operand of a 4:2 sparse MFMA (v_smfmac_*).

    A[i][k] is dense M x K; each group of 4 k values keeps 2 of them.  The kept pair of
    group g of row i is stored as elements e0 = s % KS and e0 + 1 of lane
    i + M*(s // KS), s = 2g, KS = (K/2)*M/64 stored elements per lane.  Its 4-bit index
    (bits [1:0]: position in the group of the first stored value, [3:2]: of the second)
    is in the index VGPR of the same lane at bit 4*((e0 + 64*abid/esize) // 2) (ABID
    chooses the index set; AMD matrix instruction calculator, gfx9 compression index).
    Returns ``(lane, e0, shift)`` int arrays of shape (M, K/4)."""
    KS = (K // 2) * M // 64
    i = np.arange(M)[:, None]
    g = np.arange(K // 4)[None, :]
    s = 2 * g
    lane = i + M * (s // KS)
    e0 = np.broadcast_to(s % KS, lane.shape)
    shift = ((e0 + 64 * abid // esize) // 2) * 4
    return lane, e0, shift


_ESIZE = {"f16": 16, "bf16": 16, "i8": 8, "fp8": 8, "bf8": 8}


def _compile_smfmac(inst, spec, ctx, nxt):
    """v_smfmac_*: vdst += decompress(src0, src2) @ src1 (the destination is also the
    accumulator input).  CBSZ must be 0; ABID chooses the index set."""
    ex = spec.extra
    M, N, K, ty, tyb, acc = ex["M"], ex["N"], ex["K"], ex["ty"], ex["tyb"], ex["acc"]
    cbsz = int(inst.mod("cbsz", 0) or 0)
    abid = int(inst.mod("abid", 0) or 0)
    es = _ESIZE[ty]
    nsets = 32 // (2 * ((K // 2) * M // 64))       # index sets in the 32-bit index VGPR
    if cbsz or abid >= nsets:
        raise CompileError(f"sparse MFMA cbsz:{cbsz} abid:{abid} is not emulated")
    ops = inst.operands
    d, A, Bop, idx = _regs_of(ops[0]), _regs_of(ops[1]), _regs_of(ops[2]), _regs_of(ops[3])
    nacc = M * N // 64
    _, _, Bl, Bk, Dl, Dk = mfma_maps(M, N, K)
    Bl, Bk, Dl, Dk = Bl[0], Bk[0], Dl[0], Dk[0]
    lane, e0, shift = smfmac_maps(M, K, es, abid)
    base = 4 * np.arange(K // 4)[None, :] + np.zeros((M, 1), int)
    rows = np.broadcast_to(np.arange(M)[:, None], lane.shape)

    def regs(wv, r):
        F = wv.v if r.file == "v" else wv.a
        return F[r.index:r.index + r.count].T  # (64, count)

    def run(wv):
        ea = _unpack_elems(regs(wv, A), ty)
        eb = _unpack_elems(regs(wv, Bop), tyb)
        F = wv.v if idx.file == "v" else wv.a
        nib = (F[idx.index].astype(np.int64)[lane] >> shift) & 15
        Am = np.zeros((M, K), ea.dtype)
        Am[rows, base + (nib & 3)] = ea[lane, e0]
        Am[rows, base + (nib >> 2)] = ea[lane, e0 + 1]
        Bm = eb[Bl, Bk]
        cm = np.ascontiguousarray(regs(wv, d))
        if acc == "f32":
            cv = cm.view(np.float32).astype(np.float64)[Dl, Dk]
            Dm = (cv + Am @ Bm).astype(np.float32).view(U32)
        else:
            cv = cm.view(np.int32).astype(np.int64)[Dl, Dk]
            Dm = ((cv + Am @ Bm) & 0xFFFFFFFF).astype(U32)
        out = np.zeros((64, nacc), U32)
        out[Dl, Dk] = Dm
        Fd = wv.v if d.file == "v" else wv.a
        Fd[d.index:d.index + nacc] = np.ascontiguousarray(out).T
        return nxt
    return run


# ----------------------------------------------------------------------------- compile
def _simple(kind):
    def comp(inst, spec, ctx, nxt):
        if kind == "nop":
            return lambda wv: nxt
        if kind == "barrier":
            def run(wv):
                wv.pc = nxt
                return BARRIER
            return run
        if kind == "endpgm":
            def run(wv):
                wv.done = True
                return ENDPGM
            return run
        raise CompileError(kind)
    return comp


COMPILERS = {
    "valu": compile_valu, "vopc": compile_vopc, "vop3p": compile_vop3p, "salu": compile_salu,
    "sopc": compile_sopc, "branch": compile_branch, "lane": compile_lane, "sys": compile_sys,
    "smem": compile_smem, "vmem": compile_vmem, "vmem_atomic": compile_vmem_atomic,
    "mubuf": compile_mubuf, "mubuf_atomic": compile_mubuf, "ds": compile_ds, "mfma": compile_mfma,
    "mix": compile_mix, "movrel": compile_movrel, "swap": compile_swap,
    "nop": _simple("nop"), "barrier": _simple("barrier"), "endpgm": _simple("endpgm"),
}


def _failing(msg):
    def run(wv):
        raise EmuError(msg)
    run.unsupported = msg
    return run


class Program:
    """A kernel compiled to closures: ``code[i]`` runs ``insts[i]``."""

    def __init__(self, kernel, mem):
        self.kernel = kernel
        self.insts = list(kernel.instructions())
        labels = {}
        idx = 0
        for b in kernel.blocks:
            if b.label:
                labels[b.label] = idx
            idx += len(b.instructions)
        # also allow branches to the end (label after the last instruction)
        addresses = [i.address for i in self.insts]
        self.ctx = Context(mem, labels, addresses)
        self.code = []
        #: ``(index, message)`` of every instruction compiled to a closure that raises
        #: EmuError when executed (no semantics, or an unsupported form)
        self.unsupported = []
        self._gpr_idx = False
        self._indexed = set()       # instructions compiled under s_set_gpr_idx_on
        self._lockstep = None
        for n, inst in enumerate(self.insts):
            f = self._compile(inst, n + 1)
            if getattr(f, "unsupported", None):
                self.unsupported.append((n, f.unsupported))
            self.code.append(f)
        self.code.append(_failing(f"kernel {kernel.name}: execution ran past the last instruction "
                                  "without s_endpgm"))

    def _compile(self, inst, nxt):
        spec = lookup(inst.opcode)
        where = f"kernel {self.kernel.name}, {self.where(nxt - 1)}: "
        if spec is None:
            return _failing(where + f"instruction '{inst.text()}' has no semantics in the emulator")
        comp = COMPILERS.get(spec.kind)
        if comp is None:
            return _failing(where + f"instruction '{inst.text()}' (kind {spec.kind}) is not emulated")
        if spec.name == "s_set_gpr_idx_on":
            self._gpr_idx = True
        elif spec.name == "s_set_gpr_idx_off":
            self._gpr_idx = False
        try:
            if self._gpr_idx and spec.kind in ("valu", "vopc", "vop3p", "lane"):
                self._indexed.add(nxt - 1)
                return _indexed(inst, spec, self.ctx, nxt, comp)
            return comp(inst, spec, self.ctx, nxt)
        except CompileError as e:
            return _failing(where + f"instruction '{inst.text()}' cannot be emulated: {e}")
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
            return _failing(where + f"instruction '{inst.text()}' cannot be emulated: "
                            f"{type(e).__name__}: {e}")

    def lockstep_modes(self) -> list:
        """Per instruction, how :mod:`asmevo.emu.lockstep` may run it for several waves at
        once (``lockstep.classify``, or None) and the SGPRs/SCC it writes
        (``lockstep.sgpr_writes``, or None when unknown); computed once."""
        if self._lockstep is None:
            from .lockstep import classify, sgpr_writes
            bad = {i for i, _ in self.unsupported} | self._indexed
            self._lockstep = ([None if i in bad else classify(inst, self.code[i])
                               for i, inst in enumerate(self.insts)] + [None],
                              [sgpr_writes(inst) for inst in self.insts] + [None])
        return self._lockstep

    def where(self, i: int) -> str:
        """``pc 0x1c (#7)`` for instruction index ``i``."""
        if 0 <= i < len(self.insts):
            a = self.insts[i].address
            line = self.insts[i].line
            s = f"pc {a:#x}" if a is not None else (f"line {line}" if line else "")
            return f"{s} (instruction #{i})".strip()
        return f"instruction #{i}"

    def run_wave(self, wv, limit: int) -> int:
        """Run ``wv`` until s_barrier / s_endpgm; returns BARRIER or ENDPGM."""
        code = self.code
        pc = wv.pc
        n = 0
        ln = 0      # lanes: popcount(EXEC) at each issue
        try:
            while pc >= 0:
                pc_cur = pc
                ln += wv.exec_n
                pc = code[pc](wv)
                n += 1
                if n > limit:
                    raise EmuError(f"kernel {self.kernel.name}: more than {limit} instructions in "
                                   f"one wave (runaway loop?) at {self.where(pc_cur)}")
        except MemoryFault as e:
            inst = self.insts[pc_cur]
            raise EmuError(f"kernel {self.kernel.name}, {self.where(pc_cur)}, '{inst.text()}': "
                           f"lane {e.lane}: {e}") from None
        finally:
            wv.count += n
            wv.lanes += ln
        if pc == ENDPGM:
            wv.done = True
        return pc

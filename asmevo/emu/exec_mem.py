"""Scalar (SMEM) and vector memory instructions (FLAT / GLOBAL / SCRATCH loads, stores and
atomics) and the load/store helpers the other memory families share.
"""

from __future__ import annotations

import bisect
import weakref

import numpy as np

from ..ir.operands import Imm, Reg, Special, base_of
from .memory import _ARANGE, _BOR, _MAX, _THREE, _TWO, GlobalMemory, MemoryFault
from .state import EXEC, LANES, M0, PRIVATE_APERTURE_HI, SHARED_APERTURE_HI
from .exec_common import (CompileError, LANE_COUNT, U16, U32, U64, U8, _LE, _b64, _const_reader,
    _regs_of, _sgpr_index, pair_u64, reader)

_ADDR_MASK = ~3 & ((1 << 64) - 1)


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

    touches_exec = di <= EXEC + 1 < di + n or di <= EXEC < di + n
    if not is_buf and isinstance(off_op, Imm):
        # s_load_dword* at an SGPR-pair address plus constants: the words straight from the
        # buffer's word view (its base is 256-byte aligned, the address 4-byte aligned)
        k_off = int(off_op.value) & 0xFFFFFFFF
        if k_off & 0x80000000:
            k_off -= 1 << 32
        k_off += off_imm

        def run(wv):
            s = wv.s
            addr = ((s.item(base_i) | (s.item(base_i + 1) << 32)) + k_off) & _ADDR_MASK
            mem = ctx.mem
            if type(mem) is GlobalMemory:
                k = bisect.bisect_right(mem._base_list, addr) - 1
                if k < 0:
                    raise MemoryFault(0, addr, size, "scalar")
                r = mem.regions[k]
                o = addr - r.addr
                if o + size > r.size:
                    raise MemoryFault(0, addr, size, "scalar")
                s[di:di + n] = r.words[o >> 2:(o >> 2) + n]
            else:       # (another memory model: its read_scalar)
                s[di:di + n] = np.frombuffer(mem.read_scalar(addr, size), "<u4")
            if touches_exec:
                wv.sync_exec()
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
            if not wv.exec_all or a.shape[0] != LANE_COUNT[0]:   # (else: every lane)
                a = _b64(a)[lanes]
            return a + uoff if offset else a
    else:
        vr = reader(vaddr, "u32")
        sr = reader(saddr, "u64", vector_ok=False)
        uoff = U64(offset & 0xFFFFFFFFFFFFFFFF)

        def addr_fn(wv, lanes):
            a = vr(wv)
            if not wv.exec_all or a.shape[0] != LANE_COUNT[0]:   # (else: every lane)
                a = _b64(a)[lanes]
            s = sr(wv)
            if s.shape[0] != 1:     # each lane its own wave's base (asmevo.emu.lockstep)
                return a.astype(U64) + (s[lanes] + uoff)
            return a.astype(U64) + (s[0] + uoff)

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
        if load and s_off and _LE and dst.file == "v" and isinstance(vaddr, Reg) and \
                vaddr.file == "v":
            return _global_load_v64(ctx, dst, vaddr, offset, ndw, nxt)
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


def _region_of(mem, a):
    """The buffer of ``mem`` (a :class:`GlobalMemory`) holding the first address of ``a``
    (uint64, not empty), or None."""
    if not a.size or type(mem) is not GlobalMemory:
        return None
    k = bisect.bisect_right(mem._base_list, int(a[0])) - 1
    return mem.regions[k] if k >= 0 else None


def _global_load_v64(ctx, dst, vaddr, offset, ndw, nxt):
    """``global_load_dword*`` of ``ndw`` dwords at a VGPR-pair address (``off``): the
    closure of :func:`compile_vmem` with its steps inlined, and the usual case (every address
    4-byte aligned in one buffer: the one this instruction read last, else the first
    address's) without temporary copies; anything else goes through
    :meth:`GlobalMemory.read_words` as there."""
    ai, di = vaddr.index, dst.index
    size = 4 * ndw
    uoff = U64(offset & 0xFFFFFFFFFFFFFFFF)
    cols = _ARANGE[ndw] if ndw > 1 else None
    last = [None]

    def word_index(mem, a):
        """Dword indices of ``a`` into one buffer's words, and the buffer; or None."""
        hit = last[0]       # (memory, region) this instruction read last, weakly
        r = hit[1]() if hit is not None and hit[0]() is mem else None
        for _ in (0, 1):
            if r is not None:
                lim = r.limit.get(size)
                if lim is not None:
                    off = a - r.base64
                    if _MAX(off) <= lim and not _BOR(off) & _THREE:
                        if hit is None or hit[1]() is not r:
                            last[0] = (weakref.ref(mem), weakref.ref(r))
                        return np.right_shift(off, _TWO, out=off).view(np.int64), r
            r2 = _region_of(mem, a)     # the first address's buffer, once
            if r2 is r:
                return None
            r = r2
        return None

    def run(wv):
        if not wv.exec_any:
            return nxt
        R = wv.v
        a = pair_u64(R, ai)
        if offset:
            a += uoff
        full = wv.exec_all
        if not full:
            a = a[wv.exec_mask]
        hit = word_index(ctx.mem, a) if a.size else None
        if hit is not None:
            w, r = hit
            if cols is None:
                if full:
                    R[di] = r.words[w]
                else:
                    R[di, wv.exec_mask] = r.words[w]
            else:
                words = r.words[w[:, None] + cols]
                if full:
                    R[di:di + ndw] = words.T
                else:
                    m = wv.exec_mask
                    for j in range(ndw):
                        R[di + j, m] = words[:, j]
            return nxt
        lanes = _active(wv)
        _load_words(wv, dst, ctx.mem.read_words(a, ndw, lanes), lanes, full)
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


_INT_ATOMICS = frozenset(["add", "sub", "rsub", "swap", "cmpswap", "cmpst", "smin", "min_i32",
                          "smax", "max_i32", "umin", "min_u32", "umax", "max_u32", "and", "or",
                          "xor", "inc", "dec"])
_FLOAT_ATOMICS = {"add_f32": np.float32, "min_f32": np.float32, "max_f32": np.float32,
                  "add_f64": np.float64, "min_f64": np.float64, "max_f64": np.float64}


def _atomic_np(op, old, val, cmp, size):
    """:func:`_atomic_apply` on arrays (uint32 / uint64, one element per lane), element for
    element the same values; None for an operation it does not cover."""
    dt = old.dtype
    if op == "add":
        return old + val
    if op == "sub":
        return old - val
    if op == "rsub":
        return val - old
    if op == "swap":
        return val
    if op in ("cmpswap", "cmpst"):
        return np.where(old == cmp, val, old)
    sdt = np.int32 if size == 4 else np.int64
    if op in ("smin", "min_i32"):
        return np.where(old.view(sdt) <= val.view(sdt), old, val)
    if op in ("smax", "max_i32"):
        return np.where(old.view(sdt) >= val.view(sdt), old, val)
    if op in ("umin", "min_u32"):
        return np.minimum(old, val)
    if op in ("umax", "max_u32"):
        return np.maximum(old, val)
    if op == "and":
        return old & val
    if op == "or":
        return old | val
    if op == "xor":
        return old ^ val
    if op == "inc":
        return np.where(old >= val, dt.type(0), old + dt.type(1))
    if op == "dec":
        return np.where((old == 0) | (old > val), val, old - dt.type(1))
    ft = _FLOAT_ATOMICS.get(op)
    if ft is not None and np.dtype(ft).itemsize == size:
        a, b = old.view(ft), val.view(ft)
        r = a + b if op.startswith("add") else (np.fmin(a, b) if op.startswith("min")
                                                else np.fmax(a, b))
        return r.astype(ft).view(dt)
    return None


def _atomic_vec(mem, a, size, op, val, cmp):
    """Apply atomic ``op`` for every lane at once when the lanes' addresses ``a`` are
    distinct, ``size``-aligned and in one writable, unwatched region (then the order of the
    lanes cannot matter): the old values (uint32 / uint64 per lane), or None (nothing done;
    the caller takes the lanes one by one)."""
    if op not in _INT_ATOMICS and op not in _FLOAT_ATOMICS:
        return None
    hit = mem._single(a, size)
    if hit is None:
        return None
    r, off = hit
    if not r.writable or r.watch or np.count_nonzero(off & U64(size - 1)):
        return None
    w = (off >> U64(2)).astype(np.intp)
    if np.unique(w).size != w.size:
        return None
    words = r.words
    if size == 4:
        old = words[w]
    else:
        old = words[w].astype(U64) | (words[w + 1].astype(U64) << U64(32))
    new = _atomic_np(op, old, val, cmp, size)
    if new is None:
        return None
    if size == 4:
        words[w] = new
    else:
        words[w] = new.astype(U32)
        words[w + 1] = (new >> U64(32)).astype(U32)
    return old


def _lane_values(R, index, lanes, size):
    """uint32 / uint64 values of registers ``index`` (and ``index + 1`` for 8 bytes) of
    ``lanes`` of register file ``R``."""
    if size == 4:
        return R[index, lanes]
    return R[index, lanes].astype(U64) | (R[index + 1, lanes].astype(U64) << U64(32))


#: atomics whose result does not depend on the order of the lanes (commutative and
#: associative on 32 bits): ufunc.at over all lanes equals the lane-by-lane updates
UFUNC_AT = {"add": (np.add.at, False), "sub": (np.subtract.at, False),
            "and": (np.bitwise_and.at, False), "or": (np.bitwise_or.at, False),
            "xor": (np.bitwise_xor.at, False), "umin": (np.minimum.at, False),
            "umax": (np.maximum.at, False), "smin": (np.minimum.at, True),
            "smax": (np.maximum.at, True)}


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

    at = UFUNC_AT.get(op) if dst is None and size == 4 and seg == "global" else None

    def run(wv):
        if not wv.exec_any:
            return nxt
        lanes = _active(wv)
        a = _b64(vr(wv))[lanes].astype(U64) + U64(offset)
        if sr is not None:
            s = sr(wv)
            a = a + (s[lanes] if s.shape[0] != 1 else s[0])   # (per lane: a lockstep group)
        if at is not None:
            # an order-independent update without return, in one output buffer: all lanes
            hit = ctx.mem._single(a, 4)
            if hit is not None and hit[0].writable and not hit[0].watch and \
                    not np.count_nonzero(hit[1] & U64(3)):
                r, off = hit
                f, signed = at
                x = wv.v[data.index, lanes]
                w = (off >> U64(2)).astype(np.intp)
                if signed:
                    f(r.words.view(np.int32), w, x.view(np.int32))
                else:
                    f(r.words, w, x)
                return nxt
        if seg == "global" and size in (4, 8):
            # distinct addresses: every lane at once (the order of the lanes cannot matter)
            old = _atomic_vec(ctx.mem, a, size, op, _lane_values(wv.v, data.index, lanes, size),
                              _lane_values(wv.v, data.index + nd, lanes, size) if cmp else None)
            if old is not None:
                if dst is not None:
                    wv.v[dst.index, lanes] = old.astype(U32)
                    if nd == 2:
                        wv.v[dst.index + 1, lanes] = (old >> U64(32)).astype(U32)
                return nxt
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

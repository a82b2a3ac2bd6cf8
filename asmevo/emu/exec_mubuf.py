"""Buffer instructions (MUBUF / MTBUF: buffer resource, formats, atomics).
"""

from __future__ import annotations

import numpy as np

from ..ir.operands import Imm, Special, base_of
from .memory import EmuError
from .state import M0
from .exec_common import (LANE_COUNT, CompileError, U16, U32, U64, U8, _b64, _const_reader,
    _regs_of, _sgpr_index, reader)
from .exec_mem import (_active, _atomic_apply, _atomic_vec, _lane_values, _load_into,
    _store_data)

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


#: A lane's ``room`` (:func:`compile_mubuf`) when its structured-buffer record is in range.
_ALL_ROOM = np.int64(1 << 62)


def compile_mubuf(inst, spec, ctx, nxt):
    """MUBUF with a buffer resource (V#): base, stride, num_records; out-of-range
    loads return 0 and out-of-range stores are dropped (CDNA3 ISA guide, "Buffer
    instructions", range checking).

    Range checking, per lane (the offset checks exclude SOFFSET; the z3 model,
    :func:`asmevo.semantics.z3backend._mubuf`, is the same):

    * raw buffer (stride 0, no IDXEN, no ADD_TID): plain multi-dword loads and stores
      (``buffer_load/store_dwordx{2,3,4}``) are checked per dword -- dword ``j`` is in
      range when ``offset + 4*j + 4 <= num_records``: a load straddling the end gives its
      in-range dwords and 0 for the rest, a store writes only its in-range dwords (CDNA3
      ISA guide, range checking notes: "Load/store-DWORD-x{2,3,4} range-check per
      component"; LLVM AMDGPUUsage "Relaxed Buffer OOB Mode", llvm/llvm-project PR
      #134734: "the voffset used for the access will be range-checked for each 32-bit word
      independently").  Single-dword and sub-dword accesses: ``offset + size <=
      num_records``;
    * the format forms (``buffer_*_format_*``, ``tbuffer_*``) and atomics, 64-bit ones
      included, are checked "all or nothing" (the same ISA notes: "Load/store-format-*
      instruction and atomics are range-checked 'all or nothing' - either entirely in or
      out");
    * structured buffer (stride != 0, IDXEN or ADD_TID): ``index < num_records`` for the
      whole access."""
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

    soff_i = None if isinstance(soff, Imm) else _sgpr_index(soff)

    def group_addrs(wv, lanes):
        """:func:`addrs` for the lanes of a lockstep group (asmevo.emu.lockstep), each with
        its own wave's V# and SGPR offset (rows of ``wv.sfile``)."""
        wix = lanes >> 6
        r = wv.sfile[:, rsrc_i:rsrc_i + 4].astype(np.int64)
        base = (r[:, 0] | ((r[:, 1] & 0xFFFF) << 32))[wix]
        stride = ((r[:, 1] >> 16) & 0x3FFF)[wix]
        nrec = r[:, 2][wix]
        add_tid = ((r[:, 3] >> 23) & 1)[wix]
        so = wv.sfile[:, soff_i].astype(np.int64)[wix] if soff_i is not None else \
            int(soff_r(wv)[0])
        n = len(lanes)
        if offen and idxen:
            vv = _b64(vr(wv))[lanes]
            idx = (vv & U64(0xFFFFFFFF)).astype(np.int64)
            off = (vv >> U64(32)).astype(np.int64)
        else:
            v = _b64(vr(wv))[lanes].astype(np.int64) if vr is not None else np.zeros(n, np.int64)
            idx = v & 0xFFFFFFFF if idxen else np.zeros(n, np.int64)
            off = v & 0xFFFFFFFF if offen and not idxen else np.zeros(n, np.int64)
        idx = idx + (lanes & 63) * add_tid
        off = off + ioff
        rec = np.where(idx < nrec, _ALL_ROOM, np.int64(-1))
        if idxen:
            room = rec
        else:
            room = np.where((stride == 0) & (add_tid == 0), nrec - off, rec)
        a = (base + so + idx * stride + off).astype(U64)
        return a, room

    def addrs(wv, lanes, size=size):
        """(addresses, in-range mask) of an access of ``size`` bytes checked as a whole."""
        a, room = addrs_room(wv, lanes)
        return a, room >= size

    def addrs_room(wv, lanes):
        """(addresses, room): per lane, how many bytes from the access's start pass the
        range check (raw buffer: ``num_records - offset``, possibly negative; structured:
        all or none, by the record index)."""
        if LANE_COUNT[0] != 64:
            return group_addrs(wv, lanes)
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
        if add_tid:     # the lane's index in its wave (lanes of a lockstep group: W * 64)
            idx = idx + (lanes & 63)
        off = off + ioff
        if stride == 0 and not idxen and not add_tid:
            room = nrec - off
        else:
            room = np.where(idx < nrec, _ALL_ROOM, np.int64(-1))
        a = (np.int64(base) + so + idx * stride + off).astype(U64)
        return a, room

    def split_dwords(a, room):
        """The in-range dwords of each lane's access, in lane order (so that later lanes
        still win where lanes overlap, :meth:`asmevo.emu.memory.GlobalMemory.write`):
        (lane positions, byte offsets within the access, addresses)."""
        ok = room[:, None] >= np.arange(4, size + 1, 4, dtype=np.int64)[None, :]
        li, jj = np.nonzero(ok)
        aj = 4 * jj.astype(np.int64)
        return li, aj, a[li] + aj.astype(U64)

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
        if is_atomic:
            a, inr = addrs(wv, lanes)
            # operands: vdata (old value returned there with glc/sc0), vaddr, srsrc, soffset;
            # out-of-range lanes do nothing and return 0
            aop = ex["op"]
            ret = inst.has_mod("glc") or inst.has_mod("sc0")
            R = wv.v if dst_or_data.file == "v" else wv.a
            di, ndw = dst_or_data.index, size // 4
            if size in (4, 8):
                # distinct addresses: every lane at once (the order of the lanes cannot matter)
                li = lanes[inr]
                old = _atomic_vec(ctx.mem, a[inr], size, aop, _lane_values(R, di, li, size),
                                  _lane_values(R, di + ndw, li, size) if aop == "cmpswap"
                                  else None) if len(li) else np.zeros(0, U32)
                if old is not None:
                    if ret:
                        out = np.zeros((ndw, len(lanes)), U32)
                        out[0, inr] = old.astype(U32)
                        if ndw == 2:
                            out[1, inr] = (old >> U64(32)).astype(U32)
                        R[di:di + ndw, lanes] = out
                    return nxt
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
        a, room = addrs_room(wv, lanes)
        inr = room >= size
        # a multi-dword access straddling num_records in some lane: dword by dword
        whole = size <= 4 or bool(inr.all()) or not np.count_nonzero(room >= 4)
        if load:
            data = np.zeros((len(lanes), size), U8)
            if whole:
                if np.count_nonzero(inr):
                    data[inr] = ctx.mem.read(a[inr], size, lanes[inr])
            else:
                li, aj, words = split_dwords(a, room)
                data.reshape(len(lanes), size // 4, 4)[li, aj // 4] = ctx.mem.read(
                    words, 4, lanes[li])
            if lds:
                # LDS DMA: LDS byte address = M0[15:0] + instruction offset + lane * size (the
                # immediate offset applies to both addresses; LLVM llvm.amdgcn.raw.buffer.load.lds)
                o = (wv.s.item(M0) & 0xFFFF) + ioff + lanes.astype(np.int64) * size
                wv.group.lds.write(o, data, lanes)
            else:
                _load_into(wv, dst_or_data, data, lanes, spec)
        else:
            data = _store_data(wv, dst_or_data, lanes, size, ex.get("d16_hi", False))
            if whole:
                if np.count_nonzero(inr):
                    ctx.mem.write(a[inr], data[inr], lanes[inr])
            else:
                li, aj, words = split_dwords(a, room)
                ctx.mem.write(words, np.ascontiguousarray(
                    data.reshape(len(lanes), size // 4, 4)[li, aj // 4]), lanes[li])
        return nxt
    return run



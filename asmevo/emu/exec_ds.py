"""LDS (DS) instructions: reads, writes, read2/write2, atomics, swizzle, permute, append.
"""

from __future__ import annotations

import numpy as np

from ..semantics.lanes import swizzle_map as _swizzle_map
from .state import LANES, M0
from .exec_common import CompileError, U32, U8, _b64, _mask_of, _regs_of, reader, vwriter
from .exec_mem import (UFUNC_AT, _DWS, _active, _atomic_apply, _load_into, _load_words,
    _store_data, _store_words)


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
                at = UFUNC_AT.get(aop) if dst is None and size == 4 else None
                if at is not None and not np.count_nonzero(a & 3):
                    # an order-independent update without return: all lanes at once
                    f, signed = at
                    x = wv.v[src.index, lanes]
                    if signed:
                        f(lds.words.view(np.int32), a >> 2, x.view(np.int32))
                    else:
                        f(lds.words, a >> 2, x)
                    return nxt

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



"""VALU instructions compiled to closures: VOP1/VOP2/VOP3 (with DPP, SDWA, clamp/omod),
VOPC, packed VOP3P, mixed-precision, v_swap, v_movrel.
"""

from __future__ import annotations

import numpy as np

from ..ir.operands import Imm, Special, Src, base_of
from ..semantics.immediates import imm_bits, packed_inline_halves, vop3p_form_unsupported
from ..semantics.npbackend import NP
from ..semantics.registry import width
from .memory import EmuError
from .exec_fast import fast_valu
from .state import M0
from .exec_common import (LANE_COUNT, CompileError, U16, U32, U64, _DT, _SEL, _SIGN, _b64,
    _clamp_omod, _mask_of, _no_dpp, _regs_of, _sgpr_index, dpp_map, lm_writer, reader, sreader,
    vwriter)

# ----------------------------------------------------------------------------- VALU
def compile_valu(inst, spec, ctx, nxt):
    ops = inst.operands
    nd = len(spec.dst)
    ns = len(spec.src)
    if len(ops) != nd + ns:
        raise CompileError(f"expected {nd} destination(s) and {ns} source(s), got {len(ops)} operands")
    why = vop3p_form_unsupported(inst)      # v_dot* neg_lo/neg_hi/op_sel/float constants
    if why:
        raise CompileError(why.replace("not modelled", "not supported"))
    fast = fast_valu(inst, spec, nxt)       # a hand-written closure for a hot plain form
    if fast is not None:
        return fast
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
        maps = {64: (src_lane, valid, enable)}

        def lane_maps(n):
            """The DPP maps for n lanes: W = n / 64 waves of a lockstep group, each its own."""
            m = maps.get(n)
            if m is None:
                W = n // 64
                m = maps[n] = (np.tile(src_lane, W) + np.repeat(np.arange(W) * 64, 64),
                               np.tile(valid, W), np.tile(enable, W))
            return m

        all_valid = bool(valid.all())   # (quad_perm, row_ror...: every source lane exists)

        def dpp_reader(wv, r0=r0):
            src, val, _ = lane_maps(LANE_COUNT[0])
            x = _b64(r0(wv))[src]
            if bc and not (all_valid and wv.exec_all):     # (else every lane reads its source)
                em = wv.exec_mask
                ok = val if em is None else val & em[src]
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
    if inst.mod("mul") or inst.mod("div"):
        # LLVM SIFoldOperands: "omod is ignored by hardware if IEEE bit is enabled. omod also
        # does not correctly handle signed zeros" -- the mode modelled here is IEEE=1
        raise CompileError("omod (mul:/div:) is not supported: the hardware ignores it in IEEE "
                           "mode (LLVM SIFoldOperands)")
    post = _clamp_omod(inst, spec.dst[0]) if nd else None
    fn = spec.fn

    if is_dpp:
        def mask_fn(wv):
            src, val, en = lane_maps(LANE_COUNT[0])
            em = wv.exec_mask
            if em is None:      # a lockstep group with every lane active
                return en if bc else en & val
            m = en & em
            if not bc:
                m = m & val & em[src]
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
        if isinstance(b, Imm):     # one 32-bit operand: op_sel picks its halves (immediates.py)
            lo_c, hi_c = (None if x is None else np.array([x], _DT[ew])
                          for x in packed_inline_halves(b.value, ety, b.text))
            halves.append((lambda wv, c=lo_c: c, None if hi_c is None else lambda wv, c=hi_c: c))
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
        if f is None:
            return None     # refused below unless v_pk_mov_b32 ignores it
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
        lo_rd[1], hi_rd[0] = hi_rd[1], lo_rd[0]     # unused by the result
    if None in lo_rd or None in hi_rd:
        raise CompileError("the high half of an inline constant of a packed 32-bit "
                           "instruction is not supported (not documented)")
    d = _regs_of(ops[0])
    wr = vwriter(d, "b64" if ew == 32 else "b32")
    fn = spec.fn
    is_mov = spec.name == "v_pk_mov_b32"
    clamp = bool(inst.mod("clamp")) and isf
    if inst.mod("clamp") and not isf:     # integer clamp saturates (add/sub u16/i16 only)
        fn = spec.extra.get("sat")
        if fn is None:
            raise CompileError("clamp on this packed integer instruction is not supported")

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



"""SALU semantics (SOP1, SOP2, SOPK, SOPC): scalar values and SCC.

Functions return the explicit destinations followed by the implicit outputs
listed in ``imp_out`` (``scc`` as a boolean, ``exec`` as a b64 value), per the
CDNA3 ISA guide's SALU descriptions.
"""

from __future__ import annotations

from .registry import define


def S(name, dst, src, fn, imp_in="", imp_out="scc", kind="salu", **kw):
    define(name, fn, kind, dst, src, imp_in, imp_out, **kw)


def c(B, v, w):
    return B.const(v, w)


def nz(B, x):
    return B.ne(x, c(B, 0, B.width(x)))


def _sh(B, a, n, w):
    return B.and_(n, c(B, w - 1, B.width(n)))


# moves
S("s_mov_b32", "b32", "b32", lambda B, a: a, imp_out="")
S("s_mov_b64", "b64", "b64", lambda B, a: a, imp_out="")
S("s_movk_i32", "i32", "i32", lambda B, a: a, imp_out="")
S("s_cmov_b32", "b32", "b32", lambda B, a, d, scc: B.select(scc, a, d), imp_in="scc", imp_out="",
  tied=True)
S("s_cmov_b64", "b64", "b64", lambda B, a, d, scc: B.select(scc, a, d), imp_in="scc", imp_out="",
  tied=True)
S("s_cmovk_i32", "i32", "i32", lambda B, a, d, scc: B.select(scc, a, d), imp_in="scc", imp_out="",
  tied=True)
S("s_cselect_b32", "b32", "b32 b32", lambda B, a, b, scc: B.select(scc, a, b), imp_in="scc", imp_out="")
S("s_cselect_b64", "b64", "b64 b64", lambda B, a, b, scc: B.select(scc, a, b), imp_in="scc", imp_out="")

# arithmetic


def _add_u32(B, a, b):
    r = B.add(a, b)
    return r, B.ult(r, a)


def _addc_u32(B, a, b, ci):
    t = B.add(a, b)
    r = B.add(t, B.b2i(ci, 32))
    return r, B.bor(B.ult(t, a), B.ult(r, t))


def _sub_u32(B, a, b):
    return B.sub(a, b), B.ult(a, b)


def _subb_u32(B, a, b, bi):
    r = B.sub(B.sub(a, b), B.b2i(bi, 32))
    return r, B.bor(B.ult(a, b), B.band(B.eq(a, b), bi))


def _ovf_add(B, a, b, r):
    sg = c(B, 0x80000000, 32)
    return nz(B, B.and_(B.and_(B.not_(B.xor(a, b)), B.xor(r, a)), sg))


def _ovf_sub(B, a, b, r):
    sg = c(B, 0x80000000, 32)
    return nz(B, B.and_(B.and_(B.xor(a, b), B.xor(r, a)), sg))


S("s_add_u32", "u32", "u32 u32", _add_u32)
S("s_addc_u32", "u32", "u32 u32", _addc_u32, imp_in="scc")
S("s_sub_u32", "u32", "u32 u32", _sub_u32)
S("s_subb_u32", "u32", "u32 u32", _subb_u32, imp_in="scc")
S("s_add_i32", "i32", "i32 i32", lambda B, a, b: (B.add(a, b), _ovf_add(B, a, b, B.add(a, b))))
S("s_sub_i32", "i32", "i32 i32", lambda B, a, b: (B.sub(a, b), _ovf_sub(B, a, b, B.sub(a, b))))
S("s_addk_i32", "i32", "i32", lambda B, k, d: (B.add(d, k), _ovf_add(B, d, k, B.add(d, k))),
  tied=True)
S("s_mulk_i32", "i32", "i32", lambda B, k, d: B.mul(d, k), imp_out="", tied=True)
S("s_mul_i32", "i32", "i32 i32", lambda B, a, b: B.mul(a, b), imp_out="")
S("s_mul_hi_u32", "u32", "u32 u32", lambda B, a, b: B.mulhi_u(a, b), imp_out="")
S("s_mul_hi_i32", "i32", "i32 i32", lambda B, a, b: B.mulhi_s(a, b), imp_out="")
S("s_abs_i32", "i32", "i32",
  lambda B, a: (lambda r: (r, nz(B, r)))(B.select(B.slt(a, c(B, 0, 32)), B.sub(c(B, 0, 32), a), a)))
S("s_absdiff_i32", "i32", "i32 i32",
  lambda B, a, b: (lambda r: (r, nz(B, r)))(B.select(B.slt(a, b), B.sub(b, a), B.sub(a, b))))
S("s_min_i32", "i32", "i32 i32", lambda B, a, b: (B.smin(a, b), B.slt(a, b)))
S("s_max_i32", "i32", "i32 i32", lambda B, a, b: (B.smax(a, b), B.sgt(a, b)))
S("s_min_u32", "u32", "u32 u32", lambda B, a, b: (B.umin(a, b), B.ult(a, b)))
S("s_max_u32", "u32", "u32 u32", lambda B, a, b: (B.umax(a, b), B.ugt(a, b)))
S("s_sext_i32_i8", "i32", "i32", lambda B, a: B.sext(B.trunc(a, 8), 32), imp_out="")
S("s_sext_i32_i16", "i32", "i32", lambda B, a: B.sext(B.trunc(a, 16), 32), imp_out="")
for _k in (1, 2, 3, 4):
    def _shladd(B, a, b, _k=_k):
        t = B.shl(a, c(B, _k, 32))
        r = B.add(t, b)
        # SCC: unsigned overflow of the shift-and-add, computed in 64 bits
        w = B.add(B.shl(B.zext(a, 64), c(B, _k, 64)), B.zext(b, 64))
        return r, B.ne(B.lshr(w, c(B, 32, 64)), c(B, 0, 64))
    S(f"s_lshl{_k}_add_u32", "u32", "u32 u32", _shladd)

# bitwise (SCC = result != 0)
for _w in (32, 64):
    _t = f"b{_w}"
    for _n, _f in (("and", lambda B, a, b: B.and_(a, b)), ("or", lambda B, a, b: B.or_(a, b)),
                   ("xor", lambda B, a, b: B.xor(a, b)),
                   ("andn2", lambda B, a, b: B.and_(a, B.not_(b))),
                   ("orn2", lambda B, a, b: B.or_(a, B.not_(b))),
                   ("nand", lambda B, a, b: B.not_(B.and_(a, b))),
                   ("nor", lambda B, a, b: B.not_(B.or_(a, b))),
                   ("xnor", lambda B, a, b: B.not_(B.xor(a, b)))):
        S(f"s_{_n}_{_t}", _t, f"{_t} {_t}", lambda B, a, b, _f=_f: (lambda r: (r, nz(B, r)))(_f(B, a, b)))
    S(f"s_not_{_t}", _t, _t, lambda B, a: (B.not_(a), nz(B, B.not_(a))))
    S(f"s_lshl_{_t}", _t, f"{_t} u32",
      lambda B, a, n, _w=_w: (lambda r: (r, nz(B, r)))(B.shl(a, B.zext(B.and_(n, c(B, _w - 1, 32)), _w)
                                                         if _w == 64 else B.and_(n, c(B, 31, 32)))))
    S(f"s_lshr_{_t}", _t, f"{_t} u32",
      lambda B, a, n, _w=_w: (lambda r: (r, nz(B, r)))(B.lshr(a, B.zext(B.and_(n, c(B, _w - 1, 32)), _w)
                                                          if _w == 64 else B.and_(n, c(B, 31, 32)))))
    S(f"s_ashr_i{_w}", f"i{_w}", f"i{_w} u32",
      lambda B, a, n, _w=_w: (lambda r: (r, nz(B, r)))(B.ashr(a, B.zext(B.and_(n, c(B, _w - 1, 32)), _w)
                                                          if _w == 64 else B.and_(n, c(B, 31, 32)))))
    S(f"s_brev_{_t}", _t, _t, lambda B, a: B.bitrev(a), imp_out="")
    S(f"s_bcnt1_i32_{_t}", "i32", _t,
      lambda B, a: (lambda r: (r, nz(B, r)))(B.trunc(B.popcount(a), 32) if B.width(a) == 64
                                             else B.popcount(a)))
    S(f"s_ff1_i32_{_t}", "i32", _t,
      lambda B, a, _w=_w: B.select(B.eq(a, c(B, 0, _w)), c(B, 0xFFFFFFFF, 32),
                                   B.trunc(B.ctz(a), 32) if _w == 64 else B.ctz(a)), imp_out="")
    S(f"s_flbit_i32_{_t}", "i32", _t,
      lambda B, a, _w=_w: B.select(B.eq(a, c(B, 0, _w)), c(B, 0xFFFFFFFF, 32),
                                   B.trunc(B.clz(a), 32) if _w == 64 else B.clz(a)), imp_out="")


def _s_bfe(signed, w):
    def f(B, a, s):
        off = B.and_(s, c(B, w - 1, 32))
        n = B.and_(B.lshr(s, c(B, 16, 32)), c(B, 0x7F, 32))
        n = B.select(B.ugt(n, c(B, w, 32)), c(B, w, 32), n)
        a_ = a
        offw, nw = (B.zext(off, 64), B.zext(n, 64)) if w == 64 else (off, n)
        if signed:
            # (S0 >> off) sign-extended from bit width-1: a field past the top bit is the
            # arithmetic shift itself (as V_BFE_I32); width 0 gives 0
            sh = B.ashr(a_, offw)
            k = B.and_(B.sub(c(B, w, w), nw), c(B, w - 1, w))   # w - n for n in 1..w-1, else 0
            r = B.ashr(B.shl(sh, k), k)
            r = B.select(B.eq(nw, c(B, 0, w)), c(B, 0, w), r)
        else:
            field = B.lshr(a_, offw)
            mask = B.select(B.eq(nw, c(B, w, w)), c(B, (1 << w) - 1, w),
                            B.sub(B.shl(c(B, 1, w), nw), c(B, 1, w)))
            r = B.and_(field, mask)
        return r, nz(B, r)
    return f


S("s_bfe_u32", "u32", "u32 u32", _s_bfe(False, 32))
S("s_bfe_i32", "i32", "i32 u32", _s_bfe(True, 32))
S("s_bfe_u64", "u64", "u64 u32", _s_bfe(False, 64))
S("s_bfe_i64", "i64", "i64 u32", _s_bfe(True, 64))
S("s_bfm_b64", "b64", "u32 u32",
  lambda B, a, b: B.shl(B.sub(B.shl(c(B, 1, 64), B.zext(B.and_(a, c(B, 63, 32)), 64)), c(B, 1, 64)),
                        B.zext(B.and_(b, c(B, 63, 32)), 64)), imp_out="")
S("s_bfm_b32", "b32", "u32 u32",
  lambda B, a, b: B.shl(B.sub(B.shl(c(B, 1, 32), B.and_(a, c(B, 31, 32))), c(B, 1, 32)),
                        B.and_(b, c(B, 31, 32))), imp_out="")

for _w in (32, 64):
    _t = f"b{_w}"
    S(f"s_bcnt0_i32_{_t}", "i32", _t,
      lambda B, a, _w=_w: (lambda r: (r, nz(B, r)))(
          B.trunc(B.popcount(B.not_(a)), 32) if _w == 64 else B.popcount(B.not_(a))))
    S(f"s_ff0_i32_{_t}", "i32", _t,
      lambda B, a, _w=_w: B.select(B.eq(a, c(B, (1 << _w) - 1, _w)), c(B, 0xFFFFFFFF, 32),
                                   B.trunc(B.ctz(B.not_(a)), 32) if _w == 64 else B.ctz(B.not_(a))),
      imp_out="")
    S(f"s_bitset0_{_t}", _t, "u32",
      lambda B, n, d, _w=_w: B.and_(d, B.not_(B.shl(c(B, 1, _w), B.zext(B.and_(n, c(B, _w - 1, 32)), _w)
                                                     if _w == 64 else B.and_(n, c(B, 31, 32))))),
      imp_out="", tied=True)
    S(f"s_bitset1_{_t}", _t, "u32",
      lambda B, n, d, _w=_w: B.or_(d, B.shl(c(B, 1, _w), B.zext(B.and_(n, c(B, _w - 1, 32)), _w)
                                           if _w == 64 else B.and_(n, c(B, 31, 32)))),
      imp_out="", tied=True)


def _flbit_signed(B, a):
    """S_FLBIT_I32 / _I64: count of leading bits equal to the sign bit; -1 for 0 and -1."""
    w = B.width(a)
    x = B.select(B.slt(a, c(B, 0, w)), B.not_(a), a)
    r = B.trunc(B.clz(x), 32) if w == 64 else B.clz(x)
    return B.select(B.eq(x, c(B, 0, w)), c(B, 0xFFFFFFFF, 32), r)


S("s_flbit_i32", "i32", "i32", _flbit_signed, imp_out="")
S("s_flbit_i32_i64", "i32", "i64", _flbit_signed, imp_out="")
S("s_pack_ll_b32_b16", "b32", "b32 b32",
  lambda B, a, b: B.or_(B.and_(a, c(B, 0xFFFF, 32)), B.shl(b, c(B, 16, 32))), imp_out="")
S("s_pack_lh_b32_b16", "b32", "b32 b32",
  lambda B, a, b: B.or_(B.and_(a, c(B, 0xFFFF, 32)), B.and_(b, c(B, 0xFFFF0000, 32))), imp_out="")
S("s_pack_hh_b32_b16", "b32", "b32 b32",
  lambda B, a, b: B.or_(B.lshr(a, c(B, 16, 32)), B.and_(b, c(B, 0xFFFF0000, 32))), imp_out="")


def _wqm(B, a):
    """S_WQM: every quad (4 bits) with any bit set becomes all ones."""
    w = B.width(a)
    r = c(B, 0, w)
    for q in range(w // 4):
        nib = B.and_(B.lshr(a, c(B, 4 * q, w)), c(B, 0xF, w))
        r = B.or_(r, B.select(B.ne(nib, c(B, 0, w)), c(B, 0xF << (4 * q), w), c(B, 0, w)))
    return r, nz(B, r)


def _quadmask(B, a):
    """S_QUADMASK: bit q of the result is set when quad q of the source has any bit set."""
    w = B.width(a)
    r = c(B, 0, w)
    for q in range(w // 4):
        nib = B.and_(B.lshr(a, c(B, 4 * q, w)), c(B, 0xF, w))
        r = B.or_(r, B.select(B.ne(nib, c(B, 0, w)), c(B, 1 << q, w), c(B, 0, w)))
    return r, nz(B, r)


for _w in (32, 64):
    S(f"s_wqm_b{_w}", f"b{_w}", f"b{_w}", _wqm)
    S(f"s_quadmask_b{_w}", f"b{_w}", f"b{_w}", _quadmask)

# saveexec family: sdst = EXEC; EXEC = f(ssrc, EXEC); SCC = EXEC != 0
for _n, _f in (("and", lambda B, s, e: B.and_(s, e)), ("or", lambda B, s, e: B.or_(s, e)),
               ("xor", lambda B, s, e: B.xor(s, e)), ("andn2", lambda B, s, e: B.and_(s, B.not_(e))),
               ("orn2", lambda B, s, e: B.or_(s, B.not_(e))), ("nand", lambda B, s, e: B.not_(B.and_(s, e))),
               ("nor", lambda B, s, e: B.not_(B.or_(s, e))), ("xnor", lambda B, s, e: B.not_(B.xor(s, e))),
               ("andn1", lambda B, s, e: B.and_(B.not_(s), e)), ("orn1", lambda B, s, e: B.or_(B.not_(s), e))):
    S(f"s_{_n}_saveexec_b64", "b64", "b64",
      lambda B, s, e, _f=_f: (lambda r: (e, r, nz(B, r)))(_f(B, s, e)),
      imp_in="exec", imp_out="exec scc")

# wrexec: EXEC = f(ssrc, EXEC); sdst = the new EXEC; SCC = EXEC != 0
for _n, _f in (("andn1_wrexec", lambda B, s, e: B.and_(B.not_(s), e)),
               ("andn2_wrexec", lambda B, s, e: B.and_(s, B.not_(e)))):
    S(f"s_{_n}_b64", "b64", "b64", lambda B, s, e, _f=_f: (lambda r: (r, r, nz(B, r)))(_f(B, s, e)),
      imp_in="exec", imp_out="exec scc")


def _bitreplicate(B, a):
    """S_BITREPLICATE_B64_B32: each bit of the 32-bit source twice, into 64 bits."""
    r = c(B, 0, 64)
    x = B.zext(a, 64)
    for i in range(32):
        bit = B.and_(B.lshr(x, c(B, i, 64)), c(B, 1, 64))
        r = B.or_(r, B.mul(bit, c(B, 3 << (2 * i), 64)))
    return r


S("s_bitreplicate_b64_b32", "b64", "b32", _bitreplicate, imp_out="")

# SOPC compares
for _w, _ty in ((32, ("i32", "u32")), (64, ("u64",))):
    for _t in _ty:
        for _p in ("eq", "lg", "gt", "ge", "lt", "le"):
            if _w == 64 and _p not in ("eq", "lg"):
                continue
            S(f"s_cmp_{_p}_{_t}", "", f"{_t} {_t}",
              lambda B, a, b, _p=_p, _s=_t[0] == "i": B.icmp(_p, a, b, _s), kind="sopc")
            if _w == 32:
                S(f"s_cmpk_{_p}_{_t}", "", f"{_t} {_t}",
                  lambda B, a, b, _p=_p, _s=_t[0] == "i": B.icmp(_p, a, b, _s), kind="sopc")
for _w in (32, 64):
    S(f"s_bitcmp0_b{_w}", "", f"b{_w} u32",
      lambda B, a, n, _w=_w: B.eq(B.and_(B.lshr(a, B.zext(B.and_(n, c(B, _w - 1, 32)), _w) if _w == 64
                                                 else B.and_(n, c(B, 31, 32))), c(B, 1, _w)),
                                  c(B, 0, _w)), kind="sopc")
    S(f"s_bitcmp1_b{_w}", "", f"b{_w} u32",
      lambda B, a, n, _w=_w: B.ne(B.and_(B.lshr(a, B.zext(B.and_(n, c(B, _w - 1, 32)), _w) if _w == 64
                                                 else B.and_(n, c(B, 31, 32))), c(B, 1, _w)),
                                  c(B, 0, _w)), kind="sopc")

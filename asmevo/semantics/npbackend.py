"""Numpy backend of the value interface (the emulator's).

Values are numpy arrays of shape ``(64,)`` (one element per lane) or ``(1,)``
(a uniform value: an SGPR, an inline constant); results broadcast.  Integers are
``uint8``/``uint16``/``uint32``/``uint64``, booleans ``bool``.  Floats are bit
patterns; float operations reinterpret them (``view``) as ``float16``/``float32``/
``float64``.

Numerics (documented deviations from hardware):

* add/sub/mul/min/max/sqrt, conversions: IEEE round-to-nearest-even as numpy
  computes them (float16 arithmetic is exact-then-rounded via float32);
  denormals are preserved (MODE denorm = 3, what clang and Triton set).
* ``ffma`` binary32: the product is exact in float64; the sum is made exact by
  TwoSum and rounded to float64 with round-to-odd, so the final rounding to
  binary32 is a single correct rounding.  binary64: per-lane exact rational
  arithmetic (``fractions.Fraction``) -- slow but correctly rounded.
  binary16: computed in float64 then rounded (product exact; double rounding
  possible only for sums spanning more than 29 binades).
* transcendentals (``fexp2 flog2 frcp frsq fsin fcos``) are computed in float64
  and rounded once: correctly rounded in practice, whereas hardware guarantees
  about 1 ULP.  Results may therefore differ from hardware in the last bit.
* ``fmin``/``fmax`` follow IEEE-mode minNum/maxNum (a NaN operand yields the
  other operand) with -0 < +0.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from .values import Backend

_U = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
_S = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
_F = {16: np.float16, 32: np.float32, 64: np.float64}
_SIGN = {16: 0x8000, 32: 0x80000000, 64: 0x8000000000000000}


_WIDTH = {np.dtype(np.bool_): 1, np.dtype(np.uint8): 8, np.dtype(np.uint16): 16,
          np.dtype(np.uint32): 32, np.dtype(np.uint64): 64, np.dtype(np.int8): 8,
          np.dtype(np.int16): 16, np.dtype(np.int32): 32, np.dtype(np.int64): 64,
          np.dtype(np.float16): 16, np.dtype(np.float32): 32, np.dtype(np.float64): 64}
_FVIEW = {np.dtype(np.uint16): np.float16, np.dtype(np.uint32): np.float32,
          np.dtype(np.uint64): np.float64}


def _w(x) -> int:
    return _WIDTH[x.dtype]


class NumpyBackend(Backend):
    """Lane-vectorised implementation of :mod:`asmevo.semantics.values`."""

    name = "numpy"

    def __init__(self):
        self._consts = {}

    # -- integers ----------------------------------------------------------
    def const(self, v, bits):
        k = (v, bits)
        c = self._consts.get(k)
        if c is None:
            if bits == 1:
                c = np.array([bool(v)])
            else:
                c = np.array([int(v) & ((1 << bits) - 1)], dtype=_U[bits])
            c.setflags(write=False)
            self._consts[k] = c
        return c

    def width(self, x):
        return _w(x)

    def add(self, a, b):
        return a + b

    def sub(self, a, b):
        return a - b

    def mul(self, a, b):
        return a * b

    def mulhi_u(self, a, b):
        w = _w(a)
        if w == 32:
            return ((a.astype(np.uint64) * b.astype(np.uint64)) >> np.uint64(32)).astype(np.uint32)
        if w == 16:
            return ((a.astype(np.uint32) * b.astype(np.uint32)) >> np.uint32(16)).astype(np.uint16)
        return np.array([(int(x) * int(y)) >> 64 for x, y in np.broadcast(a, b)], np.uint64)

    def mulhi_s(self, a, b):
        w = _w(a)
        if w == 32:
            p = a.view(np.int32).astype(np.int64) * b.view(np.int32).astype(np.int64)
            return (p >> np.int64(32)).astype(np.int32).view(np.uint32)
        if w == 16:
            p = a.view(np.int16).astype(np.int32) * b.view(np.int16).astype(np.int32)
            return (p >> np.int32(16)).astype(np.int16).view(np.uint16)
        s = lambda v: int(v) - (1 << 64) if int(v) >> 63 else int(v)  # noqa: E731
        return np.array([((s(x) * s(y)) >> 64) & ((1 << 64) - 1)
                         for x, y in np.broadcast(a, b)], np.uint64)

    def and_(self, a, b):
        return a & b

    def or_(self, a, b):
        return a | b

    def xor(self, a, b):
        return a ^ b

    def not_(self, a):
        return ~a

    def shl(self, a, n):
        return a << n.astype(a.dtype, copy=False)

    def lshr(self, a, n):
        return a >> n.astype(a.dtype, copy=False)

    def ashr(self, a, n):
        w = _w(a)
        return (a.view(_S[w]) >> n.astype(_S[w], copy=False)).view(_U[w])

    def zext(self, x, bits):
        if x.dtype == np.bool_:
            return x.astype(_U[bits])
        return x.astype(_U[bits])

    def sext(self, x, bits):
        w = _w(x)
        return x.view(_S[w]).astype(_S[bits]).view(_U[bits])

    def trunc(self, x, bits):
        return x.astype(_U[bits])

    def concat(self, hi, lo):
        w = _w(lo)
        t = _U[2 * w]
        return (hi.astype(t) << t(w)) | lo.astype(t)

    def extract(self, x, lo, n):
        t = _U[n] if n in _U else x.dtype.type
        v = (x >> x.dtype.type(lo)) if lo else x
        if n in _U:
            return v.astype(t)
        return v & x.dtype.type((1 << n) - 1)

    def popcount(self, a):
        w = _w(a)
        b = np.unpackbits(np.ascontiguousarray(a).view(np.uint8)).reshape(a.shape[0], w // 8 * 8)
        return b.sum(axis=1, dtype=_U[w])

    def clz(self, a):
        """Count of leading zero bits; ``width`` when ``a == 0``."""
        w = _w(a)
        f = a.astype(np.float64) if w <= 32 else None
        if f is not None:
            # exponent of the float64 (exact for w <= 32: <= 53 significant bits)
            _, e = np.frexp(f)
            r = np.where(a == 0, w, w - e)
            return r.astype(_U[w])
        return np.array([w - int(x).bit_length() for x in a], np.uint64)

    def ctz(self, a):
        """Count of trailing zero bits; ``width`` when ``a == 0``."""
        w = _w(a)
        low = a & (~a + a.dtype.type(1))  # isolate lowest set bit
        return np.where(a == 0, w, w - 1 - self.clz(low).astype(np.int64)).astype(_U[w])

    def bitrev(self, a):
        w = _w(a)
        n = a.shape[0]
        b = np.ascontiguousarray(a).view(np.uint8).reshape(n, w // 8)
        bits = np.unpackbits(b, axis=1, bitorder="little")[:, ::-1]
        return np.packbits(bits, axis=1, bitorder="little").view(_U[w]).reshape(n)

    def byte_select(self, x, sel):
        """Vectorised V_PERM_B32 byte selection (same result as the generic method):
        a 16-entry byte table per lane indexed by the selector bytes."""
        n = max(x.shape[0], sel.shape[0])
        xb = np.ascontiguousarray(np.broadcast_to(x, (n,))).view(np.uint8).reshape(n, 8)
        table = np.empty((n, 16), np.uint8)
        table[:, :8] = xb
        table[:, 8:12] = np.where(xb[:, 1::2] & 0x80, 0xFF, 0)
        table[:, 12] = 0
        table[:, 13:] = 0xFF
        sb = np.ascontiguousarray(np.broadcast_to(sel, (n,))).view(np.uint8).reshape(n, 4)
        idx = np.minimum(sb, 13)
        return np.take_along_axis(table, idx.astype(np.intp), axis=1).copy().view(np.uint32).reshape(n)

    # -- compares / booleans ------------------------------------------------
    def eq(self, a, b):
        return a == b

    def ne(self, a, b):
        return a != b

    def ult(self, a, b):
        return a < b

    def ule(self, a, b):
        return a <= b

    def ugt(self, a, b):
        return a > b

    def uge(self, a, b):
        return a >= b

    def slt(self, a, b):
        s = _S[_w(a)]
        return a.view(s) < b.view(s)

    def sle(self, a, b):
        s = _S[_w(a)]
        return a.view(s) <= b.view(s)

    def sgt(self, a, b):
        s = _S[_w(a)]
        return a.view(s) > b.view(s)

    def sge(self, a, b):
        s = _S[_w(a)]
        return a.view(s) >= b.view(s)

    def lane_id(self):
        return _LANE_IDS

    def true(self):
        return self.const(1, 1)

    def false(self):
        return self.const(0, 1)

    def false_like(self, a):
        return np.zeros(a.shape, bool)

    def band(self, a, b):
        return a & b

    def bor(self, a, b):
        return a | b

    def bxor(self, a, b):
        return a ^ b

    def bnot(self, a):
        return ~a

    def select(self, c, a, b):
        return np.where(c, a, b)

    def b2i(self, c, bits):
        return c.astype(_U[bits])

    # -- floats ---------------------------------------------------------------
    @staticmethod
    def _f(a):
        return a.view(_FVIEW[a.dtype])

    def fadd(self, a, b):
        return (self._f(a) + self._f(b)).view(a.dtype)

    def fsub(self, a, b):
        return (self._f(a) - self._f(b)).view(a.dtype)

    def fmul(self, a, b):
        return (self._f(a) * self._f(b)).view(a.dtype)

    def fdiv(self, a, b):
        """IEEE division (not a hardware instruction; used inside div_scale checks)."""
        return (self._f(a) / self._f(b)).view(a.dtype)

    def ffma(self, a, b, c):
        w = _w(a)
        if w == 32:
            return _fma32(a.view(np.float32), b.view(np.float32), c.view(np.float32)).view(np.uint32)
        if w == 16:
            r = a.view(np.float16).astype(np.float64) * b.view(np.float16).astype(np.float64) \
                + c.view(np.float16).astype(np.float64)
            return r.astype(np.float16).view(np.uint16)
        return _fma64(a, b, c)

    def _minmax(self, a, b, is_max):
        """IEEE-mode V_MIN/V_MAX: a signaling NaN operand gives that NaN quieted (S0
        first), a quiet NaN gives the other operand, -0 < +0 (CDNA3 pseudocode)."""
        fa, fb = self._f(a), self._f(b)
        r = (np.fmax if is_max else np.fmin)(fa, fb).view(a.dtype)
        # equal operands: +-0 by the sign bits; other equal values have identical bits
        eq = fa == fb
        if np.count_nonzero(eq):    # (r is a new array: written in place where equal)
            (np.bitwise_and if is_max else np.bitwise_or)(a, b, out=r, where=eq)
        # unordered operands: a signaling NaN wins, quieted
        nan_a, nan_b = np.isnan(fa), np.isnan(fb)
        if np.count_nonzero(nan_a) or np.count_nonzero(nan_b):
            w = _w(a)
            q = a.dtype.type({16: 0x200, 32: 0x400000, 64: 0x8000000000000}[w])
            sn_a = nan_a & ((a & q) == 0)
            sn_b = nan_b & ((b & q) == 0)
            if np.count_nonzero(sn_a | sn_b):
                r = np.where(sn_b, b | q, r)
                r = np.where(sn_a, a | q, r)
        return r

    def fmin(self, a, b):
        return self._minmax(a, b, False)

    def fmax(self, a, b):
        return self._minmax(a, b, True)

    def fcmp(self, pred, a, b):
        fa, fb = self._f(a), self._f(b)
        if pred == "f":
            return np.zeros(np.broadcast(fa, fb).shape, bool)
        if pred == "tru":
            return np.ones(np.broadcast(fa, fb).shape, bool)
        if pred == "lt":
            return fa < fb
        if pred == "eq":
            return fa == fb
        if pred == "le":
            return fa <= fb
        if pred == "gt":
            return fa > fb
        if pred == "lg":
            return (fa < fb) | (fa > fb)
        if pred == "ge":
            return fa >= fb
        if pred == "o":
            return ~(np.isnan(fa) | np.isnan(fb))
        if pred == "u":
            return np.isnan(fa) | np.isnan(fb)
        if pred == "nge":
            return ~(fa >= fb)
        if pred == "nlg":
            return ~((fa < fb) | (fa > fb))
        if pred == "ngt":
            return ~(fa > fb)
        if pred == "nle":
            return ~(fa <= fb)
        if pred == "neq":
            return ~(fa == fb)
        if pred == "nlt":
            return ~(fa < fb)
        raise ValueError(pred)

    def _via64(self, a, fn):
        w = _w(a)
        r = fn(self._f(a).astype(np.float64))
        return r.astype(_F[w]).view(a.dtype)

    def fsqrt(self, a):
        return np.sqrt(self._f(a)).view(a.dtype)

    def frcp(self, a):
        return self._via64(a, lambda x: 1.0 / x)

    def frsq(self, a):
        return self._via64(a, lambda x: 1.0 / np.sqrt(x))

    def fexp2(self, a):
        return self._via64(a, np.exp2)

    def flog2(self, a):
        return self._via64(a, np.log2)

    def fsin(self, a):
        return self._via64(a, lambda x: np.sin(x * (2 * np.pi)))

    def fcos(self, a):
        return self._via64(a, lambda x: np.cos(x * (2 * np.pi)))

    def ffloor(self, a):
        return np.floor(self._f(a)).view(a.dtype)

    def fceil(self, a):
        return np.ceil(self._f(a)).view(a.dtype)

    def ftrunc(self, a):
        return np.trunc(self._f(a)).view(a.dtype)

    def frndne(self, a):
        return np.rint(self._f(a)).view(a.dtype)

    def ffract(self, a):
        f = self._f(a)
        r = f - np.floor(f)
        lim = np.nextafter(f.dtype.type(1), f.dtype.type(0))
        r = np.minimum(r, lim)
        r = np.where(np.isinf(f), f.dtype.type(np.nan), r)
        return r.astype(f.dtype).view(a.dtype)

    def fldexp(self, a, e):
        f = self._f(a)
        ei = np.clip(e.view(np.int32).astype(np.int64), -100000, 100000).astype(np.int32)
        return np.ldexp(f, ei).astype(f.dtype).view(a.dtype)

    def ffrexp_mant(self, a):
        m, _ = np.frexp(self._f(a))
        return m.astype(self._f(a).dtype).view(a.dtype)

    def ffrexp_exp(self, a):
        _, e = np.frexp(self._f(a))
        return e.astype(np.int32).view(np.uint32)

    def fcvt(self, a, bits):
        return self._f(a).astype(_F[bits]).view(_U[bits])

    def f2i(self, a, bits, signed):
        f = self._f(a).astype(np.float64)
        t = np.trunc(f)
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
        t = np.clip(np.nan_to_num(t, nan=0.0), lo, hi)
        if bits == 64:
            return np.array([int(x) & ((1 << 64) - 1) for x in t], np.uint64)
        return t.astype(np.int64).astype(_U[bits])

    def i2f(self, a, fbits, signed):
        w = _w(a)
        src = a.view(_S[w]) if signed else a
        return src.astype(_F[fbits]).view(_U[fbits])

    def fp82f(self, b, fmt):
        code = (b & b.dtype.type(0xFF)).astype(np.intp)
        mag = _FP8[fmt][code & 0x7F]
        v = np.where(code & 0x80, -mag, mag)
        v = np.where(code == 0x80, np.nan, v)
        return v.astype(np.float32).view(np.uint32)

    def f2fp8(self, a, fmt, clamp):
        x = a.view(np.float32).astype(np.float64)
        tab = _FP8[fmt]
        ext = np.append(tab, tab[127] + (tab[127] - tab[126]))   # code 128 = overflow
        ax = np.abs(x)
        hi = np.clip(np.searchsorted(ext, ax, side="left"), 1, 128)
        lo = hi - 1
        dlo, dhi = ax - ext[lo], ext[hi] - ax
        code = np.where(dlo < dhi, lo, np.where(dhi < dlo, hi, np.where(lo % 2 == 0, lo, hi)))
        code = np.where(ax <= 0, 0, code)
        over = (code >= 128) | np.isinf(x)
        code = np.where(over, 0x7F if clamp else 0x80, code)
        neg = (x < 0) & (code != 0) & (code != 0x80)
        code = np.where(neg, code | 0x80, code)
        code = np.where(np.isnan(x), 0x80, code)
        return code.astype(np.uint32)

    def fclass(self, a, mask):
        """IEEE class test (V_CMP_CLASS): bit 0 sNaN, 1 qNaN, 2 -inf, 3 -normal,
        4 -denormal, 5 -0, 6 +0, 7 +denormal, 8 +normal, 9 +inf."""
        w = _w(a)
        f = self._f(a)
        m = mask.astype(np.uint32)
        neg = (a & a.dtype.type(_SIGN[w])) != 0
        nan = np.isnan(f)
        qbit = {16: 0x200, 32: 0x400000, 64: 0x8000000000000}[w]
        quiet = (a & a.dtype.type(qbit)) != 0
        inf = np.isinf(f)
        zero = f == 0
        tiny = np.finfo(f.dtype).tiny
        den = ~zero & (np.abs(f) < tiny)
        norm = ~nan & ~inf & ~zero & ~den
        cls = np.select([nan & ~quiet, nan & quiet, inf & neg, norm & neg, den & neg, zero & neg,
                         zero & ~neg, den & ~neg, norm & ~neg, inf & ~neg],
                        list(range(10)), 0).astype(np.uint32)
        return ((m >> cls) & np.uint32(1)) != 0


def _fp8_table(fmt: str) -> np.ndarray:
    """float64 values of the 128 non-negative codes of a gfx942 FNUZ fp8 format."""
    mbits, bias = (3, 8) if fmt == "fp8" else (2, 16)
    c = np.arange(128)
    e = c >> mbits
    m = c & ((1 << mbits) - 1)
    return np.where(e == 0, m / (1 << mbits) * 2.0 ** (1 - bias),
                    (1 + m / (1 << mbits)) * 2.0 ** (e - bias))


_FP8 = {f: _fp8_table(f) for f in ("fp8", "bf8")}


def _fma32(a, b, c):
    """Correctly rounded binary32 fma: exact product in f64, TwoSum, round-to-odd.

    Fast path: rounding the float64 sum to binary32 can only go wrong (double
    rounding) when the sum lands exactly on a binary32 rounding midpoint or in the
    binary32 subnormal range; otherwise the float64 result rounds correctly."""
    p = np.multiply(a, b, dtype=np.float64)
    s = p + c
    sb = s.view(np.uint64)
    risky = ((sb & np.uint64(0x1FFFFFFF)) == np.uint64(0x10000000)) | \
        ((sb & np.uint64(0x7FF0000000000000)) < np.uint64(0x3810000000000000))
    if not np.count_nonzero(risky):
        return s.astype(np.float32)
    cc = c.astype(np.float64)
    t = s - p
    e = (p - (s - t)) + (cc - t)
    fin = np.isfinite(s) & (e != 0) & np.isfinite(e)
    if fin.any():
        sb = s.view(np.uint64)
        odd = (sb & np.uint64(1)) != 0
        # move s one ulp toward the exact value when it is even and inexact
        same = (e > 0) == (s > 0)
        adj = np.where(same, np.uint64(1), np.uint64(0xFFFFFFFFFFFFFFFF))
        sb2 = np.where(fin & ~odd & (s != 0), sb + adj, sb)
        s = sb2.view(np.float64)
    return s.astype(np.float32)


def _fma64(a, b, c):
    fa, fb, fc = (np.broadcast_to(x.view(np.float64), np.broadcast(a, b, c).shape)
                  for x in (a, b, c))
    out = np.empty(fa.shape, np.float64)
    for i in range(fa.shape[0]):
        x, y, z = float(fa[i]), float(fb[i]), float(fc[i])
        import math
        if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
            # (a finite product is exact, whatever its size: an infinite addend wins)
            out[i] = z if math.isfinite(x) and math.isfinite(y) else x * y + z
            continue
        exact = Fraction(x) * Fraction(y) + Fraction(z)
        if exact == 0:
            out[i] = x * y + z  # sign of zero per IEEE (RNE)
        else:
            try:
                out[i] = float(exact)  # Fraction -> float is correctly rounded
            except OverflowError:   # (past the largest double: +-inf, round to nearest)
                out[i] = math.inf if exact > 0 else -math.inf
    return out.view(np.uint64)


_LANE_IDS = np.arange(64, dtype=np.uint32)
_LANE_IDS.setflags(write=False)
NP = NumpyBackend()

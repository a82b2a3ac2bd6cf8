"""Python-int backend of the value interface, for scalar (SALU) instructions.

The emulator evaluates SALU semantics with this backend: one wave-uniform value
needs no numpy array, and Python integer arithmetic is about ten times cheaper
than a numpy call on a one-element array.  Values are instances of the int
subclasses :class:`U8`/:class:`U16`/:class:`U32`/:class:`U64` (the class gives
the bit width; the value is always in ``[0, 2**width)``); booleans are Python
``bool``.  Floating-point operations are not provided (gfx942 has no scalar
floating-point ALU) and raise ``NotImplementedError``.
"""

from __future__ import annotations

from .values import Backend


class _UInt(int):
    __slots__ = ()
    W = 0
    M = 0


class U8(_UInt):
    __slots__ = ()
    W, M = 8, 0xFF


class U16(_UInt):
    __slots__ = ()
    W, M = 16, 0xFFFF


class U32(_UInt):
    __slots__ = ()
    W, M = 32, 0xFFFFFFFF


class U64(_UInt):
    __slots__ = ()
    W, M = 64, 0xFFFFFFFFFFFFFFFF


TYPES = {8: U8, 16: U16, 32: U32, 64: U64}


def _s(x) -> int:
    """Signed value of ``x``."""
    w = x.W
    return x - (1 << w) if x >> (w - 1) else int(x)


class IntBackend(Backend):
    """Scalar implementation of :mod:`asmevo.semantics.values` (see module docstring)."""

    name = "int"

    def const(self, v, bits):
        if bits == 1:
            return bool(v)
        t = TYPES[bits]
        return t(int(v) & t.M)

    def width(self, x):
        return 1 if isinstance(x, bool) else x.W

    def add(self, a, b):
        t = type(a)
        return t((a + b) & t.M)

    def sub(self, a, b):
        t = type(a)
        return t((a - b) & t.M)

    def mul(self, a, b):
        t = type(a)
        return t((a * b) & t.M)

    def mulhi_u(self, a, b):
        t = type(a)
        return t((int(a) * int(b)) >> t.W)

    def mulhi_s(self, a, b):
        t = type(a)
        return t(((_s(a) * _s(b)) >> t.W) & t.M)

    def and_(self, a, b):
        return type(a)(a & b)

    def or_(self, a, b):
        return type(a)(a | b)

    def xor(self, a, b):
        return type(a)(a ^ b)

    def not_(self, a):
        t = type(a)
        return t(~a & t.M)

    def shl(self, a, n):
        t = type(a)
        return t((a << int(n)) & t.M) if n < t.W else t(0)

    def lshr(self, a, n):
        return type(a)(a >> int(n))

    def ashr(self, a, n):
        t = type(a)
        return t((_s(a) >> min(int(n), t.W)) & t.M)

    def zext(self, x, bits):
        return TYPES[bits](int(x))

    def sext(self, x, bits):
        t = TYPES[bits]
        return t(_s(x) & t.M)

    def trunc(self, x, bits):
        t = TYPES[bits]
        return t(x & t.M)

    def concat(self, hi, lo):
        return TYPES[hi.W + lo.W]((int(hi) << lo.W) | lo)

    def extract(self, x, lo, n):
        v = (x >> lo) & ((1 << n) - 1)
        return TYPES[n](v) if n in TYPES else type(x)(v)

    def popcount(self, a):
        return type(a)(bin(a).count("1"))

    def clz(self, a):
        return type(a)(a.W - int(a).bit_length())

    def ctz(self, a):
        return type(a)((a & -a).bit_length() - 1 if a else a.W)

    def bitrev(self, a):
        w = a.W
        return type(a)(int(format(int(a), f"0{w}b")[::-1], 2))

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
        return _s(a) < _s(b)

    def sle(self, a, b):
        return _s(a) <= _s(b)

    def sgt(self, a, b):
        return _s(a) > _s(b)

    def sge(self, a, b):
        return _s(a) >= _s(b)

    def true(self):
        return True

    def false(self):
        return False

    def false_like(self, a):
        return False

    def band(self, a, b):
        return a and b

    def bor(self, a, b):
        return a or b

    def bxor(self, a, b):
        return a != b

    def bnot(self, a):
        return not a

    def select(self, c, a, b):
        return a if c else b

    def b2i(self, c, bits):
        return TYPES[bits](1 if c else 0)

    def __getattr__(self, name):
        if name.startswith("f") or name in ("i2f",):
            raise NotImplementedError(f"the scalar int backend has no floating point ({name})")
        raise AttributeError(name)


INT = IntBackend()

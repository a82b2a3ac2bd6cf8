"""The abstract value interface that every semantic function is written against.

A semantic function receives a backend ``B`` and operand values and returns
result values, calling only the methods below.  A value is an integer of a
fixed bit width (8, 16, 32 or 64) or a boolean; floating-point values are
carried as their IEEE bit patterns, and float operations take the format from
the width of their operands (16 -> binary16, 32 -> binary32, 64 -> binary64).
Two backends implement the interface:

* :class:`asmevo.semantics.npbackend.NumpyBackend` -- values are numpy arrays
  (``uint16``/``uint32``/``uint64``/``bool``) of shape ``(64,)`` (one element
  per lane) or ``(1,)`` (uniform/scalar), so one call runs a whole wave;
* :class:`asmevo.semantics.z3backend.Z3Backend` -- values are z3 ``BitVecRef``
  / ``BoolRef`` terms; floats through the z3 FP theory or uninterpreted
  functions.

Semantic functions must not branch in Python on values (use ``select``).

Method list (all operands of one call have equal width unless noted):

integers   const(v, bits) width(x) add sub mul mulhi_u mulhi_s and_ or_ xor not_
           shl lshr ashr (amount has the width of x; callers mask it)
           zext(x, bits) sext(x, bits) trunc(x, bits) concat(hi, lo)
           extract(x, lo, n) (static bit field) popcount clz ctz bitrev
           byte_select(x64, sel32) (V_PERM_B32 byte selection, see below)
compare    eq ne ult ule ugt uge slt sle sgt sge -> bool
booleans   true() false() band bor bxor bnot select(c, a, b) b2i(c, bits)
lanes      lane_id() (u32: the lane's index 0..63; uniform code never calls it)
float      fadd fsub fmul ffma fmin fmax (IEEE-mode minNum/maxNum) fcmp(pred, a, b)
           fsqrt frcp frsq fexp2 flog2 fsin fcos (revolutions) ffloor fceil ftrunc
           frndne ffract fldexp(a, e_i32) ffrexp_mant ffrexp_exp(-> i32)
           fcvt(a, bits) f2i(a, bits, signed) i2f(a, fbits, signed) fclass(a, mask)
fp8        f2fp8(a_f32, fmt, clamp) -> u32 byte; fp82f(byte_u32, fmt) -> f32, fmt "fp8"
           (E4M3, bias 8) or "bf8" (E5M2, bias 16), the gfx942 FNUZ formats (0x80 = NaN,
           no infinities, no negative zero); f32 -> fp8 rounds to nearest even, overflow
           gives NaN, or saturates to +-max with ``clamp``
"""

from __future__ import annotations

#: Float compare predicates of VOPC (CDNA3 ISA guide, "VOPC instructions").
FCMP_PREDS = ("f", "lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg", "ngt",
              "nle", "neq", "nlt", "tru")

#: Integer compare predicates.
ICMP_PREDS = ("f", "lt", "eq", "le", "gt", "ne", "ge", "t")


class Backend:
    """Base class documenting the interface; see the module docstring."""

    name = "abstract"

    # helpers common to both backends, written with the primitive methods
    def umin(self, a, b):
        return self.select(self.ult(a, b), a, b)

    def umax(self, a, b):
        return self.select(self.ugt(a, b), a, b)

    def smin(self, a, b):
        return self.select(self.slt(a, b), a, b)

    def smax(self, a, b):
        return self.select(self.sgt(a, b), a, b)

    def icmp(self, pred: str, a, b, signed: bool):
        """Integer compare by VOPC/SOPC predicate name (``lt``, ``eq``, ``ne``, ``t``...)."""
        if pred == "f":
            return self.false_like(a)
        if pred == "t":
            return self.bnot(self.false_like(a))
        if pred == "eq":
            return self.eq(a, b)
        if pred in ("ne", "lg"):
            return self.ne(a, b)
        op = {"lt": "lt", "le": "le", "gt": "gt", "ge": "ge"}[pred]
        return getattr(self, ("s" if signed else "u") + op)(a, b)

    def byte_select(self, x, sel):
        """Byte permute as V_PERM_B32 defines it: for each byte ``i`` of the 32-bit
        ``sel``, selector ``s`` gives byte ``s`` of the 64-bit ``x`` for 0-7, the
        sign of byte ``2*(s-8)+1`` replicated for 8-11, 0x00 for 12 and 0xFF for 13+.
        Generic version over the primitive methods; backends may override it."""
        c = self.const
        out = c(0, 32)
        for i in range(4):
            s = self.and_(self.lshr(sel, c(8 * i, 32)), c(0xFF, 32))
            s64 = self.zext(s, 64)
            byte = self.trunc(self.and_(self.lshr(x, self.shl(self.and_(s64, c(7, 64)), c(3, 64))),
                                        c(0xFF, 64)), 32)
            sb = self.trunc(self.and_(self.lshr(x, self.add(self.shl(self.and_(s64, c(3, 64)),
                                                                     c(4, 64)), c(15, 64))),
                                      c(1, 64)), 32)
            sign = self.mul(sb, c(0xFF, 32))
            v = self.select(self.ult(s, c(8, 32)), byte,
                            self.select(self.ult(s, c(12, 32)), sign,
                                        self.select(self.eq(s, c(12, 32)), c(0, 32), c(0xFF, 32))))
            out = self.or_(out, self.shl(v, c(8 * i, 32)))
        return out

    def fneg(self, a):
        """Flip the sign bit."""
        w = self.width(a)
        return self.xor(a, self.const(1 << (w - 1), w))

    def fabs(self, a):
        """Clear the sign bit."""
        w = self.width(a)
        return self.and_(a, self.const((1 << (w - 1)) - 1, w))

    def isnan(self, a):
        """Whether the float bit pattern ``a`` is a NaN."""
        w = self.width(a)
        e, m = {16: (0x7C00, 0x3FF), 32: (0x7F800000, 0x7FFFFF),
                64: (0x7FF0000000000000, 0xFFFFFFFFFFFFF)}[w]
        ab = self.fabs(a)
        return self.ugt(ab, self.const(e, w))

    def fclamp01(self, a):
        """Clamp to [0, 1]; NaN -> 0 (DX10 clamp, MODE.dx10_clamp = 1)."""
        w = self.width(a)
        one = self.const({16: 0x3C00, 32: 0x3F800000, 64: 0x3FF0000000000000}[w], w)
        zero = self.const(0, w)
        x = self.fmax(a, zero)
        x = self.fmin(x, one)
        return self.select(self.isnan(a), zero, x)

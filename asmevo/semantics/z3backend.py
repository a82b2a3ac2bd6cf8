"""z3 backend of the value interface and a symbolic executor for straight-line code.

:class:`Z3Backend` implements :mod:`asmevo.semantics.values` over z3
bit-vectors: the *same* semantic functions the emulator runs on numpy arrays
build z3 terms here.  Floating point is either

* ``float_mode="fp"``: the z3 FP theory (IEEE, round-to-nearest-even) for
  add/sub/mul/fma/div/sqrt/min/max/compares/conversions/rounding, with
  uninterpreted functions for the operations hardware only approximates
  (``rcp``, ``rsq``, ``exp2``, ``log2``, ``sin``, ``cos``) and for ``ldexp``,
  ``frexp``, ``fract``; or
* ``float_mode="uf"``: every float operation an uninterpreted function of the
  operand bit patterns (``fadd_f32(a, b)``...), for fast syntactic equivalence.

:func:`symexec` runs a list of Instructions from a symbolic register state.
Lane model: VGPR units hold the value of one generic lane whose index is the
6-bit variable ``lane``: the initial value of ``v5`` is ``Select(v5, lane)`` where
the array ``v5`` holds all 64 lanes' values; SGPRs are uniform variables named
after their unit (``s3``, ``vcc_lo``, ``exec_lo``, ``m0``, ``scc`` (1 bit)).
A VALU write keeps the old value where ``exec[lane]`` is 0.  A lane-mask result
(VOPC, carry-out) is built bit by bit: bit ``i`` is the per-lane result with
``lane := i`` (inactive lanes 0), so masks are exact functions of all 64 lanes;
a VALU reading such a mask back gets its own lane's bit directly.  Memory is a byte array per space (``global``: 64-bit addresses,
``lds``: 32-bit, ``scratch``: 32-bit per lane); loads read it, stores update it
and are also reported as :class:`MemWrite` s.  DPP, ``v_readlane``,
``v_readfirstlane`` and ``v_writelane`` are modelled by substituting the source
lane for ``lane``; SDWA, LDS swizzles/permutes, branches, atomics and MFMA
raise :class:`~asmevo.semantics.registry.Unsupported`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import z3

from ..ir.operands import Imm, Reg, Special, Src, base_of, reg_units
from .immediates import (UnsupportedImmediate, imm_bits, imm_bits16, packed_inline_halves,
                         vop3p_form_unsupported)
from .registry import Unsupported, lookup, width
from .values import Backend

#: z3 constants made once (float sorts by width, the RNE rounding mode); emptied at exit
_CONSTANTS: dict = {}


def _fsort(bits: int):
    """z3's float sort of ``bits`` (16, 32, 64) bits."""
    s = _CONSTANTS.get(bits)
    if s is None:
        s = _CONSTANTS[bits] = {16: z3.FloatHalf, 32: z3.Float32, 64: z3.Float64}[bits]()
    return s


def _rne():
    """z3's round-to-nearest-even rounding mode."""
    r = _CONSTANTS.get("rne")
    if r is None:
        r = _CONSTANTS["rne"] = z3.RNE()
    return r


def release_z3_objects() -> None:
    """Free the z3 objects Python still holds, while z3 is whole: this module's constants
    and any garbage cycle holding a z3 expression, solver or model.  Registered with
    ``atexit`` (handlers run before the interpreter tears modules down): a z3 object freed
    during that teardown runs ``AstRef.__del__`` with z3's module globals already cleared
    (``None``), which printed "Exception ignored in: <function AstRef.__del__ ...>" with a
    traceback after ``asmevo evolve``.  Later uses make the constants again."""
    import gc
    _CONSTANTS.clear()
    gc.collect()


import atexit  # noqa: E402

atexit.register(release_z3_objects)


def _w(x) -> int:
    return 1 if z3.is_bool(x) else x.size()


class Z3Backend(Backend):
    """z3 implementation of the value interface (see module docstring)."""

    name = "z3"

    def __init__(self, float_mode: str = "fp"):
        if float_mode not in ("fp", "uf"):
            raise ValueError("float_mode must be 'fp' or 'uf'")
        self.float_mode = float_mode
        self._funcs: dict = {}
        self.lane = z3.BitVec("lane", 6)

    def lane_id(self):
        """The generic lane's index (the symbolic executor's ``lane`` variable)."""
        return z3.ZeroExt(26, self.lane)

    # -- helpers -------------------------------------------------------------
    def uf(self, name: str, *args, ret_bits: int | None = None, ret_bool: bool = False):
        """Apply the uninterpreted function ``name`` (created once per signature)."""
        key = (name, tuple(_w(a) for a in args), ret_bits, ret_bool)
        f = self._funcs.get(key)
        if f is None:
            dom = [z3.BitVecSort(_w(a)) for a in args]
            rng = z3.BoolSort() if ret_bool else z3.BitVecSort(ret_bits or _w(args[0]))
            f = z3.Function(f"{name}_{'_'.join(str(_w(a)) for a in args)}", *dom, rng)
            self._funcs[key] = f
        return f(*args)

    def _fp(self, a):
        return z3.fpBVToFP(a, _fsort(_w(a)))

    @staticmethod
    def _bv(f):
        """Bit pattern of an FP term; NaN results are the canonical quiet NaN (hardware
        propagates payloads; any NaN is accepted as equal by the checks)."""
        w = f.sort().ebits() + f.sort().sbits()
        qnan = {16: 0x7E00, 32: 0x7FC00000, 64: 0x7FF8000000000000}[w]
        return z3.If(z3.fpIsNaN(f), z3.BitVecVal(qnan, w), z3.fpToIEEEBV(f))

    # -- integers --------------------------------------------------------------
    def const(self, v, bits):
        if bits == 1:
            return z3.BoolVal(bool(v))
        return z3.BitVecVal(int(v) & ((1 << bits) - 1), bits)

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
        return z3.Extract(2 * w - 1, w, z3.ZeroExt(w, a) * z3.ZeroExt(w, b))

    def mulhi_s(self, a, b):
        w = _w(a)
        return z3.Extract(2 * w - 1, w, z3.SignExt(w, a) * z3.SignExt(w, b))

    def and_(self, a, b):
        return a & b

    def or_(self, a, b):
        return a | b

    def xor(self, a, b):
        return a ^ b

    def not_(self, a):
        return ~a

    def shl(self, a, n):
        return a << self._fit(n, _w(a))

    def lshr(self, a, n):
        return z3.LShR(a, self._fit(n, _w(a)))

    def ashr(self, a, n):
        return a >> self._fit(n, _w(a))

    @staticmethod
    def _fit(n, w):
        nw = n.size()
        if nw == w:
            return n
        return z3.ZeroExt(w - nw, n) if nw < w else z3.Extract(w - 1, 0, n)

    def zext(self, x, bits):
        if z3.is_bool(x):
            return z3.If(x, z3.BitVecVal(1, bits), z3.BitVecVal(0, bits))
        return z3.ZeroExt(bits - x.size(), x) if bits > x.size() else x

    def sext(self, x, bits):
        return z3.SignExt(bits - x.size(), x) if bits > x.size() else x

    def trunc(self, x, bits):
        return z3.Extract(bits - 1, 0, x) if bits < x.size() else x

    def concat(self, hi, lo):
        return z3.Concat(hi, lo)

    def extract(self, x, lo, n):
        e = z3.Extract(lo + n - 1, lo, x)
        return e if n in (8, 16, 32, 64) else z3.ZeroExt(x.size() - n, e)

    def popcount(self, a):
        w = a.size()
        return z3.Sum([z3.ZeroExt(w - 1, z3.Extract(i, i, a)) for i in range(w)])

    def clz(self, a):
        w = a.size()
        r = z3.BitVecVal(w, w)
        for i in range(w):  # lowest set bit first, highest last wins
            r = z3.If(z3.Extract(i, i, a) == 1, z3.BitVecVal(w - 1 - i, w), r)
        return r

    def ctz(self, a):
        w = a.size()
        r = z3.BitVecVal(w, w)
        for i in reversed(range(w)):
            r = z3.If(z3.Extract(i, i, a) == 1, z3.BitVecVal(i, w), r)
        return r

    def bitrev(self, a):
        w = a.size()
        return z3.Concat(*[z3.Extract(i, i, a) for i in range(w)])

    # -- compares / booleans -------------------------------------------------
    def eq(self, a, b):
        return a == b

    def ne(self, a, b):
        return a != b

    def ult(self, a, b):
        return z3.ULT(a, b)

    def ule(self, a, b):
        return z3.ULE(a, b)

    def ugt(self, a, b):
        return z3.UGT(a, b)

    def uge(self, a, b):
        return z3.UGE(a, b)

    def slt(self, a, b):
        return a < b

    def sle(self, a, b):
        return a <= b

    def sgt(self, a, b):
        return a > b

    def sge(self, a, b):
        return a >= b

    def true(self):
        return z3.BoolVal(True)

    def false(self):
        return z3.BoolVal(False)

    def false_like(self, a):
        return z3.BoolVal(False)

    def band(self, a, b):
        return z3.And(a, b)

    def bor(self, a, b):
        return z3.Or(a, b)

    def bxor(self, a, b):
        return z3.Xor(a, b)

    def bnot(self, a):
        return z3.Not(a)

    def select(self, c, a, b):
        return z3.If(c, a, b)

    def b2i(self, c, bits):
        return z3.If(c, z3.BitVecVal(1, bits), z3.BitVecVal(0, bits))

    # -- floats ------------------------------------------------------------------
    def _f2(self, name, op, a, b):
        if self.float_mode == "uf":
            return self.uf(f"{name}_f{_w(a)}", a, b)
        return self._bv(op(_rne(), self._fp(a), self._fp(b)))

    def fadd(self, a, b):
        return self._f2("fadd", z3.fpAdd, a, b)

    def fsub(self, a, b):
        return self._f2("fsub", z3.fpSub, a, b)

    def fmul(self, a, b):
        return self._f2("fmul", z3.fpMul, a, b)

    def fdiv(self, a, b):
        return self._f2("fdiv", z3.fpDiv, a, b)

    def ffma(self, a, b, c):
        if self.float_mode == "uf":
            return self.uf(f"ffma_f{_w(a)}", a, b, c)
        return self._bv(z3.fpFMA(_rne(), self._fp(a), self._fp(b), self._fp(c)))

    def _minmax(self, a, b, is_max):
        if self.float_mode == "uf":
            return self.uf(f"{'fmax' if is_max else 'fmin'}_f{_w(a)}", a, b)
        fa, fb = self._fp(a), self._fp(b)
        r = self._bv(z3.fpMax(fa, fb) if is_max else z3.fpMin(fa, fb))
        both0 = z3.And(z3.fpIsZero(fa), z3.fpIsZero(fb))
        r = z3.If(both0, (a & b) if is_max else (a | b), r)
        w = _w(a)
        q = z3.BitVecVal({16: 0x200, 32: 0x400000, 64: 0x8000000000000}[w], w)
        sn_a = z3.And(z3.fpIsNaN(fa), (a & q) == 0)
        sn_b = z3.And(z3.fpIsNaN(fb), (b & q) == 0)
        return z3.If(sn_a, a | q, z3.If(sn_b, b | q, r))

    def fmin(self, a, b):
        return self._minmax(a, b, False)

    def fmax(self, a, b):
        return self._minmax(a, b, True)

    def fcmp(self, pred, a, b):
        if pred == "f":
            return z3.BoolVal(False)
        if pred == "tru":
            return z3.BoolVal(True)
        if self.float_mode == "uf":
            return self.uf(f"fcmp_{pred}_f{_w(a)}", a, b, ret_bool=True)
        fa, fb = self._fp(a), self._fp(b)
        un = z3.Or(z3.fpIsNaN(fa), z3.fpIsNaN(fb))
        base = {"lt": z3.fpLT, "eq": z3.fpEQ, "le": z3.fpLEQ, "gt": z3.fpGT, "ge": z3.fpGEQ}
        if pred in base:
            return base[pred](fa, fb)
        if pred == "lg":
            return z3.Or(z3.fpLT(fa, fb), z3.fpGT(fa, fb))
        if pred == "o":
            return z3.Not(un)
        if pred == "u":
            return un
        neg = {"nge": "ge", "nlg": "lg", "ngt": "gt", "nle": "le", "neq": "eq", "nlt": "lt"}
        return z3.Not(self.fcmp(neg[pred], a, b))

    def _u(self, name, a):
        return self.uf(f"{name}_f{_w(a)}", a)

    def fsqrt(self, a):
        if self.float_mode == "uf":
            return self._u("fsqrt", a)
        return self._bv(z3.fpSqrt(_rne(), self._fp(a)))

    def frcp(self, a):
        return self._u("frcp", a)

    def frsq(self, a):
        return self._u("frsq", a)

    def fexp2(self, a):
        return self._u("fexp2", a)

    def flog2(self, a):
        return self._u("flog2", a)

    def fsin(self, a):
        return self._u("fsin", a)

    def fcos(self, a):
        return self._u("fcos", a)

    def _round(self, name, rm, a):
        if self.float_mode == "uf":
            return self._u(name, a)
        return self._bv(z3.fpRoundToIntegral(rm, self._fp(a)))

    def ffloor(self, a):
        return self._round("ffloor", z3.RTN(), a)

    def fceil(self, a):
        return self._round("fceil", z3.RTP(), a)

    def ftrunc(self, a):
        return self._round("ftrunc", z3.RTZ(), a)

    def frndne(self, a):
        return self._round("frndne", z3.RNE(), a)

    def ffract(self, a):
        return self._u("ffract", a)

    def fldexp(self, a, e):
        return self.uf(f"fldexp_f{_w(a)}", a, e)

    def ffrexp_mant(self, a):
        return self._u("ffrexp_mant", a)

    def ffrexp_exp(self, a):
        return self.uf(f"ffrexp_exp_f{_w(a)}", a, ret_bits=32)

    def fcvt(self, a, bits):
        if self.float_mode == "uf":
            return self.uf(f"fcvt_f{_w(a)}_f{bits}", a, ret_bits=bits)
        return self._bv(z3.fpFPToFP(_rne(), self._fp(a), _fsort(bits)))

    def f2i(self, a, bits, signed):
        if self.float_mode == "uf":
            return self.uf(f"f2{'i' if signed else 'u'}{bits}_f{_w(a)}", a, ret_bits=bits)
        fa = self._fp(a)
        s = _fsort(_w(a))
        if signed:
            lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
            conv = z3.fpToSBV(z3.RTZ(), fa, z3.BitVecSort(bits))
        else:
            lo, hi = 0, (1 << bits) - 1
            conv = z3.fpToUBV(z3.RTZ(), fa, z3.BitVecSort(bits))
        flo = z3.FPVal(float(lo), s)
        fhi = z3.FPVal(float(hi), s)
        r = z3.If(z3.fpLEQ(fa, flo), z3.BitVecVal(lo & ((1 << bits) - 1), bits),
                  z3.If(z3.fpGEQ(fa, fhi), z3.BitVecVal(hi, bits), conv))
        return z3.If(z3.fpIsNaN(fa), z3.BitVecVal(0, bits), r)

    def i2f(self, a, fbits, signed):
        if self.float_mode == "uf":
            return self.uf(f"{'i' if signed else 'u'}2f{fbits}_{_w(a)}", a, ret_bits=fbits)
        conv = z3.fpSignedToFP if signed else z3.fpUnsignedToFP
        return self._bv(conv(_rne(), a, _fsort(fbits)))

    def fp82f(self, b, fmt):
        return self.uf(f"{fmt}_to_f32", z3.Extract(7, 0, b), ret_bits=32)

    def f2fp8(self, a, fmt, clamp):
        return z3.ZeroExt(24, self.uf(f"f32_to_{fmt}{'_sat' if clamp else ''}", a, ret_bits=8))

    def fclass(self, a, mask):
        w = _w(a)
        m = {16: 10, 32: 23, 64: 52}[w]
        e = {16: 0x1F, 32: 0xFF, 64: 0x7FF}[w]
        exp = z3.Extract(w - 2, m, a)
        man = z3.Extract(m - 1, 0, a)
        neg = z3.Extract(w - 1, w - 1, a) == 1
        quiet = z3.Extract(m - 1, m - 1, a) == 1
        emax = z3.BitVecVal(e, w - 1 - m)
        ez = z3.BitVecVal(0, w - 1 - m)
        mz = z3.BitVecVal(0, m)
        nan = z3.And(exp == emax, man != mz)
        inf = z3.And(exp == emax, man == mz)
        zero = z3.And(exp == ez, man == mz)
        den = z3.And(exp == ez, man != mz)
        norm = z3.And(exp != ez, exp != emax)
        classes = [z3.And(nan, z3.Not(quiet)), z3.And(nan, quiet), z3.And(inf, neg),
                   z3.And(norm, neg), z3.And(den, neg), z3.And(zero, neg), z3.And(zero, z3.Not(neg)),
                   z3.And(den, z3.Not(neg)), z3.And(norm, z3.Not(neg)), z3.And(inf, z3.Not(neg))]
        bit = lambda k: z3.Extract(k, k, mask) == 1  # noqa: E731
        return z3.Or(*[z3.And(c, bit(k)) for k, c in enumerate(classes)])


# ============================================================================ symbolic execution
@dataclass
class MemWrite:
    """One store: ``space`` (global/lds/scratch), ``address`` term (bytes), ``size``
    (bytes), ``value`` term (``8*size`` bits), ``active`` (Bool: the generic lane's
    EXEC bit; True for scalar stores)."""

    space: str
    address: object
    size: int
    value: object
    active: object


@dataclass
class MemRead:
    """One global-memory load: ``address`` term (bytes), ``size`` (bytes), ``active`` (Bool:
    the load touches memory for the generic lane -- its EXEC bit for vector loads, True
    for scalar loads, in range for buffer loads).  A verifier uses them to check that a
    candidate loads nothing the original does not (a load of an address the original
    never loads may fault)."""

    address: object
    size: int
    active: object


@dataclass
class SymResult:
    """Result of :func:`symexec`.

    ``regs``: unit -> term for every unit read or written (``("v", 5)`` -> BitVec 32,
    ``("scc",)`` -> BitVec 1); ``written``: the units written; ``writes``: the
    stores in order; ``memory``: final byte arrays per space; ``lane``: the lane
    variable; ``lane_blind``: reasons the result may miss other lanes' stores."""

    regs: dict
    written: set
    writes: list
    memory: dict
    lane: object
    initial: dict = field(default_factory=dict)
    #: loads that may miss another lane's store (shared memory read after a store)
    lane_blind: list = field(default_factory=list)
    #: the global-memory loads in order (:class:`MemRead`)
    reads: list = field(default_factory=list)


def _unit_name(u) -> str:
    return f"{u[0]}{u[1]}" if len(u) == 2 else u[0]


_SPECIAL_UNIT_BY_SGPR = {106: ("vcc_lo",), 107: ("vcc_hi",), 126: ("exec_lo",), 127: ("exec_hi",),
                         124: ("m0",)}


class SymState:
    """Symbolic register/memory state (generic-lane model, see module docstring)."""

    def __init__(self, B: Z3Backend, initial: dict | None = None, prefix: str = ""):
        self.B = B
        self.prefix = prefix
        self.regs: dict = {}
        self.initial: dict = {}
        self.written: set = set()
        self.lane = B.lane if not prefix else z3.BitVec(prefix + "lane", 6)
        B.lane = self.lane
        self.lmview: dict = {}  # (lo unit, hi unit) -> (lo term, hi term, generic-lane Bool)
        self.mem = {"global": z3.Array(prefix + "global", z3.BitVecSort(64), z3.BitVecSort(8)),
                    "lds": z3.Array(prefix + "lds", z3.BitVecSort(32), z3.BitVecSort(8)),
                    "scratch": z3.Array(prefix + "scratch", z3.BitVecSort(64), z3.BitVecSort(8))}
        self.writes: list = []
        #: global-memory loads (:class:`MemRead`), in order
        self.reads: list = []
        #: why results may miss other lanes' effects (see _shared_load)
        self.lane_blind: list = []
        for u, t in (initial or {}).items():
            self.regs[u] = t
            self.initial[u] = t

    def get(self, u):
        t = self.regs.get(u)
        if t is None:
            if u[0] in ("v", "a"):
                # one value per lane: the generic lane reads element ``lane``
                arr = z3.Array(self.prefix + _unit_name(u), z3.BitVecSort(6), z3.BitVecSort(32))
                t = z3.Select(arr, self.lane)
            else:
                bits = 1 if u == ("scc",) else 32
                t = z3.BitVec(self.prefix + _unit_name(u), bits)
            self.regs[u] = t
            self.initial[u] = t
        return t

    def set(self, u, t):
        self.regs[u] = t
        self.written.add(u)

    def exec64(self):
        return z3.Concat(self.get(("exec_hi",)), self.get(("exec_lo",)))

    def active(self):
        """Bool: EXEC bit of the generic lane."""
        e = self.exec64()
        return z3.Extract(0, 0, z3.LShR(e, z3.ZeroExt(58, self.lane))) == 1

    def lane_instance(self, term, i: int):
        """``term`` evaluated for lane ``i`` (lane := i)."""
        return z3.substitute(term, (self.lane, z3.BitVecVal(i, 6)))


def _units_of(op):
    b = base_of(op)
    us = reg_units(b)
    out = []
    for u in us:
        if len(u) == 2 and u[0] == "s" and u[1] in _SPECIAL_UNIT_BY_SGPR:
            out.append(_SPECIAL_UNIT_BY_SGPR[u[1]])
        else:
            out.append(u)
    return out


def _read(st: SymState, op, ty: str, hi16: bool = False):
    B = st.B
    b = base_of(op)
    w = width(ty)
    if isinstance(b, Imm):
        try:
            v = imm_bits16(b.value, ty, b.text, hi16) if w == 16 else imm_bits(b.value, ty, b.text)
        except UnsupportedImmediate as e:
            raise Unsupported(f"operand {b.text or b.value}: {e}") from None
        return z3.BitVecVal(v, w)
    if isinstance(b, Special) and not reg_units(b):
        raise Unsupported(f"operand {b} is not modelled symbolically")
    if not isinstance(b, (Reg, Special)):
        raise Unsupported(f"operand {b} is not modelled symbolically")
    us = _units_of(b)
    if ty == "lm":
        if len(us) != 2:
            raise Unsupported(f"lane mask operand {b}")
        view = st.lmview.get((us[0], us[1]))
        if view is not None and view[0].eq(st.get(us[0])) and view[1].eq(st.get(us[1])):
            return view[2]  # written by a VALU in this window: the generic lane's own bit
        m = z3.Concat(st.get(us[1]), st.get(us[0]))
        return z3.Extract(0, 0, z3.LShR(m, z3.ZeroExt(58, st.lane))) == 1
    if w == 64:
        v = z3.Concat(st.get(us[1]), st.get(us[0]))
    elif w == 32:
        v = st.get(us[0])
    elif w == 16:
        v = z3.Extract(31, 16, st.get(us[0])) if hi16 else z3.Extract(15, 0, st.get(us[0]))
    else:
        raise Unsupported(f"width {w}")
    if isinstance(op, Src) and ty[0] == "f":
        if op.abs:
            v = B.fabs(v)
        if op.neg:
            v = B.fneg(v)
    elif isinstance(op, Src) and (op.neg or op.abs or op.sext):
        raise Unsupported(f"source modifier on integer operand {op}")
    return v


def _write_v(st: SymState, op, ty: str, val, active, hi16: bool = False, preserve: bool = False):
    b = base_of(op)
    us = _units_of(b)
    w = width(ty)
    if w == 64:
        parts = [z3.Extract(31, 0, val), z3.Extract(63, 32, val)]
    elif w == 32:
        parts = [val]
    elif w == 16:
        old = st.get(us[0])
        if hi16:
            parts = [z3.Concat(val, z3.Extract(15, 0, old))]
        elif preserve:
            parts = [z3.Concat(z3.Extract(31, 16, old), val)]
        else:
            parts = [z3.ZeroExt(16, val)]
    else:
        raise Unsupported(f"width {w}")
    for u, p in zip(us, parts):
        st.set(u, z3.If(active, p, st.get(u)) if active is not None else p)


def _write_lm(st: SymState, op, res_bool):
    """Write a per-lane boolean as a 64-bit mask (inactive lanes 0)."""
    b = base_of(op)
    if isinstance(b, Special) and b.name == "null":
        return
    us = _units_of(b)
    if len(us) != 2:
        raise Unsupported(f"lane-mask destination {b}")
    bit = z3.And(res_bool, st.active())
    bits = [st.lane_instance(z3.If(bit, z3.BitVecVal(1, 1), z3.BitVecVal(0, 1)), i)
            for i in range(64)]
    m = z3.Concat(*reversed(bits))
    lo, hi = z3.Extract(31, 0, m), z3.Extract(63, 32, m)
    st.set(us[0], lo)
    st.set(us[1], hi)
    st.lmview[(us[0], us[1])] = (lo, hi, bit)


def _write_s(st: SymState, op, ty, val):
    b = base_of(op)
    if isinstance(b, Special) and b.name == "null":
        return
    us = _units_of(b)
    w = width(ty)
    if w == 64:
        st.set(us[0], z3.Extract(31, 0, val))
        st.set(us[1], z3.Extract(63, 32, val))
    else:
        st.set(us[0], val)


_CROSS_LANE_MODS = ("quad_perm", "row_shl", "row_shr", "row_ror", "row_bcast", "row_mirror",
                    "row_half_mirror", "row_newbcast", "wave_shl", "wave_shr", "wave_rol", "wave_ror")


def step(st: SymState, inst) -> None:
    """Symbolically execute one instruction on ``st``.

    Raises:
        Unsupported: no semantics, cross-lane/control-flow instruction or an
            unmodelled form (DPP, SDWA, op_sel, clamp/omod...).
    """
    B = st.B
    spec = lookup(inst.opcode)
    if spec is None:
        raise Unsupported(f"'{inst.text()}': no semantics for {inst.opcode}")
    k = spec.kind
    if k == "nop":
        return
    if k == "unsupported":      # registered with the reason it is not modelled (valu.py)
        raise Unsupported(f"'{inst.text()}': {spec.extra.get('reason', 'not modelled')}")
    if inst.opcode.endswith("_sdwa"):
        _sdwa(st, inst, spec)
        return
    is_dpp = inst.opcode.endswith("_dpp") or any(inst.has_mod(m) for m in _CROSS_LANE_MODS)
    if is_dpp and k != "valu":
        raise Unsupported(f"'{inst.text()}': DPP is modelled for VALU instructions only")
    ops = inst.operands
    if k == "lane":
        _lane_op(st, inst, spec)
        return
    if k == "vop3p":
        _vop3p(st, inst, spec)
        return
    op_sel = inst.mod("op_sel") or ()
    if k in ("valu", "vopc"):
        why = vop3p_form_unsupported(inst)
        if why:
            raise Unsupported(f"'{inst.text()}': {why}")
        if k == "vopc" and len(ops) == 2:
            ops = [Special("vcc")] + list(ops)
        nd = 1 if k == "vopc" else len(spec.dst)
        dst_types = ("lm",) if k == "vopc" else spec.dst
        srcs = [_read(st, op, ty, hi16=bool(op_sel[j]) if j < len(op_sel) and width(ty) == 16 else False)
                for j, (op, ty) in enumerate(zip(ops[nd:], spec.src))]
        dst_hi = bool(op_sel[-1]) if (op_sel and len(op_sel) > len(spec.src) and spec.dst
                                      and width(spec.dst[0]) == 16) else False
        write_mask = None
        if is_dpp:
            srcs[0], write_mask = _dpp(st, inst, srcs[0])
        if spec.extra.get("tied"):
            srcs.append(_read(st, ops[0], spec.dst[0]))
        for imp in spec.imp_in:
            srcs.append(_read(st, Special(imp), "lm"))
        res = spec.fn(B, *srcs)
        if not isinstance(res, tuple):
            res = (res,)
        clamp = inst.mod("clamp")
        if inst.mod("mul") or inst.mod("div"):
            raise Unsupported(f"'{inst.text()}': omod is not modelled symbolically")
        act = st.active()
        if write_mask is not None:
            act = z3.And(act, write_mask)
        for n, (op, ty, val) in enumerate(zip(ops[:nd], dst_types, res)):
            if ty == "lm":
                _write_lm(st, op, val)
            else:
                if n == 0 and clamp:
                    if ty[0] != "f":
                        raise Unsupported("integer clamp")
                    val = B.fclamp01(val)
                _write_v(st, op, ty, val, act, hi16=dst_hi and n == 0,
                         preserve=bool(spec.extra.get("preserve_half")))
        if spec.extra.get("cmpx"):
            _write_lm(st, Special("exec"), res[0])
        return
    if k == "vop3p":
        raise Unsupported(f"'{inst.text()}': packed math is not modelled symbolically yet")
    if k in ("salu", "sopc"):
        nd = len(spec.dst)
        srcs = []
        for op, ty in zip(ops[nd:], spec.src):
            b = base_of(op)
            if isinstance(b, Imm) and inst.opcode.startswith(("s_movk_", "s_cmpk_", "s_addk_",
                                                               "s_mulk_", "s_cmovk_")):
                v = int(b.value) & 0xFFFF
                if not inst.opcode.endswith("_u32") and v & 0x8000:
                    v -= 0x10000
                op = Imm(v)
            if isinstance(b, Reg) and b.file in ("v", "a"):
                raise Unsupported("vector register as scalar source")
            srcs.append(_read(st, op, ty))
        if spec.extra.get("tied"):
            srcs.append(_read(st, ops[0], spec.dst[0]))
        for imp in spec.imp_in:
            if imp == "scc":
                srcs.append(st.get(("scc",)) == 1)
            elif imp == "exec":
                srcs.append(st.exec64())
        res = spec.fn(B, *srcs)
        if k == "sopc":
            st.set(("scc",), z3.If(res, z3.BitVecVal(1, 1), z3.BitVecVal(0, 1)))
            return
        if not isinstance(res, tuple):
            res = (res,)
        outs = list(zip(ops[:nd], spec.dst)) + [(None, imp) for imp in spec.imp_out]
        for (op, ty), val in zip(outs, res):
            if op is None:
                if ty == "scc":
                    st.set(("scc",), z3.If(val, z3.BitVecVal(1, 1), z3.BitVecVal(0, 1)))
                elif ty == "exec":
                    st.set(("exec_lo",), z3.Extract(31, 0, val))
                    st.set(("exec_hi",), z3.Extract(63, 32, val))
            else:
                _write_s(st, op, ty, val)
        return
    if k == "mfma":
        _mfma(st, inst, spec)
        return
    if k == "mix":
        _mix(st, inst, spec)
        return
    if k == "swap":
        a, b = base_of(ops[0]), base_of(ops[1])
        x, y = _read(st, a, "b32"), _read(st, b, "b32")
        act = st.active()
        _write_v(st, a, "b32", y, act)
        _write_v(st, b, "b32", x, act)
        return
    if spec.extra.get("lds") or (k in ("vmem", "mubuf") and inst.has_mod("lds")):
        # LDS DMA (global_load_lds_*, buffer_load_* ... lds): the data goes to LDS at an
        # M0-based address and the VGPR operand is the address, not a destination; the
        # emulator runs it, z3 has no model (it read the form as an ordinary load)
        raise Unsupported(f"'{inst.text()}': LDS DMA loads are not modelled symbolically")
    if k == "vmem" and spec.extra["seg"] in ("global", "scratch"):
        _vmem(st, inst, spec)
        return
    if k == "mubuf" and not spec.extra.get("d16") and not inst.has_mod("lds"):
        _mubuf(st, inst, spec)
        return
    if k == "ds" and spec.extra["op"] in ("read", "write", "read2", "write2", "swizzle", "bpermute"):
        _ds(st, inst, spec)
        return
    if k == "smem" and (spec.extra.get("store") or spec.extra.get("atomic")):
        raise Unsupported(f"'{inst.text()}': scalar stores and atomics are not modelled "
                          "symbolically")
    if k == "smem" and not spec.extra.get("buffer"):
        base = _read(st, ops[1], "b64")
        off = _read(st, ops[2], "b32") if len(ops) > 2 else z3.BitVecVal(0, 32)
        # an SGPR (or M0) offset is unsigned (LLVM SelectSMRDOffset: "SGPR and literal offsets
        # are unsigned"; the emulator's compile_smem); an immediate is the encoding's 21-bit
        # signed offset, as written (the disassembler prints it signed)
        ext = z3.SignExt if isinstance(base_of(ops[2]) if len(ops) > 2 else Imm(0), Imm) \
            else z3.ZeroExt
        addr = (base + ext(32, off) + int(inst.mod("offset", 0))) & ~z3.BitVecVal(3, 64)
        us = _units_of(ops[0])
        for j, u in enumerate(us):
            st.set(u, _shared_load(st, "global", addr + 4 * j, 4))
        return
    raise Unsupported(f"'{inst.text()}': {k} instructions are not modelled symbolically")


def _exec_bit(st, lane_term):
    return z3.Extract(0, 0, z3.LShR(st.exec64(), z3.ZeroExt(58, lane_term))) == 1


def _dpp(st, inst, x):
    """DPP on the generic lane: the source value of lane ``src(lane)``; returns
    (value, write-enable Bool) per CDNA3 DPP rules (row_mask/bank_mask/bound_ctrl)."""
    L = st.lane
    c6 = lambda v: z3.BitVecVal(v & 63, 6)  # noqa: E731
    r = L & c6(15)
    row = L & c6(0x30)
    valid = z3.BoolVal(True)
    qp = inst.mod("quad_perm")
    if qp is not None:
        sel = c6(qp[3])
        for q in (2, 1, 0):
            sel = z3.If((L & c6(3)) == q, c6(qp[q]), sel)
        src = (L & c6(0x3C)) | sel
    elif inst.mod("row_shl") is not None:
        n = inst.mod("row_shl")
        src, valid = L + n, z3.ULT(r, 16 - n)
    elif inst.mod("row_shr") is not None:
        n = inst.mod("row_shr")
        src, valid = L - n, z3.UGE(r, n)
    elif inst.mod("row_ror") is not None:
        n = inst.mod("row_ror")
        src = row | ((r - n) & c6(15))
    elif inst.mod("wave_shl") is not None:
        src, valid = L + 1, L != 63
    elif inst.mod("wave_shr") is not None:
        src, valid = L - 1, L != 0
    elif inst.mod("wave_rol") is not None:
        src = L + 1
    elif inst.mod("wave_ror") is not None:
        src = L - 1
    elif inst.has_mod("row_mirror"):
        src = row | (c6(15) - r)
    elif inst.has_mod("row_half_mirror"):
        src = (L & c6(0x38)) | (c6(7) - (L & c6(7)))
    elif inst.mod("row_bcast") is not None:
        n = inst.mod("row_bcast")
        if n == 15:
            src, valid = row - 1, z3.UGE(L, 16)
        elif n == 31:
            src, valid = c6(31), z3.UGE(L, 32)
        else:
            raise Unsupported(f"row_bcast:{n}")
    elif inst.mod("row_newbcast") is not None:
        src = row | c6(inst.mod("row_newbcast"))
    else:
        raise Unsupported(f"'{inst.text()}': DPP control")
    src = z3.If(valid, src, L)
    moved = z3.substitute(x, (L, src))
    ok = z3.And(valid, _exec_bit(st, src))
    rm = inst.mod("row_mask", 0xF)
    bm = inst.mod("bank_mask", 0xF)
    en = z3.And(z3.Extract(0, 0, z3.LShR(z3.BitVecVal(rm, 6), z3.LShR(L, 4))) == 1,
                z3.Extract(0, 0, z3.LShR(z3.BitVecVal(bm, 6), z3.LShR(L, 2) & c6(3))) == 1)
    if inst.has_mod("bound_ctrl"):
        return z3.If(ok, moved, z3.BitVecVal(0, moved.size())), en
    return moved, z3.And(en, ok)


def _lane_op(st, inst, spec):
    """v_readlane / v_readfirstlane / v_writelane with the generic-lane model: a value of
    lane ``k`` is the generic term with ``lane := k``."""
    ops = inst.operands
    name = spec.name
    if name in ("v_readlane_b32", "v_readfirstlane_b32"):
        x = _read(st, ops[1], "b32")
        if name == "v_readlane_b32":
            sel = z3.Extract(5, 0, _read(st, ops[2], "u32"))
        else:
            e = st.exec64()
            sel = z3.Extract(5, 0, z3.If(e == 0, z3.BitVecVal(0, 64), st.B.ctz(e)))
        _write_s(st, ops[0], "b32", z3.substitute(x, (st.lane, sel)))
        return
    if name == "v_writelane_b32":
        val = _read(st, ops[1], "b32")
        sel = z3.Extract(5, 0, _read(st, ops[2], "u32"))
        _write_v(st, ops[0], "b32", val, st.lane == sel)
        return
    raise Unsupported(name)


def _vop3p(st, inst, spec):
    """Packed math: the element function on the low and high halves, with op_sel /
    op_sel_hi / neg_lo / neg_hi; an inline constant is a 32-bit operand whose halves are
    picked like a register's (:func:`asmevo.semantics.immediates.packed_inline_halves`)."""
    B = st.B
    ops = inst.operands
    ety = spec.dst[0]
    ew = width(ety)
    ns = len(spec.src)
    op_sel = inst.mod("op_sel") or (0,) * ns
    op_sel_hi = inst.mod("op_sel_hi") or (1,) * ns
    neg_lo = inst.mod("neg_lo") or (0,) * ns
    neg_hi = inst.mod("neg_hi") or (0,) * ns
    halves = []
    for op in ops[1:]:
        b = base_of(op)
        if isinstance(b, Imm):
            lo_c, hi_c = packed_inline_halves(b.value, ety, b.text)
            halves.append((z3.BitVecVal(lo_c, ew), None if hi_c is None else z3.BitVecVal(hi_c, ew)))
            continue
        full = _read(st, b, "b64" if ew == 32 else "b32")
        halves.append((z3.Extract(ew - 1, 0, full), z3.Extract(2 * ew - 1, ew, full)))

    def half(k, sel):
        v = halves[k][1 if sel else 0]
        if v is None:
            raise Unsupported(f"'{inst.text()}': the high half of an inline constant of a packed "
                              "32-bit instruction is not modelled (not documented)")
        return v

    def pick(k, hi):
        v = half(k, (op_sel_hi if hi else op_sel)[k])
        if (neg_hi if hi else neg_lo)[k] and ety[0] == "f":
            v = B.fneg(v)
        return v
    if spec.extra.get("tied"):      # v_pk_fmac: the destination's own halves
        full = _read(st, base_of(ops[0]), "b64" if ew == 32 else "b32")
        halves.append((z3.Extract(ew - 1, 0, full), z3.Extract(2 * ew - 1, ew, full)))
        ns += 1
        op_sel = tuple(op_sel) + (0,)
        op_sel_hi = tuple(op_sel_hi) + (1,)
        neg_lo = tuple(neg_lo) + (0,)
        neg_hi = tuple(neg_hi) + (0,)
    fn = spec.fn
    if inst.mod("clamp") and ety[0] != "f":
        # integer clamp saturates; modelled where its meaning is certain (add/sub u16/i16)
        fn = spec.extra.get("sat")
        if fn is None:
            raise Unsupported(f"'{inst.text()}': clamp on this packed integer instruction "
                              "is not modelled")
    if spec.name == "v_pk_mov_b32":
        # D.lo = src0 half op_sel[0], D.hi = src1 half op_sel[1] (op_sel_hi unused)
        sel = list(inst.mod("op_sel") or (0, 0))
        lo, hi = half(0, sel[0]), half(1, sel[1])
    else:
        lo = fn(B, *[pick(k, False) for k in range(ns)])
        hi = fn(B, *[pick(k, True) for k in range(ns)])
    if inst.mod("clamp") and ety[0] == "f":
        lo, hi = B.fclamp01(lo), B.fclamp01(hi)
    _write_v(st, ops[0], "b64" if ew == 32 else "b32", z3.Concat(hi, lo), st.active())


def _sdwa(st, inst, spec):
    """SDWA (32-bit VALU/VOPC): source byte/word selection with zero/sign extension,
    destination selection with UNUSED_PAD / UNUSED_SEXT / UNUSED_PRESERVE."""
    B = st.B
    k = spec.kind
    ops = list(inst.operands)
    if k == "vopc" and len(ops) == 2:
        ops = [Special("vcc")] + ops
    if k not in ("valu", "vopc") or any(width(t) != 32 for t in spec.src if t != "lm"):
        raise Unsupported(f"'{inst.text()}': SDWA on this instruction is not modelled")
    nd = 1 if k == "vopc" else len(spec.dst)
    srcs = []
    for j, (op, ty) in enumerate(zip(ops[nd:], spec.src)):
        if ty == "lm":
            srcs.append(_read(st, op, ty))
            continue
        x = _read(st, base_of(op), "b32")
        x = _sdwa_sel(x, inst.mod(f"src{j}_sel", "DWORD"), isinstance(op, Src) and op.sext)
        if isinstance(op, Src) and ty[0] == "f":
            if op.abs:
                x = B.fabs(x)
            if op.neg:
                x = B.fneg(x)
        srcs.append(x)
    res = spec.fn(B, *srcs)
    res = res if isinstance(res, tuple) else (res,)
    act = st.active()
    if k == "vopc":
        _write_lm(st, ops[0], res[0])
        return
    if len(spec.dst) != 1 or width(spec.dst[0]) != 32:
        raise Unsupported(f"'{inst.text()}': SDWA destination")
    if inst.mod("mul") or inst.mod("div"):
        # as for VOP3 (step): LLVM SIFoldOperands, "omod is ignored by hardware if IEEE bit is
        # enabled. omod also does not correctly handle signed zeros"
        raise Unsupported(f"'{inst.text()}': omod is not modelled symbolically")
    if inst.mod("clamp"):
        if spec.dst[0][0] != "f":
            raise Unsupported(f"'{inst.text()}': integer clamp")
        # the VOP3 clamp (LLVM's SDWA peephole carries a VOP3 clamp over unchanged)
        res = (B.fclamp01(res[0]),) + tuple(res[1:])
    sel = inst.mod("dst_sel", "DWORD")
    unused = inst.mod("dst_unused", "UNUSED_PAD")
    val = res[0]
    if sel != "DWORD":
        sh, n = {"BYTE_0": (0, 8), "BYTE_1": (8, 8), "BYTE_2": (16, 8), "BYTE_3": (24, 8),
                 "WORD_0": (0, 16), "WORD_1": (16, 16)}[sel]
        field = z3.Extract(n - 1, 0, val)
        old = st.get(_units_of(ops[0])[0])
        parts = []
        if sh + n < 32:
            if unused == "UNUSED_PRESERVE":
                parts.append(z3.Extract(31, sh + n, old))
            elif unused == "UNUSED_SEXT":
                parts.append(z3.SignExt(32 - sh - n - 1, z3.Extract(n - 1, n - 1, field)))
            else:
                parts.append(z3.BitVecVal(0, 32 - sh - n))
        parts.append(field)
        if sh:
            parts.append(z3.Extract(sh - 1, 0, old) if unused == "UNUSED_PRESERVE" else
                         z3.BitVecVal(0, sh))
        val = z3.Concat(*parts) if len(parts) > 1 else parts[0]
    _write_v(st, ops[0], "b32", val, act)


def _mubuf(st, inst, spec):
    """MUBUF with a V# (base, stride, num_records): out-of-range loads give 0 and
    out-of-range stores are dropped, as in the emulator (:mod:`asmevo.emu.exec_mubuf`).

    Range checking, per lane (the offset checks exclude SOFFSET, as the emulator):

    * a raw buffer (stride 0, no IDXEN) checks a multi-dword access (dwordx2/x3/x4) per
      dword: dword ``j`` is in range when ``offset + 4*j + 4 <= num_records``, so a load
      straddling the end gives its in-range dwords and 0 for the rest, and a store writes
      only its in-range dwords.  Sources: the CDNA3 ISA guide, buffer range checking
      notes ("Load/store-format-* instruction and atomics are range-checked 'all or
      nothing'"; "Load/store-DWORD-x{2,3,4} range-check per component"); LLVM AMDGPUUsage,
      "Relaxed Buffer OOB Mode" (llvm/llvm-project PR #134734): "When operating on more
      than 32 bits of data, the voffset used for the access will be range-checked for each
      32-bit word independently", with a word partly past the end (an ``<8 x i8>`` at
      offset 6 of an 8-byte buffer) out of range as a whole;
    * sub-dword and single-dword accesses: in range when ``offset + size <= num_records``;
    * a structured buffer (stride != 0 or IDXEN): the record check ``index < num_records``
      for the whole access.

    Loads are recorded per dword (:class:`MemRead`, active where that dword is in range)
    and so are stores (one :class:`MemWrite` per dword), so that read coverage and the
    write comparison see exactly the bytes touched.  Atomics (``mubuf_atomic``) and the
    format forms are not modelled here (:class:`Unsupported`)."""
    ex = spec.extra
    size, load = ex["size"], ex.get("load", False)
    ops = inst.operands
    _refuse_unmodelled_forms(inst, ex)
    data, vaddr, rsrc = base_of(ops[0]), base_of(ops[1]), base_of(ops[2])
    soff = _read(st, ops[3], "u32") if len(ops) > 3 else z3.BitVecVal(0, 32)
    r = [st.get(u) for u in _units_of(rsrc)]
    base = z3.Concat(z3.BitVecVal(0, 16), z3.Extract(15, 0, r[1]), r[0])
    stride = z3.ZeroExt(50, z3.Extract(29, 16, r[1]))
    nrec = r[2]
    offen, idxen = inst.has_mod("offen"), inst.has_mod("idxen")
    ioff = int(inst.mod("offset", 0))
    v_off = isinstance(vaddr, Special) and vaddr.name == "off"
    zero = z3.BitVecVal(0, 32)
    if offen and idxen:
        vv = _read(st, vaddr, "b64")
        idx, off = z3.Extract(31, 0, vv), z3.Extract(63, 32, vv)
    elif idxen:
        idx, off = _read(st, vaddr, "u32"), zero
    elif offen and not v_off:
        idx, off = zero, _read(st, vaddr, "u32")
    else:
        idx, off = zero, zero
    if z3.is_true(z3.simplify(z3.Extract(23, 23, r[3]) == 1)):
        raise Unsupported("add_tid_enable buffers")
    off64 = z3.ZeroExt(32, off) + ioff
    raw = z3.And(stride == 0, z3.BoolVal(not idxen))
    rec_ok = z3.ULT(idx, nrec)
    nrec64 = z3.ZeroExt(32, nrec)

    def inr(lo, n):
        """Bytes ``[lo, lo + n)`` of the access in range (64-bit sums: no wrap-around)."""
        return z3.If(raw, z3.ULE(off64 + (lo + n), nrec64), rec_ok)

    addr = base + z3.ZeroExt(32, soff) + z3.ZeroExt(32, idx) * stride + off64
    act = st.active()
    # the range-checked pieces: dwords of a multi-dword access, else the whole access
    pieces = [(4 * j, 4) for j in range(size // 4)] if size > 4 else [(0, size)]
    if load:
        words = []
        for lo, n in pieces:
            ok = inr(lo, n)
            a = addr + lo if lo else addr
            v = _shared_load(st, "global", a, n, z3.And(act, ok))
            words.append(z3.If(ok, v, z3.BitVecVal(0, 8 * n)))
        if size < 4:
            v = (z3.SignExt if ex.get("signed") else z3.ZeroExt)(32 - 8 * size, words[0])
            _write_v(st, data, "b32", v, act)
            return
        for u, w in zip(_units_of(data), words):
            st.set(u, z3.If(act, w, st.get(u)))
    else:
        if size >= 4:
            us = _units_of(data)
            vals = [st.get(u) for u in us[:size // 4]]
        else:
            vals = [z3.Extract(8 * size - 1, 0, _read(st, data, "b32"))]
        for (lo, n), val in zip(pieces, vals):
            a2 = z3.And(act, inr(lo, n))
            a = addr + lo if lo else addr
            st.mem["global"] = _store_bytes(st.mem["global"], a, val, n, a2)
            st.writes.append(MemWrite("global", a, n, val, a2))


def _sdwa_sel(x, sel, sext):
    sh, n = {"BYTE_0": (0, 8), "BYTE_1": (8, 8), "BYTE_2": (16, 8), "BYTE_3": (24, 8),
             "WORD_0": (0, 16), "WORD_1": (16, 16), "DWORD": (0, 32)}[sel]
    if n == 32:
        return x
    f = z3.Extract(sh + n - 1, sh, x)
    return (z3.SignExt if sext else z3.ZeroExt)(32 - n, f)


def _mix(st, inst, spec):
    """V_FMA_MIX*: f16 halves (op_sel) widened to f32 where op_sel_hi is set; mixlo/mixhi
    round to f16 into one half of the destination (as the emulator)."""
    B = st.B
    ops = inst.operands
    op_sel = inst.mod("op_sel") or (0, 0, 0)
    op_sel_hi = inst.mod("op_sel_hi") or (0, 0, 0)
    srcs = []
    for k, op in enumerate(ops[1:]):
        b = base_of(op)
        if op_sel_hi[k]:
            v = B.fcvt(_read(st, b, "f16", hi16=bool(op_sel[k])), 32)
        else:
            v = _read(st, b, "f32")
        if isinstance(op, Src):
            if op.abs:
                v = B.fabs(v)
            if op.neg:
                v = B.fneg(v)
        srcs.append(v)
    r = spec.fn(B, *srcs)
    mode = spec.extra["mix"]
    if mode != "f32":
        r = B.fcvt(r, 16)
    if inst.mod("clamp"):
        r = B.fclamp01(r)
    act = st.active()
    if mode == "f32":
        _write_v(st, ops[0], "f32", r, act)
    else:
        _write_v(st, ops[0], "f16", r, act, hi16=(mode == "hi"), preserve=(mode == "lo"))


_ELEM_BITS = {"f16": 16, "bf16": 16, "f32": 32, "i8": 8, "fp8": 8, "bf8": 8, "f64": 64}


def _mfma(st, inst, spec):
    """MFMA as an uninterpreted function per accumulator element: D[i][j] =
    mfma_<name>(C[i][j], A[i][0..K-1], B[0..K-1][j]) with the operand elements gathered
    from the lanes the layout names (lane substitution).  Sound for equivalence (equal
    inputs give equal outputs) without fixing the hardware's unspecified summation order;
    like the emulator, all 64 lanes are written regardless of EXEC."""
    ex = spec.extra
    for m in ("cbsz", "abid", "blgp"):
        if inst.mod(m, 0):
            raise Unsupported(f"'{inst.text()}': MFMA {m} is not modelled symbolically")
    if ex.get("sparse"):
        raise Unsupported(f"'{inst.text()}': sparse MFMA is not modelled symbolically")
    if ex.get("blocks", 1) > 1:
        raise Unsupported(f"'{inst.text()}': multi-block MFMA is not modelled symbolically")
    if inst.mod("neg", None) and any(inst.mod("neg")):
        raise Unsupported(f"'{inst.text()}': MFMA neg is not modelled symbolically")
    M, N, K = ex["M"], ex["N"], ex["K"]
    ops = inst.operands
    d, A, Bm, C = base_of(ops[0]), base_of(ops[1]), base_of(ops[2]), base_of(ops[3])
    nlg = 64 // M
    KL = K // nlg
    eba, ebb = _ELEM_BITS[ex["ty"]], _ELEM_BITS[ex["tyb"]]
    a_units, b_units = _units_of(A), _units_of(Bm)
    L = st.lane
    c6 = lambda v: z3.BitVecVal(v & 63, 6)  # noqa: E731

    def elem(units, eb, k, lane_expr):
        bit = (k % KL) * eb
        if eb == 64:
            v = z3.Concat(st.get(units[bit // 32 + 1]), st.get(units[bit // 32]))
        else:
            v = z3.Extract(bit % 32 + eb - 1, bit % 32, st.get(units[bit // 32]))
        return z3.substitute(v, (L, lane_expr))
    nacc = M * N // 64
    d_units = _units_of(d)
    c_units = None if isinstance(C, Imm) else _units_of(C)
    results = []
    for it in range(nacc):
        # inverse of the D layout: lane = j + N*(g % nlgN), item = i%4 + 4*(g // nlgN)
        nlgN = 64 // N
        j = L & c6(N - 1)
        if ex["acc"] == "f64":
            # f64 results: single rows, D[i][j] in lane j + N*(i % nlgN), element i // nlgN
            i = z3.LShR(L, c6(N.bit_length() - 1)) + c6(it * nlgN)
        else:
            g = z3.LShR(L, c6(N.bit_length() - 1)) + c6((it // 4) * nlgN)   # lane // N + ...
            i = g * 4 + c6(it % 4)
        a_elems = [elem(a_units, eba, k, i + c6(M * (k // KL))) for k in range(K)]
        b_elems = [elem(b_units, ebb, k, j + c6(N * (k // KL))) for k in range(K)]
        if ex["acc"] == "f64":
            cv = z3.BitVecVal(imm_bits(C.value, "f64", C.text), 64) if c_units is None \
                else z3.Concat(st.get(c_units[2 * it + 1]), st.get(c_units[2 * it]))
            results.append(st.B.uf(f"mfma_{spec.name}", cv, *a_elems, *b_elems, ret_bits=64))
        else:
            cv = z3.BitVecVal(imm_bits(C.value, ex["acc"], C.text), 32) if c_units is None \
                else st.get(c_units[it])
            results.append(st.B.uf(f"mfma_{spec.name}", cv, *a_elems, *b_elems, ret_bits=32))
    parts = []
    for r in results:
        parts += [z3.Extract(31, 0, r), z3.Extract(63, 32, r)] if r.size() == 64 else [r]
    for u, r in zip(d_units, parts):
        st.set(u, r)


def _shared_load(st, space: str, addr, n, active=True):
    """A load of ``n`` bytes from ``space`` by the generic lane.  Memory other lanes can
    write (``global``, ``lds``) is modelled only with this lane's own stores, so after
    any store to that space in the window a load may see another lane's store that the
    model lacks: such loads are recorded in ``st.lane_blind`` (``scratch`` is per lane),
    and a verifier must not prove anything that depends on them."""
    if space != "scratch" and any(w.space == space for w in st.writes):
        st.lane_blind.append(f"a {space} load after a {space} store in the same window: "
                             "other lanes' stores are not modelled")
    if space == "global":
        st.reads.append(MemRead(addr, n, z3.BoolVal(True) if active is True else active))
    return _load_bytes(st.mem[space], addr, n)


def _load_bytes(arr, addr, n):
    return z3.Concat(*[z3.Select(arr, addr + i) for i in reversed(range(n))])


def _store_bytes(arr, addr, val, n, active):
    for i in range(n):
        arr = z3.If(active, z3.Store(arr, addr + i, z3.Extract(8 * i + 7, 8 * i, val)), arr) \
            if not z3.is_true(active) else z3.Store(arr, addr + i, z3.Extract(8 * i + 7, 8 * i, val))
    return arr


def _gather(st, r: Reg, n):
    us = _units_of(r)
    return z3.Concat(*[st.get(u) for u in reversed(us[:n])]) if n > 1 else st.get(us[0])


def _vmem(st, inst, spec):
    ex = spec.extra
    seg, size, load = ex["seg"], ex["size"], ex["load"]
    ops = inst.operands
    if ex.get("d16"):
        raise Unsupported("d16 loads")
    if load:
        dst, vaddr = base_of(ops[0]), base_of(ops[1])
        saddr = base_of(ops[2]) if len(ops) > 2 else Special("off")
    else:
        vaddr, data = base_of(ops[0]), base_of(ops[1])
        saddr = base_of(ops[2]) if len(ops) > 2 else Special("off")
    off = int(inst.mod("offset", 0))
    s_off = isinstance(saddr, Special) and saddr.name == "off"
    v_off = isinstance(vaddr, Special) and vaddr.name == "off"
    if seg == "scratch":
        a = z3.BitVecVal(off, 32)
        if not v_off:
            a = a + _read(st, vaddr, "b32")
        if not s_off:
            a = a + _read(st, saddr, "b32")
        arr_name = "scratch"
        # per-lane private memory: the lane index is the high half of the address
        a = z3.Concat(z3.ZeroExt(26, st.lane), a)
    else:
        arr_name = "global"
        if s_off:
            a = _read(st, vaddr, "b64") + off
        else:
            a = _read(st, saddr, "b64") + z3.ZeroExt(32, _read(st, vaddr, "b32")) + off
    act = st.active()
    if load:
        v = _shared_load(st, arr_name, a, size, act)
        us = _units_of(dst)
        if size < 4:
            v = (z3.SignExt if ex.get("signed") else z3.ZeroExt)(32 - 8 * size, v)
            _write_v(st, dst, "b32", v, act)
            return
        for j, u in enumerate(us):
            part = z3.Extract(32 * j + 31, 32 * j, v)
            st.set(u, z3.If(act, part, st.get(u)))
    else:
        if size < 4:
            val = z3.Extract(8 * size - 1, 0, _read(st, data, "b32") if not ex.get("d16_hi") else
                             z3.LShR(_read(st, data, "b32"), 16))
        else:
            val = _gather(st, data, size // 4)
        st.mem[arr_name] = _store_bytes(st.mem[arr_name], a, val, size, act)
        st.writes.append(MemWrite(arr_name, a, size, val, act))


def _refuse_unmodelled_forms(inst, ex) -> None:
    """Raise :class:`Unsupported` for the memory forms this backend does not model: d16
    loads (``*_d16``, ``*_d16_hi``: they write one half of the destination and keep the
    other), ``*_d16_hi`` stores (they store the high half of the data), and buffer
    format conversions (``buffer_*_format_*``, ``tbuffer_*``).  Read as plain accesses
    they would be whole-register loads and low-half stores, so two different kernels
    could get identical terms (a wrong accept found by the adversarial round of the loop
    normalisation; the emulator models them: ``asmevo.emu.exec_mem``)."""
    if ex.get("d16") or ex.get("d16_hi") or ex.get("format") or ex.get("tbuffer"):
        raise Unsupported(f"'{inst.text()}': d16 and format memory forms are not modelled "
                          "symbolically")


def _ds(st, inst, spec):
    ex = spec.extra
    size = ex["size"]
    ops = inst.operands
    _refuse_unmodelled_forms(inst, ex)
    act = st.active()
    if ex["op"] in ("swizzle", "bpermute"):
        x = _read(st, ops[1] if ex["op"] == "swizzle" else ops[2], "b32")
        if ex["op"] == "swizzle":
            from .lanes import swizzle_map  # the lane map the emulator uses too
            try:
                smap = [int(v) for v in swizzle_map(inst.mod("offset", 0))]
            except ValueError as e:
                raise Unsupported(f"'{inst.text()}': {e}") from None
            src = z3.BitVecVal(smap[63], 6)
            for i in range(62, -1, -1):
                src = z3.If(st.lane == i, z3.BitVecVal(smap[i], 6), src)
        else:
            a = _read(st, ops[1], "b32") + int(inst.mod("offset", 0) or 0)
            src = z3.Extract(7, 2, a)
        val = z3.If(_exec_bit(st, src), z3.substitute(x, (st.lane, src)), z3.BitVecVal(0, 32))
        _write_v(st, ops[0], "b32", val, act)
        return
    if ex["op"] in ("read2", "write2"):
        st_b = ex["stride"] * size
        o0, o1 = int(inst.mod("offset0", 0)) * st_b, int(inst.mod("offset1", 0)) * st_b
        if ex["op"] == "read2":
            a = _read(st, ops[1], "b32")
            us = _units_of(ops[0])
            n = size // 4
            for half, o in ((0, o0), (1, o1)):
                v = _shared_load(st, "lds", a + o, size)
                for j in range(n):
                    u = us[half * n + j]
                    st.set(u, z3.If(act, z3.Extract(32 * j + 31, 32 * j, v), st.get(u)))
        else:
            a = _read(st, ops[0], "b32")
            for o, d in ((o0, ops[1]), (o1, ops[2])):
                val = _gather(st, base_of(d), size // 4)
                st.mem["lds"] = _store_bytes(st.mem["lds"], a + o, val, size, act)
                st.writes.append(MemWrite("lds", a + o, size, val, act))
        return
    off = int(inst.mod("offset", 0) or 0)
    if ex["op"] == "read":
        dst = base_of(ops[0])
        a = _read(st, ops[1], "b32") + off
        v = _shared_load(st, "lds", a, size)
        if size < 4:
            v = (z3.SignExt if ex.get("signed") else z3.ZeroExt)(32 - 8 * size, v)
            _write_v(st, dst, "b32", v, act)
            return
        for j, u in enumerate(_units_of(dst)):
            st.set(u, z3.If(act, z3.Extract(32 * j + 31, 32 * j, v), st.get(u)))
    else:
        a = _read(st, ops[0], "b32") + off
        data = base_of(ops[1])
        val = _gather(st, data, size // 4) if size >= 4 else z3.Extract(8 * size - 1, 0, _read(st, data, "b32"))
        st.mem["lds"] = _store_bytes(st.mem["lds"], a, val, size, act)
        st.writes.append(MemWrite("lds", a, size, val, act))


def symexec(instructions, initial: dict | None = None, *, float_mode: str = "fp",
            backend: Z3Backend | None = None, prefix: str = "") -> SymResult:
    """Symbolically execute straight-line ``instructions`` (asmevo Instructions).

    ``initial``: optional unit -> term map (e.g. to share variables between two
    windows); missing units become variables named after the unit (with
    ``prefix``).  Returns a :class:`SymResult`.

    Raises:
        Unsupported: an instruction or form without symbolic semantics (branches,
            cross-lane operations, MFMA, atomics...), naming it.
    """
    B = backend or Z3Backend(float_mode)
    st = SymState(B, initial, prefix)
    for inst in instructions:
        if lookup(inst.opcode) is not None and lookup(inst.opcode).kind in ("branch", "barrier",
                                                                            "endpgm"):
            raise Unsupported(f"'{inst.text()}': control flow ends a straight-line window")
        step(st, inst)
    return SymResult(dict(st.regs), set(st.written), list(st.writes), dict(st.mem), st.lane,
                     dict(st.initial), list(st.lane_blind), list(st.reads))

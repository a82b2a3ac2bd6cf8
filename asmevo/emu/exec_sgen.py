"""SALU and SOPC instructions compiled to generated Python functions.

:mod:`.exec_salu` evaluates a scalar instruction's semantics with the Python-int backend
(:mod:`asmevo.semantics.intbackend`) at every execution: a dozen backend method calls and
typed-int constructions for an ``s_add_i32``.  Here the semantics are traced ONCE per
instruction shape with :class:`CodeGen`, a backend whose values are Python expressions,
into the source of one function that reads the SGPRs, computes with plain ``int`` s and
writes the results; the source is compiled once per shape (opcode and operand kinds;
register numbers and constants are parameters of the compiled factory).

Every operation of :class:`CodeGen` computes what the same method of the int backend
computes (tests/emu/test_sgen.py checks every scalar semantic function against it on
random and edge-case operands).  Anything the generator does not model (an unknown backend
method, a value used in a Python condition, an operand kind other than SGPRs, constants
and SCC/EXECZ/VCCZ) makes :func:`gen_scalar` return None: the instruction then keeps the
closure of :mod:`.exec_salu`.
"""

from __future__ import annotations

from ..ir.operands import Imm, Reg, Special, base_of
from ..semantics.immediates import imm_bits
from ..semantics.intbackend import TYPES as ITYPES
from ..semantics.registry import width
from ..semantics.values import Backend
from .exec_common import _s_imm_fix, _sgpr_index, _special_const
from .state import EXEC, VCC


class _Fail(Exception):
    """The semantics use something the generator does not model."""


class _Sym:
    """A value of the traced function: Python expression ``e`` (a local name or a literal)
    of width ``w`` bits (1: a bool).  Using it as a Python value raises :class:`_Fail`."""

    __slots__ = ("e", "w")

    def __init__(self, e: str, w: int):
        self.e, self.w = e, w

    def _no(self, *a):
        raise _Fail("a traced value used as a Python value")

    __bool__ = __int__ = __index__ = __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _no
    __add__ = __sub__ = __mul__ = __and__ = __or__ = __xor__ = __lshift__ = __rshift__ = _no
    __radd__ = __rsub__ = __rmul__ = __rand__ = __ror__ = __rxor__ = __invert__ = _no
    __hash__ = None


def _mask(w: int) -> int:
    return (1 << w) - 1


class CodeGen(Backend):
    """The value interface over :class:`_Sym` expressions: each operation appends one
    assignment to :attr:`lines` and returns its result's name (integer semantics of
    :class:`asmevo.semantics.intbackend.IntBackend`: values are ``int`` s in
    ``[0, 2**width)``, booleans ``bool``)."""

    name = "int"    # the semantics see the int backend's behaviour

    def __init__(self):
        self.lines: list[str] = []

    def _t(self, expr: str, w: int) -> _Sym:
        name = f"t{len(self.lines)}"
        self.lines.append(f"{name} = {expr}")
        return _Sym(name, w)

    @staticmethod
    def _v(x) -> _Sym:
        if not isinstance(x, _Sym):
            raise _Fail(f"operand {x!r} is not a traced value")
        return x

    @staticmethod
    def _static(x) -> int:
        if isinstance(x, _Sym) or not isinstance(x, int):
            raise _Fail("a bit-field position that is not a constant")
        return int(x)

    def _s(self, x: _Sym) -> str:
        """Signed value of ``x`` (as the int backend's ``_s``)."""
        h = 1 << (x.w - 1)
        return f"(({x.e} ^ {h}) - {h})"

    # integers
    def const(self, v, bits):
        if bits == 1:
            return _Sym(repr(bool(v)), 1)
        if bits not in ITYPES:
            raise _Fail(f"width {bits}")
        return _Sym(str(int(v) & _mask(bits)), bits)

    def width(self, x):
        return self._v(x).w

    def _bin(self, a, b, op):
        a, b = self._v(a), self._v(b)
        if a.w == 1:
            raise _Fail("integer operation on a bool")
        return self._t(f"({a.e} {op} {b.e}) & {_mask(a.w)}", a.w)

    def add(self, a, b):
        return self._bin(a, b, "+")

    def sub(self, a, b):
        return self._bin(a, b, "-")

    def mul(self, a, b):
        return self._bin(a, b, "*")

    def mulhi_u(self, a, b):
        a, b = self._v(a), self._v(b)
        return self._t(f"({a.e} * {b.e}) >> {a.w}", a.w)

    def mulhi_s(self, a, b):
        a, b = self._v(a), self._v(b)
        return self._t(f"(({self._s(a)} * {self._s(b)}) >> {a.w}) & {_mask(a.w)}", a.w)

    def _bit(self, a, b, op):
        a, b = self._v(a), self._v(b)
        return self._t(f"{a.e} {op} {b.e}", a.w)

    def and_(self, a, b):
        return self._bit(a, b, "&")

    def or_(self, a, b):
        return self._bit(a, b, "|")

    def xor(self, a, b):
        return self._bit(a, b, "^")

    def not_(self, a):
        a = self._v(a)
        if a.w == 1:
            raise _Fail("not_ of a bool")
        return self._t(f"~{a.e} & {_mask(a.w)}", a.w)

    def shl(self, a, n):
        a, n = self._v(a), self._v(n)
        return self._t(f"(({a.e} << {n.e}) & {_mask(a.w)}) if {n.e} < {a.w} else 0", a.w)

    def lshr(self, a, n):
        a, n = self._v(a), self._v(n)
        return self._t(f"{a.e} >> {n.e}", a.w)

    def ashr(self, a, n):
        a, n = self._v(a), self._v(n)
        return self._t(f"({self._s(a)} >> min({n.e}, {a.w})) & {_mask(a.w)}", a.w)

    def zext(self, x, bits):
        x = self._v(x)
        return self._t(f"int({x.e})", self._static(bits))

    def sext(self, x, bits):
        x = self._v(x)
        bits = self._static(bits)
        return self._t(f"{self._s(x)} & {_mask(bits)}", bits)

    def trunc(self, x, bits):
        x = self._v(x)
        bits = self._static(bits)
        return self._t(f"{x.e} & {_mask(bits)}", bits)

    def concat(self, hi, lo):
        hi, lo = self._v(hi), self._v(lo)
        return self._t(f"({hi.e} << {lo.w}) | {lo.e}", hi.w + lo.w)

    def extract(self, x, lo, n):
        x = self._v(x)
        lo, n = self._static(lo), self._static(n)
        return self._t(f"({x.e} >> {lo}) & {_mask(n)}", n if n in ITYPES else x.w)

    def popcount(self, a):
        a = self._v(a)
        return self._t(f"bin({a.e}).count('1')", a.w)

    def clz(self, a):
        a = self._v(a)
        return self._t(f"{a.w} - {a.e}.bit_length()", a.w)

    def ctz(self, a):
        a = self._v(a)
        return self._t(f"(({a.e} & -{a.e}).bit_length() - 1) if {a.e} else {a.w}", a.w)

    def bitrev(self, a):
        a = self._v(a)
        return self._t(f"int(format({a.e}, '0{a.w}b')[::-1], 2)", a.w)

    # compares
    def _cmp(self, a, b, op, signed=False):
        a, b = self._v(a), self._v(b)
        if signed:
            return self._t(f"{self._s(a)} {op} {self._s(b)}", 1)
        return self._t(f"{a.e} {op} {b.e}", 1)

    def eq(self, a, b):
        return self._cmp(a, b, "==")

    def ne(self, a, b):
        return self._cmp(a, b, "!=")

    def ult(self, a, b):
        return self._cmp(a, b, "<")

    def ule(self, a, b):
        return self._cmp(a, b, "<=")

    def ugt(self, a, b):
        return self._cmp(a, b, ">")

    def uge(self, a, b):
        return self._cmp(a, b, ">=")

    def slt(self, a, b):
        return self._cmp(a, b, "<", True)

    def sle(self, a, b):
        return self._cmp(a, b, "<=", True)

    def sgt(self, a, b):
        return self._cmp(a, b, ">", True)

    def sge(self, a, b):
        return self._cmp(a, b, ">=", True)

    # booleans
    def true(self):
        return _Sym("True", 1)

    def false(self):
        return _Sym("False", 1)

    def false_like(self, a):
        return _Sym("False", 1)

    def band(self, a, b):
        a, b = self._v(a), self._v(b)
        return self._t(f"{a.e} and {b.e}", 1)

    def bor(self, a, b):
        a, b = self._v(a), self._v(b)
        return self._t(f"{a.e} or {b.e}", 1)

    def bxor(self, a, b):
        a, b = self._v(a), self._v(b)
        return self._t(f"{a.e} != {b.e}", 1)

    def bnot(self, a):
        a = self._v(a)
        return self._t(f"not {a.e}", 1)

    def select(self, c, a, b):
        c, a, b = self._v(c), self._v(a), self._v(b)
        return self._t(f"{a.e} if {c.e} else {b.e}", a.w)

    def b2i(self, c, bits):
        c = self._v(c)
        return self._t(f"1 if {c.e} else 0", self._static(bits))

    def __getattr__(self, name):
        raise _Fail(f"backend method {name}")


def _source(op, ty):
    """(expression over ``s`` / ``wv`` and the parameter ``P``, kind key) of a scalar source
    operand, as :func:`asmevo.emu.exec_common.sreader` reads it, or None (not modelled)."""
    b = base_of(op)
    w = width(ty)
    T = ITYPES.get(w)
    if T is None:
        return None
    if isinstance(b, Imm):
        try:
            return ("P", int(T(imm_bits(b.value, ty, b.text)))), ("c", w)
        except (TypeError, ValueError):
            return None
    if isinstance(b, Special) and _sgpr_index(b) is None:
        if b.name in ("scc", "src_scc"):
            return ("int(wv.scc)", None), ("scc", w)
        if b.name in ("execz", "src_execz"):
            return ("int(not wv.exec_any)", None), ("execz", w)
        if b.name in ("vccz", "src_vccz"):
            return (f"int(not (s.item({VCC}) or s.item({VCC + 1})))", None), ("vccz", w)
        c = _special_const(b.name)
        if c is None:
            return None
        return ("P", c & T.M), ("c", w)
    if not isinstance(b, (Reg, Special)):
        return None
    i = _sgpr_index(b)
    if i is None:
        return None
    if w == 64:
        return ("(s.item(P) | (s.item(P + 1) << 32))", i), ("s", w)
    if w == 32:
        return ("s.item(P)", i), ("s", w)
    return (f"(s.item(P) & {T.M})", i), ("s", w)


def _dest(op, ty):
    """(statements writing the value ``X`` (with parameter ``P``), kind key) of a scalar
    destination, as :func:`asmevo.emu.exec_common.swriter` writes it, or None."""
    b = base_of(op)
    if isinstance(b, Special) and b.name == "null":
        return ([], None), ("null",)
    i = _sgpr_index(b)
    if i is None:
        return None
    w = width(ty)
    touches = i in (EXEC, EXEC + 1) or (w == 64 and i + 1 == EXEC)
    if w == 64:
        st = ["s[P] = X & 0xFFFFFFFF", "s[P + 1] = X >> 32"]
    else:
        st = ["s[P] = X"]
    if touches:
        st.append("wv.sync_exec()")
    return (st, i), ("s", w, touches)


_FACTORIES: dict = {}     # shape key -> compiled factory (None: not generated)
#: generate scalar closures (False: every SALU/SOPC keeps its :mod:`.exec_salu` closure)
ENABLED = True


def gen_scalar(inst, spec, nxt, sopc: bool = False):
    """A generated closure ``run(wave) -> nxt`` for SALU (or, ``sopc``, SOPC) instruction
    ``inst`` equal in effect to :func:`asmevo.emu.exec_salu.compile_salu` /
    ``compile_sopc``'s, or None when the generator does not model it."""
    if not ENABLED:
        return None
    ops = inst.operands
    if sopc:
        nd = 0
        if len(ops) < len(spec.src):
            return None
        srcs = list(zip(ops, spec.src))
    else:
        nd, ns = len(spec.dst), len(spec.src)
        if len(ops) != nd + ns:
            return None
        srcs = list(zip(ops[nd:], spec.src))
    ins, kinds = [], []
    for op, ty in srcs:
        r = _source(_s_imm_fix(inst, op, ty), ty)
        if r is None:
            return None
        ins.append(r[0])
        kinds.append(r[1])
    outs = []
    if not sopc:
        if spec.extra.get("tied"):
            r = _source(ops[0], spec.dst[0])
            if r is None:
                return None
            ins.append(r[0])
            kinds.append(r[1])
        for imp in spec.imp_in:
            if imp == "scc":
                ins.append(("wv.scc", None))
                kinds.append(("scc_in",))
            elif imp == "exec":
                ins.append((f"(s.item({EXEC}) | (s.item({EXEC + 1}) << 32))", None))
                kinds.append(("exec_in",))
            else:
                return None
        for op, ty in zip(ops[:nd], spec.dst):
            r = _dest(op, ty)
            if r is None:
                return None
            outs.append(r[0])
            kinds.append(r[1])
        for imp in spec.imp_out:
            if imp == "scc":
                outs.append((["wv.scc = bool(X)"], None))
                kinds.append(("scc_out",))
            elif imp == "exec":
                outs.append(([f"s[{EXEC}] = X & 0xFFFFFFFF", f"s[{EXEC + 1}] = X >> 32",
                              "wv.sync_exec()"], None))
                kinds.append(("exec_out",))
            else:
                return None
    key = (spec.name, sopc, tuple(kinds))
    if key in _FACTORIES:
        fac = _FACTORIES[key]
    else:
        fac = _FACTORIES[key] = _factory(spec, sopc, ins, outs, kinds)
    if fac is None:
        return None
    params = [p for _, p in ins if p is not None] + [p for _, p in outs if p is not None]
    run = fac(nxt, *params)
    run.sgen = (fac.source, params)     # (asmevo.emu.lockstep_blockgen inlines the body)
    return run


def _factory(spec, sopc, ins, outs, kinds):
    """Compile ``make(nxt, P0, P1, ...) -> run`` for one instruction shape, or None."""
    cg = CodeGen()
    args, body, params = [], [], []
    for k, ((expr, p), kd) in enumerate(zip(ins, kinds)):
        if p is not None:
            name = f"P{len(params)}"
            params.append(name)
            expr = expr.replace("P", name) if expr != "P" else name
        body.append(f"a{k} = {expr}")
        w = 1 if kd[0] == "scc_in" else (64 if kd[0] == "exec_in" else kd[1])
        args.append(_Sym(f"a{k}", w))
    try:
        res = spec.fn(cg, *args)
    except _Fail:
        return None
    except Exception:   # noqa: BLE001  (semantics outside the model: keep the closure)
        return None
    if sopc:
        if not isinstance(res, _Sym):
            return None
        body += cg.lines
        body.append(f"wv.scc = bool({res.e})")
    else:
        res = (res,) if len(outs) == 1 else res
        if not isinstance(res, tuple) or len(res) != len(outs) or \
                not all(isinstance(r, _Sym) for r in res):
            return None
        body += cg.lines
        for (st, p), r in zip(outs, res):
            if p is not None:
                name = f"P{len(params)}"
                params.append(name)
                st = [x.replace("P", name) for x in st]
            body += [x.replace("X", r.e) for x in st]
    src = (f"def make(nxt, {', '.join(params)}):\n" if params else "def make(nxt):\n") + \
        "    def run(wv):\n        s = wv.s\n" + \
        "".join(f"        {line}\n" for line in body) + \
        "        return nxt\n    return run\n"
    ns: dict = {}
    exec(compile(src, f"<scalar {spec.name}>", "exec"), ns)    # noqa: S102
    make = ns["make"]
    make.source = src
    return make

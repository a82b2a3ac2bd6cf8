"""Generated code for a block of a lockstep group whose waves all have every lane active.

:mod:`asmevo.emu.lockstep_block` compiles a block twice: as calls of its instructions'
closures (any EXEC), and -- here -- for the case that EXEC is full in every running wave
(``view.exec_all``), with the hottest vector forms written out inline and the vector
registers they use kept in local variables:

* ``v_fmac_f32`` / ``v_fma_f32`` (the closure of :func:`asmevo.emu.exec_fast._fma_f32`): the
  float64 sum of the exact product and the addend rounded to binary32, with the same
  double-rounding test, else ``_fma32``;
* ``v_lshl_add_u64`` (:func:`asmevo.emu.exec_fast._lshl_add_u64`): ``(a << k) + src`` on
  uint64;
* ``global_load_dword*`` at a VGPR-pair address (:func:`asmevo.emu.exec_mem._global_load_v64`):
  the words gathered from the buffer the instruction read last when every address is in it
  and 4-byte aligned (an index past the buffer's words raises IndexError), else the
  closure itself.

Every other instruction calls its closure.  A register written inline stays in a local
(``v5``: uint32 (W*64,) lanes; ``p2``: the pair v2:v3 as uint64 lanes) and reaches the
register file when something else may read it there: before a closure of a vector
instruction runs, before the function returns, and before a self-loop's next iteration
when the loop's first instruction does not expect it in a local (:class:`Regs` tracks what
is where while generating).  The values are the closures' values: the same numpy
operations on the same lanes, written to all lanes as the closures do under full EXEC.
"""

from __future__ import annotations

import bisect
import re
import weakref
from threading import get_ident

import numpy as np

from ..ir.operands import Imm, Reg, Src, reg_units
from ..isa import def_operands, use_operands
from ..semantics.immediates import imm_bits
from ..semantics.npbackend import _fma32
from .exec_common import U32, U64, _sgpr_index, pair_u64
from .exec_mem import _ADDR_MASK
from .memory import _BOR, _MAX, _THREE, _TWO

F32, F64 = np.float32, np.float64
#: numpy's count_nonzero without its Python wrapper (the same function for arrays)
_CNZ = getattr(getattr(np, "_core", None), "_multiarray_umath", None)
_CNZ = getattr(_CNZ, "count_nonzero", np.count_nonzero)
#: names the generated code uses (the module namespace of every compiled block)
NAMESPACE = {
    "np": np, "U32": U32, "U64": U64, "F32": F32, "F64": F64, "I64": np.int64,
    "pair": pair_u64, "fma32": _fma32, "MAX": _MAX, "BOR": _BOR, "THREE": np.array(_THREE),
    "TWO": np.array(_TWO), "RSH": np.right_shift, "SUB": np.subtract, "CNZ": _CNZ, "MUL": np.multiply,
    "ADD": np.add, "AND": np.bitwise_and, "EQ": np.equal, "LT": np.less, "XOR": np.bitwise_xor,
    "LOW": U64(0x1FFFFFFF), "MID": U64(0x10000000), "ABSM": U64(0x7FFFFFFFFFFFFFFF),
    "TINY": U64(0x3810000000000000),
}


class Regs:
    """What the generated code holds in locals at one point: ``c32`` VGPRs (local ``v{i}``,
    lanes as uint32 (type ``"u"``) or as float32 (``"f"``): ``c32`` maps the register to
    the type), ``c64`` VGPR pairs (uint64 lanes, local ``p{i}``), and which of them the
    register file does not have yet (``dirty``: keys ``("v", i)`` / ``("p", i)``)."""

    def __init__(self, c32=None, c64=(), dirty=(), sg=()):
        self.c32, self.c64, self.dirty = dict(c32 or {}), set(c64), set(dirty)
        self.sg = set(sg)

    def copy(self):
        return Regs(self.c32, self.c64, self.dirty, self.sg)

    def key(self):
        return (frozenset(self.c32.items()), frozenset(self.c64), frozenset(self.dirty),
                frozenset(self.sg))

    def held(self):
        return {("v", i) for i in self.c32} | {("p", i) for i in self.c64} | \
            {("s", i) for i in self.sg}

    def meet(self, other):
        """Locals valid (with the same type) on both ways into a point; dirty when dirty on
        either."""
        r = Regs({i: t for i, t in self.c32.items() if other.c32.get(i) == t},
                 self.c64 & other.c64, (), self.sg & other.sg)
        r.dirty = (self.dirty | other.dirty) & r.held()
        return r

    # ---- scalar locals: SGPR ``i`` as the Python int ``s{i}`` (what ``s.item(i)`` gives),
    # SCC (``i`` = -1) as ``scc`` (what ``w0.scc`` holds); only generated scalar code
    # (:meth:`scalar_lines`) reads and writes them, everything else finds the registers in
    # ``s`` / ``w0``: closures after :meth:`sflush` (and :meth:`sdrop` after them), the
    # inline vector forms after flushing the SGPRs they read.
    @staticmethod
    def sname(i):
        return "scc" if i < 0 else f"s{i}"

    def sread(self, out, i, ind=""):
        """The local of SGPR ``i`` (-1: SCC), loaded first when it is not held."""
        if i not in self.sg:
            out.append(ind + (f"scc = w0.scc" if i < 0 else f"s{i} = s.item({i})"))
            self.sg.add(i)
        return self.sname(i)

    def swrite(self, i):
        self.sg.add(i)
        self.dirty.add(("s", i))
        return self.sname(i)

    def sflush(self, out, regs=None):
        """Write the dirty scalar locals (of SGPRs ``regs``; None: all) back."""
        self.flush(out, [("s", i) for i in self.sg if regs is None or i in regs])

    def sdrop(self):
        """Forget the scalar locals (the registers may have changed; flushed before)."""
        assert not any(k[0] == "s" for k in self.dirty)
        self.sg.clear()

    def scalar_lines(self, out, lines):
        """Generated scalar code ``lines`` (straight, on ``w0``: :func:`inline_sgen`, a
        branch of :func:`inline_scalar`) appended to ``out`` with its SGPR and SCC accesses
        on locals; a line with any other use of ``s`` / ``w0`` (but ``w0.exec_any``) runs
        as it is, after writing the locals back and forgetting them."""
        for x in lines:
            m = _SWRITE.match(x)
            rest = _SREAD.sub("_", x[m.end():] if m else x)
            if _SOTHER.search(rest.replace("w0.exec_any", "")) or x != x.strip():
                self.sflush(out)
                self.sdrop()
                out.append(x)
                continue

            def rd(m):
                if m.group(0) == "w0.scc":
                    return self.sread(out, -1)
                return self.sread(out, int(m.group(1)) + int(m.group(2) or 0))
            if m:
                rhs = _SREAD.sub(rd, x[m.end():])
                i = -1 if m.group(0).startswith("w0") else \
                    int(m.group(1)) + int(m.group(2) or 0)
                out.append(f"{self.swrite(i)} = {rhs}")
            else:
                out.append(_SREAD.sub(rd, x))

    # ---- code
    def _store(self, k):
        t, i = k
        if t == "s":
            return [f"w0.scc = scc" if i < 0 else f"s[{i}] = s{i}"]
        if t == "v":
            return [f"Vf[{i}] = v{i}" + (".view(U32)" if self.c32[i] == "f" else "")]
        return [f"Vf[{i}:{i + 2}] = p{i}.view(U32).reshape(-1, 2).T"]

    def flush(self, out, keys=None):
        """Write the dirty locals (of ``keys``; None: all) to the register file."""
        for k in sorted(self.dirty if keys is None else self.dirty & set(keys)):
            out += self._store(k)
            self.dirty.discard(k)

    def flush_to(self, out, target):
        """Before going to a point whose state is ``target`` (holding a subset of these
        locals, with the same types): write what ``target`` does not hold as dirty."""
        self.flush(out, [k for k in self.dirty if k not in target.dirty])

    def read32(self, out, i, want="u"):
        """An expression for VGPR ``i`` as uint32 (``want`` "u") or float32 ("f") lanes."""
        t = self.c32.get(i)
        if t is not None:
            return f"v{i}" if t == want else f"v{i}.view({'F32' if want == 'f' else 'U32'})"
        for j in (i - 1, i):
            if j in self.c64 and ("p", j) in self.dirty:
                self.flush(out, [("p", j)])
        return f"Vf[{i}]" + (".view(F32)" if want == "f" else "")

    def read64(self, out, i):
        """An expression for the VGPR pair ``i``, ``i + 1`` as uint64 lanes."""
        if i in self.c64:
            return f"p{i}"
        self.flush(out, [("v", i), ("v", i + 1), ("p", i - 1), ("p", i + 1)])
        out += [f"p{i} = pair(Vf, {i})", f"al{i} = False"]
        self.c64.add(i)
        return f"p{i}"

    def _drop(self, out, regs):
        """Locals overlapping VGPRs ``regs`` stop being valid (their other halves are
        written back first)."""
        regs = set(regs)
        for i in list(self.c32):
            if i in regs:
                del self.c32[i]
                self.dirty.discard(("v", i))
        for i in list(self.c64):
            if i in regs or i + 1 in regs:
                if ("p", i) in self.dirty and not (i in regs and i + 1 in regs):
                    self.flush(out, [("p", i)])
                self.c64.discard(i)
                self.dirty.discard(("p", i))

    def write32(self, out, i, expr, typ="u"):
        """VGPR ``i`` becomes ``expr`` (lanes of type ``typ``)."""
        self._drop(out, [i])
        out.append(f"v{i} = {expr}")
        self.c32[i] = typ
        self.dirty.add(("v", i))

    def write64(self, out, i, expr, aligned="False"):
        """The pair ``i`` becomes ``expr``; ``al{i}`` (a local beside every ``p{i}``) says
        whether every lane is known to be a multiple of 4 (``aligned``, evaluated first)."""
        self._drop(out, [i, i + 1])
        out += [f"al{i} = {aligned}", f"p{i} = {expr}"]
        self.c64.add(i)
        self.dirty.add(("p", i))

    def before_closure(self, out, inst, vector):
        """Around a closure call: a vector instruction reads the register file (write
        everything back) and may write VGPRs (forget those: ``after`` list); any closure
        may read and write SGPRs and SCC (write their locals back; ``after_closure``
        forgets them)."""
        self.sflush(out)
        if not vector:
            return ()
        self.flush(out)
        try:
            regs = {u[1] for op in def_operands(inst) for u in reg_units(op)
                    if len(u) == 2 and u[0] == "v"}
        except Exception:   # noqa: BLE001  (not in the ISA table: forget every local)
            regs = set(self.c32) | set(self.c64) | {i + 1 for i in self.c64}
        return regs

    def after_closure(self, out, regs):
        self.sdrop()
        if regs:
            self._drop(out, regs)


#: ``s.item(N)`` / ``s.item(N + M)`` or ``w0.scc`` in generated scalar code; an SGPR or
#: SCC assignment at the start of a line; any other use of the SGPRs or of ``w0``
_SREAD = re.compile(r"\bs\.item\((\d+)(?: \+ (\d+))?\)|\bw0\.scc\b")
_SWRITE = re.compile(r"s\[(\d+)(?: \+ (\d+))?\] = |w0\.scc = ")
_SOTHER = re.compile(r"\b(s|sF|w0)\b")


def _vreg(op, count):
    b = op.base if isinstance(op, Src) else op
    if isinstance(b, Reg) and b.file == "v" and b.count == count:
        return b.index
    return None


def _f32_src(regs, out, op, consts):
    """(An expression for source ``op`` as float32 (lanes or one value), lanes?), or
    (None, False)."""
    i = _vreg(op, 1)
    if i is not None:
        return regs.read32(out, i, "f"), True
    b = op.base if isinstance(op, Src) else op
    si = _sgpr_index(b)
    if si is not None and getattr(b, "count", 1) == 1:
        regs.sflush(out, {si})
        return f"sF[{si}:{si + 1}]", False
    if isinstance(b, Imm):
        name = f"K{len(consts)}"
        consts[name] = np.array([imm_bits(b.value, "f32", b.text)], U32).view(F32)
        return name, False
    return None, False


def _scalar_f32(expr, consts):
    """For a one-value float32 source ``expr`` of :func:`_f32_src` (an SGPR ``sF[i:i + 1]``
    or a constant ``K..``): (a Python-float expression of its value, is it a NaN (constants
    only)), or None."""
    m = re.fullmatch(r"sF\[(\d+):\d+\]", expr)
    if m:
        return f"sF.item({m.group(1)})", False
    if expr in consts:
        v = float(consts[expr][0])
        name = expr + "f"
        consts[name] = v
        return name, v != v
    return None


#: closures whose inline form (:func:`inline`) neither accesses memory nor leaves the block
PURE = frozenset(("_fma_f32.<locals>.run", "_lshl_add_u64.<locals>.run"))


def _name(fn):
    return getattr(getattr(fn, "__code__", None), "co_qualname", "")


def _cells(fn):
    return dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__ or ())))


def float_reads(insts, closures):
    """The VGPRs that the instructions (and their closures) read only as float32 sources
    of an inline FMA: a load into one of them gathers float32 lanes."""
    f, u = set(), set()
    for inst, c in zip(insts, closures):
        fma = _name(c) == "_fma_f32.<locals>.run"
        try:
            uses = list(use_operands(inst))
        except Exception:   # noqa: BLE001  (not in the ISA table: every operand)
            uses, fma = list(inst.operands), False
        for op in uses:
            b = op.base if isinstance(op, Src) else op
            if isinstance(b, Reg) and b.file == "v":
                (f if fma and b.count == 1 else u).update(range(b.index, b.index + b.count))
    return f - u


def inline(inst, closure, regs, consts, tag, floats=frozenset()):
    """Lines computing ``inst`` inline (full EXEC) with register state ``regs`` (updated),
    or None when it has no inline form here.  ``consts``: named constants the lines use
    (added to); ``tag``: a unique suffix for this instruction's names; ``floats``: VGPRs
    to hold as float32 (:func:`float_reads`).  The lines may use
    ``FAULT`` (the statement that returns for a memory fault) and ``SLOW`` (the closure's
    call) -- :mod:`asmevo.emu.lockstep_block` fills them in."""
    q = _name(closure)
    ops = inst.operands
    out: list = []
    if q == "_fma_f32.<locals>.run":
        tied = len(ops) == 3
        d = _vreg(ops[0], 1)
        srcs = list(ops[1:]) + ([ops[0]] if tied else [])
        if d is None or len(srcs) != 3:
            return None
        ex = [_f32_src(regs, out, op, consts) for op in srcs]
        if any(e is None for e, _ in ex) or not (ex[0][1] or ex[1][1]):
            return None     # (a product of two scalars: one value, not lanes)
        (a, _), (b, _), (c, _) = ex
        # exec_fast's ``s = a.astype(F64) * b; s += c`` (the same float64 operations in the
        # same operand order, the operands converted to float64 first: exactly) into the
        # block's buffer ``T``, the operands copied into ``T`` / ``C`` rather than converted
        # into new arrays; the double-rounding test on its dwords ``TW`` (low, high:
        # little-endian): a lane is risky when (low & 0x1FFFFFFF) == 0x10000000 (a binary32
        # midpoint) or (high & 0x7FF00000) < 0x38100000 (the binary32 subnormal range), i.e.
        # when ((TW ^ RX) & RA) < RL in either dword (RX, RA, RL: those constants per dword;
        # ``TB``'s bytes all zero ``Z``: none is).  The binary32 result goes into this
        # instruction's buffer ``O_{tag}`` (only the destination's local holds it: every
        # write-back copies it, and the next pass reads it before writing it again).
        # Sources are named once when they are not already plain locals; the slow way
        # (``fma32``) gets the same expressions.
        def name(e, k):
            if re.fullmatch(r"[A-Za-z_]\w*", e):
                return e
            out.append(f"{k}_{tag} = {e}")
            return f"{k}_{tag}"
        one = _scalar_f32(b if ex[0][1] else a, consts)
        if one is not None and one[1]:
            # a NaN constant: the closure's own product, the constant a one-element operand
            # (where two NaNs meet numpy returns the broadcast operand's, on either side;
            # filled into lanes it would return the first operand's)
            a, b, c = name(a, "a"), name(b, "b"), name(c, "c")
            out.append(f"MUL({a}.astype(F64), {b}.astype(F64), T)")
        elif one is not None:
            # one operand is one SGPR or constant: its float64 value in the 0-d ``X`` (a
            # constant: in its own 0-d array); the product computed as lanes * X (the same
            # value as X * lanes: x is not a NaN on this way -- a NaN SGPR takes the
            # closure's product, where the one-element operand's NaN is returned)
            lanes = name(a if ex[0][1] else b, "a" if ex[0][1] else "b")
            if ex[0][1]:
                a = lanes
            else:
                b = lanes
            c = name(c, "c")
            py, _ = one
            if py.startswith("sF.item"):
                x = f"x_{tag}"
                out += [f"{x} = {py}", f"if {x} != {x}:",
                        f"    MUL({a}.astype(F64), {b}.astype(F64), T)", "else:",
                        f"    T[...] = {lanes}", f"    X[()] = {x}", "    MUL(T, X, T)"]
            else:
                kd = py + "d"
                consts[kd] = np.array(consts[py], F64)
                out += [f"T[...] = {lanes}", f"MUL(T, {kd}, T)"]
        else:
            a, b, c = name(a, "a"), name(b, "b"), name(c, "c")
            out += [f"T[...] = {a}", f"C[...] = {b}", "MUL(T, C, T)"]
        # (a one-value addend -- SGPR or constant -- is added as the closure adds it: one
        # element broadcast, whose NaN numpy returns where the product is a NaN too)
        out += ([f"C[...] = {c}", "ADD(T, C, T)"] if ex[2][1] else [f"ADD(T, {c}, T)"]) + [
                "XOR(TW, RX, TM)",
                "AND(TM, RA, TM)",
                "LT(TM, RL, TB)",
                "if TB.tobytes() != Z:",
                f"    t = fma32({a}, {b}, {c})",
                "else:",
                f"    O_{tag}[...] = T",
                f"    t = O_{tag}"]
        regs.write32(out, d, "t", "f")
        return out
    if q == "_lshl_add_u64.<locals>.run":
        cl = _cells(closure)
        d, a = _vreg(ops[0], 2), _vreg(ops[1], 2)
        if d is None or a is None or len(ops) != 4:
            return None
        src = ops[3].base if isinstance(ops[3], Src) else ops[3]
        j = _vreg(ops[3], 2)
        x = regs.read64(out, a)
        k = cl["k"]
        if j is not None:
            y = regs.read64(out, j)
            ya = f"al{j}"
        elif isinstance(src, Imm):
            name = f"K{len(consts)}"
            # (a constant's reader ignores the wave; a 0-d array: numpy takes it faster
            # than a numpy scalar, with the same uint64 arithmetic)
            consts[name] = np.array(cl["rc"](None)[0], U64)
            y = name
            ya = str(not int(consts[name]) & 3)
        else:
            si = _sgpr_index(src)
            if si is None or getattr(src, "count", 2) != 2:
                return None
            regs.sflush(out, {si, si + 1})
            y = f"s[{si}:{si + 2}].view(U64)"
            ya = f"not s.item({si}) & 3"
        if k:
            consts[f"SH_{tag}"] = np.array(k, U64)
        expr = f"({x} << SH_{tag}) + {y}" if k else f"{x} + {y}"
        # (a multiple of 4 plus a multiple of 4, modulo 2**64, is one)
        regs.write64(out, d, expr, f"({'True' if k >= 2 else f'al{a}'}) and ({ya})")
        return out
    if q == "_global_load_v64.<locals>.run":
        cl = _cells(closure)
        ai, di, ndw, offset = cl["ai"], cl["di"], cl["ndw"], cl["offset"]
        x = regs.read64(out, ai)
        consts[f"UOFF_{tag}"] = np.array(cl["uoff"], U64)
        consts[f"COLS_{tag}"] = cl["cols"]
        consts[f"LAST_{tag}"] = [_dead, _dead, None]
        consts[f"MEM_{tag}"] = cl["ctx"]
        size = 4 * ndw
        typ = "f" if ndw == 1 and di in floats else "u"
        words = "words_f32" if typ == "f" else "words"
        out += [f"a = {x} + UOFF_{tag}" if offset else f"a = {x}",
                f"r = LAST_{tag}[1]()",
                f"if r is None or LAST_{tag}[0]() is not MEM_{tag}.mem:",
                f"    r = prime(LAST_{tag}, MEM_{tag}.mem, a)",
                "ok = r is not None",
                "if ok:",
                f"    SUB(a, LAST_{tag}[2], OFF)",
                # (the buffer's base is a multiple of 4: an address is iff its offset is)
                (f"    ok = al{ai} or not CNZ(AND(OFF, THREE, AM))" if offset % 4 == 0 else
                 "    ok = not CNZ(AND(OFF, THREE, AM))"),
                "if ok:",
                "    RSH(OFF, TWO, OFF)",
                "    try:",
                (f"        wd = r.{words}[OFFI]" if ndw == 1 else
                 f"        wd = r.words[OFFI[:, None] + COLS_{tag}]"),
                "    except IndexError:",
                "        ok = False",
                "if ok:"]
        body = [f"al{ai} = True"] if offset % 4 == 0 else []   # (every lane checked)
        sub = regs.copy()
        if ndw == 1:
            sub.write32(body, di, "wd", typ)
        else:
            for jj in range(ndw):
                sub.write32(body, di + jj, f"wd[:, {jj}]")
        slow = regs.copy()
        sbody = []
        slow.flush(sbody)
        sbody += ["try:", "    SLOW", "except MemoryFault:", "    FAULT"]
        for jj in range(ndw):
            slow.write32(sbody, di + jj, f"Vf[{di + jj}]" + (".view(F32)" if typ == "f" else ""),
                         typ)
        # both ways end with the same locals (the slow way's are views of the file, dirty:
        # a later write-back copies them onto themselves)
        out += ["    " + x for x in body]
        out.append("else:")
        out += ["    " + x for x in sbody]
        regs.c32, regs.c64 = sub.c32, sub.c64
        regs.dirty = sub.dirty | slow.dirty
        return out
    return None


_FMA_CONST: dict = {}


def fma_buffers(n):
    """Buffers of the inline FMA for ``n`` lanes: the float64 sums ``T``, their dwords
    ``TW``, scratch ``TM`` / ``TB`` for the test, and its constants per dword ``RX``, ``RA``,
    ``RL`` (read only, shared)."""
    c = _FMA_CONST.get(n)
    if c is None:
        c = _FMA_CONST[n] = tuple(np.tile(np.array(x, U32), n) for x in
                                  ((0x10000000, 0), (0x1FFFFFFF, 0x7FF00000), (1, 0x38100000)))
    T = np.empty(n, F64)
    return (T, T.view(U32), np.empty(2 * n, U32), np.empty(2 * n, bool)) + c


def block_buffers(cache, n, nout=0):
    """Scratch arrays of a block's inline code for ``n`` lanes, made once per block, lane
    count and thread (``cache``: the block's dict): the FMA's (:func:`fma_buffers`), the
    loads' byte offsets ``OFF`` (uint64; ``OFFI`` the same as int64) and test ``AM``, a
    float64 operand ``C``, a 0-d float64 ``X``, ``Z`` (zero bytes, as many as ``TB``
    has) and ``nout`` float32 results (a tuple: one per inline FMA, ``O_{tag}``)."""
    key = (n, nout, get_ident())
    b = cache.get(key)
    if b is None:
        off = np.empty(n, U64)
        b = cache[key] = fma_buffers(n) + (off, off.view(np.int64), np.empty(n, U64),
                                           np.empty(n, F64), np.zeros((), F64),
                                           bytes(2 * n),
                                           tuple(np.empty(n, F32) for _ in range(nout)))
    return b


def _dead():
    return None


_BRANCH = {"s_branch": "{t}", "s_cbranch_scc0": "{n} if w0.scc else {t}",
           "s_cbranch_scc1": "{t} if w0.scc else {n}",
           "s_cbranch_execz": "{n} if w0.exec_any else {t}",
           "s_cbranch_execnz": "{t} if w0.exec_any else {n}"}


def inline_scalar(closure):
    """Lines doing what ``closure`` (a scalar instruction's, run on the first running wave
    ``w0``) does, setting ``npc``, or None: a branch on SCC / EXEC (as
    :func:`asmevo.emu.exec_salu.compile_branch`), a no-op (``s_waitcnt``, ``s_nop``...: the
    closure of :func:`asmevo.emu.program._simple` that only returns the next pc)."""
    br = getattr(closure, "branch", None)
    if br is not None:
        e = _BRANCH.get(br[0])
        return None if e is None else [f"npc = {e.format(t=br[1], n=br[2])}"]
    if _name(closure) == "_simple.<locals>.comp.<locals>.<lambda>" and \
            closure.__code__.co_freevars == ("nxt",):
        return [f"npc = {_cells(closure)['nxt']}"]
    return None


_LOCAL = re.compile(r"\b([at]\d+)\b")
_PARAM = re.compile(r"\bP(\d+)\b")


def inline_sgen(closure, tag):
    """The body of a generated scalar closure (:mod:`asmevo.emu.exec_sgen`) as lines on the
    first running wave ``w0`` (its SGPR row ``s``), setting ``npc``; None when it is not
    one or it writes EXEC."""
    sg = getattr(closure, "sgen", None)
    if sg is None:
        return None
    src, params = sg
    lines = src.splitlines()
    try:
        i = lines.index("        s = wv.s")
        j = lines.index("        return nxt")
    except ValueError:
        return None
    body = [x.strip() for x in lines[i + 1:j]]
    if any("sync_exec" in x for x in body) or not all(isinstance(p, int) for p in params):
        return None
    out = []
    consts = {}
    for x in body:
        x = _LOCAL.sub(lambda m: f"{m.group(1)}_{tag}", x)
        x = _PARAM.sub(lambda m: repr(params[int(m.group(1))]), x)
        x = re.sub(r"\bwv\b", "w0", x)
        for nm, val in consts.items():
            # (parenthesized before a method call: ``63.bit_length()`` is not Python)
            x = re.sub(rf"\b{nm}\b(\.?)", lambda m, v=val: f"({v})." if m.group(1) else v, x)
        m = _CONST.fullmatch(x)
        if m:       # a constant operand: written into the lines that use it
            consts[m.group(1)] = m.group(2)
            continue
        out.append(x)
    return out + [f"npc = {_cells(closure)['nxt']}"]


_CONST = re.compile(r"(a\d+_\w+) = (\d+|True|False)")


def inline_smem(closure, consts, tag, regs=None):
    """``s_load_dword*`` at an SGPR-pair address plus constants (the closure of
    :func:`asmevo.emu.exec_mem.compile_smem` for that form) as lines: the words from the
    buffer it read last when the address is in it, else the closure (``SLOW`` / ``FAULT``
    as in :func:`inline`).  With ``regs`` (:class:`Regs`, updated): the address from
    scalar locals and a one-dword result into one; the closure's way writes them back
    first and loads them all again after."""
    if _name(closure) != "compile_smem.<locals>.run":
        return None
    cl = _cells(closure)
    if not {"base_i", "k_off", "di", "n", "size", "ctx"} <= set(cl) or cl.get("touches_exec"):
        return None
    b, ko, di, n, size = cl["base_i"], cl["k_off"], cl["di"], cl["n"], cl["size"]
    consts[f"SL_{tag}"] = [_dead, _dead]
    consts[f"MEM_{tag}"] = cl["ctx"]
    if regs is not None and n == 1:
        out: list = []
        lo, hi = regs.sread(out, b), regs.sread(out, b + 1)
        slow = regs.copy()
        sl: list = []
        slow.sflush(sl)
        dst = regs.swrite(di)
        return out + [
            f"addr = (({lo} | ({hi} << 32)) + {ko}) & {_ADDR_MASK}",
            f"r = SL_{tag}[1]()",
            f"if r is None or SL_{tag}[0]() is not MEM_{tag}.mem:",
            f"    r = sprime(SL_{tag}, MEM_{tag}.mem, addr)",
            f"if r is not None and r.addr <= addr <= r.addr + r.size - {size}:",
            "    o = (addr - r.addr) >> 2",
            f"    {dst} = r.words.item(o)",
            "else:"] + ["    " + x for x in sl] + [
            "    try:",
            "        SLOW",
            "    except MemoryFault:",
            "        FAULT"] + \
            ["    " + (f"scc = w0.scc" if i < 0 else f"s{i} = s.item({i})")
             for i in sorted(regs.sg)]
    pre: list = []
    if regs is not None:    # (several dwords: on the register file)
        regs.sflush(pre)
        regs.sdrop()
    return pre + [f"addr = ((s.item({b}) | (s.item({b + 1}) << 32)) + {ko}) & {_ADDR_MASK}",
            f"r = SL_{tag}[1]()",
            f"if r is None or SL_{tag}[0]() is not MEM_{tag}.mem:",
            f"    r = sprime(SL_{tag}, MEM_{tag}.mem, addr)",
            f"if r is not None and r.addr <= addr <= r.addr + r.size - {size}:",
            "    o = (addr - r.addr) >> 2",
            (f"    s[{di}] = r.words.item(o)" if n == 1 else
             f"    s[{di}:{di + n}] = r.words[o:o + {n}]"),
            "else:",
            "    try:",
            "        SLOW",
            "    except MemoryFault:",
            "        FAULT"]


def sprime(last, mem, addr):
    """Remember (weakly) the buffer of ``mem`` holding byte ``addr`` for inline scalar
    loads (the one the closure's look-up finds), and return it (or None)."""
    from .memory import GlobalMemory
    r = None
    if type(mem) is GlobalMemory:
        k = bisect.bisect_right(mem._base_list, addr) - 1
        r = mem.regions[k] if k >= 0 else None
    last[0], last[1] = (weakref.ref(mem), weakref.ref(r)) if r is not None else (_dead, _dead)
    return r


def prime(last, mem, a):
    """Remember (weakly, as the closure does) the buffer of ``mem`` holding the first of
    the addresses ``a`` for inline loads, and return it (None: none usable): one whose size
    is a multiple of 4 bytes (its words are exactly its bytes: an index past them raises
    IndexError, as every address the closure finds outside the buffer; the addresses are
    4-byte aligned, the buffer's base too).  ``last[2]``: its base as a 0-d uint64 array
    (numpy subtracts it faster than the numpy scalar ``r.base64``)."""
    from .exec_mem import _region_of
    r = _region_of(mem, a)
    if r is not None and r.size % 4 == 0 and r.words.size * 4 == r.size and \
            not int(r.base64) & 3:
        last[0], last[1], last[2] = weakref.ref(mem), weakref.ref(r), np.array(r.base64, U64)
        return r
    last[0], last[1], last[2] = _dead, _dead, None
    return None


NAMESPACE["prime"] = prime
NAMESPACE["sprime"] = sprime
NAMESPACE["block_buffers"] = block_buffers

"""Relational (product-program) equivalence of two kernels across basic blocks.

The per-block checker (:func:`asmevo.verify.equiv.check_kernels`) proves each changed
window on its own, from unconstrained inputs.  Passes that move a value across blocks
(copy propagation through a branch, a scratch slot promoted to a VGPR, an SGPR spill lane
kept in an SGPR, a WWM spill whose reload is dropped) are therefore never proved there: a
block cannot know that, at its entry, candidate ``v4`` equals original ``v0``.

:func:`prove_relational` proves such pairs with a *relational invariant* at every block
entry, inferred Houdini-style (Flanagan & Leino, "Houdini, an annotation assistant for
ESC/Java", FME 2001) over the product of the two programs (Barthe, Crespo & Kunz,
"Relational verification using product programs", FM 2011; Necula, "Translation validation
for an optimizing compiler", PLDI 2000):

* The two kernels must have *corresponding* CFGs: the same number of blocks, block ``i`` of
  one matched to block ``i`` of the other (:func:`asmevo.verify.equiv.label_map`), the same
  successor edges (``taken`` / ``fallthrough`` / ``exit``), a branch or ``s_endpgm`` only
  as a block's last instruction.  Instructions inside blocks may differ freely.
* A conjunct relates a location of the original state to one of the candidate state.
  Locations: register units (SGPRs, VCC, EXEC, SCC, M0...: one value; VGPRs/AGPRs: the
  values of all 64 lanes), a lane ``L`` of a VGPR (``v_writelane``/``v_readlane`` spills),
  a private (scratch) dword at a constant per-lane address, and the whole scratch memory.
  Conjunct forms: ``eq`` (equal; for VGPRs: in all 64 lanes), ``meq`` (equal in the lanes
  whose EXEC bit is set in the original state at that point; a lane equality is never
  claimed for lanes outside EXEC), ``const`` (a location of one program holds a constant),
  ``scr`` (the whole scratch memories are equal).  Global memory and LDS are never related
  by conjuncts: both programs must perform the same writes in the same order in every
  block (address, size, value and lane mask), so their memories stay identical.
* The kernel entry's invariant is the identity (the same launch state).  Every other
  block starts from a generous candidate set: the identity on every location plus every
  pair that the z3 terms show structurally equal (or equal in the active lanes) at the
  end of a predecessor, and every location whose term is a constant there.
* Iteration: for a block, assume its entry invariant on symbolic states of both programs,
  run both bodies with the shared z3 semantics (:mod:`asmevo.semantics.z3backend`, float
  operations as uninterpreted functions of their bit patterns, so NaN payloads are exact),
  check the block's *obligations* -- the same number of ``s_barrier``\\ s, the same global
  and LDS writes between them, the same branch decision, and no global load the original
  does not make (:func:`asmevo.verify.equiv.read_coverage`) -- and check every conjunct
  of each successor's invariant (assuming the branch condition of the edge); a conjunct z3
  cannot prove (refuted, or undecided in time) is dropped, and the successor is revisited.
  Dropping only weakens an invariant, so the loop ends, and at its fixpoint every block
  has been checked under its final invariant: the invariants are inductive, both programs
  take the same path and perform the same writes.  That is the proof.

At an ``s_barrier`` both programs' global and LDS memories are replaced by the same fresh
array: other waves may write between barriers (assuming data-race freedom, as the
per-block checker does), so a load moved across a barrier is not proved.

Answers: ``equivalent`` only at a fixpoint where every block's obligations were proved;
``not equivalent`` only when an obligation of the entry block fails from the identity
state and no edge leads back to the entry block (with a counterexample; the verifier
still only reports it as evidence); ``unknown`` otherwise (an obligation refuted where
the invariant may just be too weak, a solver resource limit or the proof's resource
budget (deterministic z3 ``rlimit`` counts, so the answer does not depend on the machine's
load; a wall-clock safety net can only make it unknown), an instruction without z3
semantics, CFGs that do not correspond, a kernel too large).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import z3

from ..ir.instruction import Instruction
from ..ir.module import Kernel
from ..ir.operands import Imm, base_of, reg_units

EQUIVALENT, NOT_EQUIVALENT, UNKNOWN = "equivalent", "not equivalent", "unknown"

_TRACE = bool(__import__("os").environ.get("ASMEVO_RELATIONAL_TRACE"))

#: Conditional branches whose condition the checker models (CDNA3 ISA guide, "Program flow
#: control"): opcode -> (state field, taken when zero).
_COND = {"s_cbranch_scc0": ("scc", True), "s_cbranch_scc1": ("scc", False),
         "s_cbranch_vccz": ("vcc", True), "s_cbranch_vccnz": ("vcc", False),
         "s_cbranch_execz": ("exec", True), "s_cbranch_execnz": ("exec", False)}

_SPECIAL_BY_SGPR = {106: ("vcc_lo",), 107: ("vcc_hi",), 126: ("exec_lo",), 127: ("exec_hi",),
                    124: ("m0",)}
_EXEC = (("exec_lo",), ("exec_hi",))


@dataclass
class RelationalResult:
    """The answer of :func:`prove_relational`.

    Attributes:
        status: ``"equivalent"``, ``"not equivalent"`` or ``"unknown"``.
        reason: why (one line).
        unknown_kind: ``"timeout"`` or ``"unsupported"`` when unknown.
        block: label (or ``#i``) of the block where the proof failed, if any.
        invariants: block label -> the final invariant's non-identity conjuncts and the
            dropped identities (strings), for an ``equivalent`` answer.
        counterexample: for ``not equivalent``: ``{"inputs": {name: int}, "differs": [..]}``.
        queries: solver queries made; seconds: wall time.
    """

    status: str
    reason: str = ""
    unknown_kind: str | None = None
    block: str | None = None
    invariants: dict = field(default_factory=dict)
    counterexample: dict | None = None
    queries: int = 0
    seconds: float = 0.0

    @property
    def equivalent(self) -> bool:
        """True only when proved equivalent."""
        return self.status == EQUIVALENT

    def to_json(self) -> dict:
        """JSON-ready record."""
        return {"status": self.status, "reason": self.reason, "unknown_kind": self.unknown_kind,
                "block": self.block, "invariants": self.invariants,
                "counterexample": self.counterexample, "queries": self.queries,
                "seconds": round(self.seconds, 3)}


class _GiveUp(Exception):
    def __init__(self, kind: str, reason: str, block: str | None = None):
        super().__init__(reason)
        self.kind, self.reason, self.block = kind, reason, block


# --------------------------------------------------------------------------------------------
# Locations and conjuncts.
#
# loc: ("r", unit) | ("lane", vgpr unit, L) | ("slot", X)   (X: per-lane scratch byte address)
# conjunct: ("eq", oloc, cloc) | ("meq", oloc, cloc) | ("const", side, loc, value) | ("scr",)


def _is_vec_unit(u) -> bool:
    return len(u) == 2 and u[0] in ("v", "a")


def _loc_class(loc) -> str:
    """``vec`` (32-bit per lane), ``s32`` (32-bit uniform) or ``s1`` (SCC)."""
    if loc[0] == "slot":
        return "vec"
    if loc[0] == "lane":
        return "s32"
    u = loc[1]
    if _is_vec_unit(u):
        return "vec"
    return "s1" if u == ("scc",) else "s32"


def _loc_text(loc) -> str:
    if loc[0] == "r":
        u = loc[1]
        return f"{u[0]}{u[1]}" if len(u) == 2 else u[0]
    if loc[0] == "lane":
        u = loc[1]
        return f"{u[0]}{u[1]}[lane {loc[2]}]"
    return f"scratch[{loc[1]:#x}]"


def conjunct_text(c) -> str:
    """Readable form of one conjunct (``orig.v0 == cand.v4``...)."""
    if c[0] == "scr":
        return "orig.scratch == cand.scratch"
    if c[0] == "const":
        return f"{'orig' if c[1] == 'o' else 'cand'}.{_loc_text(c[2])} == {c[3]:#x}"
    op = "==" if c[0] == "eq" else "==(exec lanes)"
    return f"orig.{_loc_text(c[1])} {op} cand.{_loc_text(c[2])}"


def _norm_unit(u):
    if len(u) == 2 and u[0] == "s" and u[1] in _SPECIAL_BY_SGPR:
        return _SPECIAL_BY_SGPR[u[1]]
    return u


def _kernel_units(blocks) -> set:
    """Every register unit an instruction of ``blocks`` names or implies (EXEC, VCC, SCC
    and M0 always)."""
    from ..analysis._isa import facts
    out = {("exec_lo",), ("exec_hi",), ("vcc_lo",), ("vcc_hi",), ("scc",), ("m0",)}
    for insts in blocks:
        for i in insts:
            for op in i.operands:
                out |= {_norm_unit(u) for u in reg_units(base_of(op))}
            try:
                fx = facts(i)
                out |= {_norm_unit(u) for u in fx.uses} | {_norm_unit(u) for u in fx.defs}
            except Exception:  # noqa: BLE001 - the operands above are all we know
                pass
    return {u for u in out if len(u) == 1 or u[0] in ("v", "a", "s", "ttmp")}


def _lane_spills(blocks) -> tuple[set, set]:
    """``(VGPR units, lanes)`` of ``v_writelane``/``v_readlane`` with a constant lane."""
    vgprs, lanes = set(), set()
    for insts in blocks:
        for i in insts:
            if i.opcode in ("v_writelane_b32", "v_readlane_b32") and len(i.operands) >= 3:
                sel = base_of(i.operands[2])
                v = base_of(i.operands[0] if i.opcode == "v_writelane_b32" else i.operands[1])
                if isinstance(sel, Imm):
                    lanes.add(int(sel.value) & 63)
                    vgprs |= {u for u in reg_units(v) if _is_vec_unit(u)}
    # the registers such a spill VGPR is parked in whole (WWM copies to/from AGPRs)
    for insts in blocks:
        for i in insts:
            if i.opcode.startswith(("v_accvgpr_write", "v_accvgpr_read", "v_accvgpr_mov",
                                    "v_mov_b32")) and len(i.operands) == 2:
                units = [u for op in i.operands for u in reg_units(base_of(op)) if _is_vec_unit(u)]
                if len(units) == 2 and (units[0] in vgprs or units[1] in vgprs):
                    vgprs |= set(units)
    return vgprs, lanes


# --------------------------------------------------------------------------------------------
# One block's symbolic run on both programs.


def _lane():
    return z3.BitVec("lane", 6)


def _slot_addr(x: int):
    return z3.Concat(z3.ZeroExt(26, _lane()), z3.BitVecVal(x, 32))


def _load4(arr, x: int):
    from ..semantics.z3backend import _load_bytes
    return _load_bytes(arr, _slot_addr(x), 4)


def _active(exec_lo, exec_hi):
    e = z3.Concat(exec_hi, exec_lo)
    return z3.Extract(0, 0, z3.LShR(e, z3.ZeroExt(58, _lane()))) == 1


_EDGE = (0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0x3F800000, 2, 8, 0xFF)


def _fingerprints(terms: list, free_vars: list, samples: int, all_active: bool) -> list[tuple]:
    """Each term evaluated on ``samples`` concrete inputs (the same for every term):
    random values for every free constant of ``free_vars`` (the generic ``lane`` included; every
    ``exec`` unit all ones when ``all_active``) and a pseudo-random function for every
    array (registers' lanes, memories).  A value is an int, or the simplified term's text
    when it does not reduce to one (uninterpreted float functions)."""
    import random
    if not terms:
        return []
    rng = random.Random(0x5EED + samples + all_active)
    # one application holding every term: substitute and simplify share the DAG
    tup = z3.Function("fp!tuple", *[t.sort() for t in terms], z3.BoolSort())(*terms)
    cols = []
    for _ in range(samples):
        sub = _random_substitution(free_vars, rng, all_active)
        r = z3.simplify(z3.substitute(tup, *sub) if sub else tup)
        cols.append([v.as_long() if z3.is_bv_value(v) else v.sexpr() for v in r.children()])
    return [tuple(c[k] for c in cols) for k in range(len(terms))]


def _refute_concretely(assume: list, named: list, free_vars: list, samples: int = 4) -> set:
    """Names of ``named`` formulas that are false on some concrete input where every
    formula of ``assume`` is true (random inputs, half of them with every EXEC bit set).
    Dropping them is sound whatever the inputs: a conjunct is only ever removed."""
    import random
    rng = random.Random(0xC0FFEE + len(named))
    forms = list(assume) + [f for _, f in named]
    tup = z3.Function("rf!tuple", *[z3.BoolSort()] * len(forms), z3.BoolSort())(*forms)
    bad: set = set()
    for k in range(samples):
        sub = _random_substitution(free_vars, rng, all_active=k % 2 == 1)
        vals = z3.simplify(z3.substitute(tup, *sub) if sub else tup).children()
        if not all(z3.is_true(v) for v in vals[:len(assume)]):
            continue
        bad |= {n for (n, _), v in zip(named, vals[len(assume):]) if z3.is_false(v)}
    return bad


def _random_substitution(free_vars: list, rng, all_active: bool) -> list:
    """Concrete values for ``free_vars``: random bit-vectors (edge values one time in five;
    every ``exec`` unit all ones when ``all_active``), random Booleans, and a pseudo-random
    function for every array."""
    sub = []
    for c in free_vars:
        if z3.is_array(c):
            dom, ran = c.sort().domain(), c.sort().range()
            x = z3.BitVec("i!fp", dom.size())
            h = z3.ZeroExt(64 - dom.size(), x) if dom.size() < 64 else x
            h = (h * z3.BitVecVal(rng.getrandbits(64) | 1, 64)
                 + z3.BitVecVal(rng.getrandbits(64), 64))
            h = h ^ z3.LShR(h, 29)
            sub.append((c, z3.Lambda([x], z3.Extract(ran.size() - 1, 0, h))))
        elif z3.is_bool(c):
            sub.append((c, z3.BoolVal(rng.random() < 0.5)))
        else:
            w = c.size()
            if all_active and "exec" in str(c):
                v = (1 << w) - 1
            elif rng.random() < 0.2:
                v = rng.choice(_EDGE) & ((1 << w) - 1)
            else:
                v = rng.getrandbits(w)
            sub.append((c, z3.BitVecVal(v, w)))
    return sub


def _sub_lane(t, lane: int):
    return z3.substitute(t, (_lane(), z3.BitVecVal(lane, 6)))


class _Entry:
    """The symbolic entry state of one block under an invariant: the initial term of
    every unit and scratch memory of both programs, and the conjuncts that are not built
    into the terms, as constraints."""

    def __init__(self, inv: frozenset, tag: str, prefer_cross: bool = False):
        self.inv = inv
        self.tag = tag
        self.o_cache: dict = {}
        self.c_cache: dict = {}
        self.used: set = set()      # conjuncts built into the initial terms
        self.consts = {}
        for c in sorted((c for c in inv if c[0] == "const"), key=_conj_key):
            self.consts.setdefault((c[1], c[2]), c)
        by_cand: dict = {}
        for c in sorted((c for c in inv if c[0] in ("eq", "meq")), key=_conj_key):
            by_cand.setdefault(c[2], []).append(c)
        if prefer_cross:
            # while guessing: build a guessed cross pair into the terms rather than the
            # identity, so that the values it carries are seen at the block's exit -- except
            # for EXEC: the candidate's lane mask defined by another original register (VCC
            # after s_and_saveexec) would hide which lanes are active from the fingerprints,
            # so no "equal in the active lanes" pair would be guessed after a masked load
            # (an unrolled loop's renamed load destination).  Guessing only proposes
            # conjuncts; the fixpoint keeps what it proves.
            for k, v in by_cand.items():
                if k in (("r", ("exec_lo",)), ("r", ("exec_hi",))):
                    continue
                v.sort(key=lambda c: (c[1] == c[2], c[0] != "eq", repr(c)))
        self.by_cand = by_cand
        self.vars: list = []        # every free constant made here (for fingerprints)
        self.mem_global = self._var(z3.Array(f"m!global{tag}", z3.BitVecSort(64), z3.BitVecSort(8)))
        self.mem_lds = self._var(z3.Array(f"m!lds{tag}", z3.BitVecSort(32), z3.BitVecSort(8)))
        self.o_scratch = self._var(z3.Array(f"o!scratch{tag}", z3.BitVecSort(64), z3.BitVecSort(8)))
        if ("scr",) in inv:
            self.c_scratch = self.o_scratch
            self.used.add(("scr",))
        else:
            self.c_scratch = self._scratch_lambda(self._var(z3.Array(
                f"c!scratch{tag}", z3.BitVecSort(64), z3.BitVecSort(8))))

    def _act(self, lane=None):
        """Bool: the original entry state's EXEC bit of ``lane`` (default: the generic lane)."""
        e = z3.Concat(self.orig(("exec_hi",)), self.orig(("exec_lo",)))
        ln = _lane() if lane is None else lane
        return z3.Extract(0, 0, z3.LShR(e, z3.ZeroExt(58, ln))) == 1

    def _scratch_lambda(self, fresh):
        """The candidate's scratch memory defined from the original's by the slot
        conjuncts (``eq``/``meq`` between slots): byte ``a`` (lane ``a[37:32]``, per-lane
        address ``a[31:0]``) of cand slot Y is byte ``a - Y + X`` of orig slot X (``meq``:
        where that lane's EXEC bit is set); every other byte is ``fresh``.  Exactly the
        memories the conjuncts allow (the first conjunct per cand slot; others stay
        constraints)."""
        first: dict = {}
        for c in sorted(self.inv, key=_conj_key):
            if c[0] in ("eq", "meq") and c[1][0] == "slot" and c[2][0] == "slot":
                first.setdefault(c[2][1], c)
        if not first:
            return fresh
        a = z3.BitVec("a!scr", 64)
        low = z3.Extract(31, 0, a)
        in_range = z3.Extract(63, 38, a) == 0     # scratch addresses: lane:offset only
        body = z3.Select(fresh, a)
        for y, c in sorted(first.items(), reverse=True):
            x = c[1][1]
            cond = z3.And(in_range, z3.Extract(31, 2, low) == (y >> 2))
            if c[0] == "meq":
                cond = z3.And(cond, self._act(z3.Extract(37, 32, a)))
            val = z3.Select(self.o_scratch, z3.Concat(z3.Extract(63, 32, a),
                                                      low + z3.BitVecVal((x - y) & 0xFFFFFFFF, 32)))
            body = z3.If(cond, val, body)
            self.used.add(c)
        return z3.Lambda([a], body)

    def _var(self, v):
        self.vars.append(v)
        return v

    def _fresh(self, side: str, u):
        name = f"{side}!{u[0]}{u[1]}" if len(u) == 2 else f"{side}!{u[0]}"
        if _is_vec_unit(u):
            return z3.Select(self._var(z3.Array(name + self.tag, z3.BitVecSort(6),
                                                z3.BitVecSort(32))), _lane())
        return self._var(z3.BitVec(name + self.tag, 1 if u == ("scc",) else 32))

    def orig(self, u):
        t = self.o_cache.get(u)
        if t is None:
            c = self.consts.get(("o", ("r", u)))
            if c is not None:
                t = z3.BitVecVal(c[3], 1 if u == ("scc",) else 32)
                self.used.add(c)
            else:
                t = self._fresh("o", u)
            self.o_cache[u] = t
        return t

    def oloc(self, loc):
        if loc[0] == "r":
            return self.orig(loc[1])
        if loc[0] == "lane":
            return _sub_lane(self.orig(loc[1]), loc[2])
        return _load4(self.o_scratch, loc[1])

    def cand(self, u):
        t = self.c_cache.get(u)
        if t is not None:
            return t
        loc = ("r", u)
        defs = self.by_cand.get(loc, ())
        meq = next((c for c in defs if c[0] == "meq"), None)
        for c in defs:
            if c[0] == "eq":
                t = self.oloc(c[1])
                self.used.add(c)
                break
        if t is None:
            c = self.consts.get(("c", loc))
            if c is not None:
                t = z3.BitVecVal(c[3], 1 if u == ("scc",) else 32)
                self.used.add(c)
        if t is None and meq is not None and _is_vec_unit(u):
            # equal in the lanes EXEC enables: exactly If(exec bit, original, anything)
            t = z3.If(self._act(), self.oloc(meq[1]), self._fresh("c", u))
            self.used.add(meq)
        if t is None and _is_vec_unit(u):
            # lanes defined by lane conjuncts: the array with those lanes stored
            arr = self._var(z3.Array(f"c!{u[0]}{u[1]}{self.tag}", z3.BitVecSort(6),
                                     z3.BitVecSort(32)))
            for c in sorted(self.inv, key=_conj_key):
                if c[0] == "eq" and c[2][0] == "lane" and c[2][1] == u:
                    arr = z3.Store(arr, z3.BitVecVal(c[2][2], 6), self.oloc(c[1]))
                    self.used.add(c)
            t = z3.Select(arr, _lane())
        if t is None:
            t = self._fresh("c", u)
        self.c_cache[u] = t
        return t

    def cloc(self, loc):
        if loc[0] == "r":
            return self.cand(loc[1])
        if loc[0] == "lane":
            return _sub_lane(self.cand(loc[1]), loc[2])
        return _load4(self.c_scratch, loc[1])

    def constraints(self, all_lanes: bool = False) -> list:
        """The invariant's conjuncts not built into the initial terms, over the generic
        lane (weaker than for all 64 lanes: sound), or with ``all_lanes`` instantiated for
        each of the 64 lanes (``lane := i``; lane masks and cross-lane reads see every
        lane, not only the generic one; heavier for the solver)."""
        gen = self._generic_constraints()
        if not all_lanes:
            return gen
        return [f if not _mentions_lane(f) else
                z3.And([z3.substitute(f, (_lane(), z3.BitVecVal(i, 6))) for i in range(64)])
                for f in gen]

    def _generic_constraints(self) -> list:
        out = []
        for c in sorted(self.inv, key=_conj_key):
            if c in self.used or c[0] == "scr":
                continue
            if c[0] == "const":
                t = self.oloc(c[2]) if c[1] == "o" else self.cloc(c[2])
                out.append(t == z3.BitVecVal(c[3], t.size()))
            elif c[0] == "eq":
                a, b = self.oloc(c[1]), self.cloc(c[2])
                if not a.eq(b):
                    out.append(a == b)
            elif c[0] == "meq":
                if ("eq", c[1], c[2]) in self.inv:
                    continue
                a, b = self.oloc(c[1]), self.cloc(c[2])
                if a.eq(b):
                    continue
                out.append(z3.Implies(self._act(), a == b))
        return out


def _mentions_lane(f) -> bool:
    seen, stack = set(), [f]
    while stack:
        t = stack.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_const(t) and str(t) == "lane":
            return True
        if z3.is_app(t):
            stack.extend(t.children())
    return False


def _conj_key(c):
    """Deterministic order: ``eq`` before ``meq``, identity first within each (preferred
    as definitions)."""
    return (c[0] != "eq", c[1] != c[2] if len(c) == 3 else True, repr(c))


class _State:
    """One program's symbolic state during a block (wraps the backend's SymState with
    the entry state as the source of initial values)."""

    def __init__(self, entry: _Entry, side: str, backend):
        from ..semantics import z3backend as zb

        factory = entry.orig if side == "o" else entry.cand
        self.entry = entry

        class S(zb.SymState):
            def get(self, u):
                t = self.regs.get(u)
                if t is None:
                    t = factory(u)
                    self.regs[u] = t
                    self.initial[u] = t
                return t
        self.st = S(backend)
        self.st.mem = {"global": entry.mem_global, "lds": entry.mem_lds,
                       "scratch": entry.o_scratch if side == "o" else entry.c_scratch}
        self.segments: list[list] = [[]]   # global/LDS writes between barriers
        self.masks: dict = {}   # (lo id, hi id) of a VALU-written lane mask -> its generic bit
        self._gb: dict = {}     # term id -> (the 64-bit term, its generic lane bit)

    def note_masks(self):
        """Record the lane masks the backend built in the last step (its ``lmview``)."""
        for lo, hi, bit in self.st.lmview.values():
            self.masks[(lo.get_id(), hi.get_id())] = (lo, hi, bit)

    def lane_bit(self, t64):
        """Bool: bit ``lane`` (the generic lane) of the 64-bit mask term ``t64``.

        The backend builds a VALU lane mask as the concatenation of its 64 lane instances
        (bit ``i`` is the generic lane's bit with ``lane := i``), so the generic lane's own
        bit of it is that generic bit; bitwise SALU operations (and, or, xor, not) and
        64-bit splits/joins are followed through.  Anything else: the plain bit extraction.
        Equal to ``Extract(lane, t64)`` by construction, and far smaller for the solver."""
        k = t64.get_id()
        hit = self._gb.get(k)
        if hit is not None and hit[0].eq(t64):   # the term is kept, so its id is not reused
            return hit[1]
        r = None
        if z3.is_app_of(t64, z3.Z3_OP_CONCAT) and t64.num_args() == 2:
            hi, lo = t64.arg(0), t64.arg(1)
            m = self.masks.get((lo.get_id(), hi.get_id()))
            if m is not None and m[0].eq(lo) and m[1].eq(hi):
                r = m[2]
            elif (z3.is_app_of(hi, z3.Z3_OP_EXTRACT) and z3.is_app_of(lo, z3.Z3_OP_EXTRACT)
                  and hi.params() == [63, 32] and lo.params() == [31, 0]
                  and hi.arg(0).eq(lo.arg(0)) and hi.arg(0).size() == 64):
                r = self.lane_bit(hi.arg(0))
        elif t64.size() == 64 and z3.is_app(t64):
            kind = t64.decl().kind()
            if kind in (z3.Z3_OP_BAND, z3.Z3_OP_BOR, z3.Z3_OP_BXOR):
                bits = [self.lane_bit(a) for a in t64.children()]
                if kind == z3.Z3_OP_BAND:
                    r = z3.And(*bits)
                elif kind == z3.Z3_OP_BOR:
                    r = z3.Or(*bits)
                else:
                    r = bits[0]
                    for b in bits[1:]:
                        r = z3.Xor(r, b)
            elif kind == z3.Z3_OP_BNOT:
                r = z3.Not(self.lane_bit(t64.arg(0)))
        if r is None:
            r = z3.Extract(0, 0, z3.LShR(t64, z3.ZeroExt(58, _lane()))) == 1
        self._gb[k] = (t64, r)
        return r

    def loc(self, loc):
        st = self.st
        if loc[0] == "r":
            return st.get(loc[1])
        if loc[0] == "lane":
            return _sub_lane(st.get(loc[1]), loc[2])
        return _load4(st.mem["scratch"], loc[1])

    def active(self):
        """Bool: the EXEC bit of the generic lane now (:meth:`lane_bit`)."""
        return self.lane_bit(z3.Concat(self.st.get(("exec_hi",)), self.st.get(("exec_lo",))))


def _run(insts: list[Instruction], state: _State, barrier_tag: str) -> None:
    """Run ``insts`` (a block body without its terminator).

    Raises:
        _GiveUp: an instruction without z3 semantics (or one the backend would mis-model).
    """
    from ..semantics import z3backend as zb
    from ..semantics.registry import Unsupported, lookup
    st = state.st
    nb = 0
    for inst in insts:
        spec = lookup(inst.opcode)
        if spec is None:
            raise _GiveUp("unsupported", f"'{inst.text()}': no semantics for {inst.opcode}")
        if spec.kind == "barrier":
            nb += 1
            st.mem["global"] = state.entry._var(z3.Array(f"m!global{barrier_tag}.{nb}",
                                                         z3.BitVecSort(64), z3.BitVecSort(8)))
            st.mem["lds"] = state.entry._var(z3.Array(f"m!lds{barrier_tag}.{nb}",
                                                      z3.BitVecSort(32), z3.BitVecSort(8)))
            state.segments.append([])
            continue
        if spec.kind in ("branch", "endpgm"):
            raise _GiveUp("unsupported", f"'{inst.text()}': control flow inside a block")
        if spec.kind == "smem" and (spec.extra.get("store") or spec.extra.get("atomic")):
            raise _GiveUp("unsupported", f"'{inst.text()}': scalar stores and atomics are not "
                          "modelled symbolically")
        n = len(st.writes)
        try:
            zb.step(st, inst)
        except Unsupported as e:
            raise _GiveUp("unsupported", str(getattr(e, "message", e))) from None
        except (KeyError, IndexError, TypeError, ValueError, AttributeError, z3.Z3Exception) as e:
            raise _GiveUp("unsupported", f"'{inst.text()}': the z3 backend cannot model it: "
                          f"{type(e).__name__}: {e}") from None
        if getattr(st, "lane_blind", None):
            # a shared-memory load after a store: the generic-lane model misses other
            # lanes' stores (asmevo.semantics.z3backend._shared_load)
            raise _GiveUp("unsupported", st.lane_blind[0])
        state.note_masks()
        for w in st.writes[n:]:
            if w.space != "scratch":
                state.segments[-1].append(w)


#: Instructions without a value effect whose addition, removal or change is harmless.
_HARMLESS_NOPS = ("s_nop", "s_waitcnt", "s_waitcnt_vmcnt", "s_waitcnt_lgkmcnt",
                  "s_waitcnt_expcnt", "s_setprio", "s_sleep")


def _no_effect_difference(a: list, b: list) -> str | None:
    """Why the blocks' other no-value-effect instructions (``s_sethalt``, ``s_ttracedata``,
    ``s_atc_probe``...: the z3 backend runs them as no-ops) differ, or None."""
    from ..semantics.registry import lookup

    def other(insts):
        out = []
        for i in insts:
            spec = lookup(i.opcode)
            if spec is not None and spec.kind == "nop" and i.opcode not in _HARMLESS_NOPS:
                out.append(i.key())
        return out
    if other(a) != other(b):
        return "instructions the z3 terms treat as no-ops (s_sethalt, s_ttracedata...) differ"
    return None


def _branch_taken(term: Instruction | None, state: _State):
    """Bool: the block's conditional branch is taken (None: no condition)."""
    if term is None or term.opcode not in _COND:
        return None
    what, zero = _COND[term.opcode]
    st = state.st
    if what == "scc":
        v = st.get(("scc",))
    elif what == "vcc":
        v = z3.Concat(st.get(("vcc_hi",)), st.get(("vcc_lo",)))
    else:
        v = z3.Concat(st.get(("exec_hi",)), st.get(("exec_lo",)))
    is_zero = v == z3.BitVecVal(0, v.size())
    return is_zero if zero else z3.Not(is_zero)


# --------------------------------------------------------------------------------------------


@dataclass
class _Block:
    index: int
    name: str
    body_o: list
    body_c: list
    term_o: Instruction | None
    term_c: Instruction | None
    succ: dict          # successor (block index or "exit") -> edge kind ("taken"/"fallthrough"/"exit")


def _structure(orig: Kernel, cand: Kernel) -> list[_Block]:
    """Corresponding blocks of the two kernels.

    Raises:
        _GiveUp: the CFGs do not correspond, or a block has a branch that is not its
            last instruction, or an indirect branch.
    """
    from ..analysis.cfg import CFG, EXIT, is_branch
    from .equiv import label_map, rename_labels
    if len(orig.blocks) != len(cand.blocks):
        raise _GiveUp("unsupported", f"block count differs ({len(orig.blocks)} vs {len(cand.blocks)})")
    lm = label_map(orig, cand)
    if lm is None:
        if [b.label for b in orig.blocks] != [b.label for b in cand.blocks]:
            raise _GiveUp("unsupported", "block labels do not correspond")
        lm = {}
    cfg_o, cfg_c = CFG(orig), CFG(cand)
    if cfg_o.indirect_sources or cfg_c.indirect_sources:
        raise _GiveUp("unsupported", "indirect branch or call (s_setpc/s_swappc)")
    out = []
    for bi, (bo, bc) in enumerate(zip(orig.blocks, cand.blocks)):
        name = bo.label or f"#{bi}"
        sides = []
        for blk, ren in ((bo, {}), (bc, lm)):
            insts = [rename_labels(i, ren) for i in blk.instructions]
            term = None
            if insts and is_branch(insts[-1].opcode):
                term = insts[-1]
                insts = insts[:-1]
            for i in insts:
                if is_branch(i.opcode):
                    raise _GiveUp("unsupported", f"block {name}: '{i.text()}' is not the last "
                                  "instruction of its block", name)
            if term is not None and not (term.opcode in _COND or term.opcode == "s_branch"
                                         or term.opcode == "s_endpgm"):
                raise _GiveUp("unsupported", f"block {name}: '{term.text()}' is not modelled", name)
            sides.append((insts, term))
        so = {s: cfg_o.graph.edges[bi, s]["kind"] for s in cfg_o.successors(bi)}
        sc = {s: cfg_c.graph.edges[bi, s]["kind"] for s in cfg_c.successors(bi)}
        if so != sc:
            raise _GiveUp("unsupported", f"block {name}: successors differ "
                          f"({sorted(map(str, so))} vs {sorted(map(str, sc))})", name)
        succ = {("exit" if s == EXIT else s): k for s, k in so.items()}
        out.append(_Block(bi, name, sides[0][0], sides[1][0], sides[0][1], sides[1][1], succ))
    return out


def _reachable(blocks: list[_Block]) -> list[int]:
    """Reachable blocks in reverse post-order from block 0."""
    seen, order = set(), []

    def dfs(b):
        stack = [(b, iter(sorted(k for k in blocks[b].succ if k != "exit")))]
        seen.add(b)
        while stack:
            n, it = stack[-1]
            nxt = next((s for s in it if s not in seen), None)
            if nxt is None:
                order.append(n)
                stack.pop()
            else:
                seen.add(nxt)
                stack.append((nxt, iter(sorted(k for k in blocks[nxt].succ if k != "exit"))))
    if blocks:
        dfs(0)
    return list(reversed(order))


def _TACTIC():
    """Contextual simplification before the SMT core: the lane-instance terms of lane masks
    repeat ``If(exec bit, ...)`` under the same condition, which ctx-simplify removes (the
    default solver needs about a minute for vadd_f32_O0's entry-block branch, this 0.3 s)."""
    return z3.Then(z3.With("simplify", expand_select_ite=True, blast_select_store=True),
                   "propagate-values", "ctx-simplify", "simplify", "smt")


class _Prover:
    def __init__(self, orig: Kernel, cand: Kernel, timeout_ms: int, budget_s: float,
                 float_mode: str):
        self.blocks = _structure(orig, cand)
        self.order = _reachable(self.blocks)
        from .equiv import RLIMIT_PER_MS, SAFETY_MIN_MS
        self.timeout_ms = timeout_ms
        #: deterministic budget: z3 resource units for the whole proof (issue 14)
        self.resources_left = int(budget_s * 1000) * RLIMIT_PER_MS
        #: wall-clock safety net only (20x the nominal budget, at least SAFETY_MIN_MS): it
        #: can only make the proof give up (unknown)
        self.deadline = time.monotonic() + max(20 * budget_s, SAFETY_MIN_MS / 1000)
        self.float_mode = float_mode
        self.queries = 0
        bodies_o = [self.blocks[b].body_o for b in self.order]
        bodies_c = [self.blocks[b].body_c for b in self.order]
        self.units_o = _kernel_units(bodies_o)
        self.units_c = _kernel_units(bodies_c)
        vo, lo = _lane_spills(bodies_o)
        vc, lc = _lane_spills(bodies_c)
        self.lane_vgprs_o, self.lane_vgprs_c = vo, vc
        self.lanes = sorted(lo | lc)
        self.slots: set = set()
        self.preds: dict = {b: [] for b in self.order}
        for b in self.order:
            for s in self.blocks[b].succ:
                if s != "exit" and s in self.preds:
                    self.preds[s].append(b)
        self._tag = 0
        self.collect_slots = True
        self.rounds = 2     # fixpoint runs, each after new guesses

    # -- helpers ---------------------------------------------------------------------------
    def _check_time(self, where: str):
        if self.resources_left <= 0:
            raise _GiveUp("timeout", "the relational proof ran out of its solver resource "
                          "budget", where)
        if time.monotonic() > self.deadline:
            raise _GiveUp("timeout", "the relational proof hit its wall-clock safety net "
                          "(machine load; the resource budget was not used up)", where)

    def _execute(self, b: int, inv: frozenset, guessing: bool = False):
        """Run block ``b`` of both programs from ``inv``: (entry, state_o, state_c)."""
        from ..semantics.z3backend import Z3Backend
        from .equiv import _policy_difference
        blk = self.blocks[b]
        self._check_time(blk.name)
        why = _policy_difference(blk.body_o, blk.body_c) or _no_effect_difference(blk.body_o,
                                                                                 blk.body_c)
        if why:
            raise _GiveUp("unsupported", f"block {blk.name}: {why}", blk.name)
        self._tag += 1
        tag = f"@{self._tag}"
        entry = _Entry(inv, tag, prefer_cross=guessing)
        B = Z3Backend(self.float_mode)
        so, sc = _State(entry, "o", B), _State(entry, "c", B)
        try:
            _run(blk.body_o, so, tag)
            _run(blk.body_c, sc, tag)
        except _GiveUp as e:
            raise _GiveUp(e.kind, f"block {blk.name}: {e.reason}", blk.name) from None
        for st in (so, sc) if self.collect_slots else ():
            for w in st.st.writes:
                if w.space == "scratch":
                    self._note_slots(w)
        return entry, so, sc

    def _note_slots(self, w):
        lo = z3.simplify(z3.Extract(31, 0, w.address))
        if z3.is_bv_value(lo):
            x = lo.as_long()
            for k in range(x & ~3, x + w.size, 4):
                self.slots.add(k & 0xFFFFFFFF)

    # -- candidate invariants ----------------------------------------------------------------
    def _identity(self) -> set:
        inv = {("scr",)}
        for u in self.units_o | self.units_c:
            inv.add(("eq", ("r", u), ("r", u)))
            if _is_vec_unit(u):
                inv.add(("meq", ("r", u), ("r", u)))
        for x in self.slots:
            inv.add(("eq", ("slot", x), ("slot", x)))
            inv.add(("meq", ("slot", x), ("slot", x)))
        for v in self.lane_vgprs_o & self.lane_vgprs_c:
            for L in self.lanes:
                inv.add(("eq", ("lane", v, L), ("lane", v, L)))
        return inv

    def _locs(self, side: str):
        units = self.units_o if side == "o" else self.units_c
        lv = self.lane_vgprs_o if side == "o" else self.lane_vgprs_c
        out = [("r", u) for u in units]
        out += [("slot", x) for x in sorted(self.slots)]
        out += [("lane", v, L) for v in sorted(lv) for L in self.lanes]
        return out

    def _guesses(self, so: _State, sc: _State) -> set:
        """Conjuncts suggested by one predecessor's exit state (guesses: the fixpoint keeps
        only what it proves).  Every location's exit term is evaluated on a few concrete
        inputs (:func:`_fingerprints`): equal fingerprints on random inputs suggest ``eq``,
        equal fingerprints on inputs with every EXEC bit set suggest ``meq``, one constant
        everywhere suggests ``const``."""
        locs = [("o", loc) for loc in self._locs("o")] + [("c", loc) for loc in self._locs("c")]
        terms = [(so if side == "o" else sc).loc(loc) for side, loc in locs]
        fv = so.entry.vars + [_lane()]
        full, act = _fingerprints(terms, fv, 3, False), _fingerprints(terms, fv, 3, True)
        out = set()
        keys: dict = {}
        mkeys: dict = {}
        for (side, loc), f, m in zip(locs, full, act):
            vals = set(f) | set(m)
            if len(vals) == 1 and isinstance(next(iter(vals)), int):
                out.add(("const", side, loc, next(iter(vals))))
                continue
            cls = _loc_class(loc)
            keys.setdefault((cls, f, m), {"o": [], "c": []})[side].append(loc)
            if cls == "vec":
                mkeys.setdefault(m, {"o": [], "c": []})[side].append(loc)
        for kind, table in (("eq", keys), ("meq", mkeys)):
            for grp in table.values():
                if len(grp["o"]) * len(grp["c"]) > 64:
                    continue  # a value held in very many places: not worth the pairs
                for lo in grp["o"]:
                    for lc in grp["c"]:
                        out.add((kind, lo, lc))
        return out

    # -- checks ------------------------------------------------------------------------------
    def _formula(self, c, so: _State, sc: _State):
        if c[0] == "scr":
            return so.st.mem["scratch"] == sc.st.mem["scratch"]
        if c[0] == "const":
            t = so.loc(c[2]) if c[1] == "o" else sc.loc(c[2])
            return t == z3.BitVecVal(c[3], t.size())
        a, b = so.loc(c[1]), sc.loc(c[2])
        if a.size() != b.size():
            return z3.BoolVal(False)
        if c[0] == "eq":
            return a == b if not a.eq(b) else z3.BoolVal(True)
        return z3.Implies(so.active(), a == b) if not a.eq(b) else z3.BoolVal(True)

    def _obligations(self, b: int, entry: _Entry, so: _State, sc: _State) -> list:
        blk = self.blocks[b]
        if len(so.segments) != len(sc.segments):
            raise _GiveUp("unsupported", f"block {blk.name}: s_barrier count differs "
                          f"({len(so.segments) - 1} vs {len(sc.segments) - 1})", blk.name)
        obl = []
        for k, (wo, wc) in enumerate(zip(so.segments, sc.segments)):
            if len(wo) != len(wc):
                raise _Refuted(f"block {blk.name}: {len(wo)} vs {len(wc)} global/LDS writes"
                               + (f" after barrier {k}" if k else ""))
            for i, (a, c) in enumerate(zip(wo, wc)):
                if a.space != c.space or a.size != c.size:
                    raise _Refuted(f"block {blk.name}: write #{i} differs in space or size")
                ma = a.active if not isinstance(a.active, bool) else z3.BoolVal(a.active)
                mc = c.active if not isinstance(c.active, bool) else z3.BoolVal(c.active)
                obl.append((f"write#{i}.mask", ma == mc))
                obl.append((f"write#{i}.address", z3.Implies(ma, a.address == c.address)))
                obl.append((f"write#{i}.value", z3.Implies(ma, a.value == c.value)))
        # the candidate loads no global memory the original does not load in this block
        # (an extra load may fault where the original does not; equiv.read_coverage)
        from .equiv import read_coverage
        obl += read_coverage(so.st.reads, sc.st.reads)
        if len([s for s in blk.succ]) > 1:
            to, tc = _branch_taken(blk.term_o, so), _branch_taken(blk.term_c, sc)
            if to is None or tc is None:
                raise _GiveUp("unsupported", f"block {blk.name}: branch condition not modelled",
                              blk.name)
            obl.append(("branch", to == tc))
        return [(n, f) for n, f in obl if not z3.is_true(z3.simplify(f))]

    def _prove_all(self, assumptions, named, quick: bool = False) -> tuple:
        """Prove every named formula under ``assumptions``: ``("ok",)`` | ``("sat", [names
        false in the model], model)`` | ``("unknown", reason)``.  Two solvers in turn: the
        contextual-simplification tactic (:func:`_TACTIC`) for a short budget, then z3's
        default solver for the rest of the per-query budget (each is much faster than the
        other on some of these formulas).  ``quick``: the first solver only (a batch that
        is then undecided is split by the caller)."""
        if not named:
            return ("ok",)
        goal = z3.Or([z3.Not(f) for _, f in named])
        why = ""
        first = max(200, min(1000, self.timeout_ms // 3))
        tries = [(lambda: _TACTIC().solver(), first),
                 (z3.Solver, max(200, self.timeout_ms - first))]
        from .equiv import resources_used, set_solver_limits, solver_check, unknown_reason
        for make, ms in tries[:1] if quick else tries:
            self._check_time("")
            s = make()
            rl, c0 = set_solver_limits(s, ms)  # deterministic: a resource limit, not a time
            s.add(*assumptions)
            s.add(goal)
            self.queries += 1
            t0 = time.monotonic()
            r = solver_check(s)
            self.resources_left -= resources_used(s, c0)
            if _TRACE:
                print(f"relational: query {self.queries}: {len(named)} formula(s) -> {r} "
                      f"in {time.monotonic() - t0:.2f} s")
            if r == z3.unsat:
                return ("ok",)
            if r == z3.sat:
                m = s.model()
                bad = [n for n, f in named if z3.is_false(m.eval(f, model_completion=True))]
                return ("sat", bad, m)
            why = unknown_reason(s, rl, c0)
            if why == "wall-clock safety net":
                # load-dependent: never let it decide which conjuncts are dropped
                raise _GiveUp("timeout", "a solver query hit its wall-clock safety net "
                              "(machine load)", "")
        return ("unknown", why)

    # -- the fixpoint ------------------------------------------------------------------------
    def run(self) -> RelationalResult:
        t0 = time.monotonic()
        order = self.order
        # Candidate generation: two rounds over the blocks in reverse post-order, each block
        # run under the guesses gathered so far from its predecessors (guesses need not
        # hold: the fixpoint below keeps only what it proves).
        guesses: dict = {b: set() for b in order}
        for _round in range(2):
            for b in order:
                inv = self._initial_inv(b, guesses, frozenset(self._identity()))
                entry, so, sc = self._execute(b, inv, guessing=True)
                for s in self.blocks[b].succ:
                    if s != "exit":
                        guesses[s] |= self._guesses(so, sc)
        self.collect_slots = False
        ident = frozenset(self._identity())   # the scratch slots are known now
        inv = {b: self._initial_inv(b, guesses, ident) for b in order}
        tried = {b: set(inv[b]) for b in order}
        for outer in range(self.rounds):
            failure = self._fixpoint(inv)
            if failure is None:
                break
            # An obligation failed: perhaps a fact the guesses missed (a guess made under
            # a wrong earlier guess).  Guess again from the current invariants, add only
            # conjuncts never tried, and run the whole fixpoint again (every block is
            # re-checked, so the final answer rests on the final invariants only).
            new = False
            for b in order:
                entry, so, sc = self._execute(b, inv[b], guessing=True)
                for s in self.blocks[b].succ:
                    if s == "exit" or s == order[0]:
                        continue
                    g = self._guesses(so, sc) - tried[s]
                    if g:
                        tried[s] |= g
                        inv[s] = inv[s] | g
                        new = True
            if not new or outer == self.rounds - 1:
                b, reason, model_info = failure
                return self._fail(b, inv, reason, model_info, t0)
        out = {}
        for b in order:
            extra = sorted(conjunct_text(c) for c in inv[b] - ident)
            dropped = sorted(conjunct_text(c) for c in ident - inv[b])
            out[self.blocks[b].name] = {"conjuncts": extra, "dropped_identity": dropped}
        return RelationalResult(EQUIVALENT, f"relational invariants inductive on {len(order)} "
                                f"block(s); every block's writes and branches proved equal",
                                invariants=out, queries=self.queries,
                                seconds=time.monotonic() - t0)

    def _fixpoint(self, inv: dict):
        """Houdini iteration over every reachable block (``inv`` is weakened in place).
        Returns None when every block's obligations hold under its final invariant, or
        ``(block, reason, model info or None)`` for the first obligation refuted."""
        order = self.order
        work = list(order)
        pos = {b: k for k, b in enumerate(order)}
        while work:
            work.sort(key=lambda x: pos[x])
            b = work.pop(0)
            blk = self.blocks[b]
            entry, so, sc = self._execute(b, inv[b])
            assume = entry.constraints()
            full: list = []
            try:
                obl = self._obligations(b, entry, so, sc)
            except _Refuted as e:
                return (b, e.reason, None)
            res = self._prove_all(assume, obl)
            if res[0] != "ok":
                full = entry.constraints(all_lanes=True)
                if len(full) != len(assume) or any(not a.eq(f) for a, f in zip(assume, full)):
                    res = self._prove_all(full, obl)
            if res[0] == "sat":
                if _TRACE:
                    ident = frozenset(self._identity())
                    print(f"relational: block {blk.name} fails; invariant:",
                          sorted(conjunct_text(c) for c in inv[b] - ident),
                          "dropped:", sorted(conjunct_text(c) for c in ident - inv[b]))
                return (b, f"block {blk.name}: {', '.join(res[1])} may differ",
                        (res[2], entry, res[1]))
            if res[0] == "unknown":
                raise _GiveUp("timeout" if "timeout" in res[1] or "limit" in res[1]
                              else "unsupported", f"block {blk.name}: solver: {res[1]}", blk.name)
            to = _branch_taken(blk.term_o, so)
            for s, kind in blk.succ.items():
                if s == "exit":
                    continue
                edge = []
                if to is not None and len(blk.succ) > 1:
                    edge = [to] if kind == "taken" else [z3.Not(to)]
                kept = self._weaken(inv[s], assume + edge, so, sc)
                if kept != inv[s]:
                    # what the generic-lane assumptions could not keep: once more with the
                    # invariant instantiated for all 64 lanes
                    if not full:
                        full = entry.constraints(all_lanes=True)
                    if any(_mentions_lane(a) for a in assume):
                        again = self._weaken(inv[s] - kept, full + edge, so, sc, solver_only=True)
                        kept = kept | again
                if kept != inv[s]:
                    inv[s] = kept
                    if s not in work:
                        work.append(s)
        return None

    def _initial_inv(self, b: int, guesses: dict, ident: frozenset) -> frozenset:
        if b == self.order[0]:
            return ident  # the launch state: the identity only
        return frozenset(ident | guesses.get(b, set()))

    def _weaken(self, conj: frozenset, assume: list, so: _State, sc: _State,
                solver_only: bool = False) -> frozenset:
        """The conjuncts of ``conj`` proved at this edge (Houdini step)."""
        named = []
        for c in conj:
            f = self._formula(c, so, sc)
            if z3.is_true(f):
                continue
            f2 = z3.simplify(f)
            if z3.is_true(f2):
                continue
            named.append((c, f2))
        kept = set(conj)
        if named and not solver_only:
            bad = _refute_concretely(assume, named, so.entry.vars + [_lane()])
            if _TRACE and bad:
                print(f"relational: {len(bad)} of {len(named)} conjunct(s) refuted concretely")
            kept -= bad
            named = [(c, f) for c, f in named if c not in bad]
        while named:
            res = self._prove_all(assume, named, quick=len(named) > 1)
            if res[0] == "ok":
                break
            if res[0] == "sat":
                bad = set(res[1])
                if not bad:   # the model satisfies every formula: cannot happen; be safe
                    bad = {named[0][0]}
                kept -= bad
                named = [(c, f) for c, f in named if c not in bad]
                continue
            # undecided as a whole: halves, down to single formulas; what is not proved
            # in time is dropped (a weaker invariant is still sound)
            kept -= self._bisect(assume, named)
            break
        return frozenset(kept)

    def _bisect(self, assume: list, named: list) -> set:
        """Conjuncts of ``named`` not proved (refuted or undecided), splitting undecided
        batches in halves."""
        if len(named) == 1:
            r = self._prove_all(assume, named)
            if r[0] != "ok" and _TRACE:
                print(f"relational: drop {conjunct_text(named[0][0])}: {r[0]}")
            return set() if r[0] == "ok" else {named[0][0]}
        bad: set = set()
        half = len(named) // 2
        for part in (named[:half], named[half:]):
            while part:
                r = self._prove_all(assume, part, quick=len(part) > 1)
                if r[0] == "ok":
                    break
                if r[0] == "sat" and r[1]:
                    bad |= set(r[1])
                    part = [(c, f) for c, f in part if c not in bad]
                    continue
                bad |= self._bisect(assume, part)
                break
        return bad

    def _fail(self, b: int, inv: dict, reason: str, model_info, t0) -> RelationalResult:
        blk = self.blocks[b]
        entry_exact = (b == self.order[0] and not self.preds.get(b))
        if entry_exact and model_info is not None:
            m, entry, differs = model_info
            inputs = {}
            for u, t in sorted(entry.o_cache.items(), key=repr)[:40]:
                v = m.eval(t, model_completion=True)
                if z3.is_bv_value(v):
                    inputs[_loc_text(("r", u))] = v.as_long()
            lv = m.eval(_lane(), model_completion=True)
            if z3.is_bv_value(lv):
                inputs["lane"] = lv.as_long()
            return RelationalResult(NOT_EQUIVALENT, reason + " (from the same launch state)",
                                    block=blk.name,
                                    counterexample={"inputs": inputs, "differs": list(differs)},
                                    queries=self.queries, seconds=time.monotonic() - t0)
        return RelationalResult(UNKNOWN, reason + ("" if entry_exact else
                                                   " under the inferred block-entry invariant"),
                                "unsupported", block=blk.name, queries=self.queries,
                                seconds=time.monotonic() - t0)


class _Refuted(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def prove_relational(orig: Kernel, cand: Kernel, *, timeout_ms: int = 3000,
                     budget_s: float = 40.0, max_instructions: int = 3000,
                     float_mode: str = "uf") -> RelationalResult:
    """Prove two kernels with corresponding CFGs equivalent across blocks (module docstring).

    Args:
        orig, cand: the kernels (their blocks are matched by index).
        timeout_ms: z3 budget per query, in nominal milliseconds (a deterministic z3
            resource limit, :func:`asmevo.verify.equiv.set_solver_limits`).
        budget_s: budget of the whole proof, in nominal seconds: a deterministic total of
            z3 resource units (``budget_s * 1000 * RLIMIT_PER_MS``); then ``unknown``.  A
            wall-clock safety net of 20x ``budget_s`` (at least 60 s) can only make the
            answer ``unknown``.
        max_instructions: larger kernels (either side) are ``unknown`` without trying.
        float_mode: ``"uf"`` (float operations as uninterpreted functions of the bit
            patterns: exact for NaN payloads) or ``"fp"`` (only for experiments: its
            proofs ignore NaN payloads, so the verifier never uses it).

    Returns:
        :class:`RelationalResult`; ``equivalent`` only when the fixpoint was reached with
        every block's obligations proved.
    """
    t0 = time.monotonic()
    n = max(sum(len(b.instructions) for b in orig.blocks),
            sum(len(b.instructions) for b in cand.blocks))
    if n > max_instructions:
        return RelationalResult(UNKNOWN, f"kernel too large for the relational proof ({n} "
                                f"instructions > {max_instructions})", "unsupported")
    try:
        p = _Prover(orig, cand, timeout_ms, budget_s, float_mode)
        r = p.run()
    except _GiveUp as e:
        r = RelationalResult(UNKNOWN, e.reason, e.kind, block=e.block,
                             queries=locals().get("p").queries if "p" in locals() else 0)
    except (z3.Z3Exception, RecursionError, ValueError, TypeError, KeyError, IndexError,
            AttributeError) as e:
        # whatever went wrong, the answer is never "equivalent"
        r = RelationalResult(UNKNOWN, f"the relational proof failed: {type(e).__name__}: {e}",
                             "unsupported")
    r.seconds = time.monotonic() - t0
    return r

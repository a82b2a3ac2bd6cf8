"""z3 equivalence of straight-line instruction windows (``asmevo equiv``).

Two windows A and B are *equivalent* when, for every initial value of the
registers they read (EXEC included, symbolic), they leave the same value in
every live-out register unit and perform the same sequence of memory writes
(address, bytes, value, lane mask).

Terms come only from the shared semantics: :mod:`asmevo.semantics.z3backend`
symbolically executes each window (the one definition per instruction in
:mod:`asmevo.semantics.registry`); this module only builds the query
``exists inputs: A(inputs) != B(inputs)`` and reads the answer:

* ``unsat`` -> ``equivalent`` (a proof for all inputs);
* ``sat`` -> ``not equivalent`` with a counterexample (inputs, both results),
  unless the differing terms involve an abstraction the backend made
  (uninterpreted float functions in ``--float uf`` mode), in which case the
  model may be unrealisable and the answer is ``unknown``;
* solver ``unknown``/timeout, an instruction without z3 semantics, a branch ->
  ``unknown`` with the reason.  Never ``equivalent`` on any of these.

Instructions whose registry kind is ``nop`` (``s_nop``, ``s_waitcnt``...) have
no value effect and are dropped from windows; their timing role is the static
layer's business (:mod:`asmevo.verify.static`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

import z3

from ..interrupt import raise_interrupt, z3_query
from ..ir.instruction import Instruction
from ..ir.module import Kernel, Module
from ..ir.operands import reg_units
from ..analysis.observable import ALL, meet_lanes, observable_liveness
from .verdict import Evidence, Status, Verdict

EQUIVALENT, NOT_EQUIVALENT, UNKNOWN = "equivalent", "not equivalent", "unknown"


@dataclass
class EquivResult:
    """The answer of :func:`check_windows`.

    Attributes:
        status: ``"equivalent"``, ``"not equivalent"`` or ``"unknown"``.
        reason: why (unknown: ``"timeout"``, ``"unsupported: ..."``; not
            equivalent: which unit or write differs).
        unknown_kind: ``"timeout"`` or ``"unsupported"`` when status is unknown.
        counterexample: for ``not equivalent``: ``{"inputs": {unit: int},
            "a": {unit: int}, "b": {unit: int}, "differs": [unit...]}`` (units as
            strings such as ``"v1"``, ``"vcc_lo"``; values are the backend's
            bit-vector values as unsigned ints).
        live_out: the units compared (strings).
        differing: units (or ``"write#i..."``, ``"memory-writes"``) that can differ.
        write_spaces: memory spaces (``"global"``, ``"lds"``, ``"scratch"``) of the
            writes that differ (every write of both windows when their number differs).
    """

    status: str
    reason: str = ""
    unknown_kind: str | None = None
    counterexample: dict | None = None
    live_out: list = field(default_factory=list)
    differing: list = field(default_factory=list)
    write_spaces: list = field(default_factory=list)

    @property
    def equivalent(self) -> bool:
        """True only when proved equivalent."""
        return self.status == EQUIVALENT

    def to_json(self) -> dict:
        """JSON-ready record."""
        return {"status": self.status, "reason": self.reason, "unknown_kind": self.unknown_kind,
                "counterexample": self.counterexample, "live_out": self.live_out,
                "differing": self.differing, "write_spaces": self.write_spaces}

    def text(self) -> str:
        """Human-readable answer (first line is the status)."""
        lines = [self.status + (f": {self.reason}" if self.reason else "")]
        ce = self.counterexample
        if ce:
            lines.append("  inputs: " + ", ".join(f"{k}={_hex(v)}" for k, v in ce["inputs"].items()))
            for u in ce["differs"]:
                lines.append(f"  {u}: A={_hex(ce['a'].get(u))}  B={_hex(ce['b'].get(u))}")
        return "\n".join(lines)


def _hex(v) -> str:
    if isinstance(v, int):
        return hex(v)
    return str(v)


def unit_name(u: tuple) -> str:
    """``("v", 5)`` -> ``"v5"``; ``("vcc_lo",)`` -> ``"vcc_lo"``."""
    return f"{u[0]}{u[1]}" if len(u) == 2 else u[0]


def parse_units(text: str) -> list[tuple]:
    """Parse a live-out list: ``"v0,v[2:3],s4,vcc,exec_lo,scc"`` -> register units.

    Raises:
        AsmevoError: an item that is not a register.
    """
    from ..errors import AsmevoError
    units: list[tuple] = []
    for item in _split_top(text):
        item = item.strip()
        if not item:
            continue
        op = _parse_reg(item)
        if op is None:
            raise AsmevoError(f"--live-out: {item!r} is not a register (e.g. v0, v[2:3], s4, vcc, scc)")
        units.extend(reg_units(op))
    return units


def _split_top(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return out


def _parse_reg(item: str):
    import re
    from ..ir.operands import SPECIAL_NAMES, Reg, Special
    m = re.fullmatch(r"(v|s|a|ttmp)(\d+)", item)
    if m:
        return Reg(m.group(1), int(m.group(2)))
    m = re.fullmatch(r"(v|s|a|ttmp)\[(\d+):(\d+)\]", item)
    if m and int(m.group(3)) >= int(m.group(2)):
        return Reg(m.group(1), int(m.group(2)), int(m.group(3)) - int(m.group(2)) + 1)
    if item in SPECIAL_NAMES:
        return Special(item)
    return None


# --------------------------------------------------------------------------------------------
# The one place that talks to the z3 backend.


class _Unsupported(Exception):
    pass


@dataclass
class SymRun:
    """One window's symbolic execution: final unit -> term, units written, memory writes,
    and the initial unit -> term map (the shared input variables)."""

    regs: dict
    written: set
    writes: list
    initial: dict
    lane: Any = None
    reads: list = field(default_factory=list)   #: global loads (z3backend.MemRead)


def _is_nop(inst: Instruction) -> bool:
    from ..semantics.registry import lookup
    spec = lookup(inst.opcode)
    return spec is not None and spec.kind == "nop"


#: Cache-policy bits of memory instructions; gfx940+ spellings (LLVM SIDefines.h: GLC is
#: SC0, SLC is NT, SCC is SC1 on gfx940/gfx942).
_POLICY_ALIAS = {"glc": "sc0", "slc": "nt", "scc": "sc1", "sc0": "sc0", "sc1": "sc1",
                 "nt": "nt", "dlc": "dlc"}


def _is_cache_op(inst: Instruction) -> bool:
    """Cache maintenance (write-back / invalidate): no value effect, but visible to other
    agents and waves (CDNA3 ISA guide, "Memory scope and temporal controls")."""
    import re
    return re.match(r"(buffer_(wbl2|inv|wbinvl1|gl[01]_inv)|s_(dcache|icache|scache)_)",
                    inst.opcode) is not None


def _memory_policy(insts: list[Instruction]) -> list[tuple]:
    """The window's cache-maintenance instructions and its memory instructions that carry
    cache-policy bits, in program order: ``[("cache"|"mem", opcode, frozenset of bits)]``.
    Memory instructions without policy bits are left out: removing or adding a plain access
    is a memory-event difference the z3 terms compare; changing, adding or dropping bits (or
    moving an access that has them) changes this list."""
    from ..analysis._isa import facts
    out = []
    for i in insts:
        bits = frozenset(_POLICY_ALIAS[n] for n, v in i.modifiers if n in _POLICY_ALIAS and v)
        if _is_cache_op(i):
            out.append(("cache", i.opcode, bits))
            continue
        try:
            mem = facts(i).mem
        except Exception:  # noqa: BLE001 - unknown instruction: judged by its bits alone
            mem = bool(bits)
        if mem and bits:
            out.append(("mem", i.opcode, bits))
    return out


def _policy_difference(a_insts: list[Instruction], b_insts: list[Instruction]) -> str | None:
    """Why the windows' cache maintenance or cache-policy bits (sc0/sc1/nt/glc/slc) differ,
    or None.  Neither the z3 terms nor the emulator model caches, so such windows are
    ``unknown`` (a dropped ``sc1`` or ``buffer_wbl2`` changes what other agents see)."""
    import re
    if [i.key() for i in a_insts] != [i.key() for i in b_insts] and any(
            re.match(r"s_(setreg|getreg|denorm_mode|round_mode)", i.opcode)
            for i in a_insts + b_insts):
        # MODE/hardware registers (rounding, denormals, IEEE, DX10 clamp) change how every
        # later float operation behaves; the z3 terms assume the kernel's entry modes
        return "the windows read or write hardware registers (s_setreg/s_getreg, MODE), not modelled"
    pa, pb = _memory_policy(a_insts), _memory_policy(b_insts)
    if [x for x in pa if x[0] == "cache"] != [x for x in pb if x[0] == "cache"]:
        return "cache maintenance instructions differ (caches are not modelled)"
    if [x for x in pa if x[0] == "mem"] != [x for x in pb if x[0] == "mem"]:
        return "cache-policy bits (sc0/sc1/nt) of memory instructions differ (caches are not modelled)"
    from .relational import _no_effect_difference
    # e.g. an added s_sethalt 1: the wave halts and the dispatch never completes
    return _no_effect_difference(a_insts, b_insts)


def _symexec(insts: list[Instruction], float_mode: str) -> SymRun:
    """Run the shared z3 backend (:func:`asmevo.semantics.z3backend.symexec`) on ``insts``.

    Both windows start from the same symbolic state because the backend names
    initial values after their units (``v5`` is ``Select(v5, lane)``, ``s3`` a
    32-bit variable) and z3 identifies constants by name.

    Raises:
        _Unsupported: the backend is absent or cannot model an instruction.
    """
    try:
        from ..semantics import z3backend
    except ImportError as e:
        raise _Unsupported(f"the z3 semantics backend is not available ({e})") from None
    from ..semantics.registry import Unsupported, lookup
    for i in insts:
        spec = lookup(i.opcode)
        if spec is not None and spec.kind == "smem" and (spec.extra.get("store")
                                                         or spec.extra.get("atomic")):
            # the backend's SMEM case reads memory into the first operand: a scalar store
            # or atomic would pass as a load and its memory write would go unseen
            raise _Unsupported(f"'{i.text()}': scalar stores and atomics are not modelled "
                               "symbolically")
    try:
        res = z3backend.symexec(insts, float_mode=float_mode)
    except Unsupported as e:
        raise _Unsupported(str(getattr(e, "message", e))) from None
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, z3.Z3Exception) as e:
        raise _Unsupported(f"the z3 backend cannot model this window: {type(e).__name__}: {e}") from None
    if getattr(res, "lane_blind", None):
        # the generic-lane model sees only this lane's stores: a shared-memory load after
        # a store could read another lane's value (store-to-load forwarding is unprovable)
        raise _Unsupported(res.lane_blind[0])
    return SymRun(dict(res.regs), set(res.written), list(res.writes), dict(res.initial), res.lane,
                  list(res.reads))


def _initial(u: tuple, float_mode: str = "fp"):
    """The symbolic initial value of unit ``u``, as the backend names it."""
    from ..semantics import z3backend
    return z3backend.SymState(z3backend.Z3Backend(float_mode)).get(u)


# --------------------------------------------------------------------------------------------

def _any_subterm(terms: Iterable[Any], pred) -> bool:
    """Whether ``pred(app)`` holds for any application node in the DAG of ``terms``."""
    seen: set = set()
    stack = [t for t in terms if isinstance(t, z3.ExprRef)]
    while stack:
        t = stack.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_app(t):
            if pred(t):
                return True
            stack.extend(t.children())
    return False


def _has_uf(terms: Iterable[Any]) -> bool:
    """Whether any term applies an uninterpreted function (float ops in ``uf`` mode)."""
    return _any_subterm(terms, lambda t: t.decl().kind() == z3.Z3_OP_UNINTERPRETED
                        and t.decl().arity() > 0)


def _has_fp_to_bv(terms: Iterable[Any]) -> bool:
    """Whether any term converts an FP value back to bits (``fp.to_ieee_bv``)."""
    return _any_subterm(terms, lambda t: t.decl().kind() == z3.Z3_OP_FPA_TO_IEEE_BV)


def _as_bv_eq(a, b):
    if isinstance(a, z3.BoolRef) or isinstance(b, z3.BoolRef):
        return a == b
    if a.size() != b.size():
        return z3.BoolVal(False)
    return a == b


def read_coverage(orig_reads: list, cand_reads: list) -> list[tuple[str, Any]]:
    """Obligations that the candidate loads no global memory the original does not.

    A candidate may drop, keep or reorder loads, but a load of an address the original
    never loads may fault on hardware (an unmapped page) where the original does not, and
    the register and memory-write comparisons cannot see it when the loaded value is
    unused.  For each candidate load (:class:`asmevo.semantics.z3backend.MemRead`, per
    generic lane): whenever it touches memory, each of its dwords lies inside the bytes of
    some original load of the same window or block that touches memory in the same lane.

    Returns:
        ``(name, Bool)`` pairs, one per candidate load; each must be proved valid.
    """
    out = []
    for i, rc in enumerate(cand_reads):
        # each dword of the load on its own, so that a wide load is covered by the narrow
        # loads it replaces (the widen move: two adjacent dword loads -> one dwordx2)
        parts = []
        for k in range(0, rc.size, 4):
            n = min(4, rc.size - k)
            a = rc.address + k if k else rc.address
            alts = []
            for ro in orig_reads:
                if ro.size < n:
                    continue
                if ro.size == n:
                    inside = ro.address == a if not ro.address.eq(a) else z3.BoolVal(True)
                else:
                    inside = z3.ULE(a - ro.address, z3.BitVecVal(ro.size - n, a.size()))
                alts.append(z3.And(ro.active, inside))
            parts.append(z3.Or(alts) if alts else z3.BoolVal(False))
        f = z3.Implies(rc.active, z3.And(parts) if len(parts) > 1 else parts[0])
        out.append((f"read#{i}.covered", f))
    return out


def _reads_not_covered(ra: "SymRun", rb: "SymRun", timeout_ms: int) -> str | None:
    """None when every load of window ``rb`` is covered by one of ``ra`` (:func:`read_coverage`),
    else why not (unproved: the caller answers unknown, never equivalent)."""
    obl = [(n, f) for n, f in read_coverage(ra.reads, rb.reads)
           if not z3.is_true(z3.simplify(f))]
    if not obl:
        return None
    s = z3.Solver()
    rl, c0 = set_solver_limits(s, timeout_ms)
    s.add(z3.Or([z3.Not(f) for _, f in obl]))
    r = solver_check(s)
    if r == z3.unsat:
        return None
    return ("B loads global memory that A does not load at the same point (a load of an "
            "address the original never loads may fault): " + ", ".join(n for n, _ in obl)
            + " not proved covered")


def _covered(ra: "SymRun", rb: "SymRun", timeout_ms: int, proved: EquivResult) -> EquivResult:
    """``proved`` when every load of ``rb`` is covered by one of ``ra``, else unknown."""
    why = _reads_not_covered(ra, rb, timeout_ms)
    if why:
        return EquivResult(UNKNOWN, f"unsupported: {why}", "unsupported",
                           live_out=proved.live_out)
    return proved


def check_windows(a_insts: list[Instruction], b_insts: list[Instruction], *,
                  live_out: Iterable[tuple] | None = None, timeout_ms: int = 10_000,
                  float_mode: str = "fp",
                  memory_spaces: Iterable[str] | None = None,
                  concrete_tries: int = 48,
                  lanes: dict | None = None) -> EquivResult:
    """Decide whether two straight-line windows are equivalent.

    Args:
        a_insts, b_insts: the windows (lists of :class:`Instruction`).
        live_out: register units to compare (``("v", 0)``...); default: every
            unit either window writes (the strictest choice).
        timeout_ms: z3 budget for the query, in nominal milliseconds: a deterministic resource
            limit of ``timeout_ms * RLIMIT_PER_MS`` z3 steps (so the answer does not depend on
            the machine's load), with a wall-clock safety net (:func:`set_solver_limits`).
        float_mode: ``"fp"`` (IEEE via the z3 FP theory) or ``"uf"``
            (uninterpreted float functions: proofs stay valid, counterexamples
            through them are reported as unknown).
        memory_spaces: compare only the memory writes to these spaces (``"global"``,
            ``"lds"``, ``"scratch"``); default: every write.
        concrete_tries: concrete input vectors tried before the solver.
        lanes: optional ``{VGPR/AGPR unit: lane numbers}``: such a unit is compared only
            in those lanes (the generic lane restricted to them; used to confirm a
            counterexample in the lanes a later ``v_readlane`` reads,
            :mod:`asmevo.analysis.observable`).  Restricting lanes only weakens the
            comparison, so callers must never take ``equivalent`` under ``lanes`` as a
            proof of the windows.

    Returns:
        :class:`EquivResult`; ``equivalent`` only on an ``unsat`` proof.
    """
    why = _policy_difference(a_insts, b_insts)
    if why:
        return EquivResult(UNKNOWN, f"unsupported: {why}", "unsupported")
    a_insts = [i for i in a_insts if not _is_nop(i)]
    b_insts = [i for i in b_insts if not _is_nop(i)]
    try:
        ra = _symexec(a_insts, float_mode)
        rb = _symexec(b_insts, float_mode)
    except _Unsupported as e:
        return EquivResult(UNKNOWN, f"unsupported: {e}", "unsupported")
    units = sorted(set(live_out) if live_out is not None else (set(ra.regs) | set(rb.regs)),
                   key=_unit_sort)
    pairs: list[tuple[str, Any, Any]] = []
    try:
        for u in units:
            ta = ra.regs.get(u)
            tb = rb.regs.get(u)
            if ta is None and tb is None:
                continue
            if ta is None:
                ta = _initial(u, float_mode)
            if tb is None:
                tb = _initial(u, float_mode)
            only = (lanes or {}).get(u)
            if only is not None:
                lane = ra.lane if ra.lane is not None else rb.lane
                if lane is None:
                    raise ValueError("no lane variable to restrict lanes with")
                sel = z3.Or([lane == k for k in sorted(only)]) if only else z3.BoolVal(False)
                ta, tb = _only_where(sel, ta), _only_where(sel, tb)
            pairs.append((unit_name(u), ta, tb))
    except Exception as e:  # noqa: BLE001 - backend could not name an initial value
        return EquivResult(UNKNOWN, f"unsupported: initial value: {e}", "unsupported")
    names = [unit_name(u) for u in units]
    if memory_spaces is not None:
        keep = set(memory_spaces)
        ra.writes = [w for w in ra.writes if w.space in keep]
        rb.writes = [w for w in rb.writes if w.space in keep]
    if len(ra.writes) != len(rb.writes):
        return EquivResult(NOT_EQUIVALENT, f"A performs {len(ra.writes)} memory writes, "
                           f"B performs {len(rb.writes)}", live_out=names,
                           differing=["memory-writes"],
                           write_spaces=sorted({w.space for w in ra.writes + rb.writes}))
    for i, (wa, wb) in enumerate(zip(ra.writes, rb.writes)):
        fa, fb = _write_fields(wa), _write_fields(wb)
        if fa["space"] != fb["space"] or fa["bytes"] != fb["bytes"]:
            return EquivResult(NOT_EQUIVALENT, f"memory write #{i}: A writes {fa['bytes']} bytes of "
                               f"{fa['space']}, B {fb['bytes']} bytes of {fb['space']}",
                               live_out=names, differing=[f"write#{i}"],
                               write_spaces=sorted({fa["space"], fb["space"]}))
        # same lane mask; address and value only matter where the write happens
        act_a, act_b = _as_bool(fa["mask"]), _as_bool(fb["mask"])
        pairs.append((f"write#{i}.mask", act_a, act_b))
        for k in ("address", "value"):
            pairs.append((f"write#{i}.{k}", z3.If(act_a, _bv(fa[k]), _zero(fa[k])),
                          z3.If(act_a, _bv(fb[k]), _zero(fb[k]))))
    if not pairs:
        return _covered(ra, rb, timeout_ms,
                        EquivResult(EQUIVALENT, "no live-out unit or memory write", live_out=names))
    diffs = [(n, a, b) for n, a, b in pairs if not _same_term(a, b)]
    if not diffs:
        return _covered(ra, rb, timeout_ms, EquivResult(EQUIVALENT, "identical terms", live_out=names))
    found = _concrete_search(diffs, ra, rb, seed=len(diffs), tries=concrete_tries)
    if found is not None:
        vals, differs = found
        return EquivResult(NOT_EQUIVALENT, "differs in " + ", ".join(differs) + " (concrete inputs)",
                           counterexample=vals, live_out=names, differing=differs,
                           write_spaces=_spaces(differs, ra, rb))
    s = z3.Solver()
    rl, c0 = set_solver_limits(s, timeout_ms)
    s.add(z3.Or([z3.Not(_as_bv_eq(a, b)) for _, a, b in diffs]))
    r = solver_check(s)
    if r == z3.unsat:
        if float_mode == "fp" and _has_fp_to_bv([t for _, a, b in diffs for t in (a, b)]):
            # The FP theory equates all NaNs: the proof says nothing about NaN payloads,
            # which outputs compare bit for bit.  Re-prove over uninterpreted float
            # functions of the bit patterns, which keeps payloads exact.
            ru = check_windows(a_insts, b_insts, live_out=live_out, timeout_ms=timeout_ms,
                               float_mode="uf", memory_spaces=memory_spaces,
                               concrete_tries=concrete_tries, lanes=lanes)
            if ru.equivalent:
                return EquivResult(EQUIVALENT, "proved (unsat; float operations matched "
                                   "operation for operation)", live_out=names)
            return EquivResult(UNKNOWN, "equal as IEEE values, but NaN payload propagation is not "
                               "proved (z3's FP theory has a single NaN)", "unsupported",
                               live_out=names)
        return _covered(ra, rb, timeout_ms, EquivResult(EQUIVALENT, "proved (unsat)", live_out=names))
    if r == z3.unknown:
        why = unknown_reason(s, rl, c0)
        kind = "timeout" if ("timeout" in why or "canceled" in why or "limit" in why) \
            else "unsupported"
        return EquivResult(UNKNOWN, f"solver: {why}", kind, live_out=names)
    model = s.model()
    differs = [n for n, a, b in diffs if z3.is_false(model.eval(_as_bv_eq(a, b), model_completion=True))]
    if _has_uf([t for n, a, b in diffs if n in differs for t in (a, b)]):
        return EquivResult(UNKNOWN, "the differing results go through uninterpreted float "
                           "functions (--float uf); the model may be unrealisable", "unsupported",
                           live_out=names)
    ce = _counterexample(model, diffs, differs, ra, rb)
    return EquivResult(NOT_EQUIVALENT, "differs in " + ", ".join(differs), counterexample=ce,
                       live_out=names, differing=differs, write_spaces=_spaces(differs, ra, rb))


def _spaces(differs, ra: SymRun, rb: SymRun) -> list:
    """Memory spaces of the differing ``write#i.*`` entries."""
    out = set()
    for d in differs:
        if d.startswith("write#"):
            i = int(d[6:].split(".")[0])
            out |= {ra.writes[i].space, rb.writes[i].space}
    return sorted(out)


_EDGE32 = (0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0x7F800000, 0xFF800000, 0x7FC00000,
           0x7FC00001, 0x00000001, 0x3F800000, 0xBF800000, 2, 31, 32, 0xFFFF, 0x10000)


def _concrete_search(diffs, ra: SymRun, rb: SymRun, *, tries: int = 48, seed: int = 0):
    """Look for a counterexample by evaluating both windows' terms on concrete inputs
    (random and edge values for every initial register, the lane, EXEC, and memory
    filled with one random byte) -- z3 evaluates concrete terms exactly with the
    shared semantics, so a difference found here is a real counterexample.  Much
    faster than the solver on multiplications and floating point.  Returns
    ``(counterexample dict, differing names)`` or None."""
    import random
    rng = random.Random(seed)
    init = dict(ra.initial)
    init.update(rb.initial)
    terms = [(u, t) for u, t in init.items() if isinstance(t, z3.ExprRef)]
    arrays = _memory_arrays([t for _, a, b in diffs for t in (a, b)])
    lane = ra.lane if ra.lane is not None else rb.lane
    for k in range(tries):
        sub = []
        vals: dict[str, Any] = {}
        for u, t in terms:
            if z3.is_bool(t):
                v = rng.random() < 0.5
                sub.append((t, z3.BoolVal(v)))
            else:
                w = t.size()
                if u[0] in ("exec_lo", "exec_hi") and k % 4 == 0:
                    v = (1 << w) - 1
                elif rng.random() < 0.3:
                    v = rng.choice(_EDGE32) & ((1 << w) - 1)
                else:
                    v = rng.getrandbits(w)
                sub.append((t, z3.BitVecVal(v, w)))
            vals[unit_name(u)] = int(v)
        if lane is not None:
            lv = rng.randrange(64)
            sub.append((lane, z3.BitVecVal(lv, 6)))
            vals["lane"] = lv
        for arr in arrays:
            dom, rngs = arr.sort().domain(), arr.sort().range()
            sub.append((arr, z3.K(dom, z3.BitVecVal(rng.getrandbits(rngs.size()), rngs.size()))))
        try:
            ev = [(n, z3.simplify(z3.substitute(a, *sub)), z3.simplify(z3.substitute(b, *sub)))
                  for n, a, b in diffs]
        except z3.Z3Exception:
            return None
        bad = []
        for n, a, b in ev:
            if _is_value(a) and _is_value(b) and not _value_eq(a, b):
                bad.append(n)
        if bad:
            ce = {"inputs": vals, "a": {n: _py(a) for n, a, b in ev if n in bad},
                  "b": {n: _py(b) for n, a, b in ev if n in bad}, "differs": bad}
            return ce, bad
    return None


def _memory_arrays(terms) -> list:
    out, seen = [], set()
    stack = [t for t in terms if isinstance(t, z3.ExprRef)]
    while stack:
        t = stack.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_const(t) and z3.is_array(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            out.append(t)
        elif z3.is_app(t):
            stack.extend(t.children())
    return out


def _is_value(t) -> bool:
    return z3.is_bv_value(t) or z3.is_true(t) or z3.is_false(t)


def _value_eq(a, b) -> bool:
    if z3.is_bv_value(a) and z3.is_bv_value(b):
        return a.size() == b.size() and a.as_long() == b.as_long()
    return z3.is_true(a) == z3.is_true(b)


def _py(t):
    return t.as_long() if z3.is_bv_value(t) else (1 if z3.is_true(t) else 0)


def _same_term(a, b) -> bool:
    try:
        return a.eq(b)
    except AttributeError:
        return False


def _write_fields(w) -> dict:
    """A backend ``MemWrite`` as ``space, address, bytes, value, mask`` (mask: the generic
    lane's EXEC bit, a Bool)."""
    return {"space": w.space, "address": w.address, "bytes": w.size, "value": w.value,
            "mask": w.active}


def _as_bool(x):
    if isinstance(x, bool):
        return z3.BoolVal(x)
    return x


def _bv(x):
    return x


def _zero(x):
    return z3.BitVecVal(0, x.size())


def _only_where(sel, t):
    """``t`` where ``sel`` holds, else a constant (Bool or bit-vector of ``t``'s sort)."""
    return z3.If(sel, t, z3.BoolVal(False) if z3.is_bool(t) else _zero(t))


def _unit_sort(u: tuple):
    return (len(u), u[0], u[1] if len(u) > 1 else 0)


def _val(model, t):
    v = model.eval(t, model_completion=True)
    if z3.is_bv_value(v):
        return v.as_long()
    if z3.is_true(v):
        return 1
    if z3.is_false(v):
        return 0
    return str(v)


def _counterexample(model, diffs, differs, ra: SymRun, rb: SymRun) -> dict:
    """Initial register values (the generic lane's, for VGPRs), the lane, and both results."""
    inputs: dict[str, Any] = {}
    init = dict(ra.initial)
    init.update(rb.initial)
    for u in sorted(init, key=_unit_sort):
        inputs[unit_name(u)] = _val(model, init[u])
    if ra.lane is not None:
        inputs["lane"] = _val(model, ra.lane)
    a = {n: _val(model, ta) for n, ta, tb in diffs if n in differs}
    b = {n: _val(model, tb) for n, ta, tb in diffs if n in differs}
    return {"inputs": inputs, "a": a, "b": b, "differs": list(differs)}


# --------------------------------------------------------------------------------------------
# Kernel level: the changed windows of two versions of a kernel.


def label_map(orig: Kernel, cand: Kernel) -> dict[str, str] | None:
    """Candidate block label -> original block label, matched by block index.

    Code objects disassemble with labels named after addresses (``.Lasmevo_1c64``), so a
    candidate whose code moved has the same blocks under other names.  Returns None when
    the block counts differ or the labels cannot be matched one to one (a labelled block
    against an unlabelled one, or a repeated label).  Renaming the candidate's branch
    targets with this map keeps every branch going to the block with the same index."""
    if len(orig.blocks) != len(cand.blocks):
        return None
    m: dict[str, str] = {}
    for bo, bc in zip(orig.blocks, cand.blocks):
        if bool(bo.label) != bool(bc.label):
            return None
        if bc.label:
            if bc.label in m:
                return None
            m[bc.label] = bo.label
    if len(set(m.values())) != len(m):
        return None
    # A candidate reference to a name that is an original block label but not a candidate
    # block label means something else in the candidate: never let it compare equal.
    for bo in orig.blocks:
        if bo.label and bo.label not in m:
            m[bo.label] = bo.label + "@candidate-external"
    return m


def rename_labels(inst: Instruction, mapping: dict[str, str]) -> Instruction:
    """``inst`` with every :class:`Label` operand renamed through ``mapping``
    (unchanged, same object, when nothing is renamed)."""
    from ..ir.operands import Label
    if not any(isinstance(o, Label) and o.name in mapping and mapping[o.name] != o.name
               for o in inst.operands):
        return inst
    ops = [Label(mapping[o.name], o.addend) if isinstance(o, Label) and o.name in mapping else o
           for o in inst.operands]
    return inst.evolve(operands=ops)


def changed_windows(orig: Kernel, cand: Kernel) -> tuple[list[tuple[int, int, int, int]], str | None]:
    """Differing windows of two kernels with the same block structure.

    Returns ``([(block index, start, end_orig, end_cand)], None)`` where the
    window is ``orig.blocks[b].instructions[start:end_orig]`` versus
    ``cand.blocks[b].instructions[start:end_cand]`` (common prefix and suffix
    stripped; the candidate's labels are first renamed to the original's by block
    index, :func:`label_map`), or ``([], reason)`` when the block structure differs
    (then no window comparison is possible).
    """
    if len(orig.blocks) != len(cand.blocks):
        return [], f"{orig.name}: block count differs ({len(orig.blocks)} vs {len(cand.blocks)})"
    lm = label_map(orig, cand)
    if lm is None:
        for bi, (bo, bc) in enumerate(zip(orig.blocks, cand.blocks)):
            if bo.label != bc.label:
                return [], f"{orig.name}: block {bi} label differs ({bo.label} vs {bc.label})"
        lm = {}
    out = []
    for bi, (bo, bc) in enumerate(zip(orig.blocks, cand.blocks)):
        io = bo.instructions
        ic = [rename_labels(i, lm) for i in bc.instructions]
        if [i.key() for i in io] == [i.key() for i in ic]:
            continue
        p = 0
        while p < min(len(io), len(ic)) and io[p] == ic[p]:
            p += 1
        so, sc = len(io), len(ic)
        while so > p and sc > p and io[so - 1] == ic[sc - 1]:
            so -= 1
            sc -= 1
        out.append((bi, p, so, sc))
    return out, None


def _reads_anywhere(*kernels: Kernel) -> set:
    from ..analysis._isa import facts
    units: set = set()
    for k in kernels:
        for inst in k.instructions():
            try:
                uses = facts(inst).uses
            except Exception:  # noqa: BLE001 - unknown instruction: all explicit operands
                uses = {u for op in inst.operands for u in reg_units(op)}
            units |= set(uses)
    return units


#: Instructions that name registers through M0 or the gpr-index mode: ``s_set_gpr_idx_on`` /
#: ``s_set_gpr_idx_mode`` make the VALU operands they select read and write
#: ``v[n + M0[7:0]]`` (CDNA3 ISA guide, "GPR indexing"), ``s_movrel*`` read or write
#: ``s[n + M0]`` and ``v_movrel*`` ``v[n + M0]``.  Which register such an instruction touches
#: is not its printed operand, so no by-name set of "registers read anywhere" or liveness
#: covers it (adversarial finding: a VGPR read only through gpr-index mode was never
#: compared, and a candidate that changed it on one input was accepted).
_INDIRECT_REGISTERS = ("s_set_gpr_idx_on", "s_set_gpr_idx_mode", "s_movrels_", "s_movreld_",
                       "v_movrels_", "v_movreld_", "v_movrelsd_")


def _indirect_access(*kernels: Kernel) -> str | None:
    """The first instruction of ``kernels`` that names registers indirectly
    (:data:`_INDIRECT_REGISTERS`), as text, or None."""
    for k in kernels:
        for inst in k.instructions():
            if inst.opcode.startswith(_INDIRECT_REGISTERS):
                return inst.text()
    return None


def _unified_alias(orig: Module, cand: Module, name: str) -> str | None:
    """How kernel ``name`` of either module names one unified-file register both as a VGPR
    and as an AGPR (``v[ACCUM_OFFSET + N]`` is ``aN`` on gfx90a/gfx942:
    :func:`asmevo.verify.static.unified_overlaps`), e.g. ``"v12 and a0"``, or None.  The
    static layer allows such an alias where the original has it (hand-written kernels
    rely on it), but the z3 terms and the emulator keep the two names apart: a write to
    ``v12`` between ``a0``'s write and read changed nothing for them (adversarial finding,
    accepted), while on hardware it overwrites ``a0``."""
    from .abi import kernel_facts
    from .static import unified_overlaps
    for m in (orig, cand):
        f = kernel_facts(m).get(name)
        if f is None or f.descriptor is None:
            continue
        hit = sorted(unified_overlaps(f))
        if hit:
            acc = f.descriptor.accum_offset_vgprs
            return f"v{hit[0]} and a{hit[0] - acc}"
    return None


def check_kernels(orig: Module, cand: Module, *, kernels: list[str] | None = None,
                  timeout_ms: int = 10_000, float_mode: str = "fp",
                  relational: bool = False) -> Verdict:
    """The z3 layer of ``asmevo verify``: prove every changed window of every kernel.

    Compared units of a window (what the rest of the kernel can observe, over-approximated):
    VGPRs/AGPRs the windows write that are read anywhere in either kernel (lanes EXEC masks
    off survive later writes), and uniform units (SGPRs, VCC, EXEC, M0, SCC) the windows
    write that are live after the window in the original *or* the candidate
    (:class:`asmevo.analysis.liveness.Liveness` of each; a unit only the candidate's
    continuation reads must agree too).  Every window proved => the kernels agree.
    So are the windows of a kernel pair in which either kernel names one register of the
    unified VGPR file both as ``v[ACCUM_OFFSET + N]`` and as ``aN`` (:func:`_unified_alias`).
    When either kernel names registers indirectly (gpr-index mode, ``s_movrel*``,
    ``v_movrel*``: :data:`_INDIRECT_REGISTERS`), its windows are ``unknown-unsupported``:
    a register read under another name escapes every by-name comparison, and inside a
    gpr-index region the window's own operands are not the registers named (the
    relational proof has no semantics for these instructions either).

    A window counterexample is block-local: z3 takes the window's inputs as unconstrained
    and compares the state right after it.  It rejects (``rejected-counterexample``) only
    when it is *confirmed* (:func:`_confirmable`, then a second query restricted to the
    confirmable units and memory spaces still finds a difference): no other changed
    block runs before the window, and the difference is read by the unchanged rest of
    the block, or is live after the window in both kernels with the code after the
    window unchanged (no other changed block reachable), or is a write to memory the
    code after it can observe; a register must moreover be observably live after the
    window in both kernels (:mod:`asmevo.analysis.observable`: some path can still turn it
    into a memory write, load address, branch or other side effect; for a VGPR read later
    only by constant-lane ``v_readlane``, only those lanes are compared).  Anything else (a WWM spill written in one block and its
    reload removed in another, a reload dropped because an earlier changed block left the
    value in place) leaves the window ``unknown``: differential testing runs, and at
    level ``all`` the verdict is then at best ``unknown-unproved``, never ``accepted``.

    Memory operations moved across an ``s_barrier`` give a *final*
    ``unknown-unsupported`` (evidence kind ``cross-wave-order``): differential testing
    must not overrule it, because the emulator's wave schedule is one of many.

    When a kernel has undecided windows (or memory moved across ``s_barrier``) and no
    confirmed counterexample, and ``relational`` is true, the relational proof across
    blocks (:func:`asmevo.verify.relational.prove_relational`) is tried on the whole
    kernel: when it proves the kernels equivalent, that kernel's undecided windows are
    replaced by the proof (evidence kind ``relational-proof``); otherwise its answer is
    one more undecided item (evidence kind ``relational``).

    When the block structures differ (no windows) and ``relational`` is true, a candidate
    whose self-loop was unrolled twice is proved against the original with that loop
    normalised by :func:`asmevo.ir.unroll.unroll_self_loop` (:func:`_prove_unrolled`); the
    normalisation runs the original's instructions in the original's order, so a proof
    against it is a proof against the original.

    Returns a Verdict: ``accepted`` (all windows proved, nothing changed, or the
    relational proof covered the undecided ones), ``rejected-counterexample``,
    ``unknown-timeout`` or ``unknown-unsupported``.
    """
    names = kernels or sorted({k.name for k in cand.kernels} & {k.name for k in orig.kernels})
    ev: list[Evidence] = []
    unknown: list[tuple[str, str, dict]] = []
    hard: list[str] = []
    proved = 0
    rel_proved: list[Evidence] = []
    for n in names:
        try:
            ko, kc = orig.kernel(n), cand.kernel(n)
        except KeyError:
            unknown.append(("unsupported", f"kernel {n} missing on one side", {}))
            continue
        n_ev, n_unknown, n_hard = len(ev), len(unknown), len(hard)
        wins, why = changed_windows(ko, kc)
        if not wins and not why:
            continue
        indirect = _indirect_access(ko, kc)
        alias = _unified_alias(orig, cand, n)
        if alias:
            unknown.append(("unsupported", f"{n}: {alias}: the two names are one register of "
                            "the unified VGPR file (ACCUM_OFFSET), which neither z3 nor the "
                            "emulator models", {}))
            continue
        if indirect:
            unknown.append(("unsupported", f"{n}: '{indirect}' names registers through M0 or "
                            "gpr-index mode: neither which registers later code reads nor, "
                            "inside a gpr-index region, what a window's VALU operands are "
                            "follows from their names", {}))
            continue
        if why:
            if relational:
                # The block structure differs: a candidate whose loop was unrolled twice
                # (loop-pipeline) corresponds to K0 with that loop normalised by
                # asmevo.ir.unroll, which runs K0's own instructions in K0's order.
                done = _prove_unrolled(n, ko, kc, timeout_ms)
                if done is not None and done[0] == "proved":
                    rel_proved.append(done[1])
                    continue
                if done is not None:
                    unknown.append(done[1])
            unknown.append(("unsupported", why, {}))
            continue
        if not wins:
            continue
        maybe_live = _reads_anywhere(ko, kc)
        lmap = label_map(ko, kc) or {}
        live_o, cfg_o = _analyses(ko, orig)
        live_c, cfg_c = _analyses(kc, cand)
        obs_o, obs_c = observable_liveness(ko, cfg_o), observable_liveness(kc, cfg_c)
        changed_blocks = {w[0] for w in wins}
        for bi, p, eo, ec in wins:
            bo, bc = ko.blocks[bi], kc.blocks[bi]
            wa = bo.instructions[p:eo]
            wb = [rename_labels(i, lmap) for i in bc.instructions[p:ec]]
            written = set()
            for i in wa + wb:
                for op in i.operands:
                    written |= set(reg_units(op))
            try:
                from ..analysis._isa import facts
                for i in wa + wb:
                    written |= set(facts(i).defs)
            except Exception:  # noqa: BLE001
                pass
            after_o = _live_after(live_o, bo, eo)
            after_c = _live_after(live_c, bc, ec)
            after_any = None if after_o is None or after_c is None else after_o | after_c
            # Uniform units (SGPRs, VCC, EXEC, M0, SCC) are written whole, so the liveness
            # analysis is exact for them; VGPR lanes that EXEC masks off survive a later
            # write, so VGPRs stay compared whenever anything reads them.
            lo = {u for u in written & maybe_live
                  if u[0] in ("v", "a") or after_any is None or unit_name(u) in after_any}
            if _barrier_order_changed(wa, wb):
                hard.append(f"{n} block {bo.label or f'#{bi}'}: memory operations move across "
                            "s_barrier; cross-wave ordering is not modelled")
                continue
            r = check_windows(wa, wb, live_out=lo, timeout_ms=timeout_ms, float_mode=float_mode)
            where = {"kernel": n, "block": bo.label or f"#{bi}", "start": p,
                     "original": [i.text() for i in wa], "candidate": [i.text() for i in wb]}
            if r.status == EQUIVALENT:
                proved += 1
                continue
            if r.status == UNKNOWN:
                unknown.append((r.unknown_kind or "unsupported",
                                f"{n} block {where['block']}: {r.reason}", where))
                continue
            others = sorted(changed_blocks - {bi})
            if obs_o is not None and obs_c is not None:
                observed = (obs_o.live_before(bi, eo), obs_c.live_before(bi, ec))
            else:
                observed = None
            c_units, c_spaces, why_not, c_lanes = _confirmable(
                lo, after_o, after_c,
                _continuation([(ko, cfg_o, bi, eo), (kc, cfg_c, bi, ec)], others),
                bo.instructions[eo:], _changed_before(bi, others, cfg_o, cfg_c),
                observed)
            # Ask again, comparing only what certainly reaches the rest of the kernel: a
            # difference there is a kernel-level counterexample; none there means every
            # difference is in state the code after the window may never see.
            r2 = None
            if c_units or c_spaces:
                # a shorter budget: running out only leaves the window unknown
                r2 = check_windows(wa, wb, live_out=c_units, memory_spaces=c_spaces,
                                   timeout_ms=min(timeout_ms, CONFIRM_TIMEOUT_MS),
                                   float_mode=float_mode, concrete_tries=12, lanes=c_lanes)
            if r2 is not None and r2.status == NOT_EQUIVALENT:
                ev.append(Evidence("z3", "counterexample",
                                   f"{n} block {where['block']}: window differs in "
                                   f"{', '.join(r2.differing)}" + _detail(r2, r2.differing),
                                   {**where, "counterexample": r2.counterexample,
                                    "reason": r2.reason}))
            elif r2 is not None and r2.status == UNKNOWN:
                unknown.append((r2.unknown_kind or "unsupported",
                                f"{n} block {where['block']}: the window differs in "
                                f"{', '.join(r.differing)}{_detail(r, r.differing)}; whether the "
                                f"difference reaches the rest of the kernel is undecided "
                                f"({r2.reason})", {**where, "counterexample": r.counterexample,
                                                   "unconfirmed": True}))
            else:
                unknown.append(("unsupported",
                                f"{n} block {where['block']}: the window differs in "
                                f"{', '.join(r.differing)}{_detail(r, r.differing)}, but {why_not}, "
                                "so this is not a kernel-level counterexample",
                                {**where, "counterexample": r.counterexample, "reason": r.reason,
                                 "unconfirmed": True}))
        if relational and len(ev) == n_ev and (len(unknown) > n_unknown or len(hard) > n_hard):
            # Windows undecided one by one: try the relational proof across blocks
            # (asmevo.verify.relational); it replaces them only when it proves the kernel.
            from .relational import prove_relational
            rel = prove_relational(ko, kc, timeout_ms=min(timeout_ms, RELATIONAL_QUERY_MS),
                                   budget_s=RELATIONAL_BUDGET_S)
            if rel.equivalent:
                del unknown[n_unknown:]
                del hard[n_hard:]
                rel_proved.append(Evidence("z3", "relational-proof", f"{n}: {rel.reason}",
                                           {"kernel": n, **rel.to_json()}))
            else:
                unknown.append((rel.unknown_kind or "unsupported",
                                f"{n}: relational proof across blocks: {rel.status}: {rel.reason}",
                                {"kernel": n, "relational": rel.to_json()}))
    if ev:
        return Verdict(Status.REJECTED_COUNTEREXAMPLE, ev[0].message, ev)
    if hard:
        return Verdict(Status.UNKNOWN_UNSUPPORTED, hard[0],
                       [Evidence("z3", "cross-wave-order", m, {"final": True}) for m in hard])
    if unknown:
        st = Status.UNKNOWN_TIMEOUT if any(k == "timeout" for k, _, _ in unknown) else Status.UNKNOWN_UNSUPPORTED
        msg = unknown[0][1]
        # windows only: a failed relational proof is one more item, named by the driver
        more = sum(1 for _, _, d in unknown[1:] if not d.get("relational"))
        if more:
            msg += f" (and {more} more undecided window(s))"
        return Verdict(st, msg, [Evidence("z3", "unconfirmed-counterexample" if d.get("unconfirmed")
                                          else "relational" if d.get("relational") else k, m, d)
                                 for k, m, d in unknown])
    if rel_proved:
        return Verdict(Status.ACCEPTED, f"{proved} changed window(s) proved equivalent, "
                       f"{len(rel_proved)} kernel(s) by a relational proof across blocks",
                       rel_proved)
    return Verdict(Status.ACCEPTED, f"{proved} changed window(s) proved equivalent" if proved
                   else "no changed window")


def _prove_unrolled(n: str, ko: Kernel, kc: Kernel, timeout_ms: int):
    """Prove ``kc`` equivalent to ``ko`` through one loop normalisation of ``ko``.

    For each self-loop block ``b`` of ``ko`` that :func:`asmevo.ir.unroll.unroll_self_loop`
    applies to, the normalised kernel ``N`` runs exactly ``ko``'s instructions in ``ko``'s
    order on every path (only its branches are elsewhere; the argument is in that module's
    docstring), so ``N`` and ``ko`` are equivalent by construction.  When ``N``'s CFG
    corresponds to ``kc``'s (the same checks as for any relational proof:
    :func:`asmevo.verify.relational._structure`), the relational proof
    ``prove_relational(N, kc)`` is run; ``equivalent`` there means ``kc`` is equivalent to
    ``ko``.  Only the first two normalisations whose CFG corresponds are tried (each is a
    whole relational proof).

    Returns None (no normalisation corresponds), ``("proved", Evidence)`` or
    ``("unknown", (kind, message, data))``.
    """
    from ..ir.unroll import self_loops, unroll_self_loop
    from .relational import _GiveUp, _structure, prove_relational
    tried = []
    for b in self_loops(ko):
        if len(tried) >= 2:
            break
        nk = unroll_self_loop(ko, b, taken_labels=kc.labels())
        if nk is None or len(nk.blocks) != len(kc.blocks) or label_map(nk, kc) is None:
            continue
        try:
            _structure(nk, kc)
        except _GiveUp:
            continue
        lab = ko.blocks[b].label or f"#{b}"
        rel = prove_relational(nk, kc, timeout_ms=min(timeout_ms, RELATIONAL_QUERY_MS),
                               budget_s=RELATIONAL_BUDGET_S)
        if rel.equivalent:
            return "proved", Evidence(
                "z3", "relational-proof",
                f"{n}: relational proof against K0 with loop {lab} unrolled twice "
                f"(ir/unroll.py): {rel.reason}",
                {"kernel": n, "unrolled_loop": lab, **rel.to_json()})
        tried.append((rel.unknown_kind or "unsupported",
                      f"{n}: relational proof against K0 with loop {lab} unrolled twice "
                      f"(ir/unroll.py): {rel.status}: {rel.reason}",
                      {"kernel": n, "unrolled_loop": lab, "relational": rel.to_json()}))
    return ("unknown", tried[0]) if tried else None


#: Per-query solver budget of the relational proof across blocks, in nominal milliseconds
#: (converted to a z3 resource limit, :func:`set_solver_limits`).
RELATIONAL_QUERY_MS = 3000
#: Budget of one kernel's relational proof, in nominal seconds (a total z3 resource limit,
#: :data:`RLIMIT_PER_MS`); then the kernel stays unknown.
RELATIONAL_BUDGET_S = 35.0

# -- deterministic solver limits (issue 14) ---------------------------------------------------
#: z3 resource units (the ``rlimit`` parameter) per nominal millisecond of solver budget.
#: Every budget the verifier gives z3 (``timeout_ms`` arguments, :data:`RELATIONAL_QUERY_MS`,
#: :data:`RELATIONAL_BUDGET_S`, :data:`CONFIRM_TIMEOUT_MS`) is converted to a resource limit,
#: which z3 counts in its own steps whatever the machine's load, so a verdict is a function
#: of the input (same z3 version, same sequence of queries in the process: z3's term
#: numbering, and so its search, depends on what the process built before).  Calibration
#: (z3 4.x, 2 cores shared by several processes, 2026-12): 0.45-0.65 million units per
#: second of wall time under that load; the relational proof of ``vadd_f32_O0`` without its
#: spill (tests/verify/test_kernel_windows.py) needs about 37 million.
RLIMIT_PER_MS = 1500
#: Wall-clock safety net of one query: this many times its nominal budget, at least
#: :data:`SAFETY_MIN_MS`.  It only guards against a solver that stalls between resource
#: steps; when it fires the answer is ``unknown`` (never ``equivalent``), so under extreme
#: load a proof may become unknown, but an answer never flips between proved and refuted.
#: Generous on purpose: z3's units per second vary by query (measured 0.12 million/s on a
#: bit-vector/array query of the relational proof under load, 0.5 million/s on others).
SAFETY_FACTOR = 60
SAFETY_MIN_MS = 60_000


def set_solver_limits(s, budget_ms: float) -> tuple[int, int]:
    """Give solver ``s`` the deterministic resource limit for ``budget_ms`` nominal
    milliseconds (:data:`RLIMIT_PER_MS`) and the wall-clock safety net
    (:data:`SAFETY_FACTOR`).  Returns ``(rlimit, z3's global resource count before the
    query)`` for :func:`unknown_reason` and :func:`resources_used`."""
    top = 2**32 - 1  # both are unsigned 32-bit z3 parameters
    rl = min(top, max(1, int(budget_ms)) * RLIMIT_PER_MS)
    s.set("rlimit", rl)
    s.set("timeout", min(top, max(SAFETY_MIN_MS, int(budget_ms) * SAFETY_FACTOR)))
    return rl, rlimit_count(s)


def solver_check(s, *assumptions):
    """``s.check()``, but Ctrl-C is not an answer: raises :class:`KeyboardInterrupt` when the
    query was interrupted.  z3 catches SIGINT inside ``check`` (its ``ctrl_c`` parameter, on
    unless an :class:`asmevo.interrupt.Interrupts` is installed) and returns ``unknown``
    ("interrupted from keyboard"), so Python never saw the interrupt and ``asmevo evolve`` went
    on with a proof quietly turned into unknown.  Under :class:`~asmevo.interrupt.Interrupts`
    (``asmevo evolve``) a press stops the query (``unknown``, "interrupted") and is raised at
    the query's end even when it answered (:class:`asmevo.interrupt.z3_query`)."""
    with z3_query(s):
        r = s.check(*assumptions)
    if r == z3.unknown and "interrupted" in s.reason_unknown():
        raise_interrupt()
    return r


def rlimit_count(s=None) -> int:
    """z3's resource count (global to the z3 context, increasing)."""
    st = (s or z3.Solver()).statistics()
    try:
        return int(st.get_key_value("rlimit count"))
    except (z3.Z3Exception, KeyError):
        return 0


def resources_used(s, start: int) -> int:
    """Resource units a query on ``s`` used since the count ``start``."""
    return max(0, rlimit_count(s) - start)


def unknown_reason(s, rlimit: int, start: int) -> str:
    """Why ``s.check()`` returned unknown: ``"timeout: resource limit reached (deterministic)"`` when
    the query used its whole resource limit, ``"wall-clock safety net"`` when the safety
    timeout fired first (load-dependent; the caller must answer unknown), else z3's own
    reason."""
    why = s.reason_unknown()
    if resources_used(s, start) >= rlimit or "resource limit" in why:
        return "timeout: resource limit reached (deterministic)"
    if "timeout" in why or "canceled" in why:
        return "wall-clock safety net"
    return why


#: Solver budget (nominal ms, :data:`RLIMIT_PER_MS`) of the query that confirms a window
#: counterexample at kernel level.
CONFIRM_TIMEOUT_MS = 3000


def _analyses(kernel: Kernel, module: Module):
    """``(Liveness, CFG)`` of ``kernel``, or ``(None, None)`` when the analyses fail
    (then no window difference is ever confirmed)."""
    try:
        from ..analysis import AnalysisManager
        from ..analysis.cfg import CFG
        from ..analysis.liveness import Liveness
        am = AnalysisManager(module)
        return am.get(Liveness, kernel), am.get(CFG, kernel)
    except Exception:  # noqa: BLE001 - no analysis: counterexamples stay unknown
        return None, None


#: Instruction families that may read each memory space after a differing write.
_SPACE_READERS = {
    "lds": lambda f: f.ds or f.flat,
    "scratch": lambda f: f.vmem or f.flat,
}


def _continuation(sides, others: list[int]):
    """What follows a window, in both kernels: ``(identical, instructions)``.

    ``sides`` is ``[(kernel, cfg, block index, window end)]`` for the original and the
    candidate.  The continuation is the rest of the block after the window plus every
    block reachable from it (the block itself too when it is in a loop).  It is
    *identical* when no other changed block (``others``) is reachable in either CFG
    and both CFGs are known.  ``instructions`` are the original's continuation."""
    insts: list[Instruction] = []
    identical = True
    for side, (k, cfg, bi, end) in enumerate(sides):
        if cfg is None:
            return False, []
        seen: set = set()
        stack = [s for s in cfg.successors(bi)]
        while stack:
            b = stack.pop()
            if not isinstance(b, int) or b in seen:
                continue
            seen.add(b)
            stack.extend(cfg.successors(b))
        if seen & set(others):
            identical = False
        if side == 0:
            insts = list(k.blocks[bi].instructions[end:])
            for b in sorted(seen):
                insts += list(k.blocks[b].instructions)
    return identical, insts


def _read_in_suffix(suffix: list[Instruction]) -> set:
    """Units the (identical) rest of the window's block reads before writing them: a
    difference in one of these certainly meets the same instruction in both kernels."""
    from ..analysis._isa import facts
    read: set = set()
    killed: set = set()
    for i in suffix:
        try:
            fx = facts(i)
        except Exception:  # noqa: BLE001 - unknown instruction: stop (nothing confirmed past it)
            break
        read |= {unit_name(u) for u in fx.uses} - killed
        killed |= {unit_name(u) for u in fx.defs}
    return read


def _detail(r: EquivResult, units: list) -> str:
    """`` (u: original X, candidate Y; inputs ...)`` for a counterexample, or ``""``."""
    ce = r.counterexample or {}
    vals = "; ".join(f"{u}: original {_hex(ce.get('a', {}).get(u))}, candidate "
                     f"{_hex(ce.get('b', {}).get(u))}" for u in units[:3] if u in ce.get("a", {}))
    ins = ", ".join(f"{k}={_hex(v)}" for k, v in list(ce.get("inputs", {}).items())[:12])
    return f" ({vals}; inputs {ins})" if vals else ""


def _changed_before(bi: int, others: list[int], *cfgs) -> bool:
    """Whether another changed block can run before block ``bi`` (is an ancestor of it in
    either CFG), or a CFG is unknown."""
    import networkx as nx
    for cfg in cfgs:
        if cfg is None:
            return True
        if nx.ancestors(cfg.graph, bi) & set(others):
            return True
    return False


def _confirmable(compared: set, after_o: set | None, after_c: set | None,
                 continuation, suffix: list[Instruction],
                 changed_before: bool = False,
                 observed: tuple[dict, dict] | None = None) -> tuple[list, list, str, dict]:
    """What a window difference must touch to be a kernel-level counterexample:
    ``(register units, memory spaces, why nothing is, {vector unit: lanes})``.

    Nothing qualifies when other changed code can run before the window
    (``changed_before``): z3 takes the window's inputs as unconstrained, and code that
    changed earlier may establish different invariants in the two kernels (a reload the
    candidate dropped because an earlier block already left the value in place), so a
    window counterexample may be unreachable.  Otherwise both kernels reach the window
    through the same code, and:

    A register unit (of ``compared``) qualifies when the rest of the window's block
    (identical in both kernels: the common suffix) reads it before writing it, or when
    the code after the window is the same in both kernels (no other changed block
    reachable) and the unit is live after the window in the original *and* in the
    candidate (each kernel's own liveness).  A memory space qualifies when the code after
    the window is the same in both kernels and it is global memory (the kernel's output)
    or LDS/scratch that the code after the window can read.

    Anything else may be block-local -- a spill whose reload the candidate also removed,
    a store moved to another block -- and a difference only there leaves the window
    undecided.

    ``observed`` is the observable liveness (:mod:`asmevo.analysis.observable`) right after
    the window in the original and in the candidate, when both kernels have one.  Then a
    register unit qualifies only if it is also observably live in *both* kernels -- some
    path can still turn its value into a memory write, a load address, a branch decision
    or another side effect -- and a VGPR/AGPR whose observable lanes are a finite set in
    both (lanes a later ``v_readlane`` reads with a constant lane select) is compared only
    in the lanes both observe (returned in the lanes map).  A unit that one kernel never
    observes again (a SGPR-spill lane the candidate moved to an SGPR, then copied whole
    into an AGPR that is never read observably) is read, but its difference is not a
    kernel-level counterexample.  This only withholds confirmations: an unconfirmed
    window stays undecided and the relational proof or differential testing decides."""
    identical, insts = continuation
    if changed_before:
        return [], [], ("code that runs before the window also changed, so the window's "
                        "inputs may satisfy invariants z3 does not know"), {}
    local = _read_in_suffix(suffix)
    both = (after_o & after_c) if (after_o is not None and after_c is not None and identical) \
        else set()
    units = sorted((u for u in compared if unit_name(u) in local or unit_name(u) in both),
                   key=_unit_sort)
    lanes: dict = {}
    dead: list = []
    if observed is not None:
        keep = []
        for u in units:
            lv = meet_lanes(observed[0].get(u), observed[1].get(u))
            if lv is None:
                dead.append(u)
                continue
            keep.append(u)
            if lv != ALL and u[0] in ("v", "a"):
                lanes[u] = lv
        units = keep
    spaces = []
    if identical and after_o is not None:
        spaces.append("global")
        facts_after = [_facts_or_none(i) for i in insts]
        for sp, reader in _SPACE_READERS.items():
            # an instruction the ISA facts do not know counts as a possible reader
            if any(f is None or reader(f) for f in facts_after):
                spaces.append(sp)
    if not identical:
        why = ("the code after the window also changed (another changed block is reachable) "
               "and the rest of the block does not read the differing units")
    elif after_o is None or after_c is None:
        why = "liveness is not available"
    else:
        why = ("no differing unit is live after the window in both kernels and no differing "
               "memory write is observable by the code after it")
    if dead:
        why = (f"{', '.join(unit_name(u) for u in dead)} (or the differing lanes) "
               "cannot reach memory, a branch or any other side effect after the window in "
               "one of the kernels (observable liveness, asmevo/analysis/observable.py)"
               + (f"; otherwise {why}" if units or spaces else ""))
    return units, spaces, why, lanes


def _facts_or_none(inst: Instruction):
    try:
        from ..analysis._isa import facts
        return facts(inst)
    except Exception:  # noqa: BLE001
        return None


def _barrier_order_changed(wa: list[Instruction], wb: list[Instruction]) -> bool:
    """Whether the order of memory operations relative to ``s_barrier`` differs: other
    waves may observe it, which neither z3 nor the emulator's wave schedule decides.
    Compared as the sequence of opcodes of barriers and memory operations; ``scratch_*``
    accesses are left out: private memory belongs to one lane, so no other wave observes
    when they happen (their values are still compared by z3)."""
    from ..analysis._isa import facts

    def skel(ws):
        # the kinds of operations in order: registers may be renamed (z3 compares what
        # each one reads and writes); moving one across a barrier changes this sequence
        return [i.opcode for i in ws if i.opcode == "s_barrier"
                or (facts(i).mem and not i.opcode.startswith("scratch_"))]
    sa, sb = skel(wa), skel(wb)
    return sa != sb and any(i.opcode == "s_barrier" for i in wa + wb)


def _live_after(live, block, end: int) -> set | None:
    if live is None:
        return None
    try:
        if end < len(block.instructions):
            units = live.live_before(block.instructions[end])
        else:
            units = live.live_after(block.instructions[end - 1]) if end > 0 else None
            if units is None:
                return None
    except Exception:  # noqa: BLE001
        return None
    return {unit_name(u) for u in units}

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

from ..ir.instruction import Instruction
from ..ir.module import Kernel, Module
from ..ir.operands import reg_units
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
        differing: units (or ``"write#i"``) that can differ.
    """

    status: str
    reason: str = ""
    unknown_kind: str | None = None
    counterexample: dict | None = None
    live_out: list = field(default_factory=list)
    differing: list = field(default_factory=list)

    @property
    def equivalent(self) -> bool:
        """True only when proved equivalent."""
        return self.status == EQUIVALENT

    def to_json(self) -> dict:
        """JSON-ready record."""
        return {"status": self.status, "reason": self.reason, "unknown_kind": self.unknown_kind,
                "counterexample": self.counterexample, "live_out": self.live_out,
                "differing": self.differing}

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


def _is_nop(inst: Instruction) -> bool:
    from ..semantics.registry import lookup
    spec = lookup(inst.opcode)
    return spec is not None and spec.kind == "nop"


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
    from ..semantics.registry import Unsupported
    try:
        res = z3backend.symexec(insts, float_mode=float_mode)
    except Unsupported as e:
        raise _Unsupported(str(getattr(e, "message", e))) from None
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, z3.Z3Exception) as e:
        raise _Unsupported(f"the z3 backend cannot model this window: {type(e).__name__}: {e}") from None
    return SymRun(dict(res.regs), set(res.written), list(res.writes), dict(res.initial), res.lane)


def _initial(u: tuple, float_mode: str = "fp"):
    """The symbolic initial value of unit ``u``, as the backend names it."""
    from ..semantics import z3backend
    return z3backend.SymState(z3backend.Z3Backend(float_mode)).get(u)


# --------------------------------------------------------------------------------------------

def _has_uf(terms: Iterable[Any]) -> bool:
    seen: set = set()
    stack = [t for t in terms if isinstance(t, z3.ExprRef)]
    while stack:
        t = stack.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_app(t):
            d = t.decl()
            if d.kind() == z3.Z3_OP_UNINTERPRETED and d.arity() > 0:
                return True
            stack.extend(t.children())
    return False


def _has_fp_to_bv(terms: Iterable[Any]) -> bool:
    """Whether any term converts an FP value back to bits (``fp.to_ieee_bv``)."""
    seen: set = set()
    stack = [t for t in terms if isinstance(t, z3.ExprRef)]
    while stack:
        t = stack.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_app(t):
            if t.decl().kind() == z3.Z3_OP_FPA_TO_IEEE_BV:
                return True
            stack.extend(t.children())
    return False


def _as_bv_eq(a, b):
    if isinstance(a, z3.BoolRef) or isinstance(b, z3.BoolRef):
        return a == b
    if a.size() != b.size():
        return z3.BoolVal(False)
    return a == b


def check_windows(a_insts: list[Instruction], b_insts: list[Instruction], *,
                  live_out: Iterable[tuple] | None = None, timeout_ms: int = 10_000,
                  float_mode: str = "fp") -> EquivResult:
    """Decide whether two straight-line windows are equivalent.

    Args:
        a_insts, b_insts: the windows (lists of :class:`Instruction`).
        live_out: register units to compare (``("v", 0)``...); default: every
            unit either window writes (the strictest choice).
        timeout_ms: z3 time budget for the query, in milliseconds.
        float_mode: ``"fp"`` (IEEE via the z3 FP theory) or ``"uf"``
            (uninterpreted float functions: proofs stay valid, counterexamples
            through them are reported as unknown).

    Returns:
        :class:`EquivResult`; ``equivalent`` only on an ``unsat`` proof.
    """
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
            pairs.append((unit_name(u), ta, tb))
    except Exception as e:  # noqa: BLE001 - backend could not name an initial value
        return EquivResult(UNKNOWN, f"unsupported: initial value: {e}", "unsupported")
    names = [unit_name(u) for u in units]
    if len(ra.writes) != len(rb.writes):
        return EquivResult(NOT_EQUIVALENT, f"A performs {len(ra.writes)} memory writes, "
                           f"B performs {len(rb.writes)}", live_out=names,
                           differing=["memory-writes"])
    for i, (wa, wb) in enumerate(zip(ra.writes, rb.writes)):
        fa, fb = _write_fields(wa), _write_fields(wb)
        if fa["space"] != fb["space"] or fa["bytes"] != fb["bytes"]:
            return EquivResult(NOT_EQUIVALENT, f"memory write #{i}: A writes {fa['bytes']} bytes of "
                               f"{fa['space']}, B {fb['bytes']} bytes of {fb['space']}",
                               live_out=names, differing=[f"write#{i}"])
        # same lane mask; address and value only matter where the write happens
        act_a, act_b = _as_bool(fa["mask"]), _as_bool(fb["mask"])
        pairs.append((f"write#{i}.mask", act_a, act_b))
        for k in ("address", "value"):
            pairs.append((f"write#{i}.{k}", z3.If(act_a, _bv(fa[k]), _zero(fa[k])),
                          z3.If(act_a, _bv(fb[k]), _zero(fb[k]))))
    if not pairs:
        return EquivResult(EQUIVALENT, "no live-out unit or memory write", live_out=names)
    diffs = [(n, a, b) for n, a, b in pairs if not _same_term(a, b)]
    if not diffs:
        return EquivResult(EQUIVALENT, "identical terms", live_out=names)
    found = _concrete_search(diffs, ra, rb, seed=len(diffs))
    if found is not None:
        vals, differs = found
        return EquivResult(NOT_EQUIVALENT, "differs in " + ", ".join(differs) + " (concrete inputs)",
                           counterexample=vals, live_out=names, differing=differs)
    s = z3.Solver()
    s.set("timeout", int(timeout_ms))
    s.add(z3.Or([z3.Not(_as_bv_eq(a, b)) for _, a, b in diffs]))
    r = s.check()
    if r == z3.unsat:
        if float_mode == "fp" and _has_fp_to_bv([t for _, a, b in diffs for t in (a, b)]):
            # The FP theory equates all NaNs: the proof says nothing about NaN payloads,
            # which outputs compare bit for bit.  Re-prove over uninterpreted float
            # functions of the bit patterns, which keeps payloads exact.
            ru = check_windows(a_insts, b_insts, live_out=live_out, timeout_ms=timeout_ms,
                               float_mode="uf")
            if ru.equivalent:
                return EquivResult(EQUIVALENT, "proved (unsat; float operations matched "
                                   "operation for operation)", live_out=names)
            return EquivResult(UNKNOWN, "equal as IEEE values, but NaN payload propagation is not "
                               "proved (z3's FP theory has a single NaN)", "unsupported",
                               live_out=names)
        return EquivResult(EQUIVALENT, "proved (unsat)", live_out=names)
    if r == z3.unknown:
        why = s.reason_unknown()
        kind = "timeout" if ("timeout" in why or "canceled" in why) else "unsupported"
        return EquivResult(UNKNOWN, f"solver: {why}", kind, live_out=names)
    model = s.model()
    differs = [n for n, a, b in diffs if z3.is_false(model.eval(_as_bv_eq(a, b), model_completion=True))]
    if _has_uf([t for n, a, b in diffs if n in differs for t in (a, b)]):
        return EquivResult(UNKNOWN, "the differing results go through uninterpreted float "
                           "functions (--float uf); the model may be unrealisable", "unsupported",
                           live_out=names)
    ce = _counterexample(model, diffs, differs, ra, rb)
    return EquivResult(NOT_EQUIVALENT, "differs in " + ", ".join(differs), counterexample=ce,
                       live_out=names, differing=differs)


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


def changed_windows(orig: Kernel, cand: Kernel) -> tuple[list[tuple[int, int, int, int]], str | None]:
    """Differing windows of two kernels with the same block structure.

    Returns ``([(block index, start, end_orig, end_cand)], None)`` where the
    window is ``orig.blocks[b].instructions[start:end_orig]`` versus
    ``cand.blocks[b].instructions[start:end_cand]`` (common prefix and suffix
    stripped), or ``([], reason)`` when the block structure differs (then no
    window comparison is possible).
    """
    if len(orig.blocks) != len(cand.blocks):
        return [], f"{orig.name}: block count differs ({len(orig.blocks)} vs {len(cand.blocks)})"
    out = []
    for bi, (bo, bc) in enumerate(zip(orig.blocks, cand.blocks)):
        if bo.label != bc.label:
            return [], f"{orig.name}: block {bi} label differs ({bo.label} vs {bc.label})"
        io, ic = bo.instructions, bc.instructions
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


def check_kernels(orig: Module, cand: Module, *, kernels: list[str] | None = None,
                  timeout_ms: int = 10_000, float_mode: str = "fp") -> Verdict:
    """The z3 layer of ``asmevo verify``: prove every changed window of every kernel.

    Live-out of a window: units either window writes that are read anywhere in
    either kernel (a sound over-approximation of what the rest of the kernel
    can observe).  A counterexample rejects only when a differing unit is live
    after the window by :class:`asmevo.analysis.liveness.Liveness` (otherwise it
    may be dead, and the window is ``unknown``).

    Memory operations moved across an ``s_barrier`` give a *final*
    ``unknown-unsupported`` (evidence kind ``cross-wave-order``): differential testing
    must not overrule it, because the emulator's wave schedule is one of many.

    Returns a Verdict: ``accepted`` (all windows proved, or nothing changed),
    ``rejected-counterexample``, ``unknown-timeout`` or ``unknown-unsupported``.
    """
    names = kernels or sorted({k.name for k in cand.kernels} & {k.name for k in orig.kernels})
    ev: list[Evidence] = []
    unknown: list[tuple[str, str]] = []
    hard: list[str] = []
    proved = 0
    for n in names:
        try:
            ko, kc = orig.kernel(n), cand.kernel(n)
        except KeyError:
            unknown.append(("unsupported", f"kernel {n} missing on one side"))
            continue
        wins, why = changed_windows(ko, kc)
        if why:
            unknown.append(("unsupported", why))
            continue
        if not wins:
            continue
        maybe_live = _reads_anywhere(ko, kc)
        try:
            from ..analysis import AnalysisManager
            from ..analysis.liveness import Liveness
            live = Liveness(ko, AnalysisManager(orig))
        except Exception:  # noqa: BLE001 - no liveness: counterexamples stay unknown
            live = None
        for bi, p, eo, ec in wins:
            bo, bc = ko.blocks[bi], kc.blocks[bi]
            wa, wb = bo.instructions[p:eo], bc.instructions[p:ec]
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
            after = _live_after(live, bo, eo)
            # Uniform units (SGPRs, VCC, EXEC, M0, SCC) are written whole, so the liveness
            # analysis is exact for them; VGPR lanes that EXEC masks off survive a later
            # write, so VGPRs stay compared whenever anything reads them.
            lo = {u for u in written & maybe_live
                  if u[0] in ("v", "a") or after is None or unit_name(u) in after}
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
                unknown.append((r.unknown_kind or "unsupported", f"{n} block {where['block']}: {r.reason}"))
                continue
            real = [u for u in r.differing if u.startswith("write#") or u == "memory-writes"
                    or (after is not None and u in after)]
            if real:
                ce = r.counterexample or {}
                vals = "; ".join(f"{u}: original {_hex(ce.get('a', {}).get(u))}, candidate "
                                 f"{_hex(ce.get('b', {}).get(u))}" for u in real[:3] if u in ce.get("a", {}))
                ins = ", ".join(f"{k}={_hex(v)}" for k, v in list(ce.get("inputs", {}).items())[:12])
                ev.append(Evidence("z3", "counterexample",
                                   f"{n} block {where['block']}: window differs in {', '.join(real)}"
                                   + (f" ({vals}; inputs {ins})" if vals else ""),
                                   {**where, "counterexample": r.counterexample, "reason": r.reason}))
            else:
                unknown.append(("unsupported", f"{n} block {where['block']}: windows differ only in "
                                f"units not proved live ({', '.join(r.differing)})"))
    if ev:
        return Verdict(Status.REJECTED_COUNTEREXAMPLE, ev[0].message, ev)
    if hard:
        return Verdict(Status.UNKNOWN_UNSUPPORTED, hard[0],
                       [Evidence("z3", "cross-wave-order", m, {"final": True}) for m in hard])
    if unknown:
        st = Status.UNKNOWN_TIMEOUT if any(k == "timeout" for k, _ in unknown) else Status.UNKNOWN_UNSUPPORTED
        return Verdict(st, unknown[0][1], [Evidence("z3", k, m) for k, m in unknown])
    return Verdict(Status.ACCEPTED, f"{proved} changed window(s) proved equivalent" if proved
                   else "no changed window")


def _barrier_order_changed(wa: list[Instruction], wb: list[Instruction]) -> bool:
    """Whether the order of memory operations relative to ``s_barrier`` differs: other
    waves may observe it, which neither z3 nor the emulator's wave schedule decides."""
    from ..analysis._isa import facts

    def skel(ws):
        return [i.key() for i in ws if i.opcode == "s_barrier" or facts(i).mem]
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

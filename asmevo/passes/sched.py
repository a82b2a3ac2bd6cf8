"""sched: list scheduling inside basic blocks (loads earlier, s_waitcnt later)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import ClassVar

from ..ir import Instruction, Kernel
from .base import Pass, PassResult
from .checks import apply_checked, static_violations
from .effects import effects
from .liveness import kernel_flow

#: Rough issue-to-result latencies (cycles) for the critical path, from the gfx940
#: scheduling model as llvm-mca reports it (ISA_NOTES section 9).
LATENCY = {"vmem": 80, "flat": 80, "smem": 5, "ds": 5, "mfma": 8, "valu": 1, "salu": 1}

_ANCHORS = ("s_nop", "s_barrier", "s_sendmsg", "s_setreg", "s_getreg", "s_setprio", "s_sleep",
            "s_trap", "s_icache", "s_dcache", "s_ttrace", "s_set_gpr_idx", "s_denorm_mode",
            "s_round_mode", "s_setkill", "buffer_wbl2", "buffer_inv", "buffer_wbinvl1")


def _is_mem(inst: Instruction) -> bool:
    return effects(inst).kind in ("vmem", "flat", "smem", "ds")


def _is_load(inst: Instruction) -> bool:
    e = effects(inst)
    return _is_mem(inst) and bool(e.defs_may) and "_atomic" not in inst.opcode \
        and "atomic" not in inst.opcode


def _anchor(inst: Instruction) -> bool:
    """Never moved and never crossed: branches, barriers, messages, atomics, cache and
    mode instructions, ``s_nop``, and any other non-memory instruction with side effects."""
    e = effects(inst)
    if inst.opcode == "s_waitcnt":
        return False
    return inst.opcode.startswith(_ANCHORS) or e.kind == "branch" or e.uses_all \
        or not e.known or "_atomic" in inst.opcode or inst.opcode.startswith("s_atomic") \
        or (e.side_effects and not _is_mem(inst))


def schedule_region(insts: list[Instruction], pending: dict[int, set],
                    window: int, max_stall: int = 8) -> list[Instruction]:
    """New order for a region (no anchors inside).

    Dependences: register RAW/WAR/WAW over units (implicit EXEC/VCC/SCC/M0
    included); memory operations keep their relative order; no memory
    operation crosses an ``s_waitcnt``; an instruction touching a unit that an
    ``s_waitcnt`` waits for (``pending[id(wait)]``) stays after that wait; waits
    keep their order.  Priority: ``s_waitcnt`` only when nothing else is ready;
    then instructions that do not read an SGPR/VCC/EXEC/M0 written by a VALU
    less than 5 places earlier (hazard rows 1, 6, 13, 14); then the longest
    latency path (loads rise); then original order.  An
    instruction never moves up by more than ``window`` places, and an
    ``s_waitcnt`` never sinks below the instruction ``max_stall`` places after it.
    """
    n = len(insts)
    eff = [effects(i) for i in insts]
    preds: list[set[int]] = [set() for _ in range(n)]
    last_def: dict = {}
    last_uses: dict = {}
    last_mem = None
    waits: list[int] = []
    mems_since_wait: list[int] = []
    sink_limit: list[tuple[int, int]] = []
    for j, inst in enumerate(insts):
        e = eff[j]
        for u in e.uses:
            if u in last_def:
                preds[j].add(last_def[u])
        for u in e.defs_may:
            if u in last_def:
                preds[j].add(last_def[u])
            for k in last_uses.get(u, ()):
                preds[j].add(k)
        is_wait = inst.opcode == "s_waitcnt"
        if is_wait:
            for w in waits:
                preds[j].add(w)
            for m in mems_since_wait:
                preds[j].add(m)
            mems_since_wait = []
        else:
            touched = e.uses | e.defs_may
            for w in waits:
                if touched & pending.get(id(insts[w]), set()):
                    preds[j].add(w)
        if _is_mem(inst):
            if last_mem is not None:
                preds[j].add(last_mem)
            last_mem = j
            for w in waits:
                preds[j].add(w)
            mems_since_wait.append(j)
        if j > window:  # bound how far anything may rise
            preds[j].add(j - window - 1)
        if is_wait:
            waits.append(j)
            if j + max_stall + 1 < n:
                sink_limit.append((j, j + max_stall + 1))
        for u in e.uses:
            last_uses.setdefault(u, []).append(j)
        for u in e.defs_may:
            last_def[u] = j
            last_uses[u] = []
    for w, j in sink_limit:
        preds[j].add(w)
    succs: list[list[int]] = [[] for _ in range(n)]
    for j in range(n):
        for p in preds[j]:
            succs[p].append(j)
    # critical path (latency to the end of the region)
    height = [0] * n
    for j in range(n - 1, -1, -1):
        lat = LATENCY.get(eff[j].kind, 1) if _is_load(insts[j]) or eff[j].kind != "vmem" else 1
        height[j] = lat + max((height[s] for s in succs[j]), default=0)
    indeg = [len(p) for p in preds]
    ready = [j for j in range(n) if indeg[j] == 0]
    # VALU writes of SGPR-like units (SGPR, VCC, EXEC, M0) need up to 5 wait states
    # before VALU/VMEM readers (ISA_NOTES hazard rows 1, 6, 13, 14): prefer candidates
    # that do not read such a unit written within the last 5 places
    valu_sgpr_write: dict = {}
    order = []
    while ready:
        pos = len(order)

        def key(j: int):
            e = eff[j]
            stall = any(pos - valu_sgpr_write.get(u, -99) < 5 for u in e.uses
                        if len(u) == 1 or u[0] == "s")
            return (insts[j].opcode == "s_waitcnt", stall, -height[j], j)
        j = min(ready, key=key)
        ready.remove(j)
        order.append(j)
        if eff[j].kind in ("valu", "mfma"):
            for u in eff[j].defs_may:
                if len(u) == 1 or u[0] == "s":
                    valu_sgpr_write[u] = pos
        for s_ in succs[j]:
            indeg[s_] -= 1
            if indeg[s_] == 0:
                ready.append(s_)
    if len(order) != n:  # pragma: no cover - the graph is acyclic by construction
        return insts
    return [insts[j] for j in order]


@dataclass
class Schedule(Pass):
    """List-schedule each basic block: loads as early as their operands allow,
    ``s_waitcnt`` as late as its dependants allow (see :func:`schedule_region`).

    Regions end at anchors that never move (branches, ``s_nop``, barriers,
    messages, atomics, cache and mode instructions).  The result is checked
    with the waitcnt and hazard analyses (a block whose new order adds a
    violation keeps its old order).  Moving instructions changes hazard
    distances, so without ``asmevo.analysis.hazards`` the pass changes nothing.
    """

    name: ClassVar[str] = "sched"
    preserves: ClassVar[frozenset[str]] = frozenset()
    window: int = field(default=32, metadata={"doc": "how far (instructions) one may rise"})
    max_stall: int = field(default=8, metadata={
        "doc": "how far (instructions) an s_waitcnt may sink"})

    def run(self, kernel: Kernel, am) -> PassResult:
        """Reorder ``kernel``'s blocks; stat ``regions-scheduled``."""
        stats = Counter()
        if not kernel_flow(kernel).ok:
            stats["skipped-kernels"] += 1
            return PassResult(changed=False, stats=stats)
        try:
            am.get("hazards", kernel)
        except (KeyError, ImportError):
            stats["skipped-no-hazard-analysis"] += 1
            return PassResult(changed=False, stats=stats)
        wa = am.get("waitcnt", kernel)
        pending: dict[int, set] = {}
        for w in wa.waitcnts:
            try:
                p = wa.pending_before(w)
            except KeyError:
                continue
            pending[id(w)] = set().union(*(set(d) for d in p.values()))
        baseline = static_violations(kernel, am)
        plan = []
        for b in kernel.blocks:
            region: list[Instruction] = []
            for inst in b.instructions + [None]:
                if inst is None or _anchor(inst) or (inst.opcode == "s_waitcnt"
                                                     and id(inst) not in pending):
                    if len(region) >= 2:
                        new = schedule_region(region, pending, self.window, self.max_stall)
                        if any(x is not y for x, y in zip(new, region)):
                            plan.append((tuple(region), new))
                    region = []
                else:
                    region.append(inst)
        kept = apply_checked(kernel, am, plan, baseline, repair=False)
        stats["regions-scheduled"] = len(kept)
        return PassResult(stats=stats)

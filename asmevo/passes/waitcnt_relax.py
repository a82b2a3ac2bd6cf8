"""waitcnt-relax: weaken each s_waitcnt to what the later uses need; merge and delete waits."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import ClassVar

from ..analysis.waitcnt import make_waitcnt
from ..ir import Instruction, Kernel
from .base import Pass, PassResult
from .checks import static_violations

#: Instructions whose memory ordering a preceding (or, for acquire, following)
#: wait may be there for: release/acquire sequences of AMDGPUUsage "Memory
#: Model GFX942", LDS exchange across s_barrier, messages.
_ORDER_OPS = ("s_barrier", "buffer_wbl2", "buffer_inv", "buffer_wbinvl1", "s_dcache_",
              "s_sendmsg", "s_icache_inv", "s_sleep", "s_trap", "s_setprio")


def _ordering(inst: Instruction) -> bool:
    op = inst.opcode
    return op.startswith(_ORDER_OPS) or "_atomic" in op or (
        op.startswith("ds_") and not op.startswith(("ds_read", "ds_load", "ds_write",
                                                    "ds_store", "ds_swizzle", "ds_permute",
                                                    "ds_bpermute", "ds_nop")))


@dataclass
class WaitcntRelax(Pass):
    """Set each s_waitcnt to the weakest counts covering every dependent use; merge adjacent
    waits; delete waits that wait for nothing.

    The counts come from :meth:`asmevo.analysis.waitcnt.WaitcntAnalysis.required`
    (LLVM ``SIInsertWaitcnts`` model, ISA_NOTES section 8).  Conservative
    extras: a wait next to a memory-ordering point (``s_barrier``, atomics,
    ``buffer_wbl2``/``buffer_inv``, ``s_sendmsg``, cache operations; between it
    and the next/previous wait in layout order) keeps its counts, except for
    counters that have nothing outstanding (an earlier wait in the same block
    with an equal or smaller count and no new access since).  The pass checks
    its own result with the waitcnt analysis and undoes any change that adds a
    violation.
    """

    name: ClassVar[str] = "waitcnt-relax"
    preserves: ClassVar[frozenset[str]] = frozenset()
    merge: bool = field(default=True, metadata={"doc": "merge adjacent s_waitcnt"})
    max_steps: int = field(default=500, metadata={
        "doc": "one-at-a-time changes tried when a batch of changes is rejected"})

    def run(self, kernel: Kernel, am) -> PassResult:
        """Relax/merge/delete waits in ``kernel``; stats ``relaxed``, ``deleted``, ``merged``."""
        from .liveness import kernel_flow
        stats = Counter()
        if not kernel_flow(kernel).ok:
            stats["skipped-kernels"] += 1
            return PassResult(changed=False, stats=stats)
        baseline = Counter(static_violations(kernel, am))
        if self.merge:
            from .checks import frozen_blocks
            stats["merged"] += self._merge(kernel, frozen_blocks(kernel, getattr(am, "module", None)))
            am.invalidate(kernel, frozenset())
        plan = self._plan(kernel, am)
        from .checks import frozen_blocks
        frozen = frozen_blocks(kernel, getattr(am, "module", None))
        plan = [p for p in plan if id(kernel.locate(p[0])[0]) not in frozen]
        if plan:
            undo = self._apply(kernel, plan)
            am.invalidate(kernel, frozenset())
            if Counter(static_violations(kernel, am)) - baseline:
                # the batch interacts badly: undo, then one change at a time, re-planning
                # after each (earlier waits first, so later ones keep covering)
                self._undo(kernel, undo)
                am.invalidate(kernel, frozenset())
                applied: list = []
                rejected: set = set()
                for _ in range(self.max_steps):
                    todo = [x for x in self._plan(kernel, am) if id(x[0]) not in rejected
                            and id(kernel.locate(x[0])[0]) not in frozen]
                    if not todo:
                        break
                    item = todo[0]
                    u = self._apply(kernel, [item])
                    am.invalidate(kernel, frozenset())
                    if Counter(static_violations(kernel, am)) - baseline:
                        self._undo(kernel, u)
                        am.invalidate(kernel, frozenset())
                        rejected.add(id(item[0]))
                    else:
                        applied.append(item)
                plan = applied
        for _, new in plan:
            stats["deleted" if new is None else "relaxed"] += 1
        return PassResult(stats=stats)

    # -- steps -----------------------------------------------------------------
    @staticmethod
    def _merge(kernel: Kernel, frozen: set[int] = frozenset()) -> int:
        from ..analysis.waitcnt import parse_waitcnt
        merged = 0
        for b in kernel.blocks:
            if id(b) in frozen:
                continue
            out: list[Instruction] = []
            for inst in b.instructions:
                if inst.opcode == "s_waitcnt" and out and out[-1].opcode == "s_waitcnt":
                    a, c = parse_waitcnt(out[-1]), parse_waitcnt(inst)
                    m = tuple(min(x, y) for x, y in zip(a, c))
                    new = make_waitcnt(m)
                    if new is None:
                        out.pop()
                    else:
                        out[-1] = new if m != a else out[-1]
                    merged += 1
                    continue
                out.append(inst)
            b.instructions = out
        return merged

    def _plan(self, kernel: Kernel, am) -> list[tuple[Instruction, Instruction | None]]:
        from ..analysis.waitcnt import MAX, NAMES, event_of, parse_waitcnt
        wa = am.get("waitcnt", kernel)
        plan = []
        flat = list(kernel.instructions())
        pos = {id(x): n for n, x in enumerate(flat)}
        for b in kernel.blocks:
            last_wait: tuple | None = None      # counts of the previous wait in this block
            issued = [False, False, False]      # accesses per counter since that wait
            for inst in b.instructions:
                if inst.opcode != "s_waitcnt":
                    for c in event_of(inst).counters:
                        issued[c] = True
                    continue
                cur = parse_waitcnt(inst)
                try:
                    req = wa.required(inst)
                except KeyError:  # unreachable wait: leave it
                    last_wait, issued = cur, [False, False, False]
                    continue
                ordering = self._near_order_point(flat, pos[id(inst)])
                new = list(cur)
                for c in range(3):
                    if cur[c] >= MAX[c]:
                        continue
                    nothing_pending = last_wait is not None and not issued[c] \
                        and last_wait[c] <= cur[c]
                    if nothing_pending:
                        new[c] = MAX[c]
                    elif not ordering:
                        new[c] = max(cur[c], req[NAMES[c]])
                newt = tuple(new)
                if newt != cur:
                    plan.append((inst, make_waitcnt(newt)))
                # the state after this wait: what it actually waits for now
                last_wait = tuple(min(x, y) for x, y in zip(newt, last_wait)) \
                    if last_wait is not None and not any(issued) else newt
                issued = [False, False, False]
        return plan

    @staticmethod
    def _near_order_point(flat: list[Instruction], i: int) -> bool:
        """An ordering instruction between the previous and the next wait in layout order."""
        from .effects import effects
        j = i + 1
        while j < len(flat) and flat[j].opcode != "s_waitcnt":
            if _ordering(flat[j]):
                return True
            if effects(flat[j]).kind == "branch":
                break
            j += 1
        j = i - 1
        while j >= 0 and flat[j].opcode != "s_waitcnt":
            if _ordering(flat[j]):
                return True
            if effects(flat[j]).kind == "branch":
                break
            j -= 1
        return False

    @staticmethod
    def _apply(kernel: Kernel, plan) -> list:
        undo = []
        for old, new in plan:
            b, i = kernel.locate(old)
            if new is None:
                del b.instructions[i]
                undo.append((b, i, old, None))
            else:
                b.instructions[i] = new
                undo.append((b, i, old, new))
        return undo

    @staticmethod
    def _undo(kernel: Kernel, undo: list) -> None:
        for b, i, old, new in reversed(undo):
            if new is None:
                b.instructions.insert(i, old)
            else:
                b.instructions[i] = old

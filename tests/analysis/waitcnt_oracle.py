"""Independent oracle for the waitcnt analysis: explicit-state search over issue queues.

Instead of the analysis' per-unit distances joined over the CFG, this explores every
reachable (block, outstanding-access queues) state from the entry, depth first, with the
outstanding accesses of each counter kept as explicit lists in issue order.
``s_waitcnt`` with count N keeps the newest N entries of an in-order counter; an
out-of-order counter (SMEM or mixed kinds on lgkmcnt, a pending FLAT) only clears at 0.
A counter holds at most its maximum (63/15) outstanding accesses: issuing more stalls
until the oldest completes.  Loops are covered because states repeat (finite state space).
"""

from __future__ import annotations

from asmevo.analysis._isa import facts
from asmevo.analysis.cfg import CFG, EXIT
from asmevo.analysis.waitcnt import CALLS, LGKM, MAX, VM, WaitcntAnalysis, event_of, parse_waitcnt


class TooManyPaths(Exception):
    """The state space exceeded the step budget."""


def _ooo(c, q):
    kinds = {e[0] for e in q}
    if "flat" in kinds:
        return True
    if c == LGKM and "smem" in kinds:
        return True
    return len(kinds) > 1


def has_dependence(kernel, am, max_steps: int = 200_000) -> bool:
    """Whether some path reads/overwrites a register while an access writing it may be pending."""
    cfg = am.get(CFG, kernel)
    touch = WaitcntAnalysis._touched
    seen = set()
    stack = [(0, ((), ()))]
    steps = 0
    while stack:
        bi, qs0 = stack.pop()
        if (bi, qs0) in seen:
            continue
        seen.add((bi, qs0))
        steps += 1
        if steps > max_steps:
            raise TooManyPaths
        qs = [list(qs0[0]), list(qs0[1])]
        for inst in cfg.blocks[bi].instructions:
            if inst.opcode == "s_waitcnt":
                counts = parse_waitcnt(inst)
                for c in (VM, LGKM):
                    n = counts[c]
                    if n == 0:
                        qs[c] = []
                    elif not _ooo(c, qs[c]) and len(qs[c]) > n:
                        qs[c] = qs[c][len(qs[c]) - n:]
                continue
            if inst.opcode in CALLS:
                touched, _ = touch(inst, facts(inst))
                if any(u in e[1] for c in (VM, LGKM) for e in qs[c] for u in touched):
                    return True
                qs = [[], []]
                continue
            touched, waw_ok = touch(inst, facts(inst))
            for u in touched:
                where = [c for c in (VM, LGKM) if any(u in e[1] for e in qs[c])]
                if not where:
                    continue
                if u in waw_ok and where == [VM] and not any(e[0] == "flat" for e in qs[VM]):
                    continue
                return True
            ev = event_of(inst)
            for c, k in zip(ev.counters, ev.kinds):
                qs[c].append((k, frozenset(ev.results)))
                if len(qs[c]) > MAX[c]:
                    del qs[c][0]
        key = (tuple(qs[0]), tuple(qs[1]))
        for s in cfg.graph.successors(bi):
            if s != EXIT:
                stack.append((s, key))
    return False

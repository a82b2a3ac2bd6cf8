"""dce: remove instructions whose results are never read and that have no side effects."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from ..ir import Kernel
from .base import Pass, PassResult, stat_counter
from .checks import apply_checked, static_violations
from .liveness import dead_instructions, liveness


@dataclass
class DeadCodeElimination(Pass):
    """Remove instructions with dead results and no side effects (repeats to a fixpoint).

    Kept always: memory instructions (loads too), ``s_waitcnt``/``s_nop``,
    messages, barriers, branches, hardware-register and mode writes, anything
    not in the ISA table.  Writes to EXEC/VCC/SCC/M0 are removed only when
    dead.  VGPR writes count as dead only when nothing reads the register
    afterwards, or when it is fully rewritten under the same EXEC before any
    read (see :mod:`asmevo.passes.liveness`).  Kernels with indirect control
    flow or indexed register access are left alone.  A removal that would add
    a static violation (e.g. fewer wait states between a hazard's producer and
    consumer) is undone (:func:`asmevo.passes.checks.apply_checked`).
    """

    name: ClassVar[str] = "dce"
    preserves: ClassVar[frozenset[str]] = frozenset()
    max_iterations: int = field(default=16, metadata={"doc": "fixpoint iteration limit"})

    def run(self, kernel: Kernel, am) -> PassResult:
        """Remove dead instructions from ``kernel``; stat ``skipped-kernels`` when left alone."""
        removed = 0
        baseline = None
        for _ in range(max(1, self.max_iterations)):
            live = liveness(kernel)
            if not live.flow.ok:
                return PassResult(changed=False, stats=stat_counter(**{"skipped-kernels": 1}))
            dead = dead_instructions(kernel, live)
            if not dead:
                break
            if baseline is None:
                baseline = static_violations(kernel, am)
            plan = [(i, []) for i in kernel.instructions() if id(i) in dead]
            kept = apply_checked(kernel, am, plan, baseline)
            removed += len(kept)
            if len(kept) < len(plan):
                break  # the rest would add a hazard/waitcnt violation: leave them
        return PassResult(changed=bool(removed))

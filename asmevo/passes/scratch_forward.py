"""scratch-forward: forward scratch (spill) stores to later loads; delete stores never loaded."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import ClassVar

from ..ir import Instruction, Kernel
from ..ir.operands import Imm, Reg, Special, base_of, reg_units
from .base import Pass, PassResult
from .checks import static_violations
from .effects import EXEC, effects
from .liveness import kernel_flow

_WIDTH = re.compile(r"^scratch_(load|store)_dword(x([234]))?$")
_OFF = Special("off")


def _access(inst: Instruction):
    """``(kind, base, lo, hi, data_reg, width_ok)`` of a scratch instruction, in bytes
    from the base SGPR; ``None`` for anything that is not a plain ``off``-vaddr access."""
    op = inst.opcode
    if not op.startswith("scratch_"):
        return None
    if inst.has_mod("lds") or "lds" in op:  # LDS-DMA forms: leave the kernel alone
        return None
    m = _WIDTH.match(op)
    ops = inst.operands
    off = inst.mod("offset", 0)
    if not isinstance(off, int):
        return None
    if op.startswith("scratch_load"):
        if len(ops) != 3 or base_of(ops[1]) != _OFF:
            return None
        data, base = base_of(ops[0]), base_of(ops[2])
        kind = "load"
    elif op.startswith("scratch_store"):
        if len(ops) != 3 or base_of(ops[0]) != _OFF:
            return None
        data, base = base_of(ops[1]), base_of(ops[2])
        kind = "store"
    else:
        return None
    if m is None:  # byte/short/d16: touches part of a dword; no forwarding, exact overlap
        nbytes = 2 if "short" in op or "d16" in op else 1
        return kind, base, off, off + nbytes, None, False
    width = int(m.group(3) or 1)
    ok = isinstance(data, Reg) and data.file == "v" and data.count == width and width <= 2 \
        and not inst.modifiers[1:] and all(n == "offset" for n, _ in inst.modifiers)
    return kind, base, off, off + 4 * width, data if ok else None, ok


def _mov(dst: Reg, src: Reg) -> Instruction:
    op = "v_mov_b64_e32" if dst.count == 2 else "v_mov_b32_e32"
    return Instruction(op, [dst, src])


@dataclass
class ScratchForward(Pass):
    """Forward scratch stores to loads of the same slot; delete scratch stores never loaded.

    Applies only when every scratch access of the kernel is
    ``scratch_* ..., off, sB offset:K`` with one base ``sB`` that is written only
    by ``s_mov_b32 sB, <the same constant>`` (as in -O0 spill code), and the
    kernel has no ``flat_*`` access (which could alias the private segment) and
    no LDS-DMA scratch load.  Then each access is a fixed byte range per lane.

    * In a block, ``scratch_load vD, off, sB offset:K`` after ``scratch_store
      off, vS, sB offset:K`` of the same width (1 or 2 dwords), with no EXEC
      write, no overlapping store and no write to ``vS`` in between, becomes
      ``v_mov vD, vS`` (or nothing when ``vD`` is ``vS``): the load would read back
      exactly the active lanes the store wrote.
    * A store whose byte range no scratch load in the kernel overlaps is deleted
      (private memory: no other wave can read it).

    Removing memory operations changes what ``s_waitcnt vmcnt(N)`` counts, so
    the result is checked with the waitcnt analysis; a change that adds a
    violation is undone.
    """

    name: ClassVar[str] = "scratch-forward"
    preserves: ClassVar[frozenset[str]] = frozenset()
    dead_stores: bool = field(default=True, metadata={"doc": "delete stores never loaded"})

    def run(self, kernel: Kernel, am) -> PassResult:
        """Forward and delete; stats ``loads-forwarded``, ``loads-removed``, ``stores-removed``."""
        stats = Counter()
        base = self._base(kernel)
        if base is None:
            return PassResult(changed=False, stats=stats)
        baseline = Counter(static_violations(kernel, am))
        plan = self._plan_forward(kernel)
        applied = self._apply_checked(kernel, am, plan, baseline)
        for old, new in applied:
            stats["loads-removed" if new is None else "loads-forwarded"] += 1
        if self.dead_stores:
            plan = self._plan_dead_stores(kernel)
            applied = self._apply_checked(kernel, am, plan, baseline)
            stats["stores-removed"] += len(applied)
        return PassResult(stats=stats)

    # -- analysis --------------------------------------------------------------
    @staticmethod
    def _base(kernel: Kernel):
        if not kernel_flow(kernel).ok:
            return None
        base = None
        init = None
        any_scratch = False
        for inst in kernel.instructions():
            op = inst.opcode
            if op.startswith("flat_"):
                return None
            if op.startswith("scratch_"):
                any_scratch = True
                a = _access(inst)
                if a is None or not isinstance(a[1], Reg) or a[1].file != "s" \
                        or a[1].count != 1:
                    return None
                if base is None:
                    base = a[1]
                elif a[1] != base:
                    return None
        if not any_scratch or base is None:
            return None
        # the base must be set on every path before it is read: a value live at entry
        # (whatever the launch left in it) would make "the same offset" two addresses
        from .liveness import liveness
        live = liveness(kernel)
        if live.live_in and set(reg_units(base)) & live.live_in[0]:
            return None
        for inst in kernel.instructions():
            if set(reg_units(base)) & effects(inst).defs_may:
                if inst.opcode != "s_mov_b32" or not isinstance(inst.operands[1], Imm):
                    return None
                v = inst.operands[1].value
                if init is not None and v != init:
                    return None
                init = v
        return base

    @staticmethod
    def _plan_forward(kernel: Kernel) -> list:
        plan = []
        exec_units = set(EXEC)
        for b in kernel.blocks:
            avail: list[tuple[int, int, Reg]] = []   # (lo, hi, data) stored in this EXEC epoch
            for inst in b.instructions:
                a = _access(inst)
                if a is not None:
                    kind, _, lo, hi, data, ok = a
                    if kind == "store":
                        avail = [x for x in avail if x[1] <= lo or x[0] >= hi]
                        if ok and data is not None:
                            avail.append((lo, hi, data))
                        continue
                    if ok and data is not None:
                        hit = next((x for x in avail if x[0] == lo and x[1] == hi), None)
                        if hit is not None and hit[2].count == data.count:
                            plan.append((inst, None if hit[2] == data else _mov(data, hit[2])))
                            # the load (or its replacement) writes data: fall through
                e = effects(inst)
                if e.defs_may & exec_units:
                    avail = []
                elif e.defs_may:
                    avail = [x for x in avail if not (set(reg_units(x[2])) & e.defs_may)]
        return plan

    @staticmethod
    def _plan_dead_stores(kernel: Kernel) -> list:
        loads = []
        stores = []
        for inst in kernel.instructions():
            a = _access(inst)
            if a is None:
                continue
            (loads if a[0] == "load" else stores).append((inst, a[2], a[3]))
        return [(s, None) for s, lo, hi in stores
                if not any(l_lo < hi and lo < l_hi for _, l_lo, l_hi in loads)]

    def _apply_checked(self, kernel: Kernel, am, plan: list, baseline: Counter) -> list:
        from .checks import apply_checked
        items = [(old, [] if new is None else [new]) for old, new in plan]
        kept = apply_checked(kernel, am, items, list(baseline.elements()))
        kept_ids = {id(o) for o, _ in kept}
        return [(old, new) for old, new in plan if id(old) in kept_ids]

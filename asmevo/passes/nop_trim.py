"""nop-trim: shorten or remove s_nop to what the hazard rules require."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import ClassVar

from ..ir import Imm, Instruction, Kernel
from .base import Pass, PassResult


def hazard_violations(kernel: Kernel, am) -> Counter | None:
    """Hazard violations of ``kernel`` as a multiset of position-free messages,
    or ``None`` when the hazard analysis (``asmevo.analysis.hazards``) is unavailable."""
    from .checks import _describe
    try:
        h = am.get("hazards", kernel)
    except (KeyError, ImportError):
        return None
    return Counter(_describe(v) for v in getattr(h, "violations", ()))


def _nop(n: int) -> Instruction:
    return Instruction("s_nop", [Imm(n)])


@dataclass
class NopTrim(Pass):
    """Shorten or remove each s_nop as far as the hazard analysis allows.

    ``s_nop N`` provides N+1 wait states (CDNA3 ISA guide, "Manually inserted
    wait states"; LLVM ``GCNHazardRecognizer``).  Each s_nop is tried at
    smaller counts (removal first, then binary search) and a candidate is kept
    only when :mod:`asmevo.analysis.hazards` reports no violation that was not
    there before.  Without the hazard analysis the pass changes nothing.
    """

    name: ClassVar[str] = "nop-trim"
    preserves: ClassVar[frozenset[str]] = frozenset()
    max_checks: int = field(default=4000, metadata={
        "doc": "hazard-analysis runs per kernel before giving up (leaves the rest alone)"})

    def run(self, kernel: Kernel, am) -> PassResult:
        """Trim the s_nops of ``kernel``; stats ``removed-nops``, ``shortened-nops``."""
        stats = Counter()
        base = hazard_violations(kernel, am)
        if base is None:
            stats["skipped-no-hazard-analysis"] += 1
            return PassResult(changed=False, stats=stats)
        budget = [self.max_checks]
        from .checks import frozen_blocks
        frozen = frozen_blocks(kernel, getattr(am, "module", None))
        stats["merged-nops"] += self._merge_runs(kernel, frozen)
        am.invalidate(kernel, frozenset())
        base = hazard_violations(kernel, am) or base

        def ok() -> bool:
            budget[0] -= 1
            am.invalidate(kernel, frozenset())
            v = hazard_violations(kernel, am)
            return v is not None and not (v - base)

        for b in kernel.blocks:
            if id(b) in frozen:
                continue
            i = 0
            while i < len(b.instructions):
                inst = b.instructions[i]
                if inst.opcode != "s_nop" or not inst.operands or budget[0] <= 0:
                    i += 1
                    continue
                n = getattr(inst.operands[0], "value", None)
                if not isinstance(n, int):
                    i += 1
                    continue
                del b.instructions[i]           # try removing it
                if ok():
                    stats["removed-nops"] += 1
                    continue
                lo, hi = 0, n                   # smallest count in [0, n] that is safe
                best = n
                # first guess: what the hazard analysis says the next instruction needs
                # from this nop (the failed removal left that analysis cached)
                guess = self._guess(kernel, am, b, i)
                if guess is not None and 0 <= guess - 1 < n:
                    b.instructions.insert(i, _nop(guess - 1))
                    good = ok()
                    del b.instructions[i]
                    if good:  # fewer cannot cover the next instruction's hazards
                        best = lo = hi = guess - 1
                    else:
                        lo = guess
                while lo < hi and budget[0] > 0:
                    mid = (lo + hi) // 2
                    b.instructions.insert(i, _nop(mid))
                    good = ok()
                    del b.instructions[i]
                    if good:
                        best, hi = mid, mid
                    else:
                        lo = mid + 1
                if best < n:
                    b.instructions.insert(i, _nop(best))
                    stats["shortened-nops"] += 1
                else:
                    b.instructions.insert(i, inst)
                am.invalidate(kernel, frozenset())
                i += 1
        return PassResult(stats=stats)

    @staticmethod
    def _guess(kernel: Kernel, am, block, i: int) -> int | None:
        """Wait states the instruction now at ``block.instructions[i]`` needs from a nop
        before it (:meth:`asmevo.analysis.hazards.HazardAnalysis.required_nops`)."""
        if i >= len(block.instructions):
            return None
        try:
            return int(am.get("hazards", kernel).required_nops(block.instructions[i]))
        except Exception:  # noqa: BLE001 - no guess: fall back to the binary search
            return None

    @staticmethod
    def _merge_runs(kernel: Kernel, frozen: set[int] = frozenset()) -> int:
        """Merge runs of adjacent ``s_nop`` into the fewest that give the same wait states
        (``s_nop N`` gives N+1, at most 8 each).  Returns the number of nops saved."""
        saved = 0
        for b in kernel.blocks:
            if id(b) in frozen:
                continue
            out: list[Instruction] = []
            run: list[Instruction] = []

            def flush() -> None:
                nonlocal saved
                total = sum(int(getattr(x.operands[0], "value", 0)) + 1 for x in run)
                need = (total + 7) // 8
                if len(run) > need:
                    saved += len(run) - need
                    while total > 0:
                        n = min(total, 8)
                        out.append(_nop(n - 1))
                        total -= n
                else:
                    out.extend(run)
                run.clear()
            for inst in b.instructions:
                if inst.opcode == "s_nop" and inst.operands and isinstance(
                        getattr(inst.operands[0], "value", None), int):
                    run.append(inst)
                    continue
                if run:
                    flush()
                out.append(inst)
            if run:
                flush()
            b.instructions = out
        return saved

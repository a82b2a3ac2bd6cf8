"""copy-prop: forward v_mov/s_mov copies to later readers and remove moves left dead."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import ClassVar

from ..errors import AsmevoError
from ..ir import Instruction, Kernel
from ..ir.operands import Imm, Reg, Src, base_of, reg_units
from .base import Pass, PassResult
from .effects import EXEC, effects, is_copy
from .checks import apply_checked, static_violations
from .liveness import dead_instructions, liveness

#: Readers that see other lanes of a VGPR (a per-lane copy is not enough for them).
_CROSS_LANE = ("v_readlane", "v_readfirstlane", "v_writelane", "ds_swizzle", "ds_permute",
               "ds_bpermute", "v_mfma", "v_smfmac", "v_permlane")


def _typecheck(inst: Instruction) -> bool | None:
    """True/False from :func:`asmevo.frontend.typecheck.check_instruction`; ``None`` when
    the ISA table is not available."""
    try:
        from ..frontend.typecheck import check_instruction
        check_instruction(inst)
        return True
    except ImportError:
        return None
    except AsmevoError:
        return False


def _same_class(old: Reg, new) -> bool:
    """Replacement that keeps the operand class (VGPR for VGPR, SGPR for SGPR, same width)."""
    return isinstance(new, Reg) and new.file == old.file and new.count == old.count


@dataclass
class CopyPropagation(Pass):
    """Forward ``v_mov``/``s_mov`` copies within a basic block, then delete dead copies.

    A read of ``d`` after ``d = s`` becomes a read of ``s`` when neither ``d``
    nor ``s`` is rewritten in between, and -- for a VGPR destination, which the
    move writes only in lanes active in EXEC -- EXEC is not written in between
    and the reader is a per-lane reader (not DPP/SDWA, readlane, permute,
    swizzle or MFMA).  The new instruction must type-check against the ISA
    table (operand class, constant bus, literal rules); without the table only
    same-class register replacements are made.  Self-moves are removed; moves
    whose destination is then dead are removed (as in ``dce``).
    """

    name: ClassVar[str] = "copy-prop"
    preserves: ClassVar[frozenset[str]] = frozenset()
    constants: bool = field(default=True, metadata={
        "doc": "also forward inline-constant moves (needs the ISA table)"})

    def run(self, kernel: Kernel, am) -> PassResult:
        """Propagate copies in ``kernel``; stats ``operands-replaced`` (instructions
        rewritten), ``moves-removed``.  Edits that would add a static violation
        (a hazard from a new SGPR read, a waitcnt problem) are undone."""
        stats = Counter()
        live = liveness(kernel)
        if not live.flow.ok:
            stats["skipped-kernels"] += 1
            return PassResult(changed=False, stats=stats)
        baseline = static_violations(kernel, am)
        plan = []
        for b in kernel.blocks:
            avail: dict[Reg, tuple] = {}   # dst -> (src operand, vector dst?)
            for inst in b.instructions:
                c = is_copy(inst)
                if c is not None and base_of(c[1]) == c[0]:
                    plan.append((inst, []))   # self-move: no effect in any lane
                    continue
                new = self._rewrite(inst, avail, stats)
                if new is not inst:
                    plan.append((inst, [new]))
                e = effects(new)
                killed = e.defs_may
                if killed & set(EXEC):
                    avail = {d: v for d, v in avail.items() if not v[1]}
                if killed:
                    avail = {d: v for d, v in avail.items()
                             if not (set(reg_units(d)) & killed)
                             and not (set(reg_units(v[0])) & killed)}
                c = is_copy(new)
                if c is not None:
                    dst, src = c
                    if isinstance(dst, Reg) and (isinstance(src, Reg) or (
                            self.constants and isinstance(src, Imm))):
                        if not (set(reg_units(dst)) & set(reg_units(src))):
                            avail[dst] = (src, dst.file in ("v", "a"))
        kept = apply_checked(kernel, am, plan, baseline)
        stats["operands-replaced"] = sum(1 for _, n in kept if n)
        stats["moves-removed"] = sum(1 for _, n in kept if not n)
        # moves whose destination is now never read
        live = liveness(kernel)
        dead = dead_instructions(kernel, live)
        plan = [(i, []) for i in kernel.instructions() if id(i) in dead and is_copy(i) is not None]
        stats["moves-removed"] += len(apply_checked(kernel, am, plan, baseline))
        return PassResult(stats=stats)

    def _rewrite(self, inst: Instruction, avail: dict, stats: Counter) -> Instruction:
        if not avail:
            return inst
        e = effects(inst)
        if e.ndefs < 0 or e.uses_all or not e.known or inst.opcode == "s_waitcnt":
            return inst
        op = inst.opcode
        per_lane = not (op.startswith(_CROSS_LANE) or "_dpp" in op or "_sdwa" in op
                        or inst.has_mod("quad_perm") or inst.has_mod("row_mask"))
        ops = list(inst.operands)
        changed = False
        for k in range(e.ndefs, len(ops)):
            o = ops[k]
            base = base_of(o)
            if not isinstance(base, Reg) or base not in avail:
                continue
            if e.partial and k < max(e.ndefs, 1) + 0 and base == base_of(ops[0]):
                continue
            src, vector_dst = avail[base]
            if vector_dst and not per_lane:
                continue
            if isinstance(o, Src):
                if isinstance(src, Imm) and (o.neg or o.abs or o.sext):
                    continue
                repl = Src(src, o.neg, o.abs, o.sext, o.style)
            else:
                repl = src
            trial = ops[:k] + [repl] + ops[k + 1:]
            cand = inst.evolve(operands=trial)
            verdict = _typecheck(cand)
            if verdict is None:
                verdict = _same_class(base, src)
            if verdict:
                ops = trial
                changed = True
        return inst.evolve(operands=ops) if changed else inst

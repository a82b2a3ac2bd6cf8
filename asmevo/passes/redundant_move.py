"""redundant-move: delete moves whose destination already equals the source in every lane."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import ClassVar

from ..ir import Imm, Instruction, Kernel, Reg, Special
from ..ir.operands import reg_units
from .base import Pass, PassResult
from .effects import EXEC, effects
from .checks import apply_checked, static_violations
from .liveness import kernel_flow

_EXEC = frozenset(EXEC)
_MOVES = ("v_accvgpr_read_b32", "v_accvgpr_write_b32", "v_mov_b32_e32", "v_accvgpr_mov_b32")


def _move(inst: Instruction):
    """``(dst, src)`` for a plain 32-bit VGPR/AGPR move, else ``None``."""
    if inst.opcode not in _MOVES or inst.modifiers or len(inst.operands) != 2:
        return None
    d, s = inst.operands
    if isinstance(d, Reg) and isinstance(s, Reg) and d.count == 1 and s.count == 1 \
            and d.file in ("v", "a") and s.file in ("v", "a"):
        return d, s
    return None


def sets_full_exec(inst: Instruction) -> bool:
    """``s_or_saveexec_b64 X, -1`` or ``s_mov_b64 exec, -1``: EXEC becomes all ones."""
    ops = inst.operands
    if inst.opcode == "s_or_saveexec_b64" and len(ops) == 2 and isinstance(ops[1], Imm):
        return ops[1].value == -1
    if inst.opcode == "s_mov_b64" and len(ops) == 2 and ops[0] == Special("exec") \
            and isinstance(ops[1], Imm):
        return ops[1].value == -1
    return False


def _transfer(insts, facts: set, full: bool, dead: set | None) -> tuple[set, bool]:
    """Apply a block to ``facts`` (frozensets {u1, u2}: equal in every lane); ``full``:
    EXEC is known to be all ones.  Records redundant moves in ``dead`` (ids)."""
    for inst in insts:
        mv = _move(inst)
        if mv is not None:
            pair = frozenset((reg_units(mv[0])[0], reg_units(mv[1])[0]))
            if pair in facts:
                if dead is not None:
                    dead.add(id(inst))
                continue  # no effect at all
        e = effects(inst)
        if e.defs_may:
            facts = {f for f in facts if not (f & e.defs_may)}
        if e.defs_may & _EXEC:
            full = sets_full_exec(inst)
        if mv is not None and full and mv[0] != mv[1]:
            facts.add(frozenset((reg_units(mv[0])[0], reg_units(mv[1])[0])))
    return facts, full


@dataclass
class RedundantMove(Pass):
    """Delete ``v_accvgpr_read``/``v_accvgpr_write``/``v_mov_b32`` whose destination already
    holds the source's value in every lane.

    Facts "``x == y`` in every lane" come from such a move executed while EXEC is
    known to be all ones (after ``s_or_saveexec_b64 X, -1`` or ``s_mov_b64 exec, -1``
    in the same block); any write to ``x`` or ``y`` ends them; at a join only
    facts true on every incoming path survive.  This removes the whole-wave
    spill reloads of -O0 code (``s_or_saveexec_b64 s[8:9], -1 ;
    v_accvgpr_read_b32 v0, a0 ; s_mov_b64 exec, s[8:9]``) when nothing changed
    in between; ``peephole`` then removes the empty EXEC save/restore.
    """

    name: ClassVar[str] = "redundant-move"
    preserves: ClassVar[frozenset[str]] = frozenset()

    def run(self, kernel: Kernel, am) -> PassResult:
        """Delete redundant moves; stat ``moves-removed``."""
        stats = Counter()
        flow = kernel_flow(kernel)
        if not flow.ok:
            stats["skipped-kernels"] += 1
            return PassResult(changed=False, stats=stats)
        n = len(kernel.blocks)
        pred = flow.pred
        TOP = None
        fin: list = [TOP] * n          # facts at block entry (None = not yet reached)
        fout: list = [TOP] * n
        fin[0] = set()
        work = list(range(n))
        while work:
            b = work.pop(0)
            if b != 0:
                ins = [fout[p] for p in pred[b] if fout[p] is not None]
                if len(ins) < len(pred[b]) and not ins:
                    continue
                new_in = set.intersection(*ins) if ins else set()
                # a predecessor not yet computed imposes nothing yet (optimistic; fixpoint)
                fin[b] = new_in
            if fin[b] is None:
                continue
            out, _ = _transfer(kernel.blocks[b].instructions, set(fin[b]), False, None)
            if out != fout[b]:
                fout[b] = out
                for s in flow.succ[b]:
                    if s not in work:
                        work.append(s)
        dead: set = set()
        for b in range(n):
            if fin[b] is not None:
                _transfer(kernel.blocks[b].instructions, set(fin[b]), False, dead)
        if dead:
            plan = [(i, []) for i in kernel.instructions() if id(i) in dead]
            kept = apply_checked(kernel, am, plan, static_violations(kernel, am))
            stats["moves-removed"] = len(kept)
        return PassResult(stats=stats)

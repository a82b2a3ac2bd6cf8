"""peephole: a table of rewrite rules over windows of 1-2 adjacent instructions.

Each rule is proved by z3 in tests/passes/test_peephole.py through
:func:`asmevo.verify.check_windows` (the verifier's window equivalence) on
representative operands, with the dead temporaries excluded from the
compared units exactly as the rule's side condition requires.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, ClassVar

from ..errors import AsmevoError
from ..ir import Imm, Instruction, Kernel, Reg, Special
from ..ir.operands import Src, reg_units
from .base import Pass, PassResult
from .effects import SCC, effects
from .checks import apply_checked, static_violations, typechecks
from .liveness import live_after_each, liveness


def _pow2(op) -> int | None:
    """k when ``op`` is the integer immediate 2**k (1 <= k <= 31)."""
    if isinstance(op, Imm) and isinstance(op.value, int) and not isinstance(op.value, bool):
        v = op.value & 0xFFFFFFFF
        if v > 1 and v & (v - 1) == 0:
            return v.bit_length() - 1
    return None


def _plain(op) -> bool:
    """A source without modifiers that is a register or an integer immediate."""
    return not isinstance(op, Src) and isinstance(op, (Reg, Imm, Special)) and not (
        isinstance(op, Imm) and isinstance(op.value, float))


def _imm(k: int) -> Imm:
    return Imm(k, str(k))


Dead = Callable[[object], bool]   # dead(operand) -> all its units dead after the window


def r_mul_pow2_vgpr(w: list[Instruction], dead: Dead):
    """``v_mul_lo_u32 d, a, 2^k`` -> ``v_lshlrev_b32_e64 d, k, a`` (low 32 bits of a*2^k)."""
    (i,) = w
    if i.opcode != "v_mul_lo_u32" or i.modifiers or len(i.operands) != 3:
        return None
    d, a, b = i.operands
    for x, y in ((a, b), (b, a)):
        k = _pow2(y)
        if k is not None and _plain(x):
            return [Instruction("v_lshlrev_b32_e64", [d, _imm(k), x])]
    return None


def r_mul_pow2_sgpr(w: list[Instruction], dead: Dead):
    """``s_mul_i32 d, a, 2^k`` -> ``s_lshl_b32 d, a, k`` when SCC is dead (s_lshl writes it)."""
    (i,) = w
    if i.opcode != "s_mul_i32" or i.modifiers or len(i.operands) != 3 or not dead(SCC):
        return None
    d, a, b = i.operands
    for x, y in ((a, b), (b, a)):
        k = _pow2(y)
        if k is not None and _plain(x):
            return [Instruction("s_lshl_b32", [d, x, _imm(k)])]
    return None


_SHL = ("v_lshlrev_b32_e32", "v_lshlrev_b32_e64")
_ADD = ("v_add_u32_e32", "v_add_u32_e64")


def _tmp_ok(t, d, dead: Dead) -> bool:
    return isinstance(t, Reg) and t.file == "v" and t.count == 1 and (t == d or dead(t))


def r_shl_add(w: list[Instruction], dead: Dead):
    """``v_lshlrev_b32 t, k, a ; v_add_u32 d, t, b`` -> ``v_lshl_add_u32 d, a, k, b``
    when ``t`` is ``d`` or dead after the pair."""
    s, a_ = w
    if s.opcode not in _SHL or a_.opcode not in _ADD or s.modifiers or a_.modifiers:
        return None
    t, k, a = s.operands
    d, x, y = a_.operands
    if not all(_plain(o) for o in (k, a, x, y)):
        return None
    if x == t and y != t:
        b = y
    elif y == t and x != t:
        b = x
    else:
        return None
    if not _tmp_ok(t, d, dead) or (isinstance(b, Reg) and b == t):
        return None
    return [Instruction("v_lshl_add_u32", [d, a, k, b])]


def r_add_shl(w: list[Instruction], dead: Dead):
    """``v_add_u32 t, a, b ; v_lshlrev_b32 d, k, t`` -> ``v_add_lshl_u32 d, a, b, k``
    when ``t`` is ``d`` or dead after the pair."""
    a_, s = w
    if s.opcode not in _SHL or a_.opcode not in _ADD or s.modifiers or a_.modifiers:
        return None
    t, a, b = a_.operands
    d, k, x = s.operands
    if x != t or not all(_plain(o) for o in (a, b, k)) or not _tmp_ok(t, d, dead):
        return None
    if k == t:
        return None
    return [Instruction("v_add_lshl_u32", [d, a, b, k])]


def r_exec_save_restore(w: list[Instruction], dead: Dead):
    """``s_or_saveexec_b64 X, -1 ; s_mov_b64 exec, X`` (or ``s_mov_b64 X, exec ;
    s_mov_b64 exec, X``) -> nothing, when X and SCC are dead after the pair:
    EXEC ends as it started."""
    a, b = w
    if b.opcode != "s_mov_b64" or b.modifiers or len(b.operands) != 2 \
            or b.operands[0] != Special("exec"):
        return None
    x = b.operands[1]
    if not isinstance(x, Reg) or a.modifiers or len(a.operands) != 2 or a.operands[0] != x:
        return None
    if a.opcode == "s_or_saveexec_b64" and isinstance(a.operands[1], Imm) \
            and a.operands[1].value == -1:
        return [] if dead(x) and dead(SCC) else None
    if a.opcode == "s_mov_b64" and a.operands[1] == Special("exec"):
        return [] if dead(x) else None
    return None


@dataclass(frozen=True)
class Rule:
    """One peephole rule: ``size`` adjacent instructions -> replacement (or ``None``)."""

    name: str
    size: int
    fn: Callable


RULES: tuple[Rule, ...] = (
    Rule("mul-pow2-vgpr", 1, r_mul_pow2_vgpr),
    Rule("mul-pow2-sgpr", 1, r_mul_pow2_sgpr),
    Rule("shl-add", 2, r_shl_add),
    Rule("add-shl", 2, r_add_shl),
    Rule("exec-save-restore", 2, r_exec_save_restore),
)


def _typechecks(insts: list[Instruction]) -> bool:
    """All of ``insts`` type-check; without the ISA table nothing is emitted unchecked."""
    return all(typechecks(i) is True for i in insts)


@dataclass
class Peephole(Pass):
    """Apply the peephole rule table (mul by 2^k -> shift, shift+add / add+shift fusion,
    redundant EXEC save/restore) within basic blocks; each rewrite is type-checked.

    Side conditions use the pass liveness (:mod:`asmevo.passes.liveness`): a
    temporary may disappear only when no later instruction can read it.
    """

    name: ClassVar[str] = "peephole"
    preserves: ClassVar[frozenset[str]] = frozenset()
    rules: str = field(default="all", metadata={
        "doc": "comma-free list of rule names joined by '+', or 'all'"})

    def __post_init__(self) -> None:
        names = {r.name for r in RULES}
        if self.rules != "all":
            bad = [r for r in self.rules.split("+") if r not in names]
            if bad:
                raise AsmevoError(f"unknown peephole rule(s) {', '.join(bad)}; rules: "
                                  + ", ".join(r.name for r in RULES))

    def run(self, kernel: Kernel, am) -> PassResult:
        """Rewrite ``kernel``; stats ``rules.<name>`` per rule applied."""
        stats = Counter()
        enabled = [r for r in RULES if self.rules == "all" or r.name in self.rules.split("+")]
        for _ in range(4):
            live = liveness(kernel)
            if not live.flow.ok:
                stats["skipped-kernels"] += 1
                return PassResult(changed=False, stats=stats)
            after = live_after_each(kernel, live)
            plan = []
            names = []
            for b in kernel.blocks:
                insts = b.instructions
                i = 0
                while i < len(insts):
                    done = False
                    for r in enabled:
                        w = insts[i:i + r.size]
                        if len(w) < r.size or any(effects(x).uses_all for x in w):
                            continue
                        live_after = after[id(w[-1])]

                        def dead(op, live_after=live_after) -> bool:
                            units = op if isinstance(op, tuple) and op and isinstance(
                                op[0], tuple) else reg_units(op)
                            return not (set(units) & live_after)
                        rep = r.fn(w, dead)
                        if rep is None or not _typechecks(rep):
                            continue
                        plan.append((tuple(w), rep))
                        names.append(r.name)
                        i += r.size
                        done = True
                        break
                    if not done:
                        i += 1
            if not plan:
                break
            kept = apply_checked(kernel, am, plan, static_violations(kernel, am))
            by_id = {id(p[0]): n for p, n in zip(plan, names)}
            for item in kept:
                stats[f"rules.{by_id[id(item[0])]}"] += 1
            if not kept:
                break
        return PassResult(stats=stats)

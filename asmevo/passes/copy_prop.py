"""copy-prop: forward v_mov/s_mov copies to later readers and remove moves left dead."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import ClassVar

from ..analysis.liveness import lane_effects
from ..ir import Instruction, Kernel
from ..ir.operands import Imm, Reg, Special, Src, base_of, reg_units
from .base import Pass, PassResult
from .effects import EXEC, effects, is_copy
from .checks import apply_checked, static_violations, typechecks
from .liveness import dead_instructions, liveness


def _same_class(old: Reg, new) -> bool:
    """Replacement that keeps the operand class (VGPR for VGPR, SGPR for SGPR, same width)."""
    return isinstance(new, Reg) and new.file == old.file and new.count == old.count


@dataclass
class CopyPropagation(Pass):
    """Forward ``v_mov``/``s_mov`` copies to later readers, then delete dead copies.

    * Scalar copies (``s_mov_b32``/``s_mov_b64`` into SGPRs, of SGPRs, EXEC, VCC,
      M0 or integer constants) are tracked per 32-bit unit by an
      available-copies dataflow over the whole kernel (a fact holds at a block
      entry only if it holds at the end of every predecessor; LLVM
      ``MachineCopyPropagation`` does this per block, ``-global-copy-prop`` in
      the textbook sense).  A 64-bit operand is replaced when both halves are
      copies of an aligned pair (``s[0:1]`` after ``s0 = s20; s1 = s21`` reads
      ``s[20:21]``; after ``s[0:1] = exec`` it reads ``exec``) or of constants
      that form one 64-bit inline constant.
    * Vector copies: a read of ``d`` after ``d = s`` in the same block becomes a
      read of ``s`` when neither is rewritten in between, EXEC is not written in
      between (the move wrote only the lanes active then) and the reader is a
      per-lane reader (not DPP/SDWA, readlane, permute, swizzle or MFMA).

    The new instruction must type-check against the ISA table (operand class,
    constant bus, literal rules); without the table only same-class register
    replacements are made.  Self-moves (also those a replacement creates) are
    removed; moves whose destination is then dead are removed (as in ``dce``);
    two ``s_mov_b32`` that copy an aligned SGPR pair half by half become one
    ``s_mov_b64`` when nothing in between reads or writes the halves involved.
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
        entry_facts = _scalar_facts_at_entry(kernel, live.flow, self.constants)
        for b, blk in enumerate(kernel.blocks):
            avail: dict[Reg, tuple] = {}   # vector dst -> (src operand, True)
            facts = dict(entry_facts[b] or {})   # scalar unit -> ("unit", u) | ("imm", Imm)
            for inst in blk.instructions:
                c = is_copy(inst)
                if c is not None and base_of(c[1]) == c[0]:
                    plan.append((inst, []))   # self-move: no effect in any lane
                    continue
                new = self._rewrite(inst, avail, facts, stats)
                c2 = is_copy(new)
                if new is not inst:
                    if c2 is not None and base_of(c2[1]) == c2[0]:
                        plan.append((inst, []))   # became a self-move
                    else:
                        plan.append((inst, [new]))
                e = effects(new)
                killed = e.defs_may
                if killed & set(EXEC):
                    avail = {}
                if killed:
                    avail = {d: v for d, v in avail.items()
                             if not (set(reg_units(d)) & killed)
                             and not (set(reg_units(v[0])) & killed)}
                _scalar_transfer(inst, facts, self.constants)
                if c2 is not None:
                    dst, src = c2
                    if isinstance(dst, Reg) and dst.file in ("v", "a") and (
                            isinstance(src, Reg) or (self.constants and isinstance(src, Imm))):
                        if not (set(reg_units(dst)) & set(reg_units(src))):
                            avail[dst] = (src, True)
        kept = apply_checked(kernel, am, plan, baseline)
        stats["operands-replaced"] = sum(1 for _, n in kept if n)
        stats["moves-removed"] = sum(1 for _, n in kept if not n)
        # moves whose destination is now never read
        live = liveness(kernel)
        dead = dead_instructions(kernel, live)
        plan = [(i, []) for i in kernel.instructions() if id(i) in dead and is_copy(i) is not None]
        stats["moves-removed"] += len(apply_checked(kernel, am, plan, baseline))
        stats["moves-merged"] += _apply_merges(kernel, am, _pair_merges(kernel), baseline)
        return PassResult(stats=stats)

    def _rewrite(self, inst: Instruction, avail: dict, facts: dict, stats: Counter) -> Instruction:
        if not avail and not facts:
            return inst
        e = effects(inst)
        if e.ndefs < 0 or e.uses_all or not e.known or inst.opcode == "s_waitcnt":
            return inst
        op = inst.opcode
        # a per-lane copy only serves readers of their own lane (no DPP, SDWA, readlane,
        # permute, swizzle or MFMA; asmevo.analysis.liveness.lane_effects)
        per_lane = lane_effects(inst)[0] and "_sdwa" not in op
        ops = list(inst.operands)
        changed = False
        for k in range(e.ndefs, len(ops)):
            o = ops[k]
            base = base_of(o)
            if not isinstance(base, Reg):
                continue
            if base in avail:
                src, vector_dst = avail[base]
            elif base.file == "s" and facts:
                src, vector_dst = _scalar_source(base, facts), False
                if src is None:
                    continue
            else:
                continue
            if vector_dst and not per_lane:
                continue
            if isinstance(src, Imm) and not _imm_operand_ok(op, o, src):
                continue
            if isinstance(o, Src):
                if isinstance(src, Imm) and (o.neg or o.abs or o.sext):
                    continue
                repl = Src(src, o.neg, o.abs, o.sext, o.style)
            else:
                repl = src
            trial = ops[:k] + [repl] + ops[k + 1:]
            cand = inst.evolve(operands=trial)
            verdict = typechecks(cand)
            if verdict is None:
                verdict = _same_class(base, src)
            if verdict:
                ops = trial
                changed = True
        return inst.evolve(operands=ops) if changed else inst


#: opcode fragments of instructions with 16-bit, 64-bit, packed or 8-bit-float operands,
#: where an inline constant means something else than the 32-bit register it replaces:
#: a float constant is encoded in the operand's own type (1.0 is 0x3C00 for f16, an
#: f64 for 64-bit operands) and packed (VOP3P) operands apply a constant to both halves
#: (CDNA3 ISA guide, "Inline Constants" and "Packed Math").
_NOT_32BIT = ("16", "64", "pk_", "dot", "mfma", "smfmac", "_sdwa", "_dpp", "pack",
              "fp8", "bf8", "pknorm", "pkrtz", "perm", "mix")
#: scalar memory instructions (their SGPR operands are addresses and offsets)
_SMEM = ("s_load_", "s_buffer_", "s_store_", "s_atomic_", "s_scratch_", "s_dcache_",
         "s_atc_probe", "s_memtime", "s_memrealtime")


def _imm_operand_ok(opcode: str, operand, imm: Imm) -> bool:
    """Whether a register operand of ``opcode`` may be replaced by the immediate ``imm``
    that spells its value.  An integer inline constant is a bit pattern (sign-extended to
    the operand's width), so an integer may go into any operand of a scalar (all-integer)
    instruction and into a 1-dword operand of a vector instruction without 16-bit or
    packed operands (the 32-bit shift amount of ``v_lshlrev_b64`` included).  A float
    constant is encoded in the operand's own type, so it goes only into 1-dword operands
    of instructions whose operands are all 32 bits wide.  Where a literal may go (no
    VOP3/VOP3P literal on gfx9) is the ISA-table type check's business (the caller runs it)."""
    r = base_of(operand)
    is_int = isinstance(imm.value, int) and not isinstance(imm.value, bool)
    if opcode.startswith(_SMEM):
        # an SGPR offset is a zero-extended 32-bit value; an immediate goes into the
        # (signed 21-bit / unsigned 20-bit) offset field: not the same address
        return False
    if opcode.startswith("s_") and is_int:
        return True
    if isinstance(r, Reg) and r.count != 1:
        return False
    bad = tuple(f for f in _NOT_32BIT if f != "64") + ("f64",) if is_int else _NOT_32BIT
    return not any(f in opcode for f in bad)


# -- scalar copies: global available-copies dataflow over 32-bit units ------------
_PAIR_NAMES = {("exec_lo", "exec_hi"): "exec", ("vcc_lo", "vcc_hi"): "vcc"}


def _scalar_copy_facts(inst: Instruction, constants: bool):
    """``[(dst unit, fact)]`` for ``s_mov_b32``/``s_mov_b64`` into SGPRs; a fact is
    ``("unit", src unit)`` or ``("imm", Imm)`` (32-bit value of that half)."""
    if inst.opcode not in ("s_mov_b32", "s_mov_b64"):
        return None
    c = is_copy(inst)
    if c is None:
        return None
    dst, src = c
    if not (isinstance(dst, Reg) and dst.file == "s"):
        return None
    du = reg_units(dst)
    if isinstance(src, Imm):
        v = src.value
        if not constants or not isinstance(v, int) or isinstance(v, bool):
            return None
        if dst.count == 1:
            return [(du[0], ("imm", src))]
        if -16 <= v <= 64:   # a 64-bit inline constant: sign-extended
            return [(du[0], ("imm", Imm(v, str(v)))), (du[1], ("imm", Imm(-1 if v < 0 else 0,
                                                                            str(-1 if v < 0 else 0))))]
        return None
    su = reg_units(src)
    if not su or len(su) != len(du) or set(su) & set(du):
        return None
    if any(u[0] in ("v", "a") or u == ("scc",) for u in su):
        return None
    return [(d, ("unit", u)) for d, u in zip(du, su)]


def _scalar_transfer(inst: Instruction, facts: dict, constants: bool) -> None:
    """Update ``facts`` (in place) across ``inst``."""
    e = effects(inst)
    if e.uses_all or not e.known:
        facts.clear()
        return
    killed = e.defs_may
    if killed:
        for d in [d for d, f in facts.items()
                  if d in killed or (f[0] == "unit" and f[1] in killed)]:
            del facts[d]
    new = _scalar_copy_facts(inst, constants)
    if new:
        facts.update(new)


def _scalar_facts_at_entry(kernel: Kernel, flow, constants: bool) -> list:
    """Facts holding at each block entry (intersection over predecessors; the
    kernel entry has none).  Optimistic iteration from "unvisited" to a fixpoint."""
    n = len(kernel.blocks)
    pred = flow.pred
    ins: list = [None] * n
    outs: list = [None] * n
    changed = True
    while changed:
        changed = False
        for b in range(n):
            srcs = [outs[p] for p in pred[b] if outs[p] is not None]
            if b == 0:
                srcs.append({})
            if not srcs:
                continue
            cur = dict(srcs[0])
            for o in srcs[1:]:
                cur = {k: v for k, v in cur.items() if o.get(k) == v}
            if cur == ins[b] and outs[b] is not None:
                continue
            ins[b] = cur
            facts = dict(cur)
            for inst in kernel.blocks[b].instructions:
                _scalar_transfer(inst, facts, constants)
            if facts != outs[b]:
                outs[b] = facts
                changed = True
    return ins


def _unit_operand(u: tuple):
    if len(u) == 2 and u[0] == "s":
        return Reg("s", u[1], 1)
    if len(u) == 1:
        return Special(u[0])
    return None


def _scalar_source(base: Reg, facts: dict):
    """What an SGPR operand ``base`` (1 or 2 dwords) can be read as, or None."""
    units = reg_units(base)
    fs = [facts.get(u) for u in units]
    if any(f is None for f in fs):
        return None
    if len(fs) == 1:
        f = fs[0]
        return f[1] if f[0] == "imm" else _unit_operand(f[1])
    if len(fs) != 2:
        return None
    (k0, x0), (k1, x1) = fs
    if k0 == k1 == "unit":
        if x0[0] == x1[0] == "s" and len(x0) == 2 and x0[1] % 2 == 0 and x1[1] == x0[1] + 1:
            return Reg("s", x0[1], 2)
        name = _PAIR_NAMES.get((x0[0], x1[0])) if len(x0) == len(x1) == 1 else None
        return Special(name) if name else None
    if k0 == k1 == "imm" and isinstance(x0.value, int) and isinstance(x1.value, int):
        lo, hi = x0.value & 0xFFFFFFFF, x1.value & 0xFFFFFFFF
        v = lo if hi == 0 else lo - (1 << 32) if hi == 0xFFFFFFFF and lo >= 0x80000000 else None
        if v is not None and -16 <= v <= 64:
            return Imm(v, str(v))
    return None


def _pair_merges(kernel: Kernel) -> list:
    """Pairs ``(early, late, merged)``: ``s_mov_b32 s[2k], X`` and ``s_mov_b32
    s[2k+1], Y`` (in either order, same block) that can become ``s_mov_b64
    s[2k:2k+1], Z`` where X, Y are the halves of an aligned pair Z (SGPRs, EXEC,
    VCC) or of a 64-bit inline constant.  The merged move takes the place of the
    later one, so in between nothing may read or write the earlier move's
    destination or write its source (or anything it cannot classify)."""
    out = []
    for blk in kernel.blocks:
        insts = blk.instructions
        used: set[int] = set()
        for j, late in enumerate(insts):
            fl = _scalar_copy_facts(late, True) if late.opcode == "s_mov_b32" else None
            if not fl or id(late) in used:
                continue
            (dl, fact_l), = fl
            for i in range(j - 1, -1, -1):
                early = insts[i]
                fe = _scalar_copy_facts(early, True) if early.opcode == "s_mov_b32" else None
                if fe and id(early) not in used and fe[0][0][1] // 2 == dl[1] // 2 \
                        and fe[0][0] != dl:
                    (de, fact_e), = fe
                    if _clear_between(insts[i + 1:j], de, fact_e):
                        lo, hi = (fact_e, fact_l) if de[1] < dl[1] else (fact_l, fact_e)
                        pair = Reg("s", min(de[1], dl[1]), 2)
                        src = _scalar_source(pair, {("s", pair.index): lo,
                                                    ("s", pair.index + 1): hi})
                        if src is not None and not (set(reg_units(src)) & {de, dl}):
                            out.append((early, late, Instruction("s_mov_b64", [pair, src])))
                            used.update((id(early), id(late)))
                    break
                e = effects(early)
                if e.uses_all or not e.known or dl in e.uses or dl in e.defs_may:
                    break
    return out


def _clear_between(mid: list, dst: tuple, fact: tuple) -> bool:
    src = fact[1] if fact[0] == "unit" else None
    for inst in mid:
        e = effects(inst)
        if e.uses_all or not e.known or dst in e.uses or dst in e.defs_may \
                or (src is not None and src in e.defs_may):
            return False
    return True


def _apply_merges(kernel: Kernel, am, merges: list, baseline) -> int:
    """Apply all pair merges at once (each is two edits that must go together); apply
    none if they add a static violation or one lies in a frozen block.  Returns the
    number applied."""
    edits = []
    for early, late, merged in merges:
        edits += [(early, []), (late, [merged])]
    return len(merges) if apply_checked(kernel, am, edits, baseline, repair=False,
                                        atomic=True) else 0

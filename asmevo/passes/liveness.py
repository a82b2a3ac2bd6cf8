"""Control flow and EXEC-aware register liveness for the passes.

:func:`kernel_flow` builds block successors from the IR's blocks
(``s_branch`` -> target; ``s_cbranch_*`` -> target and fall-through;
``s_endpgm`` -> exit; anything else falls through).  Kernels the passes must
not touch are reported with ``ok = False`` and a reason: indirect control flow
(``s_setpc_b64``/``s_swappc_b64``, device functions), a branch to a label
outside the kernel, code falling off the end, an instruction that reads
registers by index or is not understood, or ``s_set_gpr_idx_on``.

:func:`liveness` is a backward may-liveness over register units in which

* SGPR and special-register writes (``defs_must``) end a live range;
* VGPR/AGPR writes never do, because they only write lanes active in EXEC
  (a later read in a lane the write skipped sees the older value); the dead
  check in :func:`dead_instructions` instead recognises a VGPR write that is
  overwritten by a full write under the *same* EXEC (no EXEC write in between,
  same block) before any read.

Exit blocks (``s_endpgm``) have nothing live out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ir import Kernel
from ..ir.operands import Label
from .effects import EXEC, effects, is_vector_unit

_EXEC = frozenset(EXEC)


@dataclass
class KernelFlow:
    """Successor lists of a kernel's blocks (indices into ``kernel.blocks``)."""

    succ: list[list[int]] = field(default_factory=list)
    ok: bool = True
    reason: str = ""

    @property
    def pred(self) -> list[list[int]]:
        """Predecessor lists."""
        p: list[list[int]] = [[] for _ in self.succ]
        for b, ss in enumerate(self.succ):
            for s in ss:
                p[s].append(b)
        return p


def _target(inst) -> str | None:
    for o in inst.operands:
        if isinstance(o, Label) and not o.addend:
            return o.name
    return None


def kernel_flow(kernel: Kernel, am=None) -> KernelFlow:
    """Build the CFG of ``kernel``; ``ok`` is False (with ``reason``) when passes must not touch it."""
    index = {b.label: n for n, b in enumerate(kernel.blocks) if b.label}
    flow = KernelFlow([[] for _ in kernel.blocks])
    nblocks = len(kernel.blocks)

    def bad(reason: str) -> KernelFlow:
        flow.ok = False
        flow.reason = reason
        return flow

    for n, b in enumerate(kernel.blocks):
        for k, inst in enumerate(b.instructions):
            e = effects(inst)
            if e.uses_all:
                return bad(f"{inst.opcode} reads registers by index or is not understood")
            if e.barrier_kernel:
                return bad(f"{inst.opcode} changes register addressing")
            op = inst.opcode
            if op.startswith(("s_setpc", "s_swappc", "s_call", "s_cbranch_join",
                              "s_cbranch_g_fork", "s_cbranch_i_fork", "s_rfe")):
                return bad(f"indirect control flow ({op})")
            if (op.startswith(("s_branch", "s_cbranch")) or op == "s_endpgm") \
                    and k != len(b.instructions) - 1:
                return bad(f"{op} in the middle of a block")
        last = b.instructions[-1] if b.instructions else None
        op = last.opcode if last is not None else ""
        if op == "s_endpgm" or op.startswith("s_endpgm"):
            continue
        if op.startswith(("s_branch", "s_cbranch")):
            t = _target(last)
            if t is None or t not in index:
                return bad(f"branch to {t or 'an unknown target'} outside the kernel")
            flow.succ[n].append(index[t])
            if op.startswith("s_branch"):
                continue
        if n + 1 >= nblocks:
            return bad("code falls off the end of the kernel")
        flow.succ[n].append(n + 1)
    return flow


def block_transfer(insts, live: set) -> set:
    """Live set before ``insts`` given ``live`` after them (in place; also returned)."""
    for inst in reversed(insts):
        e = effects(inst)
        for x in e.defs_must:
            if not is_vector_unit(x):
                live.discard(x)
        live.update(e.uses)
    return live


@dataclass
class Liveness:
    """Per-block live-in/live-out sets of register units (see module docstring)."""

    flow: KernelFlow
    live_in: list[frozenset]
    live_out: list[frozenset]


def liveness(kernel: Kernel, am=None) -> Liveness:
    """Compute :class:`Liveness` (``flow.ok`` False: sets are empty and must not be used)."""
    flow = kernel_flow(kernel)
    n = len(kernel.blocks)
    lin = [frozenset()] * n
    lout = [frozenset()] * n
    if not flow.ok:
        return Liveness(flow, lin, lout)
    pred = flow.pred
    work = list(range(n - 1, -1, -1))
    inwork = set(work)
    while work:
        b = work.pop()
        inwork.discard(b)
        out = set()
        for s in flow.succ[b]:
            out |= lin[s]
        lout[b] = frozenset(out)
        new_in = frozenset(block_transfer(kernel.blocks[b].instructions, set(out)))
        if new_in != lin[b]:
            lin[b] = new_in
            for p in pred[b]:
                if p not in inwork:
                    work.append(p)
                    inwork.add(p)
    return Liveness(flow, lin, lout)


def dead_instructions(kernel: Kernel, live: Liveness) -> set[int]:
    """ids of instructions that can be removed: no side effects, and every unit they
    may write is dead after them (see module docstring).  Chains inside a block
    are found in one sweep; call again after removing to catch cross-block chains."""
    dead: set[int] = set()
    if not live.flow.ok:
        return dead
    for b, blk in enumerate(kernel.blocks):
        cur = set(live.live_out[b])
        covered: set = set()
        for inst in reversed(blk.instructions):
            e = effects(inst)
            if not e.side_effects and not e.uses_all and e.known and e.defs_may and all(
                    (x not in cur) or (x in covered) for x in e.defs_may):
                dead.add(id(inst))
                continue
            if e.defs_may & _EXEC:
                covered.clear()
            for x in e.defs_must:
                if is_vector_unit(x):
                    if e.vector and not e.partial:
                        covered.add(x)
                else:
                    cur.discard(x)
            for x in e.uses:
                cur.add(x)
                covered.discard(x)
    return dead


def live_after_each(kernel: Kernel, live: Liveness) -> dict[int, frozenset]:
    """id(instruction) -> units live right after it (may-liveness, as above)."""
    out: dict[int, frozenset] = {}
    for b, blk in enumerate(kernel.blocks):
        cur = set(live.live_out[b])
        for inst in reversed(blk.instructions):
            out[id(inst)] = frozenset(cur)
            e = effects(inst)
            for x in e.defs_must:
                if not is_vector_unit(x):
                    cur.discard(x)
            cur.update(e.uses)
    return out

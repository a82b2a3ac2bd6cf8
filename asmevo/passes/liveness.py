"""Control flow and EXEC-aware register liveness for the passes (thin views).

Both are computed by :mod:`asmevo.analysis`: the block successors by the
:class:`~asmevo.analysis.cfg.CFG`, the live sets by
:class:`~asmevo.analysis.liveness.MayLiveness` (the EXEC-aware mode of the one
liveness analysis).  This module keeps the shapes the passes use.

:func:`kernel_flow` gives block successors (``s_branch`` -> target;
``s_cbranch_*`` -> target and fall-through, the fall-through listed again when it
is also the target; ``s_endpgm`` -> exit; anything else falls through).  Kernels
the passes must not touch are reported with ``ok = False`` and a reason:
indirect control flow (``s_setpc_b64``/``s_swappc_b64``, device functions), a
branch to a label outside the kernel, code falling off the end, an instruction
that reads registers by index or is not understood, or ``s_set_gpr_idx_on``.

:func:`liveness` is a backward may-liveness over register units in which

* SGPR and special-register writes (``defs_must``) end a live range;
* VGPR/AGPR writes never do, because they only write lanes active in EXEC
  (a later read in a lane the write skipped sees the older value); the dead
  check in :func:`dead_instructions` instead recognises a VGPR write that is
  overwritten by a full write under the *same* EXEC (no EXEC write in between,
  same block) before any read.

Exit blocks (``s_endpgm``) have nothing live out.

Every function takes an optional ``am`` (an :class:`asmevo.analysis.AnalysisManager`):
given, the CFG and liveness come from its cache (the caller invalidates it after
editing the kernel); omitted, they are computed afresh.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..analysis import AnalysisManager
from ..analysis.cfg import CFG
from ..analysis.liveness import MayLiveness, may_use_kill
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


def _get(am, cls, kernel):
    if am is None:
        am = AnalysisManager(getattr(kernel, "module", None))
    return am.get(cls, kernel)


def kernel_flow(kernel: Kernel, am=None) -> KernelFlow:
    """Build the CFG of ``kernel``; ``ok`` is False (with ``reason``) when passes must not touch it."""
    cfg = _get(am, CFG, kernel)
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
        if op.startswith("s_endpgm"):
            continue
        if op.startswith(("s_branch", "s_cbranch")):
            taken = [v for v in cfg.graph.successors(n)
                     if cfg.graph.edges[n, v].get("kind") == "taken"]
            if n in cfg.indirect_sources or len(taken) != 1:
                t = _target(last)
                return bad(f"branch to {t or 'an unknown target'} outside the kernel")
            flow.succ[n].append(taken[0])
            if op.startswith("s_branch"):
                continue
        if n + 1 >= nblocks:
            return bad("code falls off the end of the kernel")
        flow.succ[n].append(n + 1)
    return flow


def block_transfer(insts, live: set) -> set:
    """Live set before ``insts`` given ``live`` after them (in place; also returned)."""
    for inst in reversed(insts):
        u, k = may_use_kill(inst)
        live.difference_update(k)
        live.update(u)
    return live


@dataclass
class Liveness:
    """Per-block live-in/live-out sets of register units (see module docstring)."""

    flow: KernelFlow
    live_in: list[frozenset]
    live_out: list[frozenset]
    #: the analysis it views (per-instruction sets), when computed
    may: MayLiveness | None = None


def liveness(kernel: Kernel, am=None) -> Liveness:
    """Compute :class:`Liveness` (``flow.ok`` False: sets are empty and must not be used)."""
    if am is None:
        am = AnalysisManager(getattr(kernel, "module", None))
    flow = kernel_flow(kernel, am)
    n = len(kernel.blocks)
    if not flow.ok:
        return Liveness(flow, [frozenset()] * n, [frozenset()] * n)
    lv = _get(am, MayLiveness, kernel)
    return Liveness(flow, [lv.live_in(b) for b in range(n)], [lv.live_out(b) for b in range(n)],
                    lv)


#: vector instructions that write VGPR lanes regardless of EXEC (CDNA3 ISA guide:
#: V_WRITELANE_B32 ignores EXEC; MFMA treated the same way, conservatively)
_IGNORES_EXEC = ("v_writelane", "v_mfma", "v_smfmac")


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
            # a later full write under the same EXEC covers only lanes this instruction
            # wrote under that EXEC: v_writelane (and MFMA) write lanes whatever EXEC is
            masked = e.vector and not inst.opcode.startswith(_IGNORES_EXEC)
            if not e.side_effects and not e.uses_all and e.known and e.defs_may and all(
                    (x not in cur) or (masked and x in covered) for x in e.defs_may):
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
    if live.may is not None:
        for blk in kernel.blocks:
            for inst in blk.instructions:
                out[id(inst)] = live.may.live_after(inst)
        return out
    for b, blk in enumerate(kernel.blocks):
        cur = set(live.live_out[b])
        for inst in reversed(blk.instructions):
            out[id(inst)] = frozenset(cur)
            u, k = may_use_kill(inst)
            cur.difference_update(k)
            cur.update(u)
    return out

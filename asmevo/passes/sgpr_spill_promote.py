"""sgpr-spill-promote: keep SGPR values spilled to VGPR lanes in free SGPRs instead.

At -O0 (and under SGPR pressure) LLVM spills SGPRs into lanes of a VGPR
(``SILowerSGPRSpills``/``SIRegisterInfo::spillSGPR``): ``v_writelane_b32 v0, s4, 3``
stores ``s4`` in lane 3 of ``v0``, ``v_readlane_b32 s4, v0, 3`` reloads it, and the
spill VGPR itself is kept in an AGPR across blocks with whole-wave copies
(``s_or_saveexec_b64 s[8:9], -1 ; v_accvgpr_write_b32 a0, v0 ; s_mov_b64 exec, s[8:9]``).
When the kernel has free SGPRs, each spilled lane can live in its own SGPR:

* ``v_writelane_b32 vX, src, L``  ->  ``s_mov_b32 sL, src``
* ``v_readlane_b32 dst, vX, L``   ->  ``s_mov_b32 dst, sL``

after which copy propagation and dead-code elimination remove most moves and
the whole-wave save/restore code of the spill VGPR.

Soundness does not rest on recognising LLVM's spill pattern: the rewrite is
checked by a forward must-equality dataflow over the *product* of the original
and the rewritten kernel (they run the same path, since only these
instructions change).  Its domain is, for each promoted lane ``L``: the lane in
the original and in the rewritten program of the spill VGPR and of each AGPR it
is copied to, and the new SGPR ``sL``.  Facts are a partition of the domain
into classes of equal values, intersected at joins (optimistic start, iterated
to a fixpoint, so the result is an inductive invariant):

* a promoted ``v_writelane`` puts original lane ``(vX, L)`` and ``sL`` in one
  new class (the rewritten program does not write ``vX``);
* a promoted ``v_readlane`` is correct only if original ``(vX, L)`` and ``sL``
  are in one class (then both programs load the same value);
* ``v_accvgpr_write_b32 aY, vX`` / ``v_accvgpr_read_b32 vX, aY`` under a
  known all-ones EXEC (the nearest EXEC write before them in the block is
  ``s_or_saveexec_b64 X, -1`` or ``s_mov_b64 exec, -1``) copy every lane, in
  each program separately;
* any other instruction that reads the spill VGPR or one of its AGPRs must see
  the same value in both programs in every promoted lane (a ``v_readlane`` of
  an unpromoted lane reads only that lane); any other write makes the written
  lanes equal across the programs only if its inputs and the old lanes were.

Lanes whose check fails are first tried with an initialising ``v_readlane_b32
sL, vX, L`` at the first use of ``vX`` on the entry path (a lane read before it
is ever written, e.g. the undefined first-iteration value of a loop-carried
mask, then holds the same value in both programs); lanes that still fail are
left as they are.  Everything outside the domain is identical in both programs
by construction.  ``v_readlane``/``v_writelane`` ignore EXEC (CDNA3 ISA guide,
"VOP3 ... V_READLANE_B32 / V_WRITELANE_B32"), and so does ``s_mov_b32``.

SGPRs come from those no instruction of the kernel names, at or above the
SGPRs the hardware initialises; pairs of lanes ``2k, 2k+1`` get an aligned
SGPR pair (so that later passes can forward 64-bit masks).  The kernel's
SGPR count (descriptor, metadata, ``.amdhsa_next_free_sgpr``) is raised as
needed, up to s101.  Kernels with indirect control flow or indexed register
access are left alone (:func:`asmevo.passes.liveness.kernel_flow`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import ClassVar

from ..analysis.liveness import lane_effects
from ..ir import Imm, Instruction, Kernel, Reg, Special
from ..ir.operands import base_of, reg_units
from .base import Pass, PassResult
from .checks import Snapshot, frozen_blocks, in_frozen_block, register_limits, \
    static_violations, try_edits
from .effects import EXEC, effects
from .liveness import kernel_flow
from .redundant_move import sets_full_exec

_EXEC = frozenset(EXEC)
#: highest SGPR index + 1 usable by a wave on gfx940 (s0..s101; AMDGPUUsage "Register numbers")
MAX_SGPRS = 102


def _lane(op) -> int | None:
    if isinstance(op, Imm) and isinstance(op.value, int) and not isinstance(op.value, bool) \
            and 0 <= op.value < 64:
        return op.value
    return None


def _writelane(inst: Instruction, vx: Reg):
    """``(src, L)`` of ``v_writelane_b32 vx, src, L`` with a constant lane, else None."""
    ops = inst.operands
    if inst.opcode != "v_writelane_b32" or inst.modifiers or len(ops) != 3 or ops[0] != vx:
        return None
    src, lane = base_of(ops[1]), _lane(ops[2])
    if lane is None or ops[1] is not src:
        return None
    if isinstance(src, Reg) and not (src.file == "s" and src.count == 1):
        return None
    if not isinstance(src, (Reg, Imm, Special)):
        return None
    return src, lane


def _readlane(inst: Instruction, vx: Reg):
    """``(dst, L)`` of ``v_readlane_b32 dst, vx, L`` with a constant lane, else None."""
    ops = inst.operands
    if inst.opcode != "v_readlane_b32" or inst.modifiers or len(ops) != 3 or ops[1] != vx:
        return None
    dst, lane = ops[0], _lane(ops[2])
    if lane is None:
        return None
    if isinstance(dst, Reg) and dst.file == "s" and dst.count == 1:
        return dst, lane
    if isinstance(dst, Special) and dst.name in ("vcc_lo", "vcc_hi", "m0", "exec_lo", "exec_hi"):
        return dst, lane
    return None


def _acc_copy(inst: Instruction, vx: Reg, full_exec: bool):
    """``("w", aY)`` for ``v_accvgpr_write_b32 aY, vx``, ``("r", aY)`` for
    ``v_accvgpr_read_b32 vx, aY`` executed with all lanes on; else None."""
    if not full_exec or inst.modifiers or len(inst.operands) != 2:
        return None
    d, s = inst.operands
    if inst.opcode == "v_accvgpr_write_b32" and s == vx and isinstance(d, Reg) \
            and d.file == "a" and d.count == 1:
        return "w", d
    if inst.opcode == "v_accvgpr_read_b32" and d == vx and isinstance(s, Reg) \
            and s.file == "a" and s.count == 1:
        return "r", s
    return None


class _Partition:
    """Equality classes over a fixed list of locations: ``ids[i]`` is the class of
    location ``i`` (canonical: numbered by first occurrence)."""

    @staticmethod
    def canon(ids: list[int]) -> tuple:
        m: dict[int, int] = {}
        return tuple(m.setdefault(x, len(m)) for x in ids)

    @staticmethod
    def meet(a: tuple, b: tuple) -> tuple:
        m: dict[tuple, int] = {}
        return tuple(m.setdefault(p, len(m)) for p in zip(a, b))


@dataclass
class _Plan:
    """One spill VGPR's promotion: which lanes, the SGPR of each, the instructions."""

    vx: Reg
    lanes: set
    writes: list = field(default_factory=list)   # (inst, src, L)
    reads: list = field(default_factory=list)    # (inst, dst, L)
    init_lanes: set = field(default_factory=set)  # lanes given an initialising readlane
    init_at: tuple | None = None                 # (block index, position) of those readlanes


class _Validator:
    """The product-program equality check of the module docstring, for one spill VGPR."""

    def __init__(self, kernel: Kernel, flow, vx: Reg, agprs: set, lanes: list[int],
                 init_lanes: set, init_at):
        self.kernel, self.flow, self.vx = kernel, flow, vx
        self.agprs = sorted(agprs, key=lambda r: r.index)
        self.lanes = lanes
        self.init_lanes = init_lanes
        self.init_at = init_at
        regs = [vx] + self.agprs
        self.loc: dict[tuple, int] = {}
        for r in regs:
            for L in lanes:
                for prog in ("o", "c"):
                    self.loc[(prog, r, L)] = len(self.loc)
        for L in lanes:
            self.loc[("s", L)] = len(self.loc)
        self.units = set(reg_units(vx)) | {u for r in self.agprs for u in reg_units(r)}
        self.failed: set[int] = set()   # lanes whose check failed

    def entry_state(self) -> tuple:
        ids = []
        for key in self.loc:
            if key[0] == "s":
                ids.append(("s", key[1]))
            else:
                ids.append((key[1], key[2]))   # original and rewritten start equal
        return _Partition.canon(ids)

    def run(self) -> set[int]:
        """Lanes whose check fails (empty: the rewrite is correct for all lanes)."""
        n = len(self.kernel.blocks)
        pred = self.flow.pred
        state_in: list = [None] * n
        state_out: list = [None] * n
        entry = self.entry_state()
        changed = True
        while changed:   # partitions only get finer: this terminates
            changed = False
            for b in range(n):
                ins = [state_out[p] for p in pred[b] if state_out[p] is not None]
                if b == 0:
                    ins.append(entry)
                if not ins:
                    continue
                s = ins[0]
                for t in ins[1:]:
                    s = _Partition.meet(s, t)
                if s == state_in[b] and state_out[b] is not None:
                    continue
                state_in[b] = s
                out = self._block(b, s, check=False)
                if out != state_out[b]:
                    state_out[b] = out
                    changed = True
        self.failed = set()
        for b in range(n):
            if state_in[b] is not None:
                self._block(b, state_in[b], check=True)
        return self.failed

    # -- transfer ------------------------------------------------------------
    def _block(self, b: int, state: tuple, check: bool) -> tuple:
        ids = list(state)
        fresh = [max(ids, default=-1)]

        def new() -> int:
            fresh[0] += 1
            return fresh[0]

        # cond[(reg, L)] = epoch: the two programs agree in that lane whenever it is
        # active under the EXEC of that epoch (a per-lane write under EXEC put equal
        # values in the active lanes and left the old, differing ones elsewhere).
        # Epochs end at EXEC writes and at block boundaries.
        cond: dict = {}
        epoch = 0
        vx = self.vx
        full = False
        blk = self.kernel.blocks[b]
        for k, inst in enumerate(blk.instructions):
            if self.init_at == (b, k):
                for L in self.init_lanes:
                    ids[self.loc[("s", L)]] = ids[self.loc[("c", vx, L)]]
            e = effects(inst)
            if (e.uses | e.defs_may) & self.units:
                self._inst(inst, e, ids, new, cond, epoch, full, check)
            if e.defs_may & _EXEC:
                full = sets_full_exec(inst)
                epoch += 1
        return _Partition.canon(ids)

    def _agree(self, ids, cond, epoch, r, L, per_lane: bool) -> bool:
        loc = self.loc
        if ids[loc[("o", r, L)]] == ids[loc[("c", r, L)]]:
            return True
        return per_lane and cond.get((r, L)) == epoch

    def _inst(self, inst, e, ids, new, cond, epoch, full, check) -> None:
        loc, vx = self.loc, self.vx
        w = _writelane(inst, vx)
        if w is not None:
            src, L = w
            if L in self.lanes:
                c = new()
                ids[loc[("o", vx, L)]] = c
                ids[loc[("s", L)]] = c
                cond.pop((vx, L), None)
            return  # an unpromoted lane: both programs write it alike
        r = _readlane(inst, vx)
        if r is not None:
            _, L = r
            if L in self.lanes and check and ids[loc[("o", vx, L)]] != ids[loc[("s", L)]]:
                self.failed.add(L)
            return  # an unpromoted lane is equal in both programs
        c = _acc_copy(inst, vx, full)
        if c is not None and c[1] in self.agprs:
            kind, ay = c
            dst, src = (ay, vx) if kind == "w" else (vx, ay)
            for L in self.lanes:
                for p in ("o", "c"):
                    ids[loc[(p, dst, L)]] = ids[loc[(p, src, L)]]
                cond.pop((dst, L), None)
            return
        # any other instruction: what it reads must agree across the programs; a
        # per-lane instruction under EXEC reads (and writes) only active lanes
        per_lane = lane_effects(inst)[0] and not full
        regs = [vx] + self.agprs
        agree = True
        for r in regs:
            if not (set(reg_units(r)) & e.uses):
                continue
            for L in self.lanes:
                if not self._agree(ids, cond, epoch, r, L, per_lane):
                    agree = False
                    if check:
                        self.failed.add(L)
        for r in regs:
            if not (set(reg_units(r)) & e.defs_may):
                continue
            for L in self.lanes:
                o, cc = loc[("o", r, L)], loc[("c", r, L)]
                if agree and ids[o] == ids[cc]:
                    ids[o] = ids[cc] = new()   # inactive lanes keep equal old values
                    cond.pop((r, L), None)
                else:
                    ids[o], ids[cc] = new(), new()
                    if agree and per_lane:
                        cond[(r, L)] = epoch
                    else:
                        cond.pop((r, L), None)


@dataclass
class SgprSpillPromote(Pass):
    """Promote SGPR spills in VGPR lanes to free SGPRs (see the module docstring)."""

    name: ClassVar[str] = "sgpr-spill-promote"
    preserves: ClassVar[frozenset[str]] = frozenset()
    max_sgpr: int = field(default=MAX_SGPRS, metadata={
        "doc": "SGPRs below this index may be allocated (at most 102)", "min": 0,
        "max": MAX_SGPRS})

    def run(self, kernel: Kernel, am) -> PassResult:
        """Promote; stats ``lanes-promoted``, ``writelanes-removed``, ``readlanes-removed``,
        ``lanes-initialised``, ``sgprs-added``."""
        stats = Counter()
        flow = kernel_flow(kernel)
        if not flow.ok or not kernel.blocks:
            stats["skipped-kernels"] += 1
            return PassResult(changed=False, stats=stats)
        module = getattr(am, "module", None)
        used_s = set()
        for inst in kernel.instructions():
            for o in inst.operands:
                r = base_of(o)
                if isinstance(r, Reg) and r.file == "s":
                    used_s.update(range(r.index, r.index + r.count))
        from .regalloc_compact import RegallocCompact
        min_s = RegallocCompact._min_sgprs(kernel, module)
        free = [i for i in range(min_s, min(self.max_sgpr, MAX_SGPRS)) if i not in used_s]
        spill_vgprs = []
        for inst in kernel.instructions():
            if inst.opcode == "v_writelane_b32" and inst.operands \
                    and isinstance(inst.operands[0], Reg) and inst.operands[0] not in spill_vgprs:
                spill_vgprs.append(inst.operands[0])
        baseline = None
        changed = False
        for vx in spill_vgprs:
            plan = self._plan(kernel, flow, vx, free)
            if plan is None or not plan.lanes:
                continue
            if baseline is None:
                baseline = static_violations(kernel, am)
            sg = self._assign(plan.lanes, free)
            if sg is None:
                continue
            edits = self._edits(kernel, plan, sg)
            top = max(sg.values()) + 1
            if not self._apply(kernel, am, module, edits, baseline, top):
                stats["rejected"] += 1
                continue
            for L in sg:
                free.remove(sg[L])
            changed = True
            stats["lanes-promoted"] += len(plan.lanes)
            stats["writelanes-removed"] += len(plan.writes)
            stats["readlanes-removed"] += len(plan.reads)
            stats["lanes-initialised"] += len(plan.init_lanes) if plan.init_at else 0
            stats["sgprs-added"] += len(sg)
        return PassResult(changed=changed, stats=stats)

    # -- planning --------------------------------------------------------------
    def _plan(self, kernel: Kernel, flow, vx: Reg, free: list[int]) -> _Plan | None:
        if not (isinstance(vx, Reg) and vx.file == "v" and vx.count == 1):
            return None
        vunits = set(reg_units(vx))
        agprs: set = set()
        writes, reads = [], []
        for b in kernel.blocks:
            full = False
            for inst in b.instructions:
                e = effects(inst)
                if not e.known or e.uses_all:
                    return None
                if (e.uses | e.defs_may) & vunits:
                    w = _writelane(inst, vx)
                    r = _readlane(inst, vx)
                    c = _acc_copy(inst, vx, full)
                    if w is not None:
                        writes.append((inst, w[0], w[1]))
                    elif r is not None:
                        reads.append((inst, r[0], r[1]))
                    elif c is not None:
                        agprs.add(c[1])
                if e.defs_may & _EXEC:
                    full = sets_full_exec(inst)
        lanes = sorted({L for _, _, L in writes} & {L for _, _, L in reads})
        if not lanes:
            return None
        if len(lanes) > len(free):
            # not enough SGPRs for every lane: the most used lanes first (lanes are
            # independent; the check below runs on the chosen set)
            use = Counter(L for _, _, L in writes + reads)
            lanes = sorted(sorted(lanes, key=lambda L: (-use[L], L))[:len(free)])
            if not lanes:
                return None
        init_at = self._init_point(kernel, flow, vunits)
        for _ in range(3):
            if not lanes:
                return None
            bad = _Validator(kernel, flow, vx, agprs, lanes, set(), None).run()
            init = set()
            if bad and init_at is not None:
                init = bad
                bad = _Validator(kernel, flow, vx, agprs, lanes, init, init_at).run()
            if not bad:
                plan = _Plan(vx, set(lanes))
                plan.writes = [w for w in writes if w[2] in plan.lanes]
                plan.reads = [r for r in reads if r[2] in plan.lanes]
                plan.init_lanes = init
                plan.init_at = init_at if init else None
                return plan
            lanes = [L for L in lanes if L not in bad]
        return None

    @staticmethod
    def _init_point(kernel: Kernel, flow, vunits: set):
        """(block, position) of the first instruction on the straight-line entry path
        that is a promoted-candidate writelane/readlane of the spill VGPR, i.e. just
        after the last plain definition of it that precedes them; None when the entry
        block is a loop header or the path branches first."""
        pred = flow.pred
        if pred[0]:
            return None
        b = 0
        seen = set()
        while b not in seen:
            seen.add(b)
            for k, inst in enumerate(kernel.blocks[b].instructions):
                if inst.opcode in ("v_writelane_b32", "v_readlane_b32") \
                        and (effects(inst).uses | effects(inst).defs_may) & vunits:
                    return (b, k)
            succ = flow.succ[b]
            if len(succ) != 1 or len(pred[succ[0]]) != 1:
                return None
            b = succ[0]
        return None

    @staticmethod
    def _assign(lanes: set, free: list[int]) -> dict[int, int] | None:
        """Lane -> SGPR index; lanes 2k and 2k+1 get an aligned pair when possible."""
        out: dict[int, int] = {}
        avail = sorted(free)
        pairs = [i for i in avail if i % 2 == 0 and i + 1 in avail]
        for L in sorted(lanes):
            if L in out:
                continue
            if L % 2 == 0 and L + 1 in lanes and pairs:
                s = pairs.pop(0)
                out[L], out[L + 1] = s, s + 1
                avail.remove(s)
                avail.remove(s + 1)
                pairs = [i for i in pairs if i not in (s, s + 1) and i + 1 != s]
        for L in sorted(lanes):
            if L in out:
                continue
            if not avail:
                return None
            s = avail.pop(0)   # the lowest: keep the SGPR count (occupancy) low
            pairs = [i for i in pairs if i not in (s, s - 1)]
            out[L] = s
        return out

    @staticmethod
    def _edits(kernel: Kernel, plan: _Plan, sg: dict[int, int]) -> list:
        edits = []
        for inst, src, L in plan.writes:
            edits.append((inst, [Instruction("s_mov_b32", [Reg("s", sg[L], 1), src])]))
        for inst, dst, L in plan.reads:
            edits.append((inst, [Instruction("s_mov_b32", [dst, Reg("s", sg[L], 1)])]))
        if plan.init_at is not None:
            b, k = plan.init_at
            at = kernel.blocks[b].instructions[k]
            inits = [Instruction("v_readlane_b32", [Reg("s", sg[L], 1), plan.vx, Imm(L)])
                     for L in sorted(plan.init_lanes)]
            # the instruction at the init point is itself edited: fold into its edit
            for n, (old, new) in enumerate(edits):
                if old is at:
                    edits[n] = (old, inits + new)
                    break
            else:
                edits.append((at, inits + [at]))
        return edits

    @staticmethod
    def _apply(kernel: Kernel, am, module, edits: list, baseline, top: int) -> bool:
        """All or nothing: the SGPR count is raised, the edits applied; hazards they
        add are repaired with s_nop; any other new static violation undoes everything
        (:func:`~asmevo.passes.checks.try_edits`)."""
        from .regalloc_compact import RegallocCompact, _tops, set_register_counts
        frozen = frozen_blocks(kernel, module)
        if any(in_frozen_block(kernel, frozen, e) for e in edits):
            return False
        snap = Snapshot(kernel, module)
        old_s = register_limits(kernel, module).get("s", _tops(kernel)["s"])
        if top > old_s:
            set_register_counts(kernel, module, {"s": top},
                                RegallocCompact._min_sgprs(kernel, module))
        if try_edits(kernel, am, edits, baseline, repair="always"):
            return True
        snap.restore()
        am.invalidate(kernel, frozenset())
        return False

"""loop-pipeline: depth-2 software pipelining of a uniform self-loop.

A loop block ``B = P ; C ; br B`` whose body waits for its own loads every iteration (the
shape clang -O3 gives ``matvec`` and ``sgemm_naive``: one global-memory round trip per
iteration) is first normalised by :func:`asmevo.ir.unroll.unroll_self_loop` -- unrolled
twice with the exit test between the copies, correct by construction::

    H: P ; inv(br) -> E          M: C ; P ; C ; br -> H          E: C ; s_branch X

Then the second copy's ``P`` is moved above the first copy's ``C`` in ``M``, so that the
next iteration's loads are issued before the current iteration waits for its own::

    M: P ; C' ; C ; br -> H      (C' reads renamed registers)

Legal when (each checked; otherwise the kernel is left as it was):

* every instruction of ``P`` and ``C`` is understood (ISA table, no register read by
  index), and none of them writes memory, orders memory or has another side effect
  (stores, atomics, LDS DMA, barriers, messages, cache or mode operations); loads reorder
  freely with loads (AMDGPUUsage, GFX942 memory model: no ordering between a wave's
  loads without a fence);
* ``P`` reads nothing ``C`` writes (a true dependence) and writes nothing ``C`` writes;
* every register ``P`` writes that ``C`` reads (an anti dependence: ``C`` reads the first
  copy's value, which the hoisted second copy would overwrite) is *renamed in the first
  copy*: ``P``'s last write of it in ``H`` and its reads after that in ``H``, ``C`` in ``M``
  and ``C`` in ``E`` use a new register.  Required: ``P`` writes the register before
  reading it (so the second copy never needs the first copy's value), that last write is
  a full write in every active lane (not partial, tied, DPP/SDWA, ``d16`` or
  ``v_writelane``; per-lane; no EXEC write after it), every later read is an explicit
  per-lane operand lying inside the renamed register, and the register is not live at
  the loop exit ``X`` (on the path through ``E`` it no longer holds the last iteration's
  value) -- EXEC-aware may-liveness, :class:`asmevo.analysis.liveness.MayLiveness`;
* the new registers are named nowhere in the kernel, are no register the ABI initialises
  at entry, are aligned as gfx942 wants (VGPR tuples even, SGPR pairs even, 4+ dwords at a
  multiple of 4: CDNA3 ISA guide, "SGPR/VGPR alignment") and lie inside the descriptor's
  allocation (VGPRs below ACCUM_OFFSET): the granule never grows; the metadata counts are
  raised to cover them (:func:`asmevo.backend.rebuild.recompute_register_counts`);
* ``C`` writes no SCC (VCC for a vcc branch), by construction of the split, so ``M``'s
  final branch still reads the second copy's compare.

Waits: the moved ``P``'s accesses are issued before the first ``C``'s ``s_waitcnt``, which
so far waited for everything (``vmcnt(0)``); each wait of ``M`` is then relaxed to the
weakest counts that still cover every dependent use, with
:meth:`asmevo.analysis.waitcnt.WaitcntAnalysis.required` (vmcnt counts in order for global
loads, so ``vmcnt(N)`` waits for the first copy's; SMEM returns out of order, so with two
``s_load`` in flight the model keeps ``lgkmcnt(0)``: ISA_NOTES section 8, LLVM
SIInsertWaitcnts).  The result must add no static violation (waitcnt, hazard, register
bounds: :func:`asmevo.passes.checks.static_violations`); missing wait states are repaired
with ``s_nop`` (:func:`asmevo.passes.checks.repair_hazards`), anything else undoes the pass.

One loop per run (``loop=N`` picks block N; by default the first self-loop, in layout
order, that can be pipelined; an N past the kernel's last block is bad input, exit 2, the
message listing the kernel's blocks and self-loops).  A kernel left as it was says why in ``--stats``:
``no-self-loop``, or ``refused.<reason>`` per self-loop (:data:`REFUSALS`, docs/passes.md);
an N that names a block which is not a self-loop stays a refusal (``not-a-self-loop``:
evolve samples N), with a remark (:attr:`PassResult.remarks`) naming the self-loops.
The verifier proves the result against the original with the same normalisation
(docs/verify.md, "Unrolled loops").
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import ClassVar

from ..errors import AsmevoError
from ..ir import Instruction, Kernel
from ..ir.operands import Label, Reg, Src, base_of, reg_units
from ..ir.unroll import split_loop, unroll_self_loop
from .base import Pass, PassResult

#: SGPRs the hardware reserves beyond the named ones on gfx942 (VCC, XNACK, FLAT_SCRATCH)
_EXTRA_SGPRS = 6


def _eff(inst):
    from .effects import effects
    return effects(inst)


def _movable(inst: Instruction) -> bool:
    """May ``inst`` change places with another instruction of the loop body (no memory
    write, ordering or other side effect; a wait or nop is fine, the checks judge those)?"""
    from ..analysis._isa import facts
    op = inst.opcode
    if op in ("s_waitcnt", "s_nop"):
        return True
    e = _eff(inst)
    if not e.known or e.uses_all or e.barrier_kernel:
        return False
    f = facts(inst)
    if e.kind in ("valu", "mfma"):
        return not e.side_effects
    if e.kind == "salu":
        return not e.side_effects
    if e.kind == "smem":
        return op.startswith(("s_load_", "s_buffer_load_")) and not f.store
    if e.kind in ("vmem", "flat", "ds"):
        if f.store or f.lds_dma or f.gds or "_atomic" in op or not (f.defs or f.partial):
            return False
        if e.kind == "ds":
            return op.startswith(("ds_read", "ds_load"))
        return "load" in op and not op.startswith(("buffer_wb", "buffer_inv"))
    return False


def _uses(insts) -> set:
    out: set = set()
    for i in insts:
        out |= _eff(i).uses
    return out


def _defs(insts) -> set:
    out: set = set()
    for i in insts:
        out |= _eff(i).defs_may
    return out


def _align(file: str, count: int) -> int:
    if count < 2:
        return 1
    if file == "s":
        return 2 if count == 2 else 4
    return 2


def _budget(kernel: Kernel, module) -> dict[str, int]:
    """Registers a new name may use (exclusive): the descriptor's allocation (VGPRs below
    ACCUM_OFFSET, SGPRs without the 6 reserved ones), or the text's ``.amdhsa_next_free_*``."""
    from .checks import register_limits
    kd = kernel.descriptor
    lim = {"v": 0, "s": 0}
    if kd is not None:
        lim["v"] = min(kd.vgpr_count, kd.accum_offset_vgprs or kd.vgpr_count)
        lim["s"] = max(0, kd.sgpr_count - _EXTRA_SGPRS)
    else:
        rl = register_limits(kernel, module)
        lim["v"], lim["s"] = rl.get("v", 0), rl.get("s", 0)
    return lim


def _pinned(kernel: Kernel, module) -> set:
    """Units the ABI gives a meaning at entry."""
    from ..analysis._abi import kernel_abi
    try:
        u = set(kernel_abi(kernel, module).entry_units())
    except Exception:  # noqa: BLE001 - unknown ABI: pin the usual ones generously
        u = {("s", i) for i in range(16)} | {("v", i) for i in range(3)}
    u |= {("v", 0), ("v", 1), ("v", 2)}
    return u


def _named(kernel: Kernel) -> set:
    out: set = set()
    for inst in kernel.instructions():
        for o in inst.operands:
            out.update(reg_units(o))
        e = _eff(inst)
        out |= e.uses | e.defs_may
    return out


def _swap(o, new: Reg):
    if isinstance(o, Src):
        return Src(new, o.neg, o.abs, o.sext, o.style)
    return new


def _rename_reads(inst: Instruction, old: Reg, new: Reg) -> Instruction | None:
    """``inst`` with every read operand inside ``old`` moved to ``new`` (same offset);
    None when a read mixes ``old``'s units with others or reads them implicitly."""
    from ..isa import operand_roles
    ou = set(reg_units(old))
    e = _eff(inst)
    if not (e.uses & ou):
        return inst
    try:
        roles = operand_roles(inst)
    except Exception:  # noqa: BLE001
        return None
    ops = list(inst.operands)
    covered: set = set()
    for k, (o, r) in enumerate(zip(ops, roles)):
        b = base_of(o)
        if not isinstance(b, Reg):
            continue
        bu = set(reg_units(b))
        if not bu & ou:
            continue
        if r != "use" or not bu <= ou:
            return None
        ops[k] = _swap(o, Reg(new.file, new.index + b.index - old.index, b.count))
        covered |= bu
    if not (e.uses & ou) <= covered:
        return None
    return inst.evolve(operands=ops)


def _per_lane_read(inst: Instruction) -> bool:
    from ..analysis.liveness import lane_effects
    e = _eff(inst)
    return e.kind in ("salu", "smem") or not e.vector or lane_effects(inst)[0]


#: ``refused.<reason>`` of ``--stats``: why a self-loop was not pipelined (the kernel is left
#: as it was).  The preconditions of the normalisation (:func:`asmevo.ir.unroll.split_loop`),
#: then the pass's own (module docstring).
REFUSALS = {
    "not-a-self-loop": "loop=N names a block of the kernel that does not branch to itself "
                       "(a remark names the kernel's self-loops; an index past the last "
                       "block is an error, exit 2)",
    "frozen-block": "the loop is code no pass edits (unreachable, or the kernarg-preload "
                    "prologue)",
    "not-uniform": "the loop branch tests EXEC (s_cbranch_execz/execnz): a divergent loop",
    "unsupported-branch": "the loop branch is not s_cbranch_scc0/scc1/vccz/vccnz to the "
                          "block's own label (an unconditional branch, an addend, modifiers)",
    "entry-block": "the loop is the kernel's entry block",
    "last-block": "the loop is the kernel's last block (no exit block after it)",
    "body-too-short": "the loop body is a single instruction",
    "last-block-falls-through": "the kernel's last block does not end in s_endpgm or "
                                "s_branch",
    "duplicate-labels": "two blocks carry the same label",
    "position-dependent": "the kernel reads the program counter (s_getpc_b64) or holds a "
                          "symbolic (PC-relative) operand: moving code would change it",
    "unknown-branch-target": "a branch targets a label outside the kernel or with an addend",
    "body-not-duplicable": "the loop body holds a branch, s_endpgm, an undecodable word, a "
                           "label or expression operand, or an instruction missing from the "
                           "ISA table",
    "exit-test-last": "the body's last instruction writes the branch's condition (SCC/VCC): "
                      "no tail C to move across the exit test",
    "tail-not-movable": "the body's last instruction may not move across the exit branch "
                        "(barrier, message, EXEC write, no semantics...)",
    "condition-not-written": "nothing in the body writes the branch's condition: no head P",
    "too-long": "the unrolled kernel would be too long for a branch's 16-bit offset",
    "side-effects": "P or C writes memory, orders memory, has another side effect or is not "
                    "understood",
    "true-dependence": "P reads a register C writes",
    "output-dependence": "P and C write the same register",
    "special-register": "P writes a special register (EXEC, VCC, M0...) C reads",
    "no-def": "P does not write a register to rename (one P writes and C reads) before "
              "reading it",
    "implicit-def": "a register to rename is not written through an explicit VGPR/SGPR "
                    "operand",
    "read-before-write": "P reads a register to rename before writing it",
    "later-write": "P writes a register to rename again after its last full write",
    "exec-write": "EXEC changes after the write of a VGPR to rename",
    "cross-lane-read": "a renamed VGPR is read across lanes",
    "live-at-exit": "a register to rename is live after the loop",
    "no-free-register": "no free aligned register inside the allocation",
    "partial-def": "the write of a register to rename is not one full per-lane write "
                   "(partial, tied, DPP/SDWA, d16, v_writelane, MFMA...)",
    "mixed-read": "a read mixes a renamed register with others or reads it implicitly",
    "conflict-left": "a dependence between the copies remains after renaming",
    "static-violation": "the result adds a static violation s_nops cannot repair",
    "not-normalisable": "the normalisation refused the loop for a reason not listed here",
}


def _branches_to_itself(block) -> bool:
    """Does ``block`` end in a branch to its own label (a self-loop of any kind)?"""
    if not block.label or not block.instructions:
        return False
    br = block.instructions[-1]
    return (br.opcode == "s_branch" or br.opcode.startswith("s_cbranch")) and any(
        isinstance(o, Label) and o.name == block.label for o in br.operands)


def _why_not_split(kernel: Kernel, bi: int) -> str:
    """The :data:`REFUSALS` tag of the first precondition of
    :func:`asmevo.ir.unroll.split_loop` that self-loop block ``bi`` fails, checked in
    split_loop's order with its helpers (for ``--stats`` only: split_loop decides)."""
    from ..ir import unroll as U
    blocks = kernel.blocks
    b = blocks[bi]
    br = b.instructions[-1]
    kind = U.cond_kind(br.opcode)
    if kind is None:
        return "not-uniform" if br.opcode.startswith("s_cbranch_exec") else "unsupported-branch"
    if bi == 0:
        return "entry-block"
    if bi == len(blocks) - 1:
        return "last-block"
    if len(b.instructions) < 3:
        return "body-too-short"
    t = br.operands[0] if len(br.operands) == 1 else None
    if br.modifiers or not (isinstance(t, Label) and t.addend == 0):
        return "unsupported-branch"
    last = blocks[-1].instructions
    if not last or not (last[-1].opcode.startswith("s_endpgm") or last[-1].opcode == "s_branch"):
        return "last-block-falls-through"
    labels = [x.label for x in blocks if x.label]
    if len(labels) != len(set(labels)):
        return "duplicate-labels"
    for x in blocks:
        for inst in x.instructions:
            op = inst.opcode
            if op in U._INDIRECT or U._symbolic(inst):
                return "position-dependent"
            if op == "s_branch" or op.startswith("s_cbranch"):
                lab = [o for o in inst.operands if isinstance(o, Label)]
                if len(lab) != 1 or lab[0].addend or lab[0].name not in labels:
                    return "unknown-branch-target"
    body = b.instructions[:-1]
    if not all(U._body_ok(i) for i in body):
        return "body-not-duplicable"
    cond = U._COND_UNITS[kind]
    if not U._c_ok(body[-1], cond):
        w = U.writes(body[-1])
        return "exit-test-last" if w is not None and w & cond else "tail-not-movable"
    if all(U._c_ok(i, cond) for i in body):
        return "condition-not-written"
    return "not-normalisable"   # split_loop refused for a reason not listed here


@dataclass
class LoopPipeline(Pass):
    """Depth-2 software pipelining of a uniform self-loop (module docstring)."""

    name: ClassVar[str] = "loop-pipeline"
    preserves: ClassVar[frozenset[str]] = frozenset()
    loop: int = field(default=-1, metadata={
        "doc": "block index of the self-loop to pipeline (-1: the first that can be)",
        "min": -1})

    def run(self, kernel: Kernel, am) -> PassResult:
        """Pipeline one loop of ``kernel``; stats ``pipelined``, ``renamed``, and why a
        kernel is left as it was: ``skipped-kernels`` (a CFG the passes do not touch),
        ``no-self-loop`` (no block branches to itself), or per self-loop not pipelined
        ``refused`` and ``refused.<reason>`` (:data:`REFUSALS`)."""
        from .checks import frozen_blocks
        from .liveness import kernel_flow
        stats = Counter()
        module = getattr(am, "module", None)
        if not kernel_flow(kernel).ok:
            stats["skipped-kernels"] += 1
            return PassResult(changed=False, stats=stats)
        loops = [bi for bi, b in enumerate(kernel.blocks) if _branches_to_itself(b)]
        if self.loop >= len(kernel.blocks):
            raise AsmevoError(self._no_such_block(kernel, loops),
                              file=getattr(module, "source", None))
        if not loops and self.loop < 0:
            stats["no-self-loop"] += 1
            return PassResult(changed=False, stats=stats)
        frozen = frozen_blocks(kernel, module)
        remarks = []
        for bi in ([self.loop] if self.loop >= 0 else loops):
            if bi not in loops:
                # loop=N names another block: a refusal, not an error (evolve samples N),
                # with the blocks loop=N can usefully name for a user who gave N
                why = "not-a-self-loop"
                lab = kernel.blocks[bi].label
                remarks.append(f"kernel {kernel.name}: loop={bi}: block {bi}"
                               f"{f' ({lab})' if lab else ''} is not a self-loop; "
                               f"{self._loops_text(kernel, loops)}")
            elif id(kernel.blocks[bi]) in frozen:
                why = "frozen-block"
            elif split_loop(kernel, bi) is None:
                why = _why_not_split(kernel, bi)
            else:
                why = self._pipeline(kernel, bi, am, module, stats)
                if why is None:
                    stats["pipelined"] += 1
                    return PassResult(stats=stats)
            stats["refused"] += 1
            stats[f"refused.{why}"] += 1
        return PassResult(changed=False, stats=stats, remarks=remarks)

    @staticmethod
    def _loops_text(kernel: Kernel, loops: list[int]) -> str:
        """``its self-loop(s): block(s) 3 (.L1), ...``, or that there is none."""
        if not loops:
            return "it has no self-loop (no block branches to itself) to pipeline"
        which = ", ".join(f"{bi} ({kernel.blocks[bi].label})" for bi in loops)
        return (f"its self-loop{'s' if len(loops) > 1 else ''}: block"
                f"{'s' if len(loops) > 1 else ''} {which}")

    def _no_such_block(self, kernel: Kernel, loops: list[int]) -> str:
        """The message for a ``loop=N`` past the kernel's last block: N is a block index,
        so say how many blocks there are and which of them are self-loops (the values
        ``loop=`` can usefully take)."""
        n = len(kernel.blocks)
        blocks = "block 0" if n == 1 else f"blocks 0..{n - 1}"
        head = (f"loop-pipeline<loop={self.loop}>: kernel {kernel.name} has no loop "
                f"{self.loop} (loop=N is a block index; the kernel has {n} block"
                f"{'s' if n != 1 else ''}, {blocks})")
        if not loops:
            return f"{head}; {self._loops_text(kernel, loops)}"
        return (f"{head}; {self._loops_text(kernel, loops)}; expected loop=-1 (the first that "
                f"can be pipelined) or {'one of those' if len(loops) > 1 else 'that index'}")

    # -----------------------------------------------------------------------------------
    def _pipeline(self, kernel: Kernel, bi: int, am, module, stats) -> str | None:
        """Pipeline loop block ``bi`` in place; the reason (a short tag) when refused."""
        from ..analysis.liveness import MayLiveness
        from .checks import repair_hazards, static_violations
        np_, nc = split_loop(kernel, bi)
        taken = set()
        for k in (module.kernels if module is not None else [kernel]):
            taken |= k.labels()
        nk = unroll_self_loop(kernel, bi, taken_labels=taken)
        if nk is None:      # split_loop held: the unrolled kernel would be too long
            return "too-long"
        body = kernel.blocks[bi].instructions[:-1]
        P, C = body[:np_], body[np_:]
        if not all(_movable(i) for i in P + C):
            return "side-effects"
        dP, dC, uP, uC = _defs(P), _defs(C), _uses(P), _uses(C)
        if uP & dC:
            return "true-dependence"
        if dP & dC:
            return "output-dependence"
        conflict = dP & uC
        if any(len(u) != 2 or u[0] not in ("v", "s") for u in conflict):
            return "special-register"
        # the registers to rename: the def operands of P's last writes of conflicting units
        live = am.get(MayLiveness, kernel)
        x_live = live.live_in(bi + 1)
        budget = _budget(kernel, module)
        busy = _named(kernel) | _pinned(kernel, module)
        renames: list[tuple[int, Reg, Reg]] = []     # (index in P, old, new)
        left = set(conflict)
        while left:
            u = min(left)
            j = max((k for k, x in enumerate(P) if u in _eff(x).defs_may), default=None)
            if j is None:
                return "no-def"
            old = next((base_of(o) for o in P[j].operands if isinstance(base_of(o), Reg)
                        and u in reg_units(base_of(o))), None)
            if old is None or old.file not in ("v", "s"):
                return "implicit-def"
            ou = set(reg_units(old))
            why = self._renamable(P, C, j, old, ou, x_live)
            if why:
                return why
            new = self._target(old, budget, busy)
            if new is None:
                return "no-free-register"
            busy |= set(reg_units(new))
            renames.append((j, old, new))
            left -= ou
        # apply: H = nk.blocks[bi], M = nk.blocks[bi + 1], E = nk.blocks[-1]
        H, M, E = nk.blocks[bi], nk.blocks[bi + 1], nk.blocks[-1]
        h = list(H.instructions)
        c1 = list(M.instructions[:nc])
        p2 = list(M.instructions[nc:nc + np_])
        c2 = list(M.instructions[nc + np_:nc + np_ + nc])
        br = M.instructions[-1]
        ce = list(E.instructions[:nc])
        for j, old, new in renames:
            d = self._rename_def(h[j], old, new)
            if d is None:
                return "partial-def"
            h[j] = d
            for seq in (h, c1, ce):
                start = j + 1 if seq is h else 0
                stop = np_ if seq is h else len(seq)
                for k in range(start, stop):
                    x = _rename_reads(seq[k], old, new)
                    if x is None:
                        return "mixed-read"
                    seq[k] = x
        if _defs(p2) & (_uses(c1) | _defs(c1)):
            return "conflict-left"
        H.instructions = h
        M.instructions = p2 + c1 + c2 + [br]
        E.instructions = ce + E.instructions[nc:]
        import copy
        saved = (kernel.blocks, kernel.descriptor, kernel.metadata)
        blk = module.amdhsa_kernel(kernel.name) if module is not None else None
        saved_fields = dict(blk.fields) if blk is not None else None
        baseline = Counter(static_violations(kernel, am))
        kernel.blocks = nk.blocks
        kernel.descriptor = copy.deepcopy(kernel.descriptor)
        kernel.metadata = copy.deepcopy(kernel.metadata)
        self._grow_counts(kernel, module)
        am.invalidate(kernel, frozenset())
        self._relax_waits(kernel, bi + 1, am)
        am.invalidate(kernel, frozenset())
        if Counter(static_violations(kernel, am)) - baseline:
            repair_hazards(kernel, am, baseline)
            am.invalidate(kernel, frozenset())
            if Counter(static_violations(kernel, am)) - baseline:
                kernel.blocks, kernel.descriptor, kernel.metadata = saved
                if blk is not None:
                    blk.fields = saved_fields
                am.invalidate(kernel, frozenset())
                return "static-violation"
        stats["renamed"] += len(renames)
        return None

    @staticmethod
    def _renamable(P, C, j, old: Reg, ou: set, x_live) -> str | None:
        """Why the first copy's value of ``old`` (P's last write, at ``j``) cannot move to
        a new register, or None."""
        from ..analysis.liveness import lane_effects
        vec = old.file == "v"
        first = next((k for k, x in enumerate(P) if (_eff(x).uses | _eff(x).defs_may) & ou), None)
        if first is None or first > j:
            return "no-def"
        # P must write every unit before reading any (the second copy never needs the
        # first copy's value), and the write at j must be P's last write of them
        seen: set = set()
        for k in range(0, j + 1):
            e = _eff(P[k])
            if (e.uses & ou) - seen:
                return "read-before-write"
            seen |= e.defs_must & ou
        for k in range(j + 1, len(P)):
            e = _eff(P[k])
            if e.defs_may & ou:
                return "later-write"
            if vec and lane_effects(P[k])[2]:
                return "exec-write"
            if (e.uses & ou) and not _per_lane_read(P[k]):
                return "cross-lane-read"
        for x in C:
            if (_eff(x).uses & ou) and not _per_lane_read(x):
                return "cross-lane-read"
        if ou & set(x_live):
            return "live-at-exit"
        return None

    @staticmethod
    def _rename_def(inst: Instruction, old: Reg, new: Reg) -> Instruction | None:
        """``inst`` writing ``new`` instead of ``old``, when that operand is then a full,
        per-lane write that reads nothing of ``old`` or ``new``."""
        from ..analysis.liveness import lane_effects
        from ..isa import operand_roles
        try:
            roles = operand_roles(inst)
        except Exception:  # noqa: BLE001
            return None
        ks = [k for k, (o, r) in enumerate(zip(inst.operands, roles)) if base_of(o) == old]
        if len(ks) != 1 or roles[ks[0]] != "def":
            return None
        x = inst.evolve(operands=[_swap(o, new) if k == ks[0] else o
                                  for k, o in enumerate(inst.operands)])
        e = _eff(x)
        nu = set(reg_units(new))
        if not e.known or e.partial or e.uses_all or not nu <= e.defs_must \
                or (e.uses & (nu | set(reg_units(old)))):
            return None
        if new.file == "v" and (not e.vector or not lane_effects(x)[0]
                                or not nu <= lane_effects(x)[1]):
            return None
        if inst.opcode.startswith(("v_writelane", "v_mfma", "v_smfmac", "v_permlane")):
            return None
        return x

    @staticmethod
    def _target(old: Reg, budget: dict, busy: set) -> Reg | None:
        """The lowest aligned register of ``old``'s shape inside the budget that nothing in
        the kernel names and the ABI leaves alone."""
        step = _align(old.file, old.count)
        for s in range(0, budget.get(old.file, 0) - old.count + 1, step):
            r = Reg(old.file, s, old.count)
            if not set(reg_units(r)) & busy:
                return r
        return None

    @staticmethod
    def _relax_waits(kernel: Kernel, mi: int, am) -> None:
        """Relax every ``s_waitcnt`` of block ``mi`` (in order) to the weakest counts that
        cover every dependent use (:meth:`WaitcntAnalysis.required`); never strengthens."""
        from ..analysis.waitcnt import MAX, NAMES, make_waitcnt, parse_waitcnt
        blk = kernel.blocks[mi]
        k = 0
        while k < len(blk.instructions):
            w = blk.instructions[k]
            if w.opcode != "s_waitcnt":
                k += 1
                continue
            am.invalidate(kernel, frozenset())
            try:
                req = am.get("waitcnt", kernel).required(w)
            except Exception:  # noqa: BLE001 - no analysis: keep the wait as it is
                k += 1
                continue
            cur = parse_waitcnt(w)
            new = tuple(MAX[c] if cur[c] >= MAX[c] else max(cur[c], req[NAMES[c]])
                        for c in range(3))
            if new != cur:
                nw = make_waitcnt(new)
                if nw is None:
                    del blk.instructions[k]
                    continue
                blk.instructions[k] = nw
            k += 1

    @staticmethod
    def _grow_counts(kernel: Kernel, module) -> None:
        """Raise the metadata (and ``.amdhsa_next_free_*``) counts to the registers named now
        (inside the granule: the new registers were chosen inside the allocation)."""
        from ..backend.rebuild import recompute_amdhsa_fields, recompute_register_counts
        if module is not None and module.amdhsa_kernel(kernel.name) is not None:
            recompute_amdhsa_fields(module, kernel)
        recompute_register_counts(kernel)

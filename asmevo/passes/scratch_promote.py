"""scratch-promote: keep constant-address scratch slots in fresh VGPRs, across blocks
(machine-level mem2reg for the private memory of -O0 kernels)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import ClassVar

from ..ir import Instruction, Kernel
from ..ir.operands import Imm, Reg, Special, base_of, reg_units
from .base import Pass, PassResult
from .checks import Snapshot, _int, frozen_blocks, typechecks, new_violations, repair_hazards, static_violations
from .effects import FLAT_SCRATCH, effects, is_vector_unit
from ..analysis.liveness import lane_effects
from .liveness import kernel_flow, liveness
from .scratch_forward import _access

_DWORD = re.compile(r"^scratch_(load|store)_dword(x([234]))?$")
#: modifiers a promotable access may carry: the offset, and the cache-policy bits, which
#: only steer caching of private memory (no other agent can observe it)
_MODS_OK = frozenset({"offset", "sc0", "sc1", "nt"})
#: instruction families that may reach private memory other than through ``scratch_*``:
#: FLAT (the private aperture), MUBUF/MTBUF (the private segment buffer descriptor),
#: scalar loads through a buffer descriptor, SMEM scratch access; ``s_getpc`` marks
#: position-dependent code (calls)
_ALIASING = ("flat_", "buffer_", "tbuffer_", "s_buffer_", "s_scratch_", "s_getpc",
             "s_setpc", "s_swappc", "s_call")
#: arch VGPRs addressable, and the unified VGPR file of gfx90a/gfx942 (AMDGPUUsage,
#: compute_pgm_rsrc3 ACCUM_OFFSET)
MAX_ARCH_VGPRS, UNIFIED_VGPRS = 256, 512
#: a wait list (per path: most recent vmcnt event first, True = kept) grows at most this
#: large before the lowering falls back to vmcnt(0) for the affected waits
_MAX_PATHS = 4096


@dataclass
class _Access:
    inst: Instruction
    kind: str            # "load" | "store"
    lo: int              # absolute byte range [lo, hi) in the lane's private segment
    hi: int
    data: Reg | None     # the data VGPRs when the access is promotable
    block: int


@dataclass
class _Slot:
    lo: int
    hi: int
    accesses: list
    reg: Reg | None = None

    @property
    def width(self) -> int:
        return (self.hi - self.lo) // 4


def _promotable_data(inst: Instruction) -> Reg | None:
    """The data VGPRs of a plain dword scratch access (dword, x2, x3, x4) whose modifiers
    are only ``offset`` and cache bits; ``None`` otherwise."""
    m = _DWORD.match(inst.opcode)
    if m is None or any(n not in _MODS_OK for n, _ in inst.modifiers):
        return None
    width = int(m.group(3) or 1)
    ops = inst.operands
    if len(ops) != 3:
        return None
    data = ops[0] if m.group(1) == "load" else ops[1]
    if base_of(data) is not data or not isinstance(data, Reg) or data.file != "v" \
            or data.count != width:
        return None
    return data


def _moves(dst: Reg, src: Reg) -> list[Instruction]:
    """``v_mov_b64``/``v_mov_b32`` copying ``src`` to ``dst`` (same width); 64-bit moves need
    even VGPRs on both sides (gfx90a+ VGPR tuple alignment)."""
    out = []
    i = 0
    while i < dst.count:
        if dst.count - i >= 2 and (dst.index + i) % 2 == 0 and (src.index + i) % 2 == 0:
            out.append(Instruction("v_mov_b64_e32", [Reg("v", dst.index + i, 2),
                                                     Reg("v", src.index + i, 2)]))
            i += 2
        else:
            out.append(Instruction("v_mov_b32_e32", [Reg("v", dst.index + i, 1),
                                                     Reg("v", src.index + i, 1)]))
            i += 1
    return out


@dataclass
class ScratchPromote(Pass):
    """Promote scratch (private memory) slots with constant addresses to fresh VGPRs.

    This is mem2reg for clang -O0 kernels, which keep every local variable in
    scratch and reload it in later blocks.  The pass applies only when private memory
    can be reached by nothing but the kernel's own constant-address scratch accesses:

    * every ``scratch_*`` instruction is ``..., off, sB offset:K`` (or ``off, off``),
      each base ``sB`` is written only by ``s_mov_b32 sB, C`` with one constant ``C``
      and is written on every path before it is read (not live at entry);
    * there is no ``flat_*`` (the private aperture), ``buffer_*``/``tbuffer_*``/
      ``s_buffer_*`` (the private segment buffer), ``s_scratch_*``, no write of
      FLAT_SCRATCH, no call or ``s_getpc``/``s_setpc``/``s_swappc``, and the CFG is
      understood (:func:`asmevo.passes.liveness.kernel_flow`); it is a kernel entry
      (a device function's scratch may be its caller's frame).

    Each access then touches the fixed byte range ``[C + K, C + K + size)`` of its own
    lane's private segment.  A *slot* is such a range accessed only by dword forms
    (``scratch_load/store_dword``, ``x2``, ``x3``, ``x4``) with exactly that range, a
    plain VGPR data operand and no modifier but ``offset`` and the cache-policy bits
    ``sc0``/``sc1``/``nt`` (these only steer caching; private memory is visible to no
    other lane, wave or agent).  Ranges also touched by byte/short/``d16``/LDS forms or
    partially overlapped stay in memory, as do slots that are never stored, slots
    beyond PRIVATE_SEGMENT_FIXED_SIZE (there the hardware's scratch bounds rules
    decide what a load returns) and slots with an access in a block no pass may edit
    (:func:`asmevo.passes.checks.frozen_blocks`).

    Each slot with stores and loads gets VGPRs that no instruction of the kernel names
    (2-aligned when it is 64 bits or wider); a store becomes ``v_mov vSlot, vData`` and a
    load ``v_mov vData, vSlot`` (``v_mov_b64`` per aligned pair, ``v_mov_b32`` for the
    rest).  Per lane this is exactly what the memory operations do: scratch is private,
    per work-item memory (CDNA3 ISA guide, "Flat, Scratch and Global Instructions"),
    a store writes only the active lanes' private memory and a load writes only the
    active lanes' VGPRs (EXEC masks vector memory instructions), just as a VALU move
    writes only active lanes; lanes inactive at a store keep their old slot value in
    both versions.  Slots whose stores are never loaded lose their stores.

    The fresh VGPRs may grow the allocation: ``.amdhsa_next_free_vgpr`` and
    ``.amdhsa_accum_offset`` (arch VGPRs lie below ACCUM_OFFSET, a multiple of 4;
    AGPRs follow it) and the kernel descriptor / metadata counts are recomputed with
    :func:`asmevo.backend.rebuild.recompute_amdhsa_fields` and
    :func:`~asmevo.backend.rebuild.recompute_register_counts`.  At most 256 arch
    VGPRs and 512 unified registers are used; when registers run short the most
    accessed slots are promoted first.  The allocation does not grow when the kernel
    names a VGPR at or above ACCUM_OFFSET while using AGPRs (that name aliases an AGPR)
    or when the counts are expressions.  A module read from text gets its
    ``.amdgpu_metadata`` YAML rewritten (:func:`asmevo.backend.rebuild.sync_text_metadata`)
    because it prints that, not ``Kernel.metadata``.

    Removing VMEM operations changes what ``s_waitcnt vmcnt(N)`` counts (CDNA3 ISA guide
    "Data dependency resolution": vector memory results return in order, so ``vmcnt(N)``
    completes everything but the N youngest VMEM operations).  Each wait with
    ``0 < N < 63`` becomes ``vmcnt(N')`` with ``N'`` the least, over all paths, number
    of remaining operations among the N youngest before the wait, so exactly the
    operations the old wait completed are still complete.  The result is checked
    with :func:`asmevo.passes.checks.static_violations` (waitcnt, hazards, register
    bounds, the verifier's static layer); a new hazard is repaired with ``s_nop`` when
    that inserts no more nops than scratch operations removed.  A slot whose promotion
    adds a violation (e.g. a load whose data VGPR a pending global load also writes)
    stays in memory: slots are kept or dropped whole, by bisection.

    With ``coalesce`` (a class variable, true) the new moves are then folded into their
    neighbours (:func:`coalesce_moves`: the write feeding a store move writes the slot
    register itself, readers of a reloaded register read the slot register), using a
    lane-aware VGPR liveness; the result is checked again and the folding undone as a
    whole if it adds a violation.

    Stats: ``slots-promoted``, ``loads-removed``, ``stores-removed``, ``vgprs-added``
    (arch VGPR allocation growth), ``waitcnt-lowered``, ``moves-coalesced``,
    ``skipped-kernels``.
    """

    name: ClassVar[str] = "scratch-promote"
    preserves: ClassVar[frozenset[str]] = frozenset()
    max_vgprs: int = field(default=MAX_ARCH_VGPRS, metadata={
        "doc": "highest arch VGPR count the allocation may grow to (<= 256)", "min": 0,
        "max": MAX_ARCH_VGPRS})
    #: fold the new moves into their neighbours (:func:`coalesce_moves`); a class
    #: variable, not a pipeline option, so that the default pipeline's text stays stable
    coalesce: ClassVar[bool] = True

    # -- driver -----------------------------------------------------------------
    def run(self, kernel: Kernel, am) -> PassResult:
        """Promote ``kernel``'s slots; see the class docstring for stats."""
        stats: Counter = Counter()
        module = getattr(am, "module", None)
        accesses = self.analyse(kernel)
        if accesses is None:
            if any(i.opcode.startswith("scratch_") for i in kernel.instructions()):
                stats["skipped-kernels"] += 1
            return PassResult(changed=False, stats=stats)
        slots, dead = self._slots(kernel, module, accesses)
        if not slots and not dead:
            return PassResult(changed=False, stats=stats)
        baseline = static_violations(kernel, am)
        state = _State(kernel, module)
        groups = [[s] for s in slots] + ([[dead]] if dead else [])
        lowered = [0]
        created: dict = {}

        def attempt(chosen: list) -> bool:
            state.restore()
            flat = [s for g in chosen for s in g]
            created.clear()
            lowered[0] = self._apply(kernel, module, flat, created)
            if lowered[0] is None:
                return False
            am.invalidate(kernel, frozenset())
            bad = new_violations(kernel, am, baseline)
            if not bad:
                return True
            removed = sum(len(s.accesses) for s in flat)
            if all(v.startswith("hazard: rule") for v in bad):
                r = repair_hazards(kernel, am, baseline)
                added = sum(n - 1 for _, _, _, n in r)
                if added <= removed and not new_violations(kernel, am, baseline):
                    return True
            return False

        kept: list = []

        def solve(items: list) -> None:
            if not items:
                return
            if attempt(kept + items):
                kept.extend(items)
                return
            if len(items) == 1:
                return
            mid = len(items) // 2
            solve(items[:mid])
            solve(items[mid:])
        solve(groups)
        if not kept:
            state.restore()
            am.invalidate(kernel, frozenset())
            return PassResult(changed=False, stats=stats)
        if not attempt(kept):  # rebuild the accepted state (the last attempt may have failed)
            state.restore()  # not expected: every attempt starts from the same snapshot
            am.invalidate(kernel, frozenset())
            return PassResult(changed=False, stats=stats)
        if self.coalesce:
            snap = [list(b.instructions) for b in kernel.blocks]
            n = coalesce_moves(kernel, created.get("load", set()), created.get("store", set()))
            if n:
                am.invalidate(kernel, frozenset())
                if new_violations(kernel, am, baseline):
                    for b, code in zip(kernel.blocks, snap):
                        b.instructions = code
                    am.invalidate(kernel, frozenset())
                    n = 0
            stats["moves-coalesced"] = n
        if module is not None and module.code_object is None and state.md is not None \
                and kernel.metadata != state.md:
            # a module read from text prints its .amdgpu_metadata YAML, not Kernel.metadata
            from ..backend.rebuild import sync_text_metadata
            from ..errors import AsmevoError
            try:
                sync_text_metadata(module)
            except AsmevoError:
                pass  # no YAML form: writing the module reports it
        for g in kept:
            for s in g:
                loads = sum(1 for a in s.accesses if a.kind == "load")
                stats["loads-removed"] += loads
                stats["stores-removed"] += len(s.accesses) - loads
                if s.reg is not None:
                    stats["slots-promoted"] += 1
        stats["vgprs-added"] = max(0, state.arch_limit() - state.arch_limit_before)
        stats["waitcnt-lowered"] = lowered[0]
        return PassResult(changed=True, stats=stats)

    # -- analysis ---------------------------------------------------------------
    @staticmethod
    def analyse(kernel: Kernel) -> list[_Access] | None:
        """The kernel's scratch accesses with absolute byte ranges, or ``None`` when the
        pass does not apply (see the class docstring)."""
        if not kernel.is_kernel or not kernel_flow(kernel).ok:
            return None
        consts: dict[Reg, int] = {}
        bases: set[Reg] = set()
        raw = []
        fs = set(FLAT_SCRATCH)
        for n, b in enumerate(kernel.blocks):
            for inst in b.instructions:
                op = inst.opcode
                if op.startswith(_ALIASING) or (op.startswith("s_waitcnt") and op != "s_waitcnt"):
                    return None
                if effects(inst).defs_may & fs:
                    return None
                if "scratch" in op and not op.startswith("scratch_"):
                    return None
                if not op.startswith("scratch_"):
                    continue
                a = _access(inst)
                if a is None:
                    return None
                kind, base, lo, hi, _, _ = a
                if isinstance(base, Reg) and base.file == "s" and base.count == 1:
                    bases.add(base)
                elif base != Special("off"):
                    return None
                raw.append((inst, kind, base, lo, hi, n))
        if not raw:
            return None
        if bases:
            base_units = {u for r in bases for u in reg_units(r)}
            for inst in kernel.instructions():
                hit = effects(inst).defs_may & base_units
                if not hit:
                    continue
                ops = inst.operands
                if inst.opcode != "s_mov_b32" or len(ops) != 2 or not isinstance(ops[1], Imm) \
                        or not isinstance(ops[1].value, int) or ops[0] not in bases:
                    return None
                v = ops[1].value & 0xFFFFFFFF
                if consts.setdefault(ops[0], v) != v:
                    return None
            if any(r not in consts for r in bases):
                return None
            live = liveness(kernel)
            if base_units & set(live.live_in[0] if live.live_in else ()):
                return None  # some path reads a base before setting it
        out = []
        for inst, kind, base, lo, hi, n in raw:
            c = consts.get(base, 0)
            alo, ahi = c + lo, c + hi
            if alo < 0 or ahi > 0xFFFFFFFF:
                return None
            out.append(_Access(inst, kind, alo, ahi, _promotable_data(inst), n))
        return out

    def _slots(self, kernel: Kernel, module, accesses: list[_Access]):
        """``(slots to promote, with registers assigned; stores of never-loaded slots)``."""
        frozen = frozen_blocks(kernel, module)
        fz = {n for n, b in enumerate(kernel.blocks) if id(b) in frozen}
        size = _private_size(kernel, module)
        ranges: dict[tuple[int, int], list[_Access]] = {}
        for a in accesses:
            ranges.setdefault((a.lo, a.hi), []).append(a)
        cands, dead = [], []
        for (lo, hi), accs in sorted(ranges.items()):
            if any(a.data is None or a.block in fz for a in accs):
                continue
            if size is not None and hi > size:
                continue  # beyond the private segment: the hardware's bounds rules apply
            if any(b.lo < hi and lo < b.hi and (b.lo, b.hi) != (lo, hi) for b in accesses):
                continue
            kinds = {a.kind for a in accs}
            if kinds == {"store"}:
                dead.append(_Slot(lo, hi, accs))
            elif kinds == {"load", "store"}:
                cands.append(_Slot(lo, hi, accs))
        cands.sort(key=lambda s: (-len(s.accesses), s.lo))
        self._assign(kernel, module, cands)
        return [s for s in cands if s.reg is not None], \
            (_Slot(0, 0, [a for s in dead for a in s.accesses]) if dead else None)

    def _assign(self, kernel: Kernel, module, slots: list[_Slot]) -> None:
        """Give each slot (in order) the lowest free VGPRs below the bound; slots that do
        not fit get none.

        The bound is ``max_vgprs`` (at most 256 arch VGPRs; with AGPRs, ACCUM_OFFSET +
        AGPRs must stay within the 512-register unified file).  It is the current
        allocation (no growth) when the kernel names a VGPR at or above ACCUM_OFFSET
        while it uses AGPRs (the name aliases an AGPR, which growing ACCUM_OFFSET would
        move), and nothing is promoted when the ``.amdhsa_kernel`` counts are
        expressions."""
        used: set[int] = set()
        top_a = 0
        for inst in kernel.instructions():
            for o in inst.operands:
                for u in reg_units(o):
                    if len(u) == 2 and u[0] == "v":
                        used.add(u[1])
                    elif len(u) == 2 and u[0] == "a":
                        top_a = max(top_a, u[1] + 1)
        agprs = max(top_a, _agprs_allocated(kernel, module))
        bound = min(self.max_vgprs, MAX_ARCH_VGPRS)
        if agprs:
            bound = min(bound, (UNIFIED_VGPRS - agprs) // 4 * 4)
        blk = module.amdhsa_kernel(kernel.name) if module is not None else None
        if blk is not None and any(k in blk.fields and _int(blk.fields[k]) is None for k in (
                ".amdhsa_next_free_vgpr", ".amdhsa_accum_offset")):
            bound = 0
        current = _State.limit_of(kernel, blk)
        if agprs and current is not None and used and max(used) >= current:
            bound = min(bound, current)
        for s in slots:
            w = s.width
            step = 2 if w >= 2 else 1
            i = 0
            while i + w <= bound and any(j in used for j in range(i, i + w)):
                i += step
            if i + w <= bound:
                s.reg = Reg("v", i, w)
                used.update(range(i, i + w))

    # -- rewriting --------------------------------------------------------------
    @staticmethod
    def _apply(kernel: Kernel, module, slots: list[_Slot], created: dict | None = None) \
            -> int | None:
        """Rewrite the accesses of ``slots``, lower the waits, grow the allocation;
        returns the number of waits lowered, or ``None`` (nothing changed) when a wait in
        a block no pass may edit would need lowering."""
        repl: dict[int, list[Instruction]] = {}
        for s in slots:
            for a in s.accesses:
                if s.reg is None:
                    repl[id(a.inst)] = []
                elif a.kind == "store":
                    repl[id(a.inst)] = _moves(s.reg, a.data)
                else:
                    repl[id(a.inst)] = _moves(a.data, s.reg)
                if created is not None and s.reg is not None:
                    created.setdefault(a.kind, set()).update(id(m) for m in repl[id(a.inst)])
        waits = lower_waits(kernel, set(repl))
        frozen = frozen_blocks(kernel, module)
        if any(id(i) in waits for b in kernel.blocks if id(b) in frozen for i in b.instructions):
            return None  # a wait no pass may edit would have to change
        repl.update({k: [v] for k, v in waits.items()})
        for b in kernel.blocks:
            new = []
            for inst in b.instructions:
                r = repl.get(id(inst))
                new.extend([inst] if r is None else r)
            b.instructions = new
        top = max((s.reg.index + s.reg.count for s in slots if s.reg is not None), default=0)
        blk = module.amdhsa_kernel(kernel.name) if module is not None else None
        limit = _State.limit_of(kernel, blk)
        if limit is not None and top > limit:
            from ..backend.rebuild import recompute_amdhsa_fields, recompute_register_counts
            if module is not None:
                recompute_amdhsa_fields(module, kernel)
            recompute_register_counts(kernel)
            _grow_metadata_vgpr_count(kernel)
        return len(waits)


def _private_size(kernel: Kernel, module) -> int | None:
    """Scratch bytes per work-item (``.amdhsa_private_segment_fixed_size`` or the
    descriptor's PRIVATE_SEGMENT_FIXED_SIZE); ``None`` when unknown."""
    blk = module.amdhsa_kernel(kernel.name) if module is not None else None
    if blk is not None and ".amdhsa_private_segment_fixed_size" in blk.fields:
        return _int(blk.fields[".amdhsa_private_segment_fixed_size"]) or 0
    kd = kernel.descriptor
    return kd.private_segment_fixed_size if kd is not None else None


def _agprs_allocated(kernel: Kernel, module) -> int:
    """AGPRs the ``.amdhsa_kernel`` block allocates (next_free_vgpr - accum_offset)."""
    blk = module.amdhsa_kernel(kernel.name) if module is not None else None
    if blk is None:
        return 0
    nv = _int(blk.fields.get(".amdhsa_next_free_vgpr"))
    acc = _int(blk.fields.get(".amdhsa_accum_offset"))
    return max(0, nv - acc) if nv is not None and acc is not None else 0


def _grow_metadata_vgpr_count(kernel: Kernel) -> None:
    """Raise the metadata ``.vgpr_count`` to the unified total the code needs (arch VGPRs,
    or ACCUM_OFFSET + AGPRs when AGPRs are used), as the AsmPrinter writes it
    (TotalNumVgprs); ``recompute_register_counts`` raises it to the arch count only."""
    from ..backend.rebuild import used_registers
    md, kd = kernel.metadata, kernel.descriptor
    if not isinstance(md, dict) or not isinstance(md.get(".vgpr_count"), int) \
            or isinstance(md.get(".vgpr_count"), bool):
        return
    top = used_registers(kernel)
    need = top["v"]
    if top["a"] and kd is not None:
        need = max(need, kd.accum_offset_vgprs + top["a"])
    if need > md[".vgpr_count"]:
        md[".vgpr_count"] = need


class _State(Snapshot):
    """:class:`~asmevo.passes.checks.Snapshot` plus the arch VGPR allocation before."""

    def __init__(self, kernel: Kernel, module):
        super().__init__(kernel, module)
        self.arch_limit_before = self.arch_limit()

    def arch_limit(self) -> int:
        """Arch VGPRs allocated (0 when unknown)."""
        return self.limit_of(self.kernel, self.blk) or 0

    @staticmethod
    def limit_of(kernel: Kernel, blk) -> int | None:
        """Arch VGPRs allocated: ACCUM_OFFSET (or next_free_vgpr without it) of the
        ``.amdhsa_kernel`` block, else of the descriptor; ``None`` when unknown."""
        if blk is not None:
            acc = _int(blk.fields.get(".amdhsa_accum_offset"))
            nv = _int(blk.fields.get(".amdhsa_next_free_vgpr"))
            if acc is not None or nv is not None:
                return acc if acc is not None else nv
        kd = kernel.descriptor
        if kd is not None:
            return kd.accum_offset_vgprs
        return None


def lower_waits(kernel: Kernel, removed: set[int]) -> dict[int, Instruction]:
    """New ``s_waitcnt`` instructions (by id of the old one) after the VMEM operations whose
    ids are in ``removed`` disappear.

    ``vmcnt(N)`` completes every VMEM operation except the N youngest (in-order return,
    CDNA3 ISA guide "Data dependency resolution").  For each wait with ``0 < N < 63`` the
    new count is the least, over the paths reaching it, number of kept operations among
    the N youngest before it, found by a forward dataflow whose facts are the possible
    suffixes (youngest first, kept/removed flags) of the VMEM history; with more than
    ``_MAX_PATHS`` suffixes at a point, the waits fall back to ``vmcnt(0)``.
    """
    from ..analysis.waitcnt import MAX, VM, event_of, parse_waitcnt
    from ..analysis.waitcnt import make_waitcnt
    waits = [(i, parse_waitcnt(i)) for i in kernel.instructions() if i.opcode == "s_waitcnt"]
    depth = max((c[VM] for _, c in waits if 0 < c[VM] < MAX[VM]), default=0)
    if depth == 0 or not removed:
        return {}
    flow = kernel_flow(kernel)
    nb = len(kernel.blocks)
    TOP = None
    ins: list = [set() for _ in range(nb)]
    ins[0] = {()}
    is_vm = {}
    for inst in kernel.instructions():
        is_vm[id(inst)] = VM in event_of(inst).counters

    def transfer(state, insts, record=None):
        cur = state
        for inst in insts:
            if record is not None and inst.opcode == "s_waitcnt":
                record[id(inst)] = cur
            if is_vm[id(inst)] and cur is not TOP:
                flag = id(inst) not in removed
                cur = {((flag,) + s)[:depth] for s in cur}
        return cur

    work = list(range(nb))
    while work:
        b = work.pop(0)
        st = ins[b]
        out = transfer(st, kernel.blocks[b].instructions)
        for s in flow.succ[b]:
            old = ins[s]
            if old is TOP:
                continue
            new = TOP if out is TOP else old | out
            if new is not TOP and len(new) > _MAX_PATHS:
                new = TOP
            if new is TOP or new != old:
                ins[s] = new
                if s not in work:
                    work.append(s)
    at: dict[int, object] = {}
    for b in range(nb):
        transfer(ins[b], kernel.blocks[b].instructions, at)
    out: dict[int, Instruction] = {}
    for inst, c in waits:
        n = c[VM]
        if not 0 < n < MAX[VM] or id(inst) not in at:
            continue
        st = at[id(inst)]
        if not st:
            continue  # unreachable
        new_n = 0 if st is TOP else min(sum(s[:n]) for s in st)
        if new_n != n:
            w = make_waitcnt((new_n, c[1], c[2]))
            if w is not None:
                out[id(inst)] = w
    return out


# -- coalescing the new moves ----------------------------------------------------------

_EXEC_UNITS = frozenset((("exec_lo",), ("exec_hi",)))


def _lane_ok(inst: Instruction) -> bool:
    """Per-lane: reads and writes VGPRs only in lanes active in EXEC."""
    return lane_effects(inst)[0]


def _tied(inst: Instruction) -> bool:
    """Whether ``inst``'s destination keeps or reads its old value (DPP, SDWA, op_sel,
    ``v_fmac``-style accumulators...).  :func:`asmevo.passes.effects.effects` also calls
    a write partial when a source merely names the destination register
    (``v_add_u32 v3, v3, v4``); those sources are moved away (index xor 128) to ask it
    about the instruction itself."""
    e = effects(inst)
    if not e.partial:
        return False
    nd = e.ndefs
    if nd < 1:
        return True
    dst = set()
    for o in inst.operands[:nd]:
        dst.update(reg_units(o))
    ops = list(inst.operands)
    moved = False
    for k in range(nd, len(ops)):
        r = base_of(ops[k])
        if isinstance(r, Reg) and r.file in ("v", "a") and set(reg_units(r)) & dst:
            from ..ir.operands import Src
            nr = Reg(r.file, r.index ^ 128, r.count)
            o = ops[k]
            ops[k] = Src(nr, o.neg, o.abs, o.sext, o.style) if isinstance(o, Src) else nr
            moved = True
    return not moved or effects(inst.evolve(operands=ops)).partial


def _vector_transfer(insts, live: set) -> set:
    """VGPR/AGPR units live before ``insts`` given ``live`` after them, lane-aware.

    A read by a per-lane instruction (:func:`asmevo.analysis.liveness.lane_effects`)
    that a full per-lane write of
    the register precedes in the same block, with no EXEC write in between, reads
    only lanes that write set: it does not make the register live before the write.
    Every other read (cross-lane, DPP, MFMA, or across an EXEC write) keeps it live
    in every lane, and writes never end a live range otherwise (a VALU write leaves
    the inactive lanes alone; CDNA3 ISA guide "Vector ALU operations", EXEC).
    """
    strong = {u for u in live if is_vector_unit(u)}
    loc: set = set()
    for inst in reversed(insts):
        e = effects(inst)
        pl, full, writes_exec = lane_effects(inst)
        if writes_exec:
            strong |= loc
            loc = set()
        loc.difference_update(full)
        for u in e.uses:
            if is_vector_unit(u):
                (loc if pl else strong).add(u)
    return strong | loc


def _vector_live_out(kernel: Kernel) -> list[set]:
    """Per block, the VGPR/AGPR units live after it: the EXEC-aware may-liveness
    (:class:`asmevo.analysis.liveness.MayLiveness`, the same lane-aware rule as
    :func:`_vector_transfer`); exits have none."""
    live = liveness(kernel)
    return [{u for u in lo if is_vector_unit(u)} for lo in live.live_out]

def _units_of(r: Reg) -> set:
    return set(reg_units(r))


def _rename_reads(inst: Instruction, old: Reg, new: Reg) -> Instruction | None:
    """``inst`` reading ``new`` where it read ``old`` (same width), type-checked; ``None``
    when a read overlaps ``old`` without being exactly it, or the result is illegal."""
    from ..ir.operands import Src
    e = effects(inst)
    ndefs = e.ndefs if e.ndefs >= 0 else None
    if ndefs is None:
        return None
    ops = list(inst.operands)
    ou = _units_of(old)
    for k in range(ndefs, len(ops)):
        r = base_of(ops[k])
        if not isinstance(r, Reg) or not (set(reg_units(r)) & ou):
            continue
        if r != old:
            return None
        o = ops[k]
        ops[k] = Src(new, o.neg, o.abs, o.sext, o.style) if isinstance(o, Src) else new
    if any(set(reg_units(o)) & ou for o in ops[:ndefs]) and _tied(inst):
        return None  # a tied destination reads old too
    out = inst.evolve(operands=ops)
    return None if typechecks(out) is False else out   # no ISA table: same-class rename


def coalesce_moves(kernel: Kernel, load_moves: set[int], store_moves: set[int]) -> int:
    """Fold the moves :class:`ScratchPromote` created into their neighbours, in one block
    and one EXEC epoch; returns how many moves were deleted.

    * A store move ``v_mov vS, vX`` whose ``vX`` was last written by a per-lane full
      write ``D`` of exactly ``vX``, with nothing in between touching ``vX``, ``vS`` or
      EXEC, and ``vX`` not live after the move: ``D`` writes ``vS`` instead and the move
      goes (``v_add v1, v1, 1; v_mov v12, v1`` -> ``v_add v12, v1, 1``).
    * A load move ``v_mov vX, vS``: later per-lane readers of ``vX`` in the block read
      ``vS`` instead, up to a write of ``vX``, ``vS`` or EXEC; the move goes when ``vX``
      is then not live after it.

    Liveness is lane-aware (:func:`_vector_transfer`): ``vX`` is dead when every later
    read of it in any lane is preceded by a full write under the same EXEC.  The caller
    checks the result with the static checks.
    """
    deleted = 0
    for _ in range(4):
        changed = 0
        # One liveness per round: the edits only remove reads and writes of the non-slot
        # registers they ask about (and add reads of slot registers), so the sets stay
        # over-approximations of those registers' liveness until the next round.
        lout = _vector_live_out(kernel)
        for bi, blk in enumerate(kernel.blocks):
            i = 0
            while i < len(blk.instructions):
                inst = blk.instructions[i]
                if (id(inst) in store_moves and _fold_store(blk, i, lout[bi])) or \
                        (id(inst) in load_moves and _forward_load(blk, i, lout[bi])):
                    changed += 1
                    continue
                i += 1
        deleted += changed
        if not changed:
            break
    return deleted


def _fold_store(blk, i: int, live_out: set) -> bool:
    """Store move ``v_mov vS, vX`` at ``i``: retarget the write ``D`` of ``vX`` to ``vS``
    and delete the move (see :func:`coalesce_moves`); later reads of ``vX`` in the epoch
    read ``vS``.  Returns whether the block changed."""
    mv = blk.instructions[i]
    vs, vx = mv.operands
    if not (isinstance(vs, Reg) and isinstance(vx, Reg)):
        return False
    xu, su = _units_of(vx), _units_of(vs)
    for j in range(i - 1, -1, -1):
        d = blk.instructions[j]
        e = effects(d)
        if e.defs_may & _EXEC_UNITS:
            return False
        vdefs = {u for u in e.defs_may if is_vector_unit(u)}
        if vdefs & xu and d.operands and base_of(d.operands[0]) == vx:
            if vdefs != xu or not _lane_ok(d) or _tied(d) or e.ndefs < 1 \
                    or d.operands[0] is not base_of(d.operands[0]):
                return False
            new = _rename_after(blk.instructions, i + 1, vx, vs)
            if new is None or xu & _vector_transfer(new[i + 1:], set(live_out)):
                return False
            nd = _retarget(d, vs)
            if nd is None:
                return False
            new[j] = nd
            del new[i]
            blk.instructions = new
            return True
        if (e.uses | e.defs_may) & (xu | su):
            return False
    return False


def _rename_after(insts: list, start: int, vx: Reg, vs: Reg) -> list | None:
    """A copy of ``insts`` whose per-lane reads of ``vx`` from ``start`` on read ``vs``,
    up to (and including the reads of) the first instruction writing ``vx``, ``vs`` or
    EXEC (not included when it writes EXEC) or reading ``vx`` in a way that cannot be
    renamed; ``None`` never (the stop simply leaves later reads alone)."""
    xu, su = _units_of(vx), _units_of(vs)
    new = list(insts)
    for j in range(start, len(new)):
        r = new[j]
        e = effects(r)
        if e.defs_may & _EXEC_UNITS:
            break
        if e.uses & xu:
            if not _lane_ok(r):
                break
            rr = _rename_reads(r, vx, vs)
            if rr is None:
                break
            new[j] = rr
        if e.defs_may & (xu | su):
            break
    return new


def _retarget(d: Instruction, vs: Reg) -> Instruction | None:
    out = d.evolve(operands=[vs] + list(d.operands[1:]))
    return None if typechecks(out) is False else out   # no ISA table: same-class rename


def _forward_load(blk, i: int, live_out: set) -> bool:
    """Load move ``v_mov vX, vS`` at ``i``: later reads of ``vX`` read ``vS``; the move
    goes when ``vX`` is then dead after it.  Returns whether the block changed."""
    mv = blk.instructions[i]
    vx, vs = mv.operands
    if not (isinstance(vs, Reg) and isinstance(vx, Reg)):
        return False
    new = _rename_after(blk.instructions, i + 1, vx, vs)
    if new is None or _units_of(vx) & _vector_transfer(new[i + 1:], set(live_out)):
        return False
    del new[i]
    blk.instructions = new
    return True

"""regalloc-compact: renumber registers to lower the highest VGPR/AGPR/SGPR when that
raises occupancy; recompute the descriptor's register counts."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import ClassVar

from ..ir import Kernel, Reg
from ..ir.operands import Src, base_of
from .base import Pass, PassResult
from .checks import apply_checked, static_violations
from .liveness import kernel_flow, liveness

#: gfx942: 512 unified VGPRs per SIMD lane slice, allocated in granules of 8; at most
#: 8 waves per SIMD (AMDGPUUsage; LLVM GCNSubtarget::getOccupancyWithNumVGPRs).
VGPR_FILE, VGPR_GRANULE, MAX_WAVES = 512, 8, 8
#: VCC, XNACK_MASK, FLAT_SCRATCH: SGPRs allocated beyond the named ones on gfx942.
EXTRA_SGPRS = 6
#: alignment (in registers) a cluster keeps: VGPR/AGPR tuples start even on gfx90a/gfx942,
#: SGPR tuples of 4+ start at a multiple of 4 (pairs at even) -- keep index mod this.
ALIGN = {"v": 2, "a": 2, "s": 4}


def vgpr_alloc(top_v: int, top_a: int) -> int:
    """Unified VGPRs allocated for ``top_v`` ArchVGPRs and ``top_a`` AGPRs (granule 8)."""
    if top_a:
        total = max((top_v + 3) // 4 * 4, 4) + top_a
    else:
        total = top_v
    return max(VGPR_GRANULE, (total + VGPR_GRANULE - 1) // VGPR_GRANULE * VGPR_GRANULE)


def occupancy(top_v: int, top_a: int, sgprs: int) -> int:
    """Waves per SIMD allowed by the register counts (VGPR: 512 / allocation; SGPR on
    GFX9: <=80 -> 10, <=88 -> 9, <=100 -> 8, else 7 (LLVM getOccupancyWithNumSGPRs)),
    capped at 8."""
    w_v = VGPR_FILE // vgpr_alloc(top_v, top_a)
    total_s = sgprs + EXTRA_SGPRS
    w_s = 10 if total_s <= 80 else 9 if total_s <= 88 else 8 if total_s <= 100 else 7
    return min(MAX_WAVES, w_v, w_s)


def _tops(kernel: Kernel) -> dict[str, int]:
    top = {"v": 0, "a": 0, "s": 0}
    for inst in kernel.instructions():
        for o in inst.operands:
            r = base_of(o)
            if isinstance(r, Reg) and r.file in top:
                top[r.file] = max(top[r.file], r.index + r.count)
    return top


def _clusters(kernel: Kernel, file: str) -> list[tuple[int, int]]:
    """Maximal intervals [lo, hi) of registers of ``file`` joined by tuple operands."""
    spans = set()
    for inst in kernel.instructions():
        for o in inst.operands:
            r = base_of(o)
            if isinstance(r, Reg) and r.file == file:
                spans.add((r.index, r.index + r.count))
    out: list[list[int]] = []
    for lo, hi in sorted(spans):
        if out and lo < out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return [(a, b) for a, b in out]


def _pack(clusters: list[tuple[int, int]], pinned: set[int], align: int) -> dict[int, int]:
    """Map each cluster start to a new start: pinned clusters stay, the rest go first-fit
    to the lowest free place with the same index mod ``align``."""
    used: set[int] = set()
    mapping: dict[int, int] = {}
    fixed = [(lo, hi) for lo, hi in clusters if any(i in pinned for i in range(lo, hi))]
    for lo, hi in fixed:
        mapping[lo] = lo
        used.update(range(lo, hi))
    for lo, hi in clusters:
        if lo in mapping:
            continue
        size = hi - lo
        start = lo % align
        while any(i in used for i in range(start, start + size)):
            start += align
        if start > lo:
            start = lo
        mapping[lo] = start
        used.update(range(start, start + size))
    return mapping


@dataclass
class RegallocCompact(Pass):
    """Renumber VGPRs/AGPRs/SGPRs to close gaps, when that raises occupancy.

    Registers that carry values into the kernel stay where they are: SGPRs
    live at entry (user and system SGPRs, preloaded kernel arguments) and the
    work-item ID VGPRs ``v0``-``v2``.  Every other register is renamed
    consistently everywhere (a global bijection, so hazards and waitcnt
    dependences are unchanged), keeping tuple shapes and alignment.  Then the
    register counts are lowered: the kernel descriptor (code objects), the
    ``.amdhsa_next_free_vgpr``/``.amdhsa_accum_offset``/``.amdhsa_next_free_sgpr``
    fields (assembly) and the metadata ``.vgpr_count``/``.agpr_count``/``.sgpr_count``.
    """

    name: ClassVar[str] = "regalloc-compact"
    preserves: ClassVar[frozenset[str]] = frozenset()
    always: bool = field(default=False, metadata={
        "doc": "compact even when occupancy does not change"})

    def run(self, kernel: Kernel, am) -> PassResult:
        """Renumber ``kernel``'s registers; stats ``occupancy-before``/``-after``,
        ``registers-renamed``."""
        stats = Counter()
        module = getattr(am, "module", None)
        if not kernel.is_kernel or not kernel_flow(kernel).ok:
            stats["skipped-kernels"] += 1
            return PassResult(changed=False, stats=stats)
        live = liveness(kernel)
        entry = live.live_in[0] if live.live_in else frozenset()
        pinned = {f: {u[1] for u in entry if len(u) == 2 and u[0] == f} for f in ALIGN}
        pinned["v"] = {i for i in pinned["v"] if i <= 2}  # work-item IDs only (see docstring)
        pinned["a"] = set()
        min_s = self._min_sgprs(kernel, module)
        # every SGPR the hardware initialises keeps its number, used or not (kernarg
        # preloading writes them even on paths this liveness does not see)
        pinned["s"] |= set(range(min_s))
        old = _tops(kernel)
        maps: dict[str, dict[int, int]] = {}
        for f in ALIGN:
            cl = _clusters(kernel, f)
            starts = _pack(cl, pinned[f], ALIGN[f])
            m = {}
            for lo, hi in cl:
                for i in range(lo, hi):
                    m[i] = starts[lo] + (i - lo)
            maps[f] = m
        new = {f: max((maps[f][i] + 1 for i in maps[f]), default=0) for f in ALIGN}
        occ_old = occupancy(old["v"], old["a"], max(old["s"], min_s))
        occ_new = occupancy(new["v"], new["a"], max(new["s"], min_s))
        stats["occupancy-before"] = occ_old
        stats["occupancy-after"] = occ_old
        renamed = sum(1 for f in maps for i, j in maps[f].items() if i != j)
        if not renamed or (occ_new <= occ_old and not self.always):
            return PassResult(changed=False, stats=stats)
        plan = []
        for inst in kernel.instructions():
            ops = [self._rename(o, maps) for o in inst.operands]
            if ops != inst.operands:
                plan.append((inst, [inst.evolve(operands=ops)]))
        baseline = static_violations(kernel, am)
        kept = apply_checked(kernel, am, plan, baseline, atomic=True)
        if len(kept) != len(plan):  # all or nothing: nothing was applied
            return PassResult(changed=False, stats=stats)
        self._lower_counts(kernel, module, new, min_s)
        stats["occupancy-after"] = occ_new
        stats["registers-renamed"] = renamed
        return PassResult(changed=True, stats=stats)

    @staticmethod
    def _rename(o, maps):
        r = base_of(o)
        if not isinstance(r, Reg) or r.file not in maps or r.index not in maps[r.file]:
            return o
        nr = Reg(r.file, maps[r.file][r.index], r.count)
        if isinstance(o, Src):
            return Src(nr, o.neg, o.abs, o.sext, o.style)
        return nr

    @staticmethod
    def _min_sgprs(kernel: Kernel, module) -> int:
        """SGPRs the hardware initialises at launch (user + system SGPRs; PITFALLS BR-24)."""
        kd = kernel.descriptor
        if kd is not None:
            return kd.user_sgpr_count + kd.enable_sgpr_workgroup_id_x \
                + kd.enable_sgpr_workgroup_id_y + kd.enable_sgpr_workgroup_id_z \
                + kd.enable_sgpr_workgroup_info + kd.enable_private_segment
        blk = module.amdhsa_kernel(kernel.name) if module is not None else None
        if blk is None:
            return 0
        total = 0
        for key in (".amdhsa_user_sgpr_count", ".amdhsa_system_sgpr_workgroup_id_x",
                    ".amdhsa_system_sgpr_workgroup_id_y", ".amdhsa_system_sgpr_workgroup_id_z",
                    ".amdhsa_system_sgpr_workgroup_info", ".amdhsa_enable_private_segment"):
            try:
                total += int(blk.fields.get(key, "0"), 0)
            except ValueError:
                pass
        return total

    @staticmethod
    def _lower_counts(kernel: Kernel, module, new: dict, min_s: int) -> None:
        set_register_counts(kernel, module, new, min_s)


def set_register_counts(kernel: Kernel, module, new: dict, min_s: int = 0) -> None:
    """Set ``kernel``'s register counts to the tops ``new`` (``{"v": n, "a": n, "s": n}``:
    highest used index + 1 per file) wherever they are recorded: the kernel descriptor
    (granulated by :meth:`KernelDescriptor.set_register_counts`), the metadata
    ``.vgpr_count``/``.agpr_count``/``.sgpr_count`` and the ``.amdhsa_next_free_vgpr``/
    ``.amdhsa_accum_offset``/``.amdhsa_next_free_sgpr`` fields (expressions are left
    alone).  Arch VGPRs are rounded up to the accum_offset granule of 4 when AGPRs are
    used (AMDGPUUsage "AMDGPU_KERNEL_CODE_T / kernel descriptor", gfx90a+ unified VGPR
    file).  Used to lower counts (regalloc-compact) and to raise them (passes that
    allocate fresh registers).  ``min_s``: SGPRs the hardware initialises."""
    vg = "v" in new
    arch = max((new["v"] + 3) // 4 * 4, 4) if vg else 0
    total_v = (arch + new["a"] if new.get("a") else new["v"]) if vg else 0
    sgprs = max(new["s"], min_s) if "s" in new else None
    kd = kernel.descriptor
    if kd is not None:
        kd.set_register_counts(num_vgprs=max(total_v, 1) if vg else None,
                               num_sgprs=sgprs + EXTRA_SGPRS if sgprs is not None else None,
                               accum_offset_vgprs=min(arch, 256) if vg else None)
    updates = []
    if vg:
        # metadata .vgpr_count is the unified total (AMDGPUUsage; LLVM getTotalNumVGPRs)
        updates += [(".vgpr_count", total_v, ".amdhsa_next_free_vgpr", max(total_v, 1)),
                    (".agpr_count", new.get("a", 0), ".amdhsa_accum_offset", min(arch, 256))]
    if sgprs is not None:
        updates.append((".sgpr_count", sgprs + EXTRA_SGPRS, ".amdhsa_next_free_sgpr",
                        max(sgprs, 1)))
    md = kernel.metadata
    if isinstance(md, dict):
        for key, val, _, _ in updates:
            if isinstance(md.get(key), int):
                md[key] = val
    blk = module.amdhsa_kernel(kernel.name) if module is not None else None
    if blk is not None:
        f = blk.fields
        for _, _, key, val in updates:
            if key in f:
                try:
                    int(f[key], 0)
                except ValueError:
                    continue  # an expression: leave it
                f[key] = str(val)

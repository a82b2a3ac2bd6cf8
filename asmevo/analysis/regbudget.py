"""Register and LDS budget of a kernel versus what its descriptor grants, and occupancy.

Rules (LLVM AMDGPUUsage "AMDHSA Kernel Descriptor" for GFX90A/GFX942, and
"Initial Kernel Execution State"; CDNA3 ISA guide "Vector GPRs" / "Scalar GPRs"):

* gfx942 has a unified 512-entry VGPR file per lane per SIMD; a wave gets
  ``(GRANULATED_WORKITEM_VGPR_COUNT + 1) * 8`` entries: ArchVGPRs ``v0..`` then, from
  ``ACCUM_OFFSET`` ((field + 1) * 4, a multiple of 4), the AGPRs ``a0..``;
* SGPRs are granted ``(GRANULATED_WAVEFRONT_SGPR_COUNT + 1) * 8`` including the
  6 extra SGPRs gfx942 reserves after the last used one (VCC, FLAT_SCRATCH,
  XNACK_MASK; LLVM ``getNumExtraSGPRs``), at most 102 addressable;
* user SGPRs (preloaded kernargs included) plus the 6 reserved must fit in the granted
  SGPRs, as must user + system SGPRs (PITFALLS BR-24, LLVM PR #104743);
* LDS: 64 KiB per CU (gfx942); the kernel may address ``group_segment_fixed_size`` bytes plus
  any dynamic LDS given at launch, so DS offsets beyond the fixed size are only a note;
* occupancy (waves per SIMD, at most 8 on gfx90a/gfx942): ``512 // vgprs`` by VGPRs,
  by SGPRs as LLVM ``getOccupancyWithNumSGPRs`` for GFX9 (<= 80: 10, <= 88: 9,
  <= 100: 8, else 7), by LDS as LLVM ``getOccupancyWithLocalMemSize``
  (work-groups per CU = 65536 // LDS bytes, at most 16 barriers, or 32 for single-wave
  work-groups; waves = ceil(wgs * waves per work-group / 4 SIMDs)).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.operands import reg_units
from . import Analysis
from ._abi import kernel_abi
from ._isa import facts

#: unified VGPR file entries per lane per SIMD (gfx90a/gfx942)
VGPR_FILE = 512
VGPR_GRANULE = 8
SGPR_GRANULE = 8
EXTRA_SGPRS = 6
MAX_SGPRS = 102
MAX_WAVES_PER_SIMD = 8
LDS_PER_CU = 65536
SIMDS_PER_CU = 4
MAX_WGS_PER_CU = 16


@dataclass(frozen=True)
class BudgetProblem:
    """One budget violation: ``what`` (``"vgpr"``, ``"agpr"``, ``"sgpr"``, ``"lds"``,
    ``"user_sgpr"``), ``used`` vs ``granted`` and a message."""

    what: str
    used: int
    granted: int
    message: str

    def to_json(self) -> dict:
        """Plain data for reports."""
        return {"what": self.what, "used": self.used, "granted": self.granted,
                "message": self.message}


def _align(n: int, a: int) -> int:
    return -(-n // a) * a


def occupancy_vgprs(total_vgprs: int) -> int:
    """Waves per SIMD allowed by ``total_vgprs`` unified-file entries (granule 8)."""
    n = max(VGPR_GRANULE, _align(total_vgprs, VGPR_GRANULE))
    return min(MAX_WAVES_PER_SIMD, VGPR_FILE // n)


def occupancy_sgprs(num_sgprs: int) -> int:
    """Waves per SIMD allowed by ``num_sgprs`` (incl. the 6 extra) on GFX9 (LLVM
    ``AMDGPU::IsaInfo`` / ``getOccupancyWithNumSGPRs``), capped at 8 for gfx942."""
    w = 10 if num_sgprs <= 80 else 9 if num_sgprs <= 88 else 8 if num_sgprs <= 100 else 7
    return min(MAX_WAVES_PER_SIMD, w)


def occupancy_lds(lds_bytes: int, workgroup_size: int) -> int:
    """Waves per SIMD allowed by ``lds_bytes`` per work-group of ``workgroup_size`` lanes."""
    waves_per_wg = max(1, -(-workgroup_size // 64))
    if lds_bytes <= 0:
        return MAX_WAVES_PER_SIMD
    max_waves_cu = MAX_WAVES_PER_SIMD * SIMDS_PER_CU
    # LLVM getMaxWorkGroupsPerCU: single-wave work-groups use no barrier resource
    max_wgs = max_waves_cu if waves_per_wg == 1 else min(max_waves_cu // waves_per_wg,
                                                          MAX_WGS_PER_CU)
    wgs = min(LDS_PER_CU // lds_bytes, max_wgs)
    if wgs == 0:
        return 0
    return max(1, min(MAX_WAVES_PER_SIMD, -(-wgs * waves_per_wg // SIMDS_PER_CU)))


_DS_SIZE = {"b8": 1, "u8": 1, "i8": 1, "b16": 2, "u16": 2, "i16": 2, "b32": 4, "u32": 4,
            "i32": 4, "f32": 4, "b64": 8, "u64": 8, "i64": 8, "f64": 8, "b96": 12,
            "b128": 16}


def _ds_extent(inst) -> int | None:
    """Lower bound of the LDS bytes a DS instruction needs: largest immediate byte offset
    plus access size (the address register is >= 0).  ``None`` if not a plain DS access."""
    op = inst.opcode
    if not op.startswith("ds_") or op.startswith(("ds_swizzle", "ds_permute", "ds_bpermute",
                                                  "ds_gws", "ds_nop", "ds_barrier",
                                                  "ds_append", "ds_consume")):
        return None
    size = 4
    for part in reversed(op.split("_")):
        if part in _DS_SIZE:
            size = _DS_SIZE[part]
            break
    if "read2" in op or "write2" in op:
        scale = size * (64 if "st64" in op else 1)
        o0 = inst.mod("offset0", 0) or 0
        o1 = inst.mod("offset1", 0) or 0
        return max(int(o0), int(o1)) * scale + size
    off = inst.mod("offset", 0)
    return (int(off) if isinstance(off, int) else 0) + size


class RegisterBudget(Analysis):
    """Highest registers used vs the descriptor's grant, LDS, and occupancy.

    Attributes:
        used: ``{"v": n, "a": n, "s": n}`` highest index used + 1 per file (0 if unused).
        uses_vcc, uses_flat_scratch, uses_xnack_mask: special registers referenced.
        uses_lds: any DS instruction or LDS-DMA.
        lds_min_bytes: smallest LDS size consistent with the DS immediate offsets.
        abi: the :class:`~asmevo.analysis._abi.KernelABI` read from the kernel.
        needed_vgprs: unified-file entries needed (ArchVGPRs aligned to 4 + AGPRs).
        needed_sgprs: SGPRs needed including the 6 extra and the initialised ones.
        problems: list of :class:`BudgetProblem`.
        notes: remarks that are not violations (e.g. dynamic LDS the launch must add).
        occupancy: waves per SIMD (``None`` when the grant is unknown), with
            ``occupancy_limits`` per resource.
    """

    name = "regbudget"

    def __init__(self, kernel, manager=None):
        super().__init__(kernel, manager)
        hi = {"v": 0, "a": 0, "s": 0, "ttmp": 0}
        specials = set()
        lds_min = 0
        uses_lds = False
        for inst in kernel.instructions():
            fx = facts(inst)
            units = list(fx.defs) + list(fx.uses) + list(fx.partial)
            for o in inst.operands:
                units.extend(reg_units(o))
            for u in units:
                if len(u) == 2:
                    if u[0] in hi and u[1] + 1 > hi[u[0]]:
                        hi[u[0]] = u[1] + 1
                else:
                    specials.add(u[0])
            if fx.ds or fx.lds_dma:
                uses_lds = True
            e = _ds_extent(inst)
            if e is not None and e > lds_min:
                lds_min = e
        self.used = {"v": hi["v"], "a": hi["a"], "s": hi["s"]}
        self.uses_vcc = bool(specials & {"vcc_lo", "vcc_hi"})
        self.uses_flat_scratch = bool(specials & {"flat_scratch_lo", "flat_scratch_hi"})
        self.uses_xnack_mask = bool(specials & {"xnack_mask_lo", "xnack_mask_hi"})
        self.uses_lds = uses_lds
        self.lds_min_bytes = lds_min
        abi = self.abi = kernel_abi(kernel, self.module)
        arch = self.used["v"]
        agprs = self.used["a"]
        self.needed_vgprs = (_align(arch, 4) + agprs) if agprs else arch
        n_init = abi.user_sgpr_count + sum(abi.wg_id) + abi.wg_info + abi.private_segment
        self.initialised_sgprs = n_init
        self.needed_sgprs = max(self.used["s"], n_init) + EXTRA_SGPRS
        self.problems: list[BudgetProblem] = []
        #: facts worth reporting that are not violations (dynamic LDS needs)
        self.notes: list[str] = []
        P = self.problems.append
        if abi.accum_offset is not None and agprs and arch > abi.accum_offset:
            P(BudgetProblem("vgpr", arch, abi.accum_offset,
                            f"v{arch - 1} is used but AGPRs start at unified index "
                            f"{abi.accum_offset} (accum_offset)"))
        if abi.vgpr_alloc is not None:
            start = abi.accum_offset if (agprs and abi.accum_offset is not None) else None
            total = (start + agprs) if start is not None else self.needed_vgprs
            if agprs and start is not None and total > abi.vgpr_alloc:
                P(BudgetProblem("agpr", total, abi.vgpr_alloc,
                                f"a{agprs - 1} needs unified entry {total - 1} but the descriptor "
                                f"grants {abi.vgpr_alloc} VGPRs"))
            elif arch > abi.vgpr_alloc:
                P(BudgetProblem("vgpr", arch, abi.vgpr_alloc,
                                f"v{arch - 1} is used but the descriptor grants "
                                f"{abi.vgpr_alloc} VGPRs"))
        if abi.next_free_vgpr is not None and arch > abi.next_free_vgpr:
            P(BudgetProblem("vgpr", arch, abi.next_free_vgpr,
                            f"v{arch - 1} is used but .amdhsa_next_free_vgpr is {abi.next_free_vgpr}"))
        if self.used["s"] > MAX_SGPRS:
            P(BudgetProblem("sgpr", self.used["s"], MAX_SGPRS, "beyond the 102 addressable SGPRs"))
        if abi.sgpr_alloc is not None and self.used["s"] + EXTRA_SGPRS > abi.sgpr_alloc:
            P(BudgetProblem("sgpr", self.used["s"] + EXTRA_SGPRS, abi.sgpr_alloc,
                            f"s{self.used['s'] - 1} plus {EXTRA_SGPRS} reserved SGPRs exceed the "
                            f"{abi.sgpr_alloc} granted"))
        if abi.next_free_sgpr is not None and self.used["s"] > abi.next_free_sgpr:
            P(BudgetProblem("sgpr", self.used["s"], abi.next_free_sgpr,
                            f"s{self.used['s'] - 1} is used but .amdhsa_next_free_sgpr is "
                            f"{abi.next_free_sgpr}"))
        if abi.sgpr_alloc is not None and (abi.user_sgpr_count + EXTRA_SGPRS > abi.sgpr_alloc
                                           or n_init > abi.sgpr_alloc):
            P(BudgetProblem("user_sgpr", max(abi.user_sgpr_count + EXTRA_SGPRS, n_init),
                            abi.sgpr_alloc,
                            f"{abi.user_sgpr_count} user SGPRs (+{n_init - abi.user_sgpr_count} "
                            f"system) are initialised at launch; with the {EXTRA_SGPRS} reserved "
                            f"SGPRs they need more than the {abi.sgpr_alloc} granted "
                            f"(PITFALLS BR-24: LLVM counts user SGPRs, preloaded kernargs "
                            f"included, in the granule)"))
        if abi.lds_bytes is not None:
            if abi.lds_bytes > LDS_PER_CU:
                P(BudgetProblem("lds", abi.lds_bytes, LDS_PER_CU,
                                "group segment larger than the 64 KiB LDS of a CU"))
            if lds_min > abi.lds_bytes:
                # not a violation: the launch may add dynamic LDS (Triton does: fixed size 0)
                self.notes.append(f"a DS immediate offset reaches byte {lds_min} beyond "
                                  f"group_segment_fixed_size {abi.lds_bytes}: the launch must "
                                  f"add at least {lds_min - abi.lds_bytes} bytes of dynamic LDS")
        # occupancy
        md = kernel.metadata or {}
        wg = md.get(".max_flat_workgroup_size")
        req = md.get(".reqd_workgroup_size")
        if isinstance(req, (list, tuple)) and req:
            wg = 1
            for x in req:
                wg *= int(x)
        self.workgroup_size = int(wg) if wg else None
        limits = {}
        grant_v = abi.vgpr_alloc if abi.vgpr_alloc is not None else None
        limits["vgpr"] = occupancy_vgprs(grant_v if grant_v is not None else self.needed_vgprs)
        limits["sgpr"] = occupancy_sgprs(abi.sgpr_alloc if abi.sgpr_alloc is not None
                                         else self.needed_sgprs)
        if abi.lds_bytes is not None:
            limits["lds"] = occupancy_lds(abi.lds_bytes, self.workgroup_size or 1024)
        self.occupancy_limits = limits
        self.occupancy = min(limits.values()) if limits else None

    def to_json(self) -> dict:
        """Usage, grant, problems and occupancy as plain data."""
        a = self.abi
        return {
            "used": self.used, "needed_vgprs": self.needed_vgprs, "needed_sgprs": self.needed_sgprs,
            "uses_vcc": self.uses_vcc, "uses_flat_scratch": self.uses_flat_scratch,
            "uses_xnack_mask": self.uses_xnack_mask, "uses_lds": self.uses_lds,
            "lds_min_bytes": self.lds_min_bytes,
            "granted": {"source": a.source, "vgprs": a.vgpr_alloc, "sgprs": a.sgpr_alloc,
                        "accum_offset": a.accum_offset, "next_free_vgpr": a.next_free_vgpr,
                        "next_free_sgpr": a.next_free_sgpr, "lds_bytes": a.lds_bytes,
                        "user_sgprs": a.user_sgpr_count,
                        "initialised_sgprs": self.initialised_sgprs},
            "workgroup_size": self.workgroup_size,
            "occupancy": self.occupancy, "occupancy_limits": self.occupancy_limits,
            "problems": [p.to_json() for p in self.problems],
            "notes": list(self.notes),
        }

"""Kernel ABI facts the analyses need, from a descriptor, ``.amdhsa_*`` directives or metadata.

Register initialisation follows LLVM AMDGPUUsage, "Initial Kernel Execution
State" (GFX9 with packed work-item IDs, gfx90a/gfx942): user SGPRs from s0
(private segment buffer, dispatch ptr, queue ptr, kernarg segment ptr,
dispatch id, flat scratch init, private segment size, preloaded kernargs),
then system SGPRs (work-group id X, Y, Z, work-group info, private segment
wavefront offset); v0 holds the work-item ids packed 10 bits each; EXEC is set.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class KernelABI:
    """Normalised launch facts of one kernel.  ``None`` means unknown.

    Units: register counts in registers (dwords per lane / per wave), LDS in bytes.
    ``vgpr_alloc``/``sgpr_alloc`` are what the descriptor grants after
    granulation; ``next_free_*`` are the directive values (``.s`` input only).
    """

    source: str = "none"            # "descriptor", "directives" or "none"
    user_sgpr_count: int = 0
    wg_id: tuple = (False, False, False)
    wg_info: bool = False
    private_segment: bool = False
    workitem_id: int = 0            # 0: x only, 1: x,y, 2: x,y,z (all in v0 on gfx942)
    next_free_vgpr: int | None = None
    next_free_sgpr: int | None = None
    vgpr_alloc: int | None = None    # unified VGPR+AGPR file registers granted
    sgpr_alloc: int | None = None    # SGPRs granted (incl. VCC/FLAT_SCRATCH/XNACK)
    accum_offset: int | None = None  # first unified-file index holding AGPRs
    reserve_vcc: bool = True
    reserve_xnack: bool = True
    lds_bytes: int | None = None
    kernarg_preload: int = 0
    metadata_vgprs: int | None = None
    metadata_sgprs: int | None = None
    metadata_agprs: int | None = None

    def entry_units(self) -> set:
        """Register units defined when the kernel starts (AMDGPUUsage initial state)."""
        u = {("s", i) for i in range(self.user_sgpr_count)}
        n = self.user_sgpr_count
        for flag in (*self.wg_id, self.wg_info, self.private_segment):
            if flag:
                u.add(("s", n))
                n += 1
        u.add(("v", 0))
        u |= {("exec_lo",), ("exec_hi",)}
        if self.private_segment:
            u |= {("flat_scratch_lo",), ("flat_scratch_hi",)}
        return u


def _int(v) -> int | None:
    if v is None:
        return None
    try:
        return int(str(v).strip(), 0)
    except ValueError:
        return None


def kernel_abi(kernel, module=None) -> KernelABI:
    """Collect :class:`KernelABI` for ``kernel`` (descriptor first, then directives)."""
    abi = KernelABI()
    md = kernel.metadata or {}
    abi.metadata_vgprs = _int(md.get(".vgpr_count"))
    abi.metadata_sgprs = _int(md.get(".sgpr_count"))
    abi.metadata_agprs = _int(md.get(".agpr_count"))
    if md.get(".group_segment_fixed_size") is not None:
        abi.lds_bytes = _int(md.get(".group_segment_fixed_size"))
    d = kernel.descriptor
    if d is not None:
        abi.source = "descriptor"
        abi.user_sgpr_count = d.user_sgpr_count
        abi.wg_id = (bool(d.enable_sgpr_workgroup_id_x), bool(d.enable_sgpr_workgroup_id_y),
                     bool(d.enable_sgpr_workgroup_id_z))
        abi.wg_info = bool(d.enable_sgpr_workgroup_info)
        abi.private_segment = bool(d.enable_private_segment)
        abi.workitem_id = d.enable_vgpr_workitem_id
        abi.vgpr_alloc = d.vgpr_count
        abi.sgpr_alloc = d.sgpr_count
        abi.accum_offset = d.accum_offset_vgprs
        abi.lds_bytes = d.group_segment_fixed_size
        abi.kernarg_preload = d.kernarg_preload_spec_length
        return abi
    ak = module.amdhsa_kernel(kernel.name) if module is not None else None
    if ak is None:
        return abi
    f = {k: _int(v) for k, v in ak.fields.items()}
    abi.source = "directives"

    def g(name, default=0):
        v = f.get(".amdhsa_" + name)
        return default if v is None else v

    implied = (2 * g("user_sgpr_dispatch_ptr") + 2 * g("user_sgpr_queue_ptr")
               + 2 * g("user_sgpr_kernarg_segment_ptr", 0) + 2 * g("user_sgpr_dispatch_id")
               + g("user_sgpr_private_segment_size") + 4 * g("user_sgpr_private_segment_buffer")
               + 2 * g("user_sgpr_flat_scratch_init") + g("user_sgpr_kernarg_preload_length"))
    abi.user_sgpr_count = g("user_sgpr_count", implied) or implied
    abi.wg_id = (bool(g("system_sgpr_workgroup_id_x", 1)), bool(g("system_sgpr_workgroup_id_y")),
                 bool(g("system_sgpr_workgroup_id_z")))
    abi.wg_info = bool(g("system_sgpr_workgroup_info"))
    abi.private_segment = bool(g("enable_private_segment") or g(
        "system_sgpr_private_segment_wavefront_offset"))
    abi.workitem_id = g("system_vgpr_workitem_id")
    abi.next_free_vgpr = f.get(".amdhsa_next_free_vgpr")
    abi.next_free_sgpr = f.get(".amdhsa_next_free_sgpr")
    abi.accum_offset = f.get(".amdhsa_accum_offset")
    abi.reserve_vcc = bool(g("reserve_vcc", 1))
    abi.reserve_xnack = bool(g("reserve_xnack_mask", 1))
    abi.lds_bytes = g("group_segment_fixed_size")
    abi.kernarg_preload = g("user_sgpr_kernarg_preload_length")
    if abi.next_free_vgpr is not None:
        # llvm-mc: unified file = accum_offset + AGPRs; next_free_vgpr counts the total
        abi.vgpr_alloc = max(8, -(-abi.next_free_vgpr // 8) * 8)
    if abi.next_free_sgpr is not None:
        # llvm-mc adds VCC, FLAT_SCRATCH and XNACK_MASK (6) on gfx942 whatever the reserve_*
        # directives say (AMDGPUBaseInfo getNumExtraSGPRs; checked against the corpus .co)
        extra = 6
        abi.sgpr_alloc = max(8, -(-(abi.next_free_sgpr + extra) // 8) * 8)
    return abi

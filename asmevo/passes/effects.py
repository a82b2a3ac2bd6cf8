"""What an instruction reads and writes, as the passes need it (conservatively).

The classification lives in :mod:`asmevo.analysis._isa` (:func:`effects`, built
on :func:`asmevo.analysis._isa.facts` and the ISA table's operand roles, the one
place that reads instruction facts); this module re-exports it for the passes
and adds pass helpers (:func:`writes_exec`, :func:`is_copy`).

An :class:`Effects` record (one per distinct instruction value) has, with
register units as in :func:`asmevo.ir.operands.reg_units`:

* ``uses``: units that may be read (over-approximated: extra uses only keep
  code alive);
* ``defs_may``: units that may be written (an instruction is dead only when
  all of them are dead);
* ``defs_must``: units certainly written, in full, in every active lane
  (only these end a live range);
* ``side_effects``: must never be removed (memory, messages, barriers,
  branches, mode/hardware-register writes, ``s_nop``/``s_waitcnt``, unknown
  opcodes);
* ``vector``: executes under EXEC (a VGPR/AGPR write touches only active
  lanes, so liveness never lets it kill; see :mod:`asmevo.passes.liveness`);
* ``partial``: the destination keeps part of its old value (DPP, SDWA
  ``UNUSED_PRESERVE``, ``d16`` loads, ``op_sel`` on the destination,
  ``v_writelane``, tied accumulators such as ``v_fmac``/MFMA ``SrcC``, a
  destination that is also a source); the destination then also counts as a use;
* ``uses_all``: reads registers by index (``s_movrels``, ``v_movrel*``) or
  is not understood; ``barrier_kernel``: changes how later instructions
  address registers (``s_set_gpr_idx_on``), passes leave such kernels alone.
"""

from __future__ import annotations

from ..analysis._isa import EXEC, FLAT_SCRATCH, M0, SCC, VCC, Effects, effects, is_vector_unit
from ..ir import Instruction
from ..ir.operands import Reg, Special, base_of

SMEM_PREFIXES = ("s_load_", "s_buffer_load_", "s_store_", "s_buffer_store_", "s_atomic_",
                 "s_buffer_atomic_", "s_dcache_", "s_memtime", "s_memrealtime", "s_scratch_",
                 "s_atc_probe")
VMEM_PREFIXES = ("buffer_", "tbuffer_", "global_", "scratch_", "image_")

__all__ = ["EXEC", "FLAT_SCRATCH", "M0", "SCC", "SMEM_PREFIXES", "VCC", "VMEM_PREFIXES", "Effects",
           "effects", "is_copy", "is_vector_unit", "writes_exec"]


def writes_exec(inst: Instruction) -> bool:
    """Whether ``inst`` may write EXEC."""
    return bool(effects(inst).defs_may & set(EXEC))


def is_copy(inst: Instruction):
    """``(dst, src)`` when ``inst`` is a plain full copy (``v_mov_b32_e32``,
    ``s_mov_b32``/``b64``, ``v_mov_b64``) without modifiers, else ``None``."""
    if inst.opcode not in ("v_mov_b32_e32", "v_mov_b32_e64", "s_mov_b32", "s_mov_b64",
                           "v_mov_b64_e32", "v_mov_b64_e64") or inst.modifiers \
            or len(inst.operands) != 2:
        return None
    dst, src = inst.operands
    if not isinstance(dst, (Reg, Special)) or base_of(src) is not src:
        return None
    return dst, src

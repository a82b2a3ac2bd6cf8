"""What an instruction reads and writes, as the passes need it (conservatively).

One :class:`Effects` record per distinct instruction text, with register units
as in :func:`asmevo.ir.operands.reg_units`:

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
  lanes, so liveness treats it as killing only when EXEC is unchanged
  between two writes; see :mod:`asmevo.passes.liveness`);
* ``partial``: the destination keeps part of its old value (DPP, SDWA
  ``UNUSED_PRESERVE``, ``d16`` loads, ``op_sel`` on the destination,
  ``v_writelane``, tied accumulators such as ``v_fmac``/MFMA ``SrcC``);
  the destination then also counts as a use;
* ``uses_all``: reads registers by index (``s_movrels``, ``v_movrel*``) or
  is not understood; ``barrier_kernel``: changes how later instructions
  address registers (``s_set_gpr_idx_on``), passes leave such kernels alone.

Operand roles come from ``asmevo.isa`` (``def_operands``/``use_operands``/
``implicit_defs``/``implicit_uses``) when available, else from LLVM's operand
order (defs first) with the exceptions listed below.  Implicit registers follow
the CDNA3 ISA guide: SALU arithmetic/logic writes SCC, VOPC ``e32`` compares
write VCC, ``v_cmpx`` writes EXEC, vector instructions read EXEC,
``s_cbranch_{scc,vcc,exec}*`` read SCC/VCC/EXEC, ``v_div_fmas`` reads VCC.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..ir import Instruction
from ..ir.operands import Reg, Special, base_of, reg_units

EXEC = (("exec_lo",), ("exec_hi",))
VCC = (("vcc_lo",), ("vcc_hi",))
SCC = (("scc",),)
M0 = (("m0",),)
FLAT_SCRATCH = (("flat_scratch_lo",), ("flat_scratch_hi",))


@dataclass(frozen=True)
class Effects:
    """Register effects of one instruction (see module docstring)."""

    uses: frozenset
    defs_may: frozenset
    defs_must: frozenset
    side_effects: bool
    vector: bool
    partial: bool
    uses_all: bool = False
    barrier_kernel: bool = False
    kind: str = "other"
    known: bool = True
    ndefs: int = 0


SMEM_PREFIXES = ("s_load_", "s_buffer_load_", "s_store_", "s_buffer_store_", "s_atomic_",
                 "s_buffer_atomic_", "s_dcache_", "s_memtime", "s_memrealtime", "s_scratch_",
                 "s_atc_probe")
VMEM_PREFIXES = ("buffer_", "tbuffer_", "global_", "scratch_", "image_")

# SALU opcodes that do NOT write SCC (everything else in SOP1/SOP2/SOPK/SOPC is
# treated as a may-write; this list makes them a must-not).
_SALU_NO_SCC = re.compile(
    r"^s_(mov|cmov|movk|cmovk|cselect|mul_i32|mul_hi|mulk|getpc|setpc|swappc|bfm|brev|ff0|ff1|"
    r"flbit|sext|pack|bitset|getreg|setreg|movrel|sendmsg|set_gpr_idx|bitreplicate|"
    r"ff1_i32|rfe|call)")
# SALU opcodes that certainly write SCC.
_SALU_SCC_MUST = re.compile(
    r"^s_(add_|sub_|addc_|subb_|addk_|min_|max_|and_|or_|xor_|andn2_|orn2_|nand_|nor_|xnor_|"
    r"andn1_|orn1_|lshl_|lshr_|ashr_|bfe_|not_|abs_|absdiff_|cmp_|cmpk_|bitcmp|wqm_|quadmask_|"
    r"bcnt0_|bcnt1_|lshl[1-4]_add_)")
_SCALAR_CMP = re.compile(r"^s_(cmp_|cmpk_|bitcmp)")
_VOP3B = re.compile(r"^v_(add_co_u32|sub_co_u32|subrev_co_u32|addc_co_u32|subb_co_u32|"
                    r"subbrev_co_u32|div_scale_f32|div_scale_f64|mad_u64_u32|mad_i64_i32)")
_TIED_ACC = re.compile(r"^v_(fmac_|mac_|pk_fmac_|dot2c_|dot4c_|dot8c_|smfmac_)")
_SOPP_SIDE = re.compile(r"^s_(nop|waitcnt|endpgm|branch|cbranch|barrier|sendmsg|sethalt|sleep|"
                        r"setprio|trap|icache|incperflevel|decperflevel|ttracedata|wakeup|"
                        r"setkill|set_gpr_idx|endpgm|rfe|setreg|denorm_mode|round_mode|"
                        r"setpc|swappc|call|getreg|movrel|cbranch)")


def _units(ops) -> frozenset:
    out = set()
    for o in ops:
        out.update(reg_units(o))
    return frozenset(out)


def _returns(inst: Instruction) -> bool:
    """Atomic that returns the pre-op value (gfx940 ``sc0`` / ``glc``, DS ``_rtn_``)."""
    op = inst.opcode
    if op.startswith("ds_"):
        return "_rtn_" in op
    return inst.has_mod("sc0") or inst.has_mod("glc")


def _classify(inst: Instruction) -> Effects:
    op = inst.opcode
    ops = inst.operands
    uses: set = set()
    dmay: set = set()
    dmust: set = set()
    side = False
    vector = False
    partial = False
    uses_all = False
    barrier = False
    kind = "other"
    known = True
    defs_ops: list = []
    use_ops: list = list(ops)

    def first_def(n: int = 1) -> None:
        nonlocal defs_ops, use_ops
        defs_ops = list(ops[:n])
        use_ops = list(ops[n:])

    if op.startswith("v_"):
        kind = "valu"
        vector = True
        uses.update(EXEC)
        if op.startswith("v_movrel") or op.startswith("v_swap"):
            # v_movrel* index by M0; v_swap writes both operands
            if op.startswith("v_swap"):
                defs_ops = list(ops[:2])
                use_ops = list(ops[:2])
            else:
                uses_all = True
                side = True
        elif op.startswith("v_writelane"):
            first_def()
            partial = True
        elif op.startswith("v_cmpx_"):
            first_def()
            dmay.update(EXEC)
            dmust.update(EXEC)
        elif _VOP3B.match(op):
            first_def(2)
        elif op.startswith("v_cmp"):
            first_def()
        elif op in ("v_nop", "v_clrexcp"):
            side = op == "v_clrexcp"
        else:
            first_def()
        if op.startswith("v_div_fmas"):
            uses.update(VCC)
        if op.startswith("v_readlane") or op.startswith("v_readfirstlane"):
            vector = False  # writes an SGPR in full
        if _TIED_ACC.match(op) or op.startswith("v_writelane"):
            partial = True
        if "_dpp" in op or inst.has_mod("quad_perm") or inst.has_mod("row_shl") \
                or inst.has_mod("row_newbcast") or inst.has_mod("row_mask"):
            partial = True  # disabled lanes / masked rows keep the old value
        if "_sdwa" in op or inst.has_mod("dst_sel") or inst.has_mod("dst_unused"):
            partial = True
        if inst.has_mod("op_sel"):
            partial = True
        if op.startswith("v_mfma") or op.startswith("v_smfmac"):
            kind = "mfma"
    elif op.startswith("ds_"):
        kind = "ds"
        vector = True
        side = True
        uses.update(EXEC)
        uses.update(M0)
        if op.startswith(("ds_read", "ds_load", "ds_swizzle", "ds_permute", "ds_bpermute",
                          "ds_append", "ds_consume", "ds_ordered_count")) or _returns(inst):
            first_def()
            if "d16" in op:
                partial = True
        else:
            defs_ops = []
    elif op.startswith(VMEM_PREFIXES) or op.startswith("flat_"):
        kind = "flat" if op.startswith("flat_") else "vmem"
        vector = True
        side = True
        uses.update(EXEC)
        if op.startswith(("scratch_", "flat_")):
            uses.update(FLAT_SCRATCH)
        if inst.has_mod("lds") or "_lds_" in op:  # LDS-DMA: writes LDS, not VGPRs
            uses.update(M0)
            defs_ops = []
        elif "_load" in op or (("_atomic" in op) and _returns(inst)):
            first_def()
            if "d16" in op:
                partial = True
        else:  # stores, non-returning atomics, buffer_wbl2/inv, ...
            defs_ops = []
    elif op.startswith(SMEM_PREFIXES):
        kind = "smem"
        side = True
        if op.startswith(("s_load_", "s_buffer_load_", "s_memtime", "s_memrealtime",
                          "s_scratch_load")) or (("atomic" in op) and _returns(inst)):
            first_def()
        else:
            defs_ops = []
    elif op.startswith("s_"):
        kind = "salu"
        if op in ("s_waitcnt", "s_nop"):
            kind = op[2:]
        if op.startswith(("s_cbranch", "s_branch", "s_endpgm", "s_setpc", "s_swappc",
                          "s_call", "s_rfe")):
            kind = "branch"
        if op.startswith("s_set_gpr_idx"):
            barrier = True
        if op.startswith("s_movrel"):
            uses_all = True
            side = True
        if _SOPP_SIDE.match(op):
            side = True
            defs_ops = []
            if op.startswith(("s_getreg", "s_swappc")):
                first_def()
            elif op.startswith("s_setreg"):
                use_ops = list(ops[1:])
            if op.startswith("s_cbranch_scc"):
                uses.update(SCC)
            elif op.startswith("s_cbranch_vcc"):
                uses.update(VCC)
            elif op.startswith("s_cbranch_exec"):
                uses.update(EXEC)
            elif op.startswith("s_sendmsg") or op.startswith("s_ttracedata"):
                uses.update(M0)
        elif _SCALAR_CMP.match(op):
            defs_ops = []
            dmay.update(SCC)
            dmust.update(SCC)
        else:
            first_def()
            if op.startswith(("s_cmov", "s_cmovk", "s_addk", "s_mulk", "s_bitset")):
                partial = True  # reads (or conditionally keeps) its destination
            if "saveexec" in op or "wrexec" in op:
                uses.update(EXEC)
                dmay.update(EXEC)
                dmust.update(EXEC)
            if op.startswith(("s_cselect", "s_cmov", "s_addc", "s_subb")):
                uses.update(SCC)
            if _SALU_SCC_MUST.match(op):
                dmay.update(SCC)
                dmust.update(SCC)
            elif not _SALU_NO_SCC.match(op):
                dmay.update(SCC)
    else:
        known = False
        side = True
        uses_all = True
    try:
        info = inst.info
    except ImportError:  # ISA table not built: rely on the mnemonic rules above
        info = True
    if info is None and op not in ("s_nop", "s_waitcnt"):
        # not in the ISA table: never remove, and assume it may read anything
        known = False
        side = True
        uses_all = True
    d_units = _units(defs_ops)
    # 'vcc' printed as the e32 carry-in / cndmask selector is a use, handled by the
    # position split above; an explicit operand that is a constant has no units.
    u_units = _units(use_ops)
    # the ISA table's operand roles, when known, only add to these sets: a destination
    # the table also lists as read (tied: v_cvt_pk_fp8_f32 keeps the other half,
    # v_cvt_sr_* the other bytes) makes the write partial
    isa_defs, isa_uses = _isa_roles(inst)
    if d_units & isa_uses:
        partial = True
    dmay.update(d_units)
    dmay.update(isa_defs)
    if partial:
        u_units = u_units | d_units
    else:
        dmust.update(d_units)
    uses.update(u_units)
    uses.update(isa_uses)
    ndefs = len(defs_ops) if defs_ops == list(ops[:len(defs_ops)]) else -1
    return Effects(frozenset(uses), frozenset(dmay), frozenset(dmust), side, vector, partial,
                   uses_all, barrier, kind, known, ndefs)


def _isa_roles(inst: Instruction) -> tuple[frozenset, frozenset]:
    """Units the ISA table (:mod:`asmevo.isa`) says ``inst`` writes and reads (empty
    sets when the table or the instruction is not available)."""
    try:
        from .. import isa
        if isa.lookup(inst.opcode) is None:
            return frozenset(), frozenset()
        d = set(isa.implicit_defs(inst))
        for o in isa.def_operands(inst):
            d.update(reg_units(o))
        u = set(isa.implicit_uses(inst))
        for o in isa.use_operands(inst):
            u.update(reg_units(o))
        return frozenset(d), frozenset(u)
    except Exception:  # noqa: BLE001 - table missing or an operand it cannot place
        return frozenset(), frozenset()


_CACHE: dict[tuple, Effects] = {}


def effects(inst: Instruction) -> Effects:
    """The :class:`Effects` of ``inst`` (memoised per instruction text)."""
    k = inst.key()
    e = _CACHE.get(k)
    if e is None:
        e = _CACHE[k] = _classify(inst)
    return e


def is_vector_unit(u: tuple) -> bool:
    """VGPR or AGPR unit (``("v", n)``, ``("a", n)``)."""
    return u[0] in ("v", "a")


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

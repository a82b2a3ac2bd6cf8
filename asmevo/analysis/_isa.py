"""The one place where the analyses read instruction facts.

Every analysis asks :func:`facts` for an instruction's register defs/uses (as
32-bit register units, :func:`asmevo.ir.operands.reg_units`) and its class
(VALU, SALU, SMEM, VMEM, FLAT, DS, MFMA/XDL/DGEMM, TRANS, DOT, DPP, SDWA...).

The ISA table (:mod:`asmevo.isa`) is preferred for operand roles when it is
importable and knows the mnemonic; otherwise a mnemonic-based fallback that
follows LLVM's operand order (defs first, as the AMDGPU instruction printer
writes them) is used.  Classification by mnemonic prefix follows the CDNA3 ISA
guide's encoding families (SOP*, SMEM, VOP*, DS, MUBUF/MTBUF, FLAT/GLOBAL/SCRATCH).

:func:`effects` is the conservative view the passes and may-liveness use
(:class:`Effects`: may/must writes, side effects, EXEC-masked writes), built on
:func:`facts` and the same table roles; :mod:`asmevo.passes.effects` re-exports it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..ir.operands import Reg, Special, base_of, reg_units

try:  # the concurrent ISA table; optional
    from .. import isa as _isa_mod  # type: ignore
except Exception:  # pragma: no cover - table not built yet
    _isa_mod = None

Unit = tuple

VCC = (("vcc_lo",), ("vcc_hi",))
EXEC = (("exec_lo",), ("exec_hi",))
M0 = (("m0",),)
SCC = (("scc",),)

# --------------------------------------------------------------------------------------------
# classification

_SMEM_PREFIX = ("s_load_", "s_buffer_load_", "s_store_", "s_buffer_store_", "s_atomic_",
                "s_buffer_atomic_", "s_scratch_", "s_memtime", "s_memrealtime", "s_dcache_",
                "s_atc_probe")
_VMEM_PREFIX = ("buffer_", "tbuffer_", "global_", "scratch_")
_BRANCH = ("s_branch", "s_cbranch_", "s_setpc_b64", "s_swappc_b64", "s_call_b64")
#: TRANS VALU ops (LLVM ``IsTrans``; CDNA3 ISA guide "transcendental" VOP1 ops).
_TRANS = re.compile(r"^v_(exp|log|rcp|rsq|sqrt|sin|cos)(_legacy)?(_iflag)?_(f16|f32|f64)")
#: MFMA pass counts (ISA_NOTES section 9, gfx940 scheduling model via llvm-mca).
_PASSES_2 = {"v_mfma_f32_4x4x1_16b_f32", "v_mfma_f32_4x4x4_16b_f16", "v_mfma_f32_4x4x4_16b_bf16",
             "v_mfma_i32_4x4x4_16b_i8", "v_mfma_f32_4x4x2_16b_bf16"}
_PASSES_16 = {"v_mfma_f32_32x32x2_f32", "v_mfma_f32_32x32x1_2b_f32", "v_mfma_f32_32x32x4_2b_f16",
              "v_mfma_i32_32x32x4_2b_i8", "v_mfma_f32_32x32x2_2b_bf16",
              "v_mfma_f32_32x32x4_2b_bf16"}
_PASSES_4 = {"v_mfma_f32_16x16x16_f16", "v_mfma_f32_16x16x16_bf16", "v_mfma_i32_16x16x32_i8",
             "v_mfma_f32_16x16x8_xf32", "v_smfmac_f32_16x16x32_f16", "v_smfmac_f32_16x16x32_bf16",
             "v_smfmac_i32_16x16x64_i8", "v_mfma_f64_4x4x4_4b_f64", "v_mfma_f32_16x16x16bf16_1k",
             "v_mfma_f32_16x16x8_bf16"}


def _base_mnemonic(op: str) -> str:
    for suf in ("_e32", "_e64", "_dpp", "_sdwa"):
        if op.endswith(suf):
            return op[: -len(suf)]
    return op


def mfma_passes(op: str) -> int:
    """Pass count of an MFMA (2, 4, 8 or 16), ISA_NOTES section 9; 0 if not an MFMA."""
    b = _base_mnemonic(op)
    if not (b.startswith("v_mfma") or b.startswith("v_smfmac")):
        return 0
    if b in _PASSES_2:
        return 2
    if b in _PASSES_16:
        return 16
    if b in _PASSES_4 or re.match(r"v_mfma_f32_16x16x32_(fp8|bf8)_(fp8|bf8)$", b) or \
            re.match(r"v_smfmac_f32_16x16x64_(fp8|bf8)_(fp8|bf8)$", b):
        return 4
    return 8


@dataclass(slots=True)
class Facts:
    """What the analyses need to know about one instruction.

    ``defs``: units certainly written (kills for liveness); ``partial``: units
    written only in part (SDWA preserve, d16 loads, v_writelane, tied
    accumulators) which are therefore also in ``uses``; ``uses``: units read.
    """

    opcode: str
    defs: tuple = ()
    uses: tuple = ()
    partial: tuple = ()
    explicit_uses: tuple = ()  # units of operands read (no implicit EXEC/VCC/M0/SCC)
    valu: bool = False
    salu: bool = False
    smem: bool = False
    vmem: bool = False      # MUBUF/MTBUF/global/scratch (not FLAT)
    flat: bool = False      # flat_* (counts on vmcnt and lgkmcnt)
    ds: bool = False
    gds: bool = False
    mfma: bool = False
    xdl: bool = False
    dgemm: bool = False
    passes: int = 0
    trans: bool = False
    dot: bool = False
    dpp: bool = False
    sdwa: bool = False
    store: bool = False     # memory write without a register result
    lds_dma: bool = False   # buffer/global load ... lds (writes LDS, not VGPRs)
    branch: bool = False
    sendmsg: bool = False
    extra: dict = field(default_factory=dict)

    @property
    def mem(self) -> bool:
        """Any memory instruction (SMEM, VMEM, FLAT, DS)."""
        return self.smem or self.vmem or self.flat or self.ds


def classify(op: str) -> Facts:
    """Instruction class from the mnemonic (CDNA3 ISA guide encoding families)."""
    f = Facts(op)
    if op.startswith("s_"):
        if op.startswith(_SMEM_PREFIX):
            f.smem = True
        else:
            f.salu = True
            f.branch = op.startswith(_BRANCH)
            f.sendmsg = op in ("s_sendmsg", "s_sendmsghalt")
    elif op.startswith("v_"):
        f.valu = True
        b = _base_mnemonic(op)
        f.dpp = op.endswith("_dpp")
        f.sdwa = op.endswith("_sdwa")
        if b.startswith("v_mfma") or b.startswith("v_smfmac"):
            f.mfma = True
            f.passes = mfma_passes(op)
            f.dgemm = "_f64" in b
            # gfx940: DGEMM and pure-f32 input MFMAs are not XDL (LLVM getMAIIsGFX940XDL);
            # f16/bf16/i8/xf32/fp8 inputs are.  accvgpr moves are not MFMAs here.
            f.xdl = not f.dgemm and not b.endswith("_f32")
        f.trans = bool(_TRANS.match(b))
        f.dot = b.startswith("v_dot")
    elif op.startswith("ds_"):
        f.ds = True
    elif op.startswith("flat_"):
        f.flat = True
    elif op.startswith(_VMEM_PREFIX):
        f.vmem = True
    return f


# --------------------------------------------------------------------------------------------
# operand roles (fallback)

_NO_DEF_SALU = re.compile(
    r"^s_(cmp|cmpk|bitcmp|waitcnt|nop|branch|cbranch|endpgm|barrier|setprio|sleep|sendmsg|"
    r"set_gpr_idx|setreg|trap|icache|dcache|ttrace|incperflevel|decperflevel|setkill|"
    r"setpc|rfe|code_end|wakeup|denorm_mode|round_mode|setvskip|endpgm_saved|"
    r"store|buffer_store|atc_probe|dcache)")
_SCC_DEF_SALU = re.compile(
    r"^s_(add|sub|addc|subb|min|max|and|or|xor|andn2|orn2|nand|nor|xnor|lshl|lshr|ashr|bfe|"
    r"not|abs|absdiff|cmp|cmpk|bitcmp|bcnt|quadmask|wqm|addk|lshl[1-4]_add|and_saveexec|"
    r"or_saveexec|xor_saveexec|andn2_saveexec|orn2_saveexec|nand_saveexec|nor_saveexec|"
    r"xnor_saveexec|andn1|orn1|andn1_saveexec|orn1_saveexec|andn2_wrexec|andn1_wrexec|"
    r"set_gpr_idx_on)")
_SCC_USE_SALU = re.compile(r"^s_(addc|subb|cselect|cmov|cmovk|cbranch_scc)")
_CARRY_VALU = re.compile(r"^v_(add|sub|subrev)(_co)?_u32|^v_(addc|subb|subbrev)_co_u32|"
                         r"^v_mad_(u64_u32|i64_i32)|^v_div_scale")
_VCC_IMPLICIT_USE = re.compile(r"^v_div_fmas")
_TIED_DST = re.compile(r"^v_(fmac|mac|dot2c|dot4c|dot8c|pk_fmac)_")


def _units(ops) -> tuple:
    out = []
    for o in ops:
        out.extend(reg_units(o))
    return tuple(out)


def _is_sgpr_like(o) -> bool:
    b = base_of(o)
    return (isinstance(b, Reg) and b.file in ("s", "ttmp")) or (
        isinstance(b, Special) and b.name in ("vcc", "vcc_lo", "vcc_hi", "exec", "exec_lo",
                                              "exec_hi", "null", "flat_scratch", "xnack_mask"))


def _roles_fallback(inst, f: Facts) -> tuple[list, list, list]:
    """(def operands, use operands, partial-def operands) by LLVM operand order."""
    op = inst.opcode
    ops = list(inst.operands)
    if not ops:
        return [], [], []
    b = _base_mnemonic(op)
    if f.salu:
        if _NO_DEF_SALU.match(op) or op.startswith("s_cbranch"):
            return [], ops, []
        if op.startswith("s_getreg") or op.startswith("s_movk") or op.startswith("s_getpc"):
            return ops[:1], ops[1:], []
        if op.startswith("s_cmovk") or op.startswith("s_cmov") or op.startswith("s_movreld"):
            return [], ops, ops[:1]  # conditional / indexed write
        if op in ("s_addk_i32", "s_mulk_i32"):
            return ops[:1], ops, []
        return ops[:1], ops[1:], []
    if f.smem:
        if op.startswith(("s_store", "s_buffer_store", "s_dcache", "s_atc_probe")):
            return [], ops, []
        if op.startswith(("s_atomic", "s_buffer_atomic")):
            if inst.has_mod("glc") or inst.has_mod("sc0"):
                return ops[:1], ops, []
            return [], ops, []
        return ops[:1], ops[1:], []
    if f.ds:
        if b in ("ds_nop", "ds_barrier") or b.startswith(("ds_write", "ds_gws", "ds_init")):
            return [], ops, []
        if "_rtn" in b or b.startswith(("ds_read", "ds_swizzle", "ds_permute", "ds_bpermute",
                                        "ds_consume", "ds_append", "ds_ordered")):
            if "d16" in b:
                return [], ops[1:], ops[:1]
            return ops[:1], ops[1:], []
        # atomics without return
        return [], ops, []
    if f.vmem or f.flat:
        if inst.has_mod("lds") or "_lds_" in b:
            return [], ops, []
        if "_store" in b or b in ("buffer_wbl2", "buffer_inv", "buffer_wbinvl1",
                                  "buffer_wbinvl1_vol"):
            return [], ops, []
        if "_atomic" in b:
            if inst.has_mod("glc") or inst.has_mod("sc0"):
                if b.startswith(("buffer_", "tbuffer_")):  # vdata is tied to the result
                    return ops[:1], ops, []
                return ops[:1], ops[1:], []
            return [], ops, []
        if "d16" in b:
            return [], ops[1:], ops[:1]
        return ops[:1], ops[1:], []
    if f.valu:
        if b in ("v_nop", "v_clrexcp"):
            return [], ops, []
        if b.startswith("v_cmp"):
            return ops[:1], ops[1:], []
        if b == "v_writelane_b32":
            return [], ops[1:], ops[:1]
        if b.startswith(("v_movreld", "v_movrels", "v_movrelsd", "v_swap")):
            if b.startswith("v_swap"):
                return ops[:2], ops[:2], []
            return [], ops[1:], ops[:1]
        defs = ops[:1]
        uses = ops[1:]
        if _CARRY_VALU.match(b) and len(ops) > 1 and _is_sgpr_like(ops[1]) and not (
                b.startswith("v_add_u32") or b.startswith("v_sub_u32") or b.startswith(
                    "v_subrev_u32")):
            defs, uses = ops[:2], ops[2:]
        partial = []
        if f.sdwa and inst.mod("dst_unused") == "UNUSED_PRESERVE":
            partial = defs[:1]
            defs = defs[1:]
        osel = inst.mod("op_sel")
        if isinstance(osel, tuple) and len(osel) >= 4 and osel[3] and not b.startswith("v_pk_"):
            partial = defs[:1]
            defs = defs[1:]
        if _TIED_DST.match(b) or (b.startswith("v_smfmac")):
            uses = list(uses) + ops[:1]
        if b.startswith("v_readlane") or b.startswith("v_readfirstlane"):
            pass
        return defs, uses, partial
    return ops[:1], ops[1:], []


def _implicit(inst, f: Facts) -> tuple[tuple, tuple]:
    """Implicit (defs, uses): exec for vector ops, scc, vcc, m0 (CDNA3 ISA guide)."""
    op = inst.opcode
    b = _base_mnemonic(op)
    d: list = []
    u: list = []
    if f.valu or f.vmem or f.flat or f.ds:
        if not b.startswith(("v_readlane", "v_writelane", "v_readfirstlane", "v_nop")):
            u.extend(EXEC)
        if b == "v_writelane_b32" or b.startswith("v_readfirstlane"):
            u.extend(EXEC) if b.startswith("v_readfirstlane") else None
        if _VCC_IMPLICIT_USE.match(b):
            u.extend(VCC)
        if b.startswith("v_cmpx"):
            d.extend(EXEC)
        if b.startswith(("v_movrel", "v_movrels", "v_movreld")):
            u.extend(M0)
        if (f.vmem or f.flat) and (inst.has_mod("lds") or "_lds_" in b):
            u.extend(M0)
        if f.ds and ("addtid" in b or b.startswith("ds_gws") or inst.has_mod("gds")):
            u.extend(M0)
    elif f.salu:
        if _SCC_DEF_SALU.match(op):
            d.extend(SCC)
        if _SCC_USE_SALU.match(op):
            u.extend(SCC)
        if op.startswith("s_cbranch_vcc"):
            u.extend(VCC)
        if op.startswith("s_cbranch_exec"):
            u.extend(EXEC)
        if "saveexec" in op or "wrexec" in op:
            d.extend(EXEC)
            u.extend(EXEC)
        if op.startswith(("s_movrel", "s_sendmsg", "s_ttracedata")):
            u.extend(M0)
        if op.startswith("s_set_gpr_idx_on"):
            d.extend(M0)
        if op.startswith("s_set_gpr_idx_idx"):
            d.extend(M0)
    return tuple(d), tuple(u)


def _roles_isa(inst):
    """(def ops, use ops, partial ops, implicit defs, implicit uses, positions of the written
    operands) from :mod:`asmevo.isa`, or ``None`` when the table is absent or does not know the
    mnemonic.  Positions, not identity: the parser shares one operand object per register
    spelling, so ``v2`` as destination and as source is the same object."""
    if _isa_mod is None or _info(inst) is None:
        return None
    try:
        roles = _isa_mod.operand_roles(inst)
        idefs = tuple(_isa_mod.implicit_defs(inst))
        iuses = tuple(_isa_mod.implicit_uses(inst))
    except Exception:
        return None
    d = [o for o, r in zip(inst.operands, roles) if r == "def"]
    u = [o for o, r in zip(inst.operands, roles) if r == "use"]
    p = [o for o, r in zip(inst.operands, roles) if r == "defuse"]
    wpos = [i for i, r in enumerate(roles) if r in ("def", "defuse")]
    return d, u, p, idefs, iuses, wpos


_CACHE: dict = {}
#: read operand roles from asmevo.isa when available (False: mnemonic fallback only; tests
#: compare the two)
USE_ISA_TABLE = True


def _info(inst):
    """The ISA-table record, or ``None`` when the table is absent or lacks the mnemonic."""
    if _isa_mod is None:
        return None
    try:
        return _isa_mod.lookup(inst.opcode)
    except Exception:
        return None


def facts(inst) -> Facts:
    """Defs, uses and class of ``inst`` (cached per distinct instruction value)."""
    key = inst.key()
    f = _CACHE.get(key)
    if f is not None:
        return f
    f = classify(inst.opcode)
    info = _info(inst)
    if info is not None:
        for attr, name in (("is_xdl", "xdl"), ("is_dgemm", "dgemm"), ("is_trans", "trans"),
                           ("is_dot", "dot"), ("is_dpp", "dpp"), ("is_sdwa", "sdwa")):
            v = getattr(info, attr, None)
            if isinstance(v, bool):
                setattr(f, name, v)
        p = getattr(info, "passes", None)
        if isinstance(p, int) and p > 0 and f.mfma:
            f.passes = p
    isa_roles = _roles_isa(inst) if USE_ISA_TABLE else None
    if isa_roles is not None:
        dops, uops, pops, idefs, iuses, _ = isa_roles
        b = _base_mnemonic(inst.opcode)
        # tied accumulators (v_fmac, v_dot2c, SMFMAC srcC = vdst) read their destination
        if _TIED_DST.match(b) or b.startswith("v_smfmac"):
            # "defuse" here is a tied operand: read, then written in full
            tied = pops[:1] or dops[:1]
            pops = [o for o in pops if o not in tied]
            dops = tied + [o for o in dops if o not in tied]
            uops = list(uops) + tied
        # d16 loads write half of the VGPR; v_writelane one lane (old value kept)
        if ("d16" in b and (f.vmem or f.flat or f.ds)) or b.startswith("v_writelane"):
            pops, dops = pops + dops[:1], dops[1:]
    else:
        dops, uops, pops = _roles_fallback(inst, f)
        idefs, iuses = _implicit(inst, f)
    partial = _units(pops)
    defs = tuple(dict.fromkeys(_units(dops) + idefs))
    uses = tuple(dict.fromkeys(_units(uops) + iuses + partial))
    defs = tuple(u for u in defs if u not in partial)
    f.defs, f.uses, f.partial = defs, uses, partial
    f.explicit_uses = tuple(dict.fromkeys(_units(uops) + partial))
    f.gds = f.ds and (inst.has_mod("gds") or inst.opcode.startswith("ds_gws"))
    b = _base_mnemonic(inst.opcode)
    f.lds_dma = (f.vmem or f.flat) and (inst.has_mod("lds") or "_lds_" in b)
    f.store = (f.vmem or f.flat or f.ds or f.smem) and not defs and not partial
    if len(_CACHE) > 200000:
        _CACHE.clear()
    _CACHE[key] = f
    return f


def is_nop(inst) -> int:
    """Wait states an ``s_nop N`` provides (N+1), else 0."""
    if inst.opcode == "s_nop":
        from ..ir.operands import Imm
        o = inst.operands[0] if inst.operands else None
        if isinstance(o, Imm) and isinstance(o.value, int):
            return (o.value & 0xF) + 1
        return 1
    return 0


# --------------------------------------------------------------------------------------------
# may-effects: what the passes may assume (built on facts() and the table's operand roles)

FLAT_SCRATCH = (("flat_scratch_lo",), ("flat_scratch_hi",))


@dataclass(frozen=True)
class Effects:
    """Register effects of one instruction as the passes need them (conservative).

    Register units as in :func:`asmevo.ir.operands.reg_units`:

    * ``uses``: units that may be read (over-approximated: extra uses only keep
      code alive): :attr:`Facts.uses` plus every VALU/DS/VMEM reading EXEC, DS
      reading M0, scratch/flat reading FLAT_SCRATCH;
    * ``defs_may``: units that may be written (an instruction is dead only when
      all of them are dead): :attr:`Facts.defs` and :attr:`Facts.partial`, plus SCC
      for every SALU op that is not known to leave it alone;
    * ``defs_must``: units certainly written, in full, in every active lane (only
      these end a live range): the written operands when the write is not
      ``partial``, SCC of SALU arithmetic/compares, EXEC of ``v_cmpx``/``s_*_saveexec``;
    * ``side_effects``: must never be removed (memory, messages, barriers,
      branches, mode/hardware-register writes, ``s_nop``/``s_waitcnt``, unknown
      opcodes);
    * ``vector``: executes under EXEC (a VGPR/AGPR write touches only active
      lanes: may-liveness never lets it kill, see :class:`asmevo.analysis.liveness.Liveness`
      with ``exec_aware``);
    * ``partial``: the destination keeps part of its old value (DPP, SDWA,
      ``d16`` loads, ``op_sel``, ``v_writelane``, tied accumulators such as
      ``v_fmac``/MFMA ``SrcC``, ``s_cmov``/``s_addk``, or any destination that is
      also a source); the destination then also counts as a use;
    * ``uses_all``: reads registers by index (``s_movrel*``, ``v_movrel*``) or is
      not understood (not in the ISA table); ``barrier_kernel``: changes how later
      instructions address registers (``s_set_gpr_idx_*``);
    * ``kind``: ``valu``, ``mfma``, ``salu``, ``branch``, ``nop``, ``waitcnt``,
      ``smem``, ``vmem``, ``flat``, ``ds`` or ``other``; ``known``: in the ISA table;
      ``ndefs``: number of leading operands written (-1 when the written operands
      are not a prefix).

    Operand roles come from the ISA table (:func:`asmevo.isa.operand_roles`, as in
    :func:`facts`); implicit registers follow the CDNA3 ISA guide (SALU
    arithmetic/logic writes SCC, ``v_cmpx`` writes EXEC, vector instructions read
    EXEC, ``s_cbranch_{scc,vcc,exec}*`` read SCC/VCC/EXEC, ``v_div_fmas`` reads VCC).
    """

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


#: VMEM prefixes (``image_`` is not gfx942 but classified for unknown-instruction records)
_E_VMEM = ("buffer_", "tbuffer_", "global_", "scratch_", "image_")
_E_TIED_ACC = re.compile(r"^v_(fmac_|mac_|pk_fmac_|dot2c_|dot4c_|dot8c_|smfmac_)")
#: side effects: program flow, messages, waits, mode/hardware registers, GPR indexing
_E_SOPP_SIDE = re.compile(r"^s_(nop|waitcnt|endpgm|branch|cbranch|barrier|sendmsg|sethalt|sleep|"
                          r"setprio|trap|icache|incperflevel|decperflevel|ttracedata|wakeup|"
                          r"setkill|set_gpr_idx|rfe|setreg|denorm_mode|round_mode|setvskip|"
                          r"setpc|swappc|call|getreg|movrel)")
_E_PARTIAL_MODS = ("quad_perm", "row_shl", "row_newbcast", "row_mask", "dst_sel", "dst_unused",
                   "op_sel")
#: implicit defs that are full writes (the table's SCC of SALU ops, EXEC of v_cmpx/saveexec)
_E_MUST_IMPLICIT = frozenset(SCC + EXEC)


def _classify_effects(inst) -> Effects:
    op = inst.opcode
    ops = list(inst.operands)
    fx = facts(inst)
    uses: set = set()
    side = vector = partial = uses_all = barrier = False
    kind = "other"
    counted = True   # the written operands end live ranges (else: only may-writes)
    if fx.valu:
        kind = "mfma" if fx.mfma else "valu"
        vector = not op.startswith(("v_readlane", "v_readfirstlane"))  # those write an SGPR
        uses.update(EXEC)
        uses_all = op.startswith("v_movrel")
        side = uses_all or op == "v_clrexcp"
        partial = bool(_E_TIED_ACC.match(op) or op.startswith("v_writelane") or "_dpp" in op
                       or "_sdwa" in op or any(inst.has_mod(m) for m in _E_PARTIAL_MODS))
    elif fx.ds:
        kind, vector, side = "ds", True, True
        uses.update(EXEC + M0)
        partial = "d16" in op
    elif fx.vmem or fx.flat or op.startswith(_E_VMEM):
        kind = "flat" if fx.flat else "vmem"
        vector = side = True
        uses.update(EXEC)
        if op.startswith(("scratch_", "flat_")):
            uses.update(FLAT_SCRATCH)
        if inst.has_mod("lds") or "_lds_" in op:  # LDS-DMA: writes LDS, not VGPRs
            uses.update(M0)
        partial = "d16" in op
    elif fx.smem:
        kind, side = "smem", True
    elif fx.salu:
        kind = "salu"
        if op in ("s_waitcnt", "s_nop"):
            kind = op[2:]
        if op.startswith(("s_cbranch", "s_branch", "s_endpgm", "s_setpc", "s_swappc",
                          "s_call", "s_rfe")):
            kind = "branch"
        barrier = op.startswith("s_set_gpr_idx")
        uses_all = op.startswith("s_movrel")
        if _E_SOPP_SIDE.match(op):
            side = True
            counted = op.startswith(("s_getreg", "s_swappc"))
        else:  # reads (or conditionally keeps) its destination
            partial = op.startswith(("s_cmov", "s_cmovk", "s_addk", "s_mulk", "s_bitset"))
    roles = _roles_isa(inst)
    if roles is None:
        # not in the ISA table: never remove, and assume it may read anything
        return Effects(frozenset(uses) | frozenset(fx.uses), frozenset(fx.defs + fx.partial),
                       frozenset(), True, vector, False, True, False, kind, False, 0)
    dops, uops, pops, idefs, iuses, pos = roles
    wops, rops = dops + pops, uops + pops
    dmay = set(_units(wops)) | set(idefs)
    if not counted:
        wops, rops, pos = [], rops + ops, []
    if (fx.ds or kind in ("vmem", "flat")) and not wops:
        partial = False   # d16 stores write no register
    d_units = frozenset(_units(wops))
    r_units = frozenset(_units(rops)) | frozenset(iuses)
    # a destination the table also lists as read (tied: v_cvt_pk_fp8_f32 keeps the other
    # half, v_cvt_sr_* the other bytes; v_fmac; or simply a source register) is partial
    partial = partial or bool(d_units & r_units)
    dmust = {u for u in idefs if u in _E_MUST_IMPLICIT}
    if partial:
        uses.update(d_units)
    else:
        dmust.update(d_units)
    uses.update(r_units)
    ndefs = len(pos) if pos == list(range(len(pos))) else -1
    return Effects(frozenset(uses), frozenset(dmay), frozenset(dmust), side, vector, partial,
                   uses_all, barrier, kind, True, ndefs)


_ECACHE: dict = {}


def effects(inst) -> Effects:
    """The :class:`Effects` of ``inst`` (memoised per instruction value)."""
    k = inst.key()
    e = _ECACHE.get(k)
    if e is None:
        if len(_ECACHE) > 200000:
            _ECACHE.clear()
        e = _ECACHE[k] = _classify_effects(inst)
    return e


def is_vector_unit(u: tuple) -> bool:
    """VGPR or AGPR unit (``("v", n)``, ``("a", n)``)."""
    return u[0] in ("v", "a")

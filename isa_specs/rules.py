"""Rules that turn swept records into full ISA-table records (used by generate.py).

The sweep (generate.py) gives mnemonic, opcode, size and operands (name, class,
width).  This module adds, keyed on encoding family and mnemonic:

* ``family``, ``vop`` (origin of a VOP3-encoded VOP1/VOP2/VOPC op);
* operand roles (``def``/``use``/``defuse``) -- LLVM ``Outs``/``Ins`` and tied
  operands (``$vdst = $src2`` in VOP2Instructions.td for v_mac/v_fmac/v_dot*c,
  ``$vdst_in`` for v_cvt_pk/sr_fp8/bf8 in VOP3Instructions.td, ``$vdst = $src2``
  for SMFMAC in VOP3PInstructions.td, ``$vdst_in`` for the d16 loads and
  ``$sdst`` tied for s_cmovk/s_addk/s_mulk/s_cmov/s_bitset in SOPInstructions.td);
* implicit register units (``Defs``/``Uses`` lists in SOPInstructions.td,
  VOPCInstructions.td, VOP2/VOP3Instructions.td, DSInstructions.td, SIInstructions.td;
  every VALU and every vector-memory instruction uses EXEC);
* memory behaviour (kind, address space, bytes) from the mnemonic;
* waitcnt counters (SIInsertWaitcnts.cpp; ISA_NOTES section 8);
* branch kind and condition (CDNA3 ISA guide, "Program Flow Control");
* latency class and flags: is_trans (``TRANS = 1`` in VOP1Instructions.td),
  is_dot (``IsDOT``), is_dgemm / is_xdl (``is_dgemm`` / ``is_gfx940_xdl`` in
  VOP3PInstructions.td, MAIInstInfoTable), MFMA passes (llvm-mca gfx940 model,
  filled in by generate.py; ISA_NOTES section 9).
"""

from __future__ import annotations

import re

# ---------------------------------------------------------------------------
# name lists
# ---------------------------------------------------------------------------

#: VOP1 ops with ``let TRANS = 1`` (llvm/lib/Target/AMDGPU/VOP1Instructions.td).
TRANS = {
    "v_exp_f32", "v_log_f32", "v_rcp_f32", "v_rcp_iflag_f32", "v_rsq_f32", "v_sqrt_f32",
    "v_rcp_f64", "v_rsq_f64", "v_sqrt_f64", "v_sin_f32", "v_cos_f32",
    "v_rcp_f16", "v_sqrt_f16", "v_rsq_f16", "v_log_f16", "v_exp_f16", "v_sin_f16", "v_cos_f16",
    "v_exp_legacy_f32", "v_log_legacy_f32",
}

#: Non-XDL MFMA on gfx940 (not in an ``is_gfx940_xdl = 1`` block of VOP3PInstructions.td):
#: the f32-input MFMAs; DGEMM (f64) is never XDL.
NON_XDL_MFMA = {
    "v_mfma_f32_4x4x1_16b_f32", "v_mfma_f32_16x16x1_4b_f32", "v_mfma_f32_16x16x4_f32",
    "v_mfma_f32_32x32x1_2b_f32", "v_mfma_f32_32x32x2_f32",
}

#: MFMA pass counts (ISA_NOTES section 9, gfx940 scheduling model); generate.py
#: re-derives them with llvm-mca and checks they agree.
MFMA_PASSES = {
    2: ["v_mfma_f32_4x4x1_16b_f32", "v_mfma_f32_4x4x4_16b_f16", "v_mfma_f32_4x4x4_16b_bf16",
        "v_mfma_i32_4x4x4_16b_i8"],
    16: ["v_mfma_f32_32x32x2_f32", "v_mfma_f32_32x32x1_2b_f32", "v_mfma_f32_32x32x4_2b_f16",
         "v_mfma_f32_32x32x4_2b_bf16", "v_mfma_i32_32x32x4_2b_i8"],
}

# SALU ops that write SCC (``Defs = [SCC]`` in SOPInstructions.td).
_SCC_DEF = re.compile(
    r"^s_(add_[iu]32|sub_[iu]32|addc_u32|subb_u32|min_[iu]32|max_[iu]32|absdiff_i32"
    r"|(and|or|xor|andn2|orn2|nand|nor|xnor)_b(32|64)"
    r"|(lshl|lshr)_b(32|64)|ashr_i(32|64)|bfe_[iu](32|64)|lshl[1-4]_add_u32"
    r"|not_b(32|64)|wqm_b(32|64)|bcnt[01]_i32_b(32|64)|quadmask_b(32|64)|abs_i32"
    r"|\w+_saveexec_b64|\w+_wrexec_b64"
    r"|cmp_\w+|bitcmp[01]_b(32|64)|setvskip|cmpk_\w+|addk_i32)$")
_SCC_USE = re.compile(r"^s_(addc_u32|subb_u32|cselect_b(32|64)|cmov_b(32|64)|cmovk_i32"
                      r"|cbranch_scc[01])$")
_M0_USE = re.compile(r"^(s_movrel[sd]_b(32|64)|v_movrel(s|d|sd|sd_2)_b32"
                     r"|s_sendmsg|s_sendmsghalt|s_ttracedata"
                     r"|ds_(read|write)_addtid_b32|ds_gws_\w+|ds_append|ds_consume|ds_ordered_count"
                     r"|s_set_gpr_idx_(on|idx|mode)|\w+_load_lds_\w+|buffer_store_lds_dword)$")
# (s_set_gpr_idx_mode: LLVM lists only Defs = [M0], but it writes M0[15:12] and keeps the
#  rest, so it also reads M0 here -- safe for liveness.)
_M0_DEF = re.compile(r"^s_set_gpr_idx_(on|idx|mode)$")
_EXEC_RW_SALU = re.compile(r"^s_\w+_(saveexec|wrexec)_b64$")

_BRANCH = {
    "s_branch": ("uncond", None),
    "s_cbranch_scc0": ("cond", "scc0"), "s_cbranch_scc1": ("cond", "scc1"),
    "s_cbranch_vccz": ("cond", "vccz"), "s_cbranch_vccnz": ("cond", "vccnz"),
    "s_cbranch_execz": ("cond", "execz"), "s_cbranch_execnz": ("cond", "execnz"),
    "s_cbranch_cdbgsys": ("cond", "cdbgsys"), "s_cbranch_cdbguser": ("cond", "cdbguser"),
    "s_cbranch_cdbgsys_or_user": ("cond", "cdbgsys_or_user"),
    "s_cbranch_cdbgsys_and_user": ("cond", "cdbgsys_and_user"),
    "s_cbranch_g_fork": ("cond", "fork"), "s_cbranch_i_fork": ("cond", "fork"),
    "s_cbranch_join": ("indirect", None),
    "s_setpc_b64": ("indirect", None),
    "s_swappc_b64": ("call", None), "s_call_b64": ("call", None),
    "s_rfe_b64": ("return", None), "s_rfe_restore_b64": ("return", None),
    "s_endpgm": ("endpgm", None), "s_endpgm_saved": ("endpgm", None),
    "s_endpgm_ordered_ps_done": ("endpgm", None),
    "s_trap": ("trap", None),
}

# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def mem_bytes(base: str) -> int | None:
    """Bytes accessed per lane (per wave for SMEM), from the mnemonic."""
    b = base
    m = re.search(r"dwordx(\d+)", b)
    if m:
        return 4 * int(m.group(1))
    if re.search(r"_dword\b|_dword_", b + "_") or b.endswith("_dword"):
        return 4
    m = re.search(r"format_(d16_)?(hi_)?(x|xy|xyz|xyzw)$", b)
    if m:
        return len(m.group(3)) * (2 if m.group(1) else 4)
    if re.search(r"_(ubyte|sbyte|byte)(_d16(_hi)?)?$", b) or re.search(r"_[ui]8(_d16(_hi)?)?$", b) \
            or b.endswith("_b8") or b.endswith("_b8_d16_hi"):
        return 1
    if re.search(r"_(ushort|sshort|short)(_d16(_hi)?)?$", b) or re.search(r"_[ui]16(_d16(_hi)?)?$", b) \
            or b.endswith("_b16") or b.endswith("_b16_d16_hi"):
        return 2
    m = re.search(r"_(b|u|i|f)(32|64|96|128)$", b)
    if m:
        n = int(m.group(2)) // 8
        if re.search(r"ds_(read|write|wrxchg)2(st64)?_", b):
            n *= 2
        return n
    if re.search(r"pk_add_(f16|bf16)$", b):
        return 4
    if "atomic" in b:
        if b.endswith("_x2") or b.endswith("_f64"):
            return 8
        return 4
    if re.search(r"condxchg32_rtn_b64$", b):
        return 8
    return None


def _family(rec):
    enc, name = rec["enc"], rec["name"]
    if enc == "VOP3P" and (name.startswith(("v_mfma", "v_smfmac", "v_accvgpr_read",
                                            "v_accvgpr_write"))):
        return "VOP3P-MAI"
    return enc


def _mem(rec, fam):
    base = rec["base"]
    if fam == "SMEM":
        if base.startswith(("s_memtime", "s_memrealtime", "s_atc_probe")):
            return None
        if base.startswith("s_dcache"):
            return {"kind": "cache", "space": "constant", "bytes": 0}
        space = "buffer" if base.startswith("s_buffer_") else \
            "scratch" if base.startswith("s_scratch_") else \
            "constant" if base.startswith("s_load") else "global"
        kind = "atomic" if "_atomic_" in base else "store" if "_store_" in base else "load"
        return {"kind": kind, "space": space, "bytes": mem_bytes(base)}
    if fam in ("MUBUF", "MTBUF", "FLAT", "GLOBAL", "SCRATCH"):
        space = {"MUBUF": "buffer", "MTBUF": "buffer", "FLAT": "flat", "GLOBAL": "global",
                 "SCRATCH": "scratch"}[fam]
        if base in ("buffer_wbl2", "buffer_inv", "buffer_wbinvl1", "buffer_wbinvl1_vol"):
            return {"kind": "cache", "space": space, "bytes": 0}
        kind = "atomic" if "_atomic" in base else "store" if "_store" in base else "load"
        return {"kind": kind, "space": space, "bytes": mem_bytes(base)}
    if fam == "DS":
        if base in ("ds_nop", "ds_swizzle_b32", "ds_permute_b32", "ds_bpermute_b32"):
            return None
        if base.startswith("ds_gws_") or base == "ds_ordered_count":
            return {"kind": "atomic", "space": "gds", "bytes": 4}
        if base.startswith(("ds_read", "ds_append", "ds_consume")):
            kind = "atomic" if base in ("ds_append", "ds_consume") else "load"
            return {"kind": kind, "space": "lds", "bytes": mem_bytes(base) or 4}
        if base.startswith("ds_write") and not base.startswith("ds_wrxchg"):
            return {"kind": "store", "space": "lds", "bytes": mem_bytes(base)}
        return {"kind": "atomic", "space": "lds", "bytes": mem_bytes(base)}
    return None


def _roles(rec, fam):
    """Assign operand roles in place (record level; modifiers are handled in isa.py)."""
    base, ops = rec["base"], rec["operands"]
    mem = rec.get("mem")
    for i, o in enumerate(ops):
        n = o["name"]
        role = "use"
        if n in ("vdst", "sdst"):
            role = "def"
        elif n == "vcc" and (i == 0 or (i == 1 and ops[0]["name"] == "vdst")):
            role = "def"          # VOPC e32/SDWA result, VOP2 carry-out
        elif n == "sdata" and fam == "SMEM":
            role = "def" if mem is None or mem["kind"] == "load" else "use"
            if base.startswith(("s_memtime", "s_memrealtime")):
                role = "def"
        elif n == "vdata" and fam in ("MUBUF", "MTBUF"):
            role = "def" if mem and mem["kind"] == "load" else "use"
        o["role"] = role
    # tied / partial-write destinations
    first = ops[0] if ops else None
    if first is not None and first["role"] == "def":
        if re.match(r"^v_(mac|fmac|pk_fmac|dot\d+c)_", base) or \
                base in ("v_writelane_b32", "v_cvt_pkaccum_u8_f32", "v_cvt_pk_fp8_f32",
                         "v_fma_mixlo_f16", "v_fma_mixhi_f16",
                         "v_cvt_pk_bf8_f32", "v_cvt_sr_fp8_f32", "v_cvt_sr_bf8_f32") or \
                base.startswith("v_smfmac") or \
                base in ("s_cmov_b32", "s_cmov_b64", "s_cmovk_i32", "s_addk_i32", "s_mulk_i32",
                         "s_bitset0_b32", "s_bitset0_b64", "s_bitset1_b32", "s_bitset1_b64"):
            first["role"] = "defuse"
        if mem and mem["kind"] == "load" and "d16" in base:
            first["role"] = "defuse"      # d16 loads keep the other half ($vdst_in)
    if base == "v_swap_b32":
        for o in ops:
            o["role"] = "defuse"
    if base.startswith("s_cmpk_") and ops:
        ops[0]["role"] = "use"
    if base == "s_setreg_b32":
        for o in ops:
            o["role"] = "use"
    if fam == "SOPK" and base in ("s_getreg_b32", "s_movk_i32", "s_call_b64"):
        ops[0]["role"] = "def"
    if base == "s_cbranch_i_fork":          # (ins SReg_64:$sdst, ...): an input
        ops[0]["role"] = "use"
    if fam in ("VOP3P-MAI",) and base.startswith("v_mfma"):
        ops[0]["role"] = "def"
    for o in rec.get("rtn_operands") or ():
        o["role"] = "def" if o["name"] == "vdst" else "use"
    if fam in ("MUBUF",) and mem and mem["kind"] == "atomic":
        rec["rtn_vdata_role"] = "defuse"


def apply(table):
    """Add the rule-derived fields to every record of ``table`` (in place)."""
    bases_e32 = {r["base"] for r in table.values() if r["variant"] == "e32"}
    for rec in table.values():
        base, var = rec["base"], rec["variant"]
        fam = _family(rec)
        rec["family"] = fam
        rec["vop"] = None
        if fam == "VOP3" and var == "e64":
            rec["vop"] = next((r["enc"] for r in table.values()
                               if r["base"] == base and r["variant"] == "e32"), None)
        rec["mem"] = _mem(rec, fam)
        for o in rec["operands"]:   # VOPC e64 / v_readlane / v_readfirstlane write an SGPR
            if o["name"] == "vdst" and o["cls"] == "SGPR":
                o["name"] = "sdst"
            if base.startswith("ds_gws_") and o["name"] == "addr":
                o["name"] = "data0"     # DS_GWS_1D: "data0 is encoded as addr" (DSInstructions.td)
                o["cls"] = "AV"         # ...and its acc bit is data0{9}
            if fam in ("MUBUF", "MTBUF") and o["name"] == "soffset":
                o["cls"] = "SCSRC"      # SGPR or inline constant (BUFInstructions.td SCSrc_b32)
            if base == "s_cbranch_g_fork":
                o["cls"] = "SCSRC"      # (ins SCSrc_b64:$src0, SCSrc_b64:$src1)
            if base == "v_writelane_b32" and o["name"] == "src1":
                o["cls"] = "SCSRC"      # lane select: SGPR, M0 or inline constant
        _roles(rec, fam)

        is_valu = fam.startswith("VOP")
        is_salu = fam in ("SOP1", "SOP2", "SOPK", "SOPC", "SOPP")
        is_vmem = fam in ("MUBUF", "MTBUF", "FLAT", "GLOBAL", "SCRATCH")
        is_mfma = base.startswith(("v_mfma", "v_smfmac"))
        is_dgemm = base.startswith("v_mfma_f64")
        is_xdl = is_mfma and not is_dgemm and base not in NON_XDL_MFMA
        flags = {
            "is_salu": is_salu, "is_sopp": fam == "SOPP", "is_valu": is_valu,
            "is_vmem": is_vmem, "is_flat": fam in ("FLAT", "GLOBAL", "SCRATCH"),
            "is_smem": fam == "SMEM", "is_ds": fam == "DS",
            "is_mfma": is_mfma, "is_smfmac": base.startswith("v_smfmac"),
            "is_mai": fam == "VOP3P-MAI",   # SIInstrInfo::isMAI: MFMA, SMFMAC, accvgpr r/w
            "is_xdl": is_xdl, "is_dgemm": is_dgemm,
            "is_trans": base in TRANS, "is_dot": base.startswith("v_dot"),
            "is_cmpx": base.startswith("v_cmpx_"),
            "is_dpp": var == "dpp", "is_sdwa": var == "sdwa",
            "is_lds_dma": bool(re.search(r"_load_lds_", base)),
            "writes_exec": base.startswith("v_cmpx_") or bool(_EXEC_RW_SALU.match(base)),
        }
        passes = 0
        if is_mfma:
            passes = next((p for p, names in MFMA_PASSES.items() if base in names), 0)
        flags["passes"] = passes
        rec.update(flags)

        # implicit registers
        idefs, iuses = [], []
        if is_valu or is_vmem or fam == "DS":
            iuses += ["exec_lo", "exec_hi"]
        if _SCC_DEF.match(base):
            idefs.append("scc")
        if _SCC_USE.match(base):
            iuses.append("scc")
        if _M0_USE.match(base):
            iuses.append("m0")
        if _M0_DEF.match(base):
            idefs.append("m0")
        if _EXEC_RW_SALU.match(base):
            idefs += ["exec_lo", "exec_hi"]
            iuses += ["exec_lo", "exec_hi"]
        if base.startswith("v_cmpx_"):
            idefs += ["exec_lo", "exec_hi"]
        if base.startswith("v_div_fmas_") or base in ("s_cbranch_vccz", "s_cbranch_vccnz"):
            iuses += ["vcc_lo", "vcc_hi"]
        if base in ("s_cbranch_execz", "s_cbranch_execnz", "s_sendmsg", "s_sendmsghalt"):
            iuses += ["exec_lo", "exec_hi"]
        rec["implicit_defs"] = sorted(set(idefs), key=idefs.index)
        rec["implicit_uses"] = sorted(set(iuses), key=iuses.index)

        # waitcnt counters (SIInsertWaitcnts.cpp)
        counters = []
        if fam in ("MUBUF", "MTBUF", "GLOBAL", "SCRATCH"):
            counters = ["vmcnt"]
        elif fam == "FLAT":
            counters = ["vmcnt", "lgkmcnt"]
        elif fam == "DS":
            counters = ["lgkmcnt"] if base != "ds_nop" else []
            if base.startswith("ds_gws_") or base == "ds_ordered_count":
                counters = ["lgkmcnt", "expcnt"]
        elif fam == "SMEM":
            counters = ["lgkmcnt"]
        elif base in ("s_sendmsg", "s_sendmsghalt"):
            counters = ["lgkmcnt"]
        rec["counters"] = counters

        # branches
        br = _BRANCH.get(base)
        rec["branch"], rec["branch_cond"] = (br if br else (None, None))
        for o in rec["operands"]:
            if o["cls"] == "IMM" and br and br[0] in ("uncond", "cond") and fam == "SOPP":
                o["cls"], o["name"] = "LABEL", "simm16"
            elif fam == "SOPK" and base in ("s_call_b64", "s_cbranch_i_fork") and o["cls"] == "IMM":
                o["cls"], o["name"] = "LABEL", "simm16"
        # rename fixed-syntax operands
        for o in rec["operands"] + (rec.get("rtn_operands") or []):
            if o["cls"] == "WAITCNT":
                o["name"] = "simm16"
            elif o["name"] == "imm" and rec.get("mandatory_literal"):
                o["cls"] = "KIMM32"
            elif o["name"] == "imm" and fam in ("SOPK", "SOPP"):
                o["name"] = "simm16"
            elif o["name"] == "imm" and fam == "SMEM":
                o["name"], o["cls"] = "offset", "SMEM_OFFSET"
            elif o["name"] == "off" and fam in ("GLOBAL", "SCRATCH", "FLAT"):
                o["name"], o["cls"] = "saddr", "SADDR"
                o["width"] = 2 if fam == "GLOBAL" else 1
            elif o["name"] == "imm":
                o["name"] = "simm"

        # latency class
        if is_mfma:
            lat = "dgemm" if is_dgemm else "xdl" if is_xdl else "mfma"
        elif rec["is_trans"]:
            lat = "trans"
        elif is_valu:
            lat = "valu"
        elif fam == "SMEM":
            lat = "smem"
        elif fam == "DS":
            lat = "lds"
        elif is_vmem:
            lat = "vmem"
        elif br and br[0] != "trap":
            lat = "branch"
        elif fam == "SOPP":
            lat = "sopp"
        else:
            lat = "salu"
        rec["latency"] = lat
        # how an atomic returns its pre-op value
        rec["rtn"] = None
        if rec["mem"] and rec["mem"]["kind"] == "atomic":
            if fam in ("MUBUF", "FLAT", "GLOBAL", "SCRATCH"):
                rec["rtn"] = "sc0"
            elif fam == "SMEM":
                rec["rtn"] = "glc"
            elif fam == "DS":
                rec["rtn"] = "always" if ("_rtn_" in base or base in ("ds_append", "ds_consume")
                                          or base.startswith("ds_wrxchg")) else None
    del bases_e32

"""Rule 12 (dst-sel forwarding) with write-after-write consumers.

A VALU that writes part of a VGPR through the forwarding path (SDWA ``dst_sel`` other than
DWORD, a VOP3 ``op_sel`` destination bit, the byte select of ``v_cvt_sr_fp8/bf8_f32``)
needs one wait state before any VALU whose operands overlap that VGPR, definitions
included: LLVM ``consumesDstSelForwardingOperand`` in
``llvm/lib/Target/AMDGPU/GCNHazardRecognizer.cpp`` (``checkVALUHazards``, gfx940 path).
The cases below are ``llvm/test/CodeGen/AMDGPU/dst-sel-hazard.mir`` (its ``HAZARD``
checks, ``-mcpu=gfx942``) written as assembly.

LLVM 19's llc (the tools on this machine) still counts explicit uses only, so it is an
oracle for the read-after-write cases (:func:`test_raw_cases_against_llc`), not for the
write-after-write ones, which come from the upstream test.
"""

from __future__ import annotations

import subprocess

import pytest

from asmevo.analysis.hazards import HazardAnalysis
from asmevo.errors import ToolNotFoundError
from asmevo.llvm import find_tool

SDWA_PAD = "v_add_u16_sdwa v0, v1, v2 dst_sel:BYTE_1 dst_unused:UNUSED_PAD src0_sel:BYTE_3 " \
           "src1_sel:BYTE_3"
SDWA_KEEP = "v_add_u16_sdwa v0, v1, v2 dst_sel:BYTE_1 dst_unused:UNUSED_PRESERVE " \
            "src0_sel:BYTE_3 src1_sel:BYTE_3"
MAD_HI = "v_mad_u16 v0, v3, v4, v2 op_sel:[1,1,1,1]"
MAD_LO = "v_mad_u16 v0, v3, v4, v2 op_sel:[1,1,1,0]"

# (name in dst-sel-hazard.mir, producer, consumer, wait states LLVM requires on gfx942)
MIR_CASES = [
    ("sdwa_opsel_hazard", SDWA_PAD, MAD_HI, 1),
    ("sdwa_lo_opsel_hazard", SDWA_PAD, MAD_LO, 1),
    ("opsel_sdwa_hazard", MAD_HI, SDWA_KEEP, 1),
    ("opsel_no_sdwa_no_hazard", MAD_HI, SDWA_PAD, 1),
    ("no_opsel_sdwa_no_hazard", "v_mad_u16 v0, v3, v4, v2", SDWA_KEEP, 0),
    ("opsel_opsel_hazard", MAD_HI, MAD_LO, 1),
    ("opsel_opsel_no_hazard", MAD_HI, MAD_HI, 1),
    ("sdwa_loadsel_no_hazard",
     "v_add_u16_sdwa v0, v1, v2 dst_sel:BYTE_3 dst_unused:UNUSED_PAD src0_sel:BYTE_3 "
     "src1_sel:BYTE_3", "ds_read_u16_d16 v0, v3", 0),
    ("sdwa_sdwa_hazard", SDWA_PAD, SDWA_KEEP, 1),
    ("cvt_sdwa_hazard_1", "v_cvt_sr_fp8_f32 v0, v3, v1 op_sel:[0,0,1,0]", SDWA_KEEP, 1),
    ("cvt_sdwa_hazard_2", "v_cvt_sr_fp8_f32 v0, v3, v1 op_sel:[0,0,0,1]", SDWA_KEEP, 1),
    ("cvt_sdwa_hazard_3", "v_cvt_sr_fp8_f32 v0, v3, v1 op_sel:[0,0,1,1]", SDWA_KEEP, 1),
    ("cvt_sdwa_no_hazard", "v_cvt_sr_fp8_f32 v0, v3, v1", SDWA_KEEP, 0),
    ("sdwa_nosdwa_no_hazard", SDWA_PAD, SDWA_PAD, 1),
]

# the issue's own cases: a full write after a partial forwarding write (WAW), and the
# two-source op_sel destination bit (op_sel:[0,0,1]) as a producer
EXTRA_CASES = [
    ("waw_preserve_then_mov",
     "v_mov_b32_sdwa v1, v2 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:DWORD",
     "v_mov_b32_e32 v1, v3", 1),
    ("waw_opsel_hi_then_add", "v_mad_u16 v1, v2, v3, v4 op_sel:[0,0,0,1]",
     "v_add_u32_e32 v1, v5, v6", 1),
    ("waw_tuple_overlap",
     "v_mov_b32_sdwa v5, v2 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:DWORD",
     "v_lshlrev_b64 v[4:5], 1, v[8:9]", 1),
    ("raw_two_source_dst_bit", "v_add_i16 v1, v2, v3 op_sel:[0,0,1]",
     "v_add_u32_e32 v4, v1, v5", 1),
    ("raw_pack_dst_bit", "v_pack_b32_f16 v1, v2, v3 op_sel:[0,0,1]",
     "v_add_u32_e32 v4, v1, v5", 1),
    ("no_overlap", SDWA_KEEP, "v_mov_b32_e32 v1, v3", 0),
    ("dword_dst_sel_no_hazard",
     "v_mov_b32_sdwa v1, v2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1",
     "v_mov_b32_e32 v1, v3", 0),
    ("scalar_consumer_no_hazard", SDWA_KEEP, "s_mov_b32 s0, s1", 0),
]

CASES = MIR_CASES + EXTRA_CASES


def _rule12(kern, prod, cons, nops):
    pad = "\ns_nop 0" * nops
    k, am = kern(f"k:\n{prod}{pad}\n{cons}\ns_endpgm\n")
    h = am.get(HazardAnalysis, k)
    consumer = k.blocks[0].instructions[-2]
    return [v for v in h.violations if v.rule == 12], h.required_nops(consumer)


@pytest.mark.parametrize("name,prod,cons,req", CASES, ids=[c[0] for c in CASES])
def test_dst_sel_forwarding(kern, name, prod, cons, req):
    hz, need = _rule12(kern, prod, cons, 0)
    if req:
        assert [(v.required, v.available) for v in hz] == [(1, 0)], name
        assert v_text(hz[0].producer) == prod
        assert need >= req
        hz, _ = _rule12(kern, prod, cons, req)
        assert hz == []
    else:
        assert hz == [], [v.to_json() for v in hz]


def v_text(inst):
    return inst.text()


def test_cases_assemble(llvm_mc):
    """Every producer and consumer is valid gfx942 assembly."""
    text = "\n".join(x for c in CASES for x in c[1:3]) + "\n"
    r = subprocess.run([llvm_mc, "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx942"], input=text,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


# Read-after-write pairs in MIR, for LLVM 19's own hazard recognizer (post-RA-hazard-rec).
_MIR = """---
name: {name}
tracksRegLiveness: true
body: |
  bb.0:
    liveins: $vgpr0, $vgpr1, $vgpr2, $vgpr3, $vgpr4, $vgpr5
    {prod}
    {cons}
    S_ENDPGM 0
...
"""
_SDWA_MIR = "renamable $vgpr0 = V_ADD_U16_sdwa 0, $vgpr1, 0, $vgpr2, 0, 1, 0, 3, 3, " \
            "implicit $exec"
_MAD_HI_MIR = "renamable $vgpr0 = V_MAD_U16_gfx9_e64 12, $vgpr3, 4, $vgpr4, 4, $vgpr2, 0, 0, " \
              "implicit $exec"
_READ_MIR = "renamable $vgpr5 = V_ADD_U32_e32 $vgpr0, $vgpr1, implicit $exec"
_OTHER_MIR = "renamable $vgpr5 = V_ADD_U32_e32 $vgpr3, $vgpr1, implicit $exec"
# (MIR producer, MIR consumer, the same pair as assembly)
RAW = [
    (_SDWA_MIR, _READ_MIR, SDWA_PAD, "v_add_u32_e32 v5, v0, v1"),
    (_SDWA_MIR, _OTHER_MIR, SDWA_PAD, "v_add_u32_e32 v5, v3, v1"),
    (_MAD_HI_MIR, _READ_MIR, MAD_HI, "v_add_u32_e32 v5, v0, v1"),
    (_MAD_HI_MIR, _OTHER_MIR, MAD_HI, "v_add_u32_e32 v5, v3, v1"),
]


def test_raw_cases_against_llc(kern, tmp_path):
    """Where LLVM 19 has the rule (read after write), asmevo asks for exactly its s_nops."""
    try:
        llc = find_tool("llc")
    except ToolNotFoundError as e:
        pytest.skip(str(e))
    for i, (pm, cm, pa, ca) in enumerate(RAW):
        f = tmp_path / f"t{i}.mir"
        f.write_text(_MIR.format(name=f"t{i}", prod=pm, cons=cm))
        r = subprocess.run([llc, "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx942",
                            "-run-pass=post-RA-hazard-rec", str(f), "-o", "-"],
                           capture_output=True, text=True, check=True)
        body = r.stdout.split("body:", 1)[1]
        llvm_nops = sum(1 for line in body.splitlines() if line.strip().startswith("S_NOP 0"))
        _hz, need = _rule12(kern, pa, ca, 0)
        assert need == llvm_nops, (pa, ca, need, llvm_nops)


# VOP3P producers: LLVM tests src0_modifiers & DST_OP_SEL, which for VOP3P is op_sel_hi[0]
# (set by default on packed instructions).  (MIR producer, its assembly, LLVM 19's s_nop 0s
# before a VALU reading v0)
VOP3P = [
    ("renamable $vgpr0_vgpr1 = V_PK_MUL_F32 8, $vgpr2_vgpr3, 8, $vgpr6_vgpr7, 0, 0, 0, 0, 0, "
     "implicit $mode, implicit $exec", "v_pk_mul_f32 v[0:1], v[2:3], v[6:7]", 1),
    ("renamable $vgpr0_vgpr1 = V_PK_MUL_F32 0, $vgpr2_vgpr3, 8, $vgpr6_vgpr7, 0, 0, 0, 0, 0, "
     "implicit $mode, implicit $exec", "v_pk_mul_f32 v[0:1], v[2:3], v[6:7] op_sel_hi:[0,1]", 0),
    ("renamable $vgpr0 = V_PK_ADD_F16 8, $vgpr2, 8, $vgpr4, 0, 0, 0, 0, 0, implicit $mode, "
     "implicit $exec", "v_pk_add_f16 v0, v2, v4", 1),
    ("renamable $vgpr0 = V_PK_ADD_U16 8, $vgpr2, 8, $vgpr4, 0, 0, 0, 0, 0, implicit $exec",
     "v_pk_add_u16 v0, v2, v4", 1),
    ("renamable $vgpr0_vgpr1 = V_PK_MOV_B32 8, $vgpr2_vgpr3, 8, $vgpr6_vgpr7, 0, 0, 0, 0, 0, "
     "implicit $exec", "v_pk_mov_b32 v[0:1], v[2:3], v[6:7]", 1),
    ("renamable $vgpr0 = V_FMA_MIX_F32 0, $vgpr2, 0, $vgpr3, 0, $vgpr4, 0, 0, 0, "
     "implicit $mode, implicit $exec", "v_fma_mix_f32 v0, v2, v3, v4", 0),
    ("renamable $vgpr0 = V_FMA_MIX_F32 8, $vgpr2, 0, $vgpr3, 0, $vgpr4, 0, 0, 0, "
     "implicit $mode, implicit $exec", "v_fma_mix_f32 v0, v2, v3, v4 op_sel_hi:[1,0,0]", 1),
]


@pytest.mark.parametrize("mir,asm,nops", VOP3P, ids=[c[1] for c in VOP3P])
def test_vop3p_op_sel_hi_producer(kern, mir, asm, nops):
    """asmevo asks for the s_nop LLVM puts after a VOP3P producer with op_sel_hi[0] set."""
    _hz, need = _rule12(kern, asm, "v_add_u32_e32 v5, v0, v1", 0)
    assert need == nops


def test_vop3p_against_llc(tmp_path):
    """The table above is what LLVM 19's hazard recognizer does (skips without llc)."""
    try:
        llc = find_tool("llc")
    except ToolNotFoundError as e:
        pytest.skip(str(e))
    for i, (mir, asm, nops) in enumerate(VOP3P):
        f = tmp_path / f"p{i}.mir"
        f.write_text(_MIR.format(name=f"p{i}", prod=mir, cons=_READ_MIR)
                     .replace("$vgpr5\n", "$vgpr5, $vgpr6, $vgpr7\n"))
        r = subprocess.run([llc, "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx942",
                            "-run-pass=post-RA-hazard-rec", str(f), "-o", "-"],
                           capture_output=True, text=True, check=True)
        body = r.stdout.split("body:", 1)[1]
        assert sum(1 for ln in body.splitlines() if ln.strip().startswith("S_NOP 0")) == nops, asm


def test_deleting_llvms_vop3p_nop_is_rejected(tmp_path):
    """A kernel compiled by LLVM 19 (three dependent packed f32 ops, LLVM puts ``s_nop 0``
    after the first two): the same code with those nops deleted was ``accepted`` by the
    static verifier; now it is ``rejected-hazard`` (skips without llc)."""
    try:
        llc = find_tool("llc")
    except ToolNotFoundError as e:
        pytest.skip(str(e))
    from asmevo.frontend.asm_parser import parse_asm
    from asmevo.verify import verify
    ll = tmp_path / "pk.ll"
    ll.write_text(
        "define amdgpu_kernel void @k(ptr addrspace(1) %p, <2 x float> %a, <2 x float> %b) {\n"
        "  %x = load <2 x float>, ptr addrspace(1) %p\n"
        "  %y = fmul <2 x float> %x, %a\n  %z = fadd <2 x float> %y, %b\n"
        "  %w = fmul <2 x float> %z, %z\n  store <2 x float> %w, ptr addrspace(1) %p\n"
        "  ret void\n}\n")
    text = subprocess.run([llc, "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-O3", str(ll),
                           "-o", "-"], capture_output=True, text=True, check=True).stdout
    lines = text.splitlines()
    nops = [i for i, ln in enumerate(lines) if ln.strip() == "s_nop 0"
            and lines[i - 1].strip().startswith("v_pk_")]
    assert len(nops) == 2, text
    cand = "\n".join(ln for i, ln in enumerate(lines) if i not in nops) + "\n"
    orig_m, cand_m = parse_asm(text, "pk.s"), parse_asm(cand, "pk_nonop.s")
    assert verify(orig_m, parse_asm(text, "pk.s"), level="static").status.value == "accepted"
    v = verify(orig_m, cand_m, level="static")
    assert v.status.value == "rejected-hazard", (v.status, v.message)

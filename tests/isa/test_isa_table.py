"""The gfx942 ISA table (asmevo.isa, isa_specs/gfx942.json) against LLVM 19 and the corpus."""

from __future__ import annotations

import re
import subprocess

import pytest

from asmevo import isa
from asmevo.ir.instruction import Instruction
from asmevo.ir.operands import Imm, Label, Reg, Special

MC = ["-triple=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-show-encoding"]
_ENC = re.compile(r"^\s*(\S+).*; encoding: \[([^\]]*)\]")


def _assemble(llvm_mc, lines):
    """Assemble ``lines`` with llvm-mc; return {line index: bytes} for the lines that
    assembled (errors drop that line)."""
    p = subprocess.run([llvm_mc, *MC], input="\n".join(lines) + "\n", capture_output=True,
                       text=True, timeout=300)
    bad = {int(m.group(1)) - 1 for m in re.finditer(r"<stdin>:(\d+):\d+: error", p.stderr)}
    good = [i for i in range(len(lines)) if i not in bad]
    encs = []
    for ln in p.stdout.splitlines():
        m = _ENC.match(ln)
        if m:
            encs.append(bytes(int(x, 16) for x in m.group(2).split(",")))
    assert len(encs) == len(good), (len(encs), len(good))
    return dict(zip(good, encs))


def _opcode_field(enc_family: str, b: bytes) -> int:
    """The opcode field of an encoding (CDNA3 ISA guide, Microcode Formats)."""
    w0 = int.from_bytes(b[:4], "little")
    w1 = int.from_bytes(b[4:8], "little") if len(b) >= 8 else 0
    f = {
        "SOP2": (w0 >> 23) & 0x7F, "SOPK": (w0 >> 23) & 0x1F, "SOP1": (w0 >> 8) & 0xFF,
        "SOPC": (w0 >> 16) & 0x7F, "SOPP": (w0 >> 16) & 0x7F, "SMEM": (w0 >> 18) & 0xFF,
        "VOP2": (w0 >> 25) & 0x3F, "VOP1": (w0 >> 9) & 0xFF, "VOPC": (w0 >> 17) & 0xFF,
        "VOP3": (w0 >> 16) & 0x3FF, "VOP3P": (w0 >> 16) & 0x7F, "DS": (w0 >> 17) & 0xFF,
        "FLAT": (w0 >> 18) & 0x7F, "GLOBAL": (w0 >> 18) & 0x7F, "SCRATCH": (w0 >> 18) & 0x7F,
        "MUBUF": (w0 >> 18) & 0x7F, "MTBUF": (w0 >> 15) & 0xF,
    }
    del w1
    return f[enc_family]


def test_table_loads_and_counts():
    names = isa.all_mnemonics()
    assert len(names) > 1800
    fams = {isa.lookup(n).family for n in names}
    assert {"SOP1", "SOP2", "SOPK", "SOPC", "SOPP", "SMEM", "VOP1", "VOP2", "VOPC", "VOP3",
            "VOP3P", "VOP3P-MAI", "DS", "MUBUF", "MTBUF", "FLAT", "GLOBAL", "SCRATCH"} <= fams
    variants = {isa.lookup(n).variant for n in names}
    assert {"e32", "e64", "dpp", "sdwa", ""} <= variants


def test_lookup_aliases():
    assert isa.lookup("v_add_f32").name == "v_add_f32_e32"
    assert isa.lookup("v_cmp_eq_u32").name == "v_cmp_eq_u32_e32"
    assert isa.lookup("V_ADD_F32_E64").name == "v_add_f32_e64"
    assert isa.lookup("v_fma_f32").name == "v_fma_f32"
    assert isa.lookup("v_not_an_instruction") is None
    assert isa.lookup("s_waitcnt_vscnt") is None          # not on gfx942 (ISA_NOTES §2)


def test_every_example_reassembles_to_record(llvm_mc):
    """Each record's example assembles (llvm-mc 19) to an encoding of the record's
    size whose opcode field equals the record's opcode."""
    recs = list(isa.records())
    encs = _assemble(llvm_mc, [r.example for r in recs])
    assert len(encs) == len(recs)             # generate.py picks assemblable examples
    checked = 0
    for i, r in enumerate(recs):
        b = encs.get(i)
        if b is None:
            continue
        assert len(b) == r.size, (r.name, r.example, b.hex())
        enc_family = r.encoding
        if r.variant in ("dpp", "sdwa"):
            b = b[:4]
        assert _opcode_field(enc_family, b) == r.opcode, (r.name, b.hex())
        checked += 1
    assert checked == len(recs)


DIVERSE = [
    ("s_add_u32 s0, s1, s2", 4), ("s_mov_b64 s[0:1], s[2:3]", 4), ("s_movk_i32 s0, 0x1234", 4),
    ("s_cmp_eq_u32 s0, s1", 4), ("s_cbranch_scc0 4", 4), ("s_waitcnt vmcnt(0)", 4),
    ("s_load_dwordx4 s[0:3], s[4:5], 0x10", 8), ("s_buffer_load_dword s0, s[4:7], 0x0", 8),
    ("v_add_f32_e32 v0, v1, v2", 4), ("v_add_f32_e64 v0, v1, v2", 8),
    ("v_add_f32_sdwa v0, v1, v2 dst_sel:WORD_1", 8), ("v_mov_b32_dpp v0, v1 quad_perm:[1,0,3,2]", 8),
    ("v_cmp_gt_f32_e32 vcc, v1, v2", 4), ("v_cmp_gt_f32_e64 s[0:1], v1, v2", 8),
    ("v_cmpx_eq_u32_e32 vcc, v1, v2", 4), ("v_fma_f32 v0, v1, v2, v3", 8),
    ("v_pk_fma_f32 v[0:1], v[2:3], v[4:5], v[6:7]", 8),
    ("v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15]", 8),
    ("v_mfma_f32_16x16x32_fp8_fp8 v[0:3], v[4:5], v[6:7], v[0:3]", 8),
    ("v_smfmac_f32_16x16x32_f16 v[0:3], v[4:5], v[6:9], v10", 8),
    ("ds_read_b128 v[0:3], v4 offset:16", 8), ("ds_write2_b32 v0, v1, v2 offset1:4", 8),
    ("buffer_load_dword v1, v2, s[4:7], 0 offen", 8), ("buffer_store_dwordx4 v[0:3], off, s[4:7], s8", 8),
    ("global_load_dwordx4 v[0:3], v[4:5], off", 8), ("global_store_dword v[0:1], v2, off", 8),
    ("scratch_load_dword v0, off, s2", 8), ("flat_atomic_add v0, v[2:3], v4 sc0", 8),
    ("tbuffer_load_format_x v1, off, s[4:7], s3", 8), ("v_fmamk_f32 v0, v1, 0x1234, v2", 8),
    ("s_setreg_imm32_b32 hwreg(HW_REG_MODE), 0x1234", 8), ("v_readlane_b32 s0, v1, 3", 8),
    ("v_accvgpr_write_b32 a0, v1", 8), ("v_accvgpr_read_b32 v0, a1", 8),
    ("v_cvt_pk_fp8_f32 v0, v1, v2", 8), ("v_lshl_add_u64 v[0:1], v[2:3], 2, v[4:5]", 8),
    ("v_mov_b64_e32 v[0:1], v[2:3]", 4), ("s_endpgm", 4), ("s_barrier", 4),
    ("s_setpc_b64 s[0:1]", 4), ("s_swappc_b64 s[0:1], s[2:3]", 4), ("s_getpc_b64 s[0:1]", 4),
    ("v_dot2_f32_f16 v0, v1, v2, v3", 8), ("v_div_scale_f32 v0, vcc, v1, v2, v3", 8),
    ("v_add_co_u32_e64 v0, s[0:1], v1, v2", 8), ("v_addc_co_u32_e32 v0, vcc, v1, v2, vcc", 4),
    ("ds_bpermute_b32 v0, v1, v2", 8), ("buffer_wbl2 sc1", 8), ("s_dcache_wb", 8),
    ("global_load_lds_dword v[2:3], off", 8),
]


@pytest.mark.parametrize("text,size", DIVERSE)
def test_diverse_sizes_against_llvm_mc(llvm_mc, text, size):
    enc = _assemble(llvm_mc, [text])[0]
    mn = text.split()[0]
    from asmevo.frontend.asm_parser import parse_instruction
    inst = parse_instruction(text)
    info = isa.lookup(mn)
    assert info is not None, mn
    assert len(enc) == size == isa.encoded_size(inst), (text, enc.hex())
    b = enc[:4] if info.variant in ("dpp", "sdwa") else enc
    assert _opcode_field(info.encoding, b) == info.opcode


LITERALS = [
    "s_add_u32 s0, s1, 0x1234", "s_add_u32 s0, s1, 64", "s_add_u32 s0, s1, 65",
    "s_add_u32 s0, s1, -16", "s_add_u32 s0, s1, -17", "s_add_u32 s0, s1, 0xfffffff0",
    "s_mov_b32 s0, 0x3f800000", "s_mov_b32 s0, 1.0", "s_mov_b32 s0, 0.15915494",
    "s_mov_b32 s0, 0x3e22f983", "s_mov_b64 s[0:1], 0x3ff00000", "s_mov_b64 s[0:1], 1.0",
    "v_mov_b32_e32 v0, 2.5", "v_mov_b32_e32 v0, -4.0", "v_mov_b32_e32 v0, 0.5",
    "v_add_f16_e32 v0, 0x3c00, v1", "v_add_f16_e32 v0, 1.0, v1", "v_add_f16_e32 v0, 2.5, v1",
    "v_add_f16_e32 v0, 0x4100, v1", "v_add_u32_e32 v0, 0x3f800000, v1",
    "v_add_u32_e32 v0, 1.0, v1", "v_add_f32_e32 v0, 0.15915494, v1",
    "v_cvt_f32_f64_e32 v0, 1.0", "v_cvt_f32_f64_e32 v0, 0x40080000",
    "s_cmp_eq_u32 s0, 0x100", "s_cmp_eq_u32 0x100, s0", "v_cndmask_b32_e32 v0, -2, v1, vcc",
    "s_and_b64 s[0:1], s[2:3], 0xffff", "s_lshl_b64 s[0:1], s[2:3], 3",
    "v_cmp_lt_f32_e32 vcc, 0x42c80000, v1", "v_mul_f32_e32 v0, 0x3fb8aa3b, v1",
    "v_fma_f32 v0, v1, 2.0, v2", "v_mov_b32_e32 v0, 64", "v_mov_b32_e32 v0, 0x41",
    "v_mov_b32_e32 v0, 3.0", "v_mov_b32_e32 v0, 0.0", "s_mov_b32 s0, -0.0",
    "v_add_f16_e32 v0, 3.0, v1",
    "s_mov_b64 s[0:1], 0xffffffff", "s_mov_b64 s[0:1], 0xffffffffffffffff",
    "s_and_b64 s[0:1], s[2:3], 0xfffffff0", "s_mov_b64 s[0:1], 0.5",
    "v_mov_b64_e32 v[0:1], 0x3ff0000000000000", "v_mov_b64_e32 v[0:1], 0x12345678",
    "v_mov_b64_e32 v[0:1], 0x3fe00000", "s_cmp_eq_u64 s[0:1], 0x1234",
    "v_fract_f64_e32 v[0:1], 0x3fe00000", "v_fract_f64_e32 v[0:1], 0xbff00000",
    "v_fract_f64_e32 v[0:1], 0x3fc45f30", "v_cvt_f32_f64_e32 v0, 0x3fe00000",
    "v_cvt_f16_f32_e32 v0, 0x3c00", "v_cvt_f32_f16_e32 v0, 0x3c00",
    "v_add_u16_e32 v0, 0xfff0, v1", "v_add_u16_e32 v0, 0x3c00, v1", "v_add_u16_e32 v0, -16, v1",
    "v_add_f16_e32 v0, 0xfff0, v1", "s_mov_b64 s[0:1], 0xfffffffffffffff0",
    "v_mov_b64_e32 v[0:1], 0x3fc45f306dc9c882",
]


def test_encoded_size_literals_against_llvm_mc(llvm_mc):
    """encoded_size adds 4 exactly when llvm-mc needs a literal dword."""
    from asmevo.frontend.asm_parser import parse_instruction
    encs = _assemble(llvm_mc, LITERALS)
    assert len(encs) == len(LITERALS)
    for i, text in enumerate(LITERALS):
        inst = parse_instruction(text)
        assert isa.encoded_size(inst) == len(encs[i]), (text, encs[i].hex())


def test_encoded_size_label_and_unencodable():
    inst = Instruction("s_add_u32", [Reg("s", 0), Reg("s", 1), Label("sym")])
    assert isa.encoded_size(inst) == 8
    inst = Instruction("v_add_f32_e64", [Reg("v", 0), Imm(0x1234), Reg("v", 2)])
    assert isa.encoded_size(inst) is None       # VOP3 takes no literal on gfx942
    assert isa.encoded_size(Instruction("v_bogus", [])) is None


def test_inline_constant_rules():
    assert isa.is_inline_constant(64) and not isa.is_inline_constant(65)
    assert isa.is_inline_constant(-16) and not isa.is_inline_constant(-17)
    assert isa.is_inline_constant(0xFFFFFFF0, "i32")
    assert not isa.is_inline_constant(0xFFFFFFF0, "i64")
    assert isa.is_inline_constant(0x3C00, "f16") and not isa.is_inline_constant(0x3C00, "f32")
    assert isa.is_inline_constant(0x3FF0000000000000, "f64")
    assert isa.is_inline_constant(0x3FF00000, "f64")      # high half of 1.0 (llvm-mc folds it)
    assert not isa.is_inline_constant(0x3FF00000, "i64")
    assert not isa.is_inline_constant(0xFFF0, "i16") and isa.is_inline_constant(0xFFF0, "f16")
    assert isa.is_inline_constant(0.15915494) and isa.is_inline_constant(-4.0)
    assert not isa.is_inline_constant(3.0) and not isa.is_inline_constant(-0.0)


def _parse(text):
    from asmevo.frontend.asm_parser import parse_instruction
    return parse_instruction(text)


def _regs(ops):
    return [str(o) for o in ops]


@pytest.mark.parametrize("text,defs,uses,idefs,iuses", [
    ("s_cmp_eq_u32 s0, s1", [], ["s0", "s1"], [("scc",)], []),
    ("s_add_u32 s0, s1, s2", ["s0"], ["s1", "s2"], [("scc",)], []),
    ("s_addc_u32 s0, s1, s2", ["s0"], ["s1", "s2"], [("scc",)], [("scc",)]),
    ("s_cselect_b32 s0, s1, s2", ["s0"], ["s1", "s2"], [], [("scc",)]),
    ("s_mul_i32 s0, s1, s2", ["s0"], ["s1", "s2"], [], []),
    ("v_cmp_eq_f32_e32 vcc, v1, v2", ["vcc"], ["v1", "v2"], [], [("exec_lo",), ("exec_hi",)]),
    ("v_cmp_eq_f32_e64 s[4:5], v1, v2", ["s[4:5]"], ["v1", "v2"], [], [("exec_lo",), ("exec_hi",)]),
    ("v_cmpx_eq_u32_e64 s[4:5], v1, v2", ["s[4:5]"], ["v1", "v2"],
     [("exec_lo",), ("exec_hi",)], [("exec_lo",), ("exec_hi",)]),
    ("v_cndmask_b32_e32 v0, v1, v2, vcc", ["v0"], ["v1", "v2", "vcc"], [], [("exec_lo",), ("exec_hi",)]),
    ("s_and_saveexec_b64 s[0:1], s[2:3]", ["s[0:1]"], ["s[2:3]"],
     [("scc",), ("exec_lo",), ("exec_hi",)], [("exec_lo",), ("exec_hi",)]),
    ("v_readlane_b32 s0, v1, s2", ["s0"], ["v1", "s2"], [], [("exec_lo",), ("exec_hi",)]),
    ("v_writelane_b32 v0, s1, 2", ["v0"], ["v0", "s1", "2"], [], [("exec_lo",), ("exec_hi",)]),
    ("v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[16:31]", ["a[0:15]"],
     ["v[0:1]", "v[2:3]", "a[16:31]"], [], [("exec_lo",), ("exec_hi",)]),
    ("v_smfmac_f32_16x16x32_f16 v[0:3], v[4:5], v[6:9], v10", ["v[0:3]"],
     ["v[0:3]", "v[4:5]", "v[6:9]", "v10"], [], [("exec_lo",), ("exec_hi",)]),
    ("s_setpc_b64 s[0:1]", [], ["s[0:1]"], [], []),
    ("s_swappc_b64 s[0:1], s[2:3]", ["s[0:1]"], ["s[2:3]"], [], []),
    ("global_store_dword v[0:1], v2, off", [], ["v[0:1]", "v2", "off"], [], [("exec_lo",), ("exec_hi",)]),
    ("global_atomic_add v[0:1], v2, off", [], ["v[0:1]", "v2", "off"], [], [("exec_lo",), ("exec_hi",)]),
    ("global_atomic_add v3, v[0:1], v2, off sc0", ["v3"], ["v[0:1]", "v2", "off"], [],
     [("exec_lo",), ("exec_hi",)]),
    ("buffer_atomic_add v1, v2, s[4:7], 0 offen", [], ["v1", "v2", "s[4:7]", "0"], [],
     [("exec_lo",), ("exec_hi",)]),
    ("buffer_atomic_add v1, v2, s[4:7], 0 offen sc0", ["v1"], ["v1", "v2", "s[4:7]", "0"], [],
     [("exec_lo",), ("exec_hi",)]),
    ("buffer_load_dword v1, v2, s[4:7], 0 offen", ["v1"], ["v2", "s[4:7]", "0"], [],
     [("exec_lo",), ("exec_hi",)]),
    ("buffer_load_dword v2, s[4:7], 0 offen lds", [], ["v2", "s[4:7]", "0"], [],
     [("exec_lo",), ("exec_hi",), ("m0",)]),
    ("buffer_load_short_d16 v1, off, s[4:7], 0", ["v1"], ["v1", "off", "s[4:7]", "0"], [],
     [("exec_lo",), ("exec_hi",)]),
    ("ds_add_u32 v0, v1", [], ["v0", "v1"], [], [("exec_lo",), ("exec_hi",)]),
    ("ds_add_rtn_u32 v2, v0, v1", ["v2"], ["v0", "v1"], [], [("exec_lo",), ("exec_hi",)]),
    ("s_atomic_add s0, s[2:3], 0x0", [], ["s0", "s[2:3]", "0x0"], [], []),
    ("s_atomic_add s0, s[2:3], 0x0 glc", ["s0"], ["s0", "s[2:3]", "0x0"], [], []),
    ("v_fmac_f32_e32 v0, v1, v2", ["v0"], ["v0", "v1", "v2"], [], [("exec_lo",), ("exec_hi",)]),
    ("v_mov_b32_dpp v0, v1 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf", ["v0"], ["v1"], [],
     [("exec_lo",), ("exec_hi",)]),
    ("v_mov_b32_dpp v0, v1 row_shr:1 row_mask:0xf bank_mask:0x3", ["v0"], ["v0", "v1"], [],
     [("exec_lo",), ("exec_hi",)]),
    ("v_mov_b32_sdwa v0, v1 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:DWORD", ["v0"],
     ["v0", "v1"], [], [("exec_lo",), ("exec_hi",)]),
    ("v_mov_b32_sdwa v0, v1 dst_sel:WORD_1", ["v0"], ["v0", "v1"], [], [("exec_lo",), ("exec_hi",)]),
    ("v_mov_b32_sdwa v0, v1 dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:DWORD", ["v0"], ["v1"],
     [], [("exec_lo",), ("exec_hi",)]),
    ("v_add_f32_sdwa v0, s1, 2 dst_sel:DWORD dst_unused:UNUSED_PRESERVE src0_sel:DWORD "
     "src1_sel:DWORD", ["v0"], ["s1", "2"], [], [("exec_lo",), ("exec_hi",)]),
    ("v_div_fmas_f32 v0, v1, v2, v3", ["v0"], ["v1", "v2", "v3"], [],
     [("exec_lo",), ("exec_hi",), ("vcc_lo",), ("vcc_hi",)]),
    ("s_cbranch_vccz 4", [], ["4"], [], [("vcc_lo",), ("vcc_hi",)]),
    ("s_movrels_b32 s0, s1", ["s0"], ["s1"], [], [("m0",)]),
    ("s_setreg_b32 hwreg(HW_REG_MODE), s1", [], ["hwreg(HW_REG_MODE)", "s1"], [], []),
    ("s_getreg_b32 s1, hwreg(HW_REG_MODE)", ["s1"], ["hwreg(HW_REG_MODE)"], [], []),
    ("s_cmovk_i32 s0, 0x12", ["s0"], ["s0", "0x12"], [], [("scc",)]),
    # SOPInstructions.td: every SOPC defines SCC (s_setvskip too); s_sendmsg Uses = [EXEC, M0]
    ("s_setvskip s0, s1", [], ["s0", "s1"], [("scc",)], []),
    ("s_sendmsg sendmsg(MSG_INTERRUPT)", [], ["sendmsg(MSG_INTERRUPT)"], [],
     [("m0",), ("exec_lo",), ("exec_hi",)]),
    ("s_set_gpr_idx_on s0, gpr_idx(SRC0)", [], ["s0", "gpr_idx(SRC0)"], [("m0",)], [("m0",)]),
    ("s_bfm_b32 s0, s1, s2", ["s0"], ["s1", "s2"], [], []),
    ("s_bcnt1_i32_b64 s0, s[2:3]", ["s0"], ["s[2:3]"], [("scc",)], []),
    ("s_lshl2_add_u32 s0, s1, s2", ["s0"], ["s1", "s2"], [("scc",)], []),
])
def test_roles_and_implicit_registers(text, defs, uses, idefs, iuses):
    inst = _parse(text)
    assert inst.info is not None, text
    got_defs = _regs(isa.def_operands(inst))
    got_uses = _regs(isa.use_operands(inst))
    assert got_defs == defs, (text, got_defs)
    assert [u.replace(" ", "") for u in got_uses] == [u.replace(" ", "") for u in uses], \
        (text, got_uses)
    assert list(isa.implicit_defs(inst)) == idefs, (text, isa.implicit_defs(inst))
    assert list(isa.implicit_uses(inst)) == iuses, (text, isa.implicit_uses(inst))


def test_memory_counters_branches_and_flags():
    L = isa.lookup
    assert L("global_load_dwordx4").mem == isa.MemInfo("load", "global", 16)
    assert L("ds_read2_b64").mem == isa.MemInfo("load", "lds", 16)
    assert L("s_load_dwordx8").mem == isa.MemInfo("load", "constant", 32)
    assert L("buffer_store_short").mem == isa.MemInfo("store", "buffer", 2)
    assert L("flat_atomic_cmpswap_x2").mem.kind == "atomic"
    assert L("flat_load_dword").counters == ("vmcnt", "lgkmcnt")
    assert L("global_store_dword").counters == ("vmcnt",)
    assert L("ds_write_b32").counters == ("lgkmcnt",)
    assert L("s_sendmsg").counters == ("lgkmcnt",)
    assert L("v_add_f32_e32").counters == ()
    assert (L("s_cbranch_execnz").branch, L("s_cbranch_execnz").branch_cond) == ("cond", "execnz")
    assert L("s_branch").branch == "uncond" and L("s_endpgm").branch == "endpgm"
    assert L("s_setpc_b64").branch == "indirect" and L("s_swappc_b64").branch == "call"
    assert L("s_cbranch_scc1").operands[0].cls == "LABEL"
    m = L("v_mfma_f32_32x32x8_f16")
    assert m.is_mfma and m.is_xdl and m.passes == 8 and m.latency == "xdl"
    assert L("v_mfma_f32_32x32x2_f32").passes == 16 and not L("v_mfma_f32_32x32x2_f32").is_xdl
    d = L("v_mfma_f64_16x16x4_f64")
    assert d.is_dgemm and not d.is_xdl and d.passes == 8 and d.latency == "dgemm"
    assert L("v_mfma_f32_4x4x4_16b_f16").passes == 2
    # llvm-mca gfx940 model (ISA_NOTES section 9): VALU 1/1, v_exp_f32 4/1, global load 80
    assert (L("v_add_f32_e32").mca_latency, L("v_add_f32_e32").mca_rthroughput) == (1, 1.0)
    assert L("v_exp_f32_e32").mca_latency == 4 and L("global_load_dword").mca_latency == 80
    assert m.mca_latency == m.passes + 4
    assert L("v_exp_f32_e32").is_trans and L("v_exp_f32_e64").latency == "trans"
    assert not L("v_add_f32_e32").is_trans
    assert L("v_dot2_f32_f16").is_dot and L("v_dot2c_f32_f16_e32").is_dot
    assert L("v_cmpx_lt_f32_e32").writes_exec and L("s_or_saveexec_b64").writes_exec
    assert L("v_add_f32_e64").vop == "VOP2" and L("v_cmp_eq_f32_e64").vop == "VOPC"
    assert L("v_accvgpr_read_b32").family == "VOP3P-MAI" and not L("v_accvgpr_read_b32").is_mfma
    assert L("v_add_f32_dpp").family == "VOP2" and L("v_add_f32_dpp").variant == "dpp"


def test_dynamic_counters_lds_and_unknown():
    assert isa.counters(_parse("ds_add_u32 v0, v1 gds")) == ("lgkmcnt", "expcnt")
    assert isa.counters(_parse("ds_add_u32 v0, v1")) == ("lgkmcnt",)
    assert isa.writes_lds(_parse("buffer_load_dword v2, s[4:7], 0 offen lds"))
    assert not isa.writes_lds(_parse("buffer_load_dword v1, v2, s[4:7], 0 offen"))
    assert isa.writes_lds(_parse("ds_write_b32 v0, v1")) and not isa.writes_lds(_parse("ds_read_b32 v0, v1"))
    # VOP3 op_sel destination bit on a 16-bit result writes the high half only
    assert isa.operand_roles(_parse("v_mad_f16 v0, v1, v2, v3 op_sel:[0,0,0,1]"))[0] == "defuse"
    assert isa.operand_roles(_parse("v_mad_f16 v0, v1, v2, v3"))[0] == "def"
    with pytest.raises(isa.UnknownInstructionError):
        isa.def_operands(Instruction("v_not_real", [Reg("v", 0)]))
    with pytest.raises(KeyError):
        isa.use_operands(Instruction("v_not_real", [Reg("v", 0)]))


def test_vcc_left_out_becomes_implicit():
    """The e32 forms print VCC; an instruction built without it still reports it."""
    i = Instruction("v_cmp_eq_f32_e32", [Reg("v", 1), Reg("v", 2)])
    assert isa.def_operands(i) == [] and isa.implicit_defs(i) == (("vcc_lo",), ("vcc_hi",))
    i = Instruction("v_cndmask_b32_e32", [Reg("v", 0), Reg("v", 1), Reg("v", 2)])
    assert isa.def_operands(i) == [Reg("v", 0)]
    assert ("vcc_lo",) in isa.implicit_uses(i) and isa.implicit_defs(i) == ()
    i = Instruction("v_cmp_eq_f32_e32", [Special("vcc"), Reg("v", 1), Reg("v", 2)])
    assert isa.implicit_defs(i) == ()


def test_special_vcc_operand_in_unit_terms():
    from asmevo.ir.operands import reg_units
    inst = Instruction("v_cmp_eq_f32_e32", [Special("vcc"), Reg("v", 1), Reg("v", 2)])
    units = [u for op in isa.def_operands(inst) for u in reg_units(op)]
    assert units == [("vcc_lo",), ("vcc_hi",)]


def test_lookup_is_fast():
    import time
    names = isa.all_mnemonics()
    t = time.perf_counter()
    for _ in range(30):
        for n in names[:1000]:
            isa.lookup(n)
    assert time.perf_counter() - t < 1.0


# ---------------------------------------------------------------------------
# corpus coverage
# ---------------------------------------------------------------------------

def _corpus_mnemonics(corpus_dir):
    from asmevo.llvm import find_tool
    objdump = find_tool("llvm-objdump")
    seen = {}
    ins = re.compile(r"^\s+([a-z][a-z0-9_]*)\b")
    cos = sorted(corpus_dir.glob("*.co")) + sorted((corpus_dir / "triton").glob("*.hsaco"))
    cos += sorted((corpus_dir / "aiter").rglob("*.co"))
    assert cos
    for co in cos:
        out = subprocess.run([objdump, "-d", "--mcpu=gfx942", str(co)], capture_output=True,
                             text=True, timeout=300).stdout
        for ln in out.splitlines():
            m = ins.match(ln)
            if m and "//" in ln:       # llvm-objdump prints "// addr: bytes" after each insn
                seen.setdefault(m.group(1), str(co))
    texts = sorted(corpus_dir.glob("*.s")) + sorted((corpus_dir / "triton").glob("*.amdgcn"))
    texts += sorted((corpus_dir / "aiter").rglob("*.s"))
    pref = re.compile(r"^\s+((?:s|v|ds|buffer|tbuffer|global|flat|scratch)_[a-z0-9_]+)\b")
    for t in texts:
        for ln in t.read_text(errors="replace").splitlines():
            m = pref.match(ln)
            if m:
                seen.setdefault(m.group(1), str(t))
    return seen


@pytest.mark.corpus
def test_corpus_mnemonics_covered(corpus_dir):
    seen = _corpus_mnemonics(corpus_dir)
    assert len(seen) > 200
    missing = {m: f for m, f in seen.items() if isa.lookup(m) is None}
    assert not missing, missing


# ---------------------------------------------------------------------------
# coverage against the assembler and regeneration
# ---------------------------------------------------------------------------

def _generate_module():
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[2] / "isa_specs" / "generate.py"
    spec = importlib.util.spec_from_file_location("isa_generate", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_mnemonic_llvm_mc_accepts_is_in_the_table(llvm_mc):
    """Every base mnemonic of the LLVM 19 assembler (its AsmMatcher mnemonic table)
    that llvm-mc accepts for gfx942 resolves to a record (directly or via an alias)."""
    gen = _generate_module()
    names = gen.llvm_asm_mnemonics()
    if not names:
        pytest.skip("AsmMatcher mnemonic table not found in this LLVM build")
    res = gen._assemble_lines(names)
    accepted = [n for n, (_, err, _e) in zip(names, res)
                if not (err and ("not supported on this GPU" in err or "invalid instruction" in err))]
    assert len(accepted) > 1300
    missing = [n for n in accepted if isa.lookup(n) is None
               and not any(isa.lookup(n + s) for s in ("_e32", "_e64", "_dpp", "_sdwa"))]
    assert not missing, missing
    # and nothing in the table is a mnemonic llvm-mc rejects for gfx942
    acc = set(accepted) | set(isa.aliases())
    strays = [r.name for r in isa.records() if r.base not in acc and r.name not in acc]
    assert not strays, strays[:20]


@pytest.mark.slow
def test_generate_is_deterministic_and_committed(tmp_path):
    """Re-running isa_specs/generate.py reproduces the committed gfx942.json."""
    import pathlib
    out = tmp_path / "gfx942.json"
    subprocess.run(["python", str(pathlib.Path(__file__).resolve().parents[2] / "isa_specs" /
                                  "generate.py"), "--out", str(out)], check=True, timeout=900,
                   capture_output=True)
    committed = pathlib.Path(__file__).resolve().parents[2] / "isa_specs" / "gfx942.json"
    assert out.read_bytes() == committed.read_bytes()


#: Partial or conditional writes that LLVM does not tie at the MC level but that keep
#: part of the old destination (CDNA3 ISA guide: D16 loads write one half; S_CMOV,
#: S_BITSET write conditionally / one bit; V_CVT_PKACCUM, V_PK_FMAC accumulate).
_SEMANTIC_DEFUSE = re.compile(r"(_d16(_hi)?(_\w+)?$|^s_cmov|^s_bitset|^v_cvt_pkaccum_u8_f32$"
                              r"|^v_pk_fmac_f16)")


def test_tied_destinations_match_llvm_mcinst(llvm_mc):
    """``llvm-mc -show-inst`` lists a tied destination twice (v_fmac, v_writelane,
    SMFMAC, v_cvt_pk_fp8, RTN atomics...). The first operand is ``defuse`` exactly
    when LLVM ties it, apart from DPP (``$old``: read only when lanes can be
    disabled, see test_roles_and_implicit_registers) and the semantic partial writes
    above."""
    from asmevo.frontend.asm_parser import parse_instruction
    recs = list(isa.records())
    p = subprocess.run([llvm_mc, "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-show-inst"],
                       input="\n".join(r.example for r in recs) + "\n", capture_output=True,
                       text=True, timeout=300)
    bad = {int(m.group(1)) - 1 for m in re.finditer(r"<stdin>:(\d+):\d+: error", p.stderr)}
    insts, cur = [], None
    for ln in p.stdout.splitlines():
        m = re.match(r"^\t\S.*; <MCInst #\d+ (\w+)", ln)
        if m:
            cur = [m.group(1), []]
            insts.append(cur)
            continue
        m = re.search(r"<MCOperand Reg:(\d+)>", ln)
        if m and cur is not None:
            cur[1].append(int(m.group(1)))
    good = [i for i in range(len(recs)) if i not in bad]
    assert len(good) == len(insts) and len(good) > 1800
    wrong = []
    for i, (mcname, regs) in zip(good, insts):
        r = recs[i]
        if r.is_dpp:
            continue
        tied = len(regs) > 1 and regs[0] in regs[1:]
        roles = isa.operand_roles(parse_instruction(r.example))
        ours = bool(roles) and roles[0] == "defuse"
        if ours and not tied and _SEMANTIC_DEFUSE.search(r.base):
            continue
        if tied != ours:
            wrong.append((r.name, mcname, roles))
    assert not wrong, wrong


@pytest.mark.corpus
def test_encoded_size_matches_every_corpus_instruction(corpus_dir):
    """For every instruction llvm-objdump prints from the corpus code objects, the
    parsed text's encoded_size equals the number of bytes objdump shows, and its
    operand roles resolve (literal/inline-constant rules checked on real code)."""
    from asmevo.frontend.asm_parser import parse_instruction
    from asmevo.llvm import find_tool
    objdump = find_tool("llvm-objdump")
    cos = sorted(corpus_dir.glob("*.co")) + sorted((corpus_dir / "triton").glob("*.hsaco"))
    cos += sorted((corpus_dir / "aiter").rglob("*.co"))
    line = re.compile(r"^\s+(\S.*?)\s*//\s*[0-9A-F]+:((?: [0-9A-F]{8})+)\s*(<[^>]*>)?\s*$")
    n, wrong = 0, []
    for co in cos:
        out = subprocess.run([objdump, "-d", "--mcpu=gfx942", str(co)], capture_output=True,
                             text=True, timeout=300).stdout
        for ln in out.splitlines():
            m = line.match(ln)
            if not m:
                continue
            inst = parse_instruction(m.group(1))
            nbytes = 4 * len(m.group(2).split())
            isa.operand_roles(inst)
            n += 1
            if isa.encoded_size(inst) != nbytes:
                wrong.append((m.group(1), nbytes, isa.encoded_size(inst)))
    assert n > 100000
    assert not wrong, wrong[:20]


def test_pitfalls_from_shared_research():
    """Cases from ../shared/research/PITFALLS.md that concern the table."""
    # BR-01: acc/acc_cd pick the register file per operand; roles follow the operands
    i = _parse("v_mfma_f32_16x16x16_f16 v[10:13], a[2:3], v[4:5], v[6:9]")
    assert _regs(isa.def_operands(i)) == ["v[10:13]"]
    assert _regs(isa.use_operands(i)) == ["a[2:3]", "v[4:5]", "v[6:9]"]
    assert [o.cls for o in i.info.operands][:3] == ["AV", "AV", "AV"]
    # BR-02: SMFMAC accumulates into vdst; the 4th operand is the sparsity index
    i = _parse("v_smfmac_f32_16x16x32_bf16 v[252:255], v[2:3], v[4:7], v3")
    assert isa.operand_roles(i) == ["defuse", "use", "use", "use"]
    # BR-03: 0.5 is inline for packed f32 (VOP3P has no literal on gfx942)
    assert isa.encoded_size(_parse("v_pk_add_f32 v[10:11], v[2:3], 0.5")) == 8
    # BR-05: v_mac_f32 and all its variants are absent on gfx940+
    for n in ("v_mac_f32", "v_mac_f32_e32", "v_mac_f32_e64", "v_mac_f32_dpp", "v_mac_f32_sdwa"):
        assert isa.lookup(n) is None, n
    # BR-06: 64-bit DPP exists on gfx942
    assert isa.lookup("v_ceil_f64_dpp").size == 8
    # BR-11: buffer_inv counts on vmcnt and writes no VGPR
    assert isa.lookup("buffer_inv").counters == ("vmcnt",)
    assert isa.def_operands(_parse("buffer_inv sc1")) == []
    # BR-21: v_rcp_f32 is TRANS, v_mul_f32 is not
    assert isa.lookup("v_rcp_f32").is_trans and not isa.lookup("v_mul_f32").is_trans


def test_memory_kind_matches_llvm_mca_mayload_maystore(llvm_mc):
    """``llvm-mca -instruction-info`` shows LLVM's MayLoad/MayStore per instruction;
    the table's ``mem.kind`` agrees (load -> load only, store -> store only, atomic ->
    both).  LDS-DMA loads (global/scratch ``_load_lds_``) also store (to LDS), and
    ds_gws_init only stores.  MUBUF loads/stores crash llvm-mca 19 and are skipped."""
    from asmevo.llvm import find_tool
    mca = find_tool("llvm-mca")
    recs = [r for r in isa.records()
            if r.family in ("DS", "MUBUF", "MTBUF", "FLAT", "GLOBAL", "SCRATCH", "SMEM")
            and not re.match(r"buffer_(load|store)_", r.name)]
    encs = _assemble(llvm_mc, [r.example for r in recs])
    recs = [r for i, r in enumerate(recs) if i in encs]
    p = subprocess.run([mca, "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-instruction-info",
                        "-iterations=1", "-resource-pressure=0"],
                       input="\n".join(r.example for r in recs) + "\n", capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-500:]
    hdr = next(ln for ln in p.stdout.splitlines() if ln.startswith("[1]") and "[4]" in ln)
    c4, c5 = hdr.index("[4]"), hdr.index("[5]")
    rows = [ln for ln in p.stdout.splitlines() if re.match(r"^\s*\d+\s+\d+\s+[\d.]+\s", ln)]
    assert len(rows) == len(recs) > 350
    wrong = []
    for r, ln in zip(recs, rows):
        may_load, may_store = "*" in ln[c4:c4 + 4], "*" in ln[c5:c5 + 4]
        k = r.mem.kind if r.mem else None
        want = (k in ("load", "atomic"), k in ("store", "atomic"))
        if r.is_lds_dma:
            want = (True, True)
        if r.name == "ds_gws_init":
            want = (False, True)
        if (may_load, may_store) != want:
            wrong.append((r.name, k, may_load, may_store))
    assert not wrong, wrong


_CLASS_KINDS = {"VGPR": "v", "SGPR": "s", "AGPR": "a", "AV": "va", "SSRC": "sil", "SCSRC": "si",
                "VSRC": "vsil", "VCSRC": "vsi", "VS": "vs", "AVSRC": "vai", "VISRC": "vi"}


def test_operand_classes_against_llvm_mc_assembler(llvm_mc):
    """Substitute each register/constant operand of every example with an SGPR, a VGPR,
    an AGPR, an inline constant and a literal; the set llvm-mc accepts matches the
    table's class.  Not compared: AGPRs where one acc bit covers several operands (DS,
    VMEM data, MFMA vdst/src2 -- a single substitution is rejected), and SGPR/literal
    where the example already uses the constant bus (gfx9 allows one SGPR/literal)."""
    gen = _generate_module()
    lines, meta = [], []
    for r in isa.records():
        mn, toks, mods = gen.parse_text(r.example)
        if len(toks) != len(r.operands):
            continue
        for i, (t, o) in enumerate(zip(toks, r.operands)):
            if o.cls not in _CLASS_KINDS or gen.classify(t)[0] not in ("reg", "inline", "literal"):
                continue
            w = o.width
            reps = {"s": "s4" if w == 1 else f"s[4:{3 + w}]", "v": "v2" if w == 1 else f"v[2:{1 + w}]",
                    "a": "a2" if w == 1 else f"a[2:{1 + w}]", "i": "1", "l": "0x1234"}
            if w > 2:                      # SGPR tuples need 4-alignment
                reps["s"] = f"s[4:{3 + w}]" if w <= 4 else f"s[8:{7 + w}]"
            for k, rep in reps.items():
                nt = list(toks)
                nt[i] = rep
                lines.append(mn + " " + ", ".join(nt) + (" " + " ".join(mods) if mods else ""))
                meta.append((r, i, k, toks))
    p = subprocess.run([llvm_mc, "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx942"],
                       input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=300)
    bad = {int(m.group(1)) - 1 for m in re.finditer(r"<stdin>:(\d+):\d+: error", p.stderr)}
    accepted = {}
    for j, (r, i, k, toks) in enumerate(meta):
        accepted.setdefault((r.name, i), (r, toks, set()))
        if j not in bad:
            accepted[(r.name, i)][2].add(k)
    wrong, compared = [], 0
    for (name, i), (r, toks, got) in accepted.items():
        if not got:
            continue                       # example itself not assemblable in this form
        want = set(_CLASS_KINDS[r.operands[i].cls])
        shared_acc = r.family in ("DS", "MUBUF", "MTBUF", "FLAT", "GLOBAL", "SCRATCH") or (
            r.family == "VOP3P-MAI" and r.operands[i].name in ("vdst", "src2"))
        if shared_acc:
            want.discard("a")
            got = got - {"a"}
        others = [t for j, t in enumerate(toks) if j != i]
        busy = (any(t.startswith(("s", "vcc", "0x", "-0x")) or t.lstrip("-").isdigit() is False
                    and gen.classify(t)[0] == "literal" for t in others)
                or "vcc_lo" in r.implicit_uses or r.mandatory_literal)
        if busy:
            want -= {"s", "l"}
            got = got - {"s", "l"}
        compared += 1
        if got != want:
            wrong.append((name, r.operands[i].name, r.operands[i].cls, sorted(got)))
    assert compared > 3000
    assert not wrong, wrong[:30]


def test_operand_widths_against_llvm_mc_assembler(llvm_mc):
    """Each register operand of every example is re-assembled with widths w-1, w, w+1
    and 2w dwords: llvm-mc accepts exactly the table's width (DPP forms also accept a
    wider 32-bit source, an assembler quirk, so there only acceptance of w is checked)."""
    gen = _generate_module()
    lines, meta = [], []
    for r in isa.records():
        mn, toks, mods = gen.parse_text(r.example)
        if len(toks) != len(r.operands):
            continue
        for i, (t, o) in enumerate(zip(toks, r.operands)):
            c = gen.classify(t)
            if c[0] != "reg":
                continue
            f, base = c[1], c[2]
            for w in {o.width - 1, o.width, o.width + 1, 2 * o.width} - {0}:
                b = base - base % (4 if w > 2 else w) if f == "s" else base
                nt = list(toks)
                nt[i] = f"{f}{b}" if w == 1 else f"{f}[{b}:{b + w - 1}]"
                lines.append(mn + " " + ", ".join(nt) + (" " + " ".join(mods) if mods else ""))
                meta.append((r, i, w))
    p = subprocess.run([llvm_mc, "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx942"],
                       input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=300)
    bad = {int(m.group(1)) - 1 for m in re.finditer(r"<stdin>:(\d+):\d+: error", p.stderr)}
    got = {}
    for j, (r, i, w) in enumerate(meta):
        got.setdefault((r.name, i), (r, set()))
        if j not in bad:
            got[(r.name, i)][1].add(w)
    wrong, compared = [], 0
    for (name, i), (r, ws) in got.items():
        if not ws:
            continue
        compared += 1
        w = r.operands[i].width
        if (w not in ws) or (not r.is_dpp and ws != {w}):
            wrong.append((name, r.operands[i].name, w, sorted(ws)))
    assert compared > 3000
    assert not wrong, wrong[:30]


_FUZZ_VALUES = ["0", "64", "65", "-16", "-17", "0xfffffff0", "0xfff0", "0x3c00", "0x3f800000",
                "0x3ff00000", "0x3fe00000", "0.5", "-4.0", "2.5", "1.0", "0.15915494", "0x3118",
                "0x3e22f983", "0xffffffff", "0x7fff", "0x1234", "-1", "0xbc00", "0x4400",
                "0xc0800000", "3.0", "0x8000", "0x3ff0000000000000", "0xffffffffffffffff"]


def test_encoded_size_constants_fuzz_against_llvm_mc(llvm_mc):
    """Every source operand that can hold a constant (SSRC/VSRC/VCSRC/SCSRC) of every
    record, with 29 integer/float spellings: wherever llvm-mc accepts the line,
    encoded_size equals its encoding length (inline constant vs literal per operand
    type: f16/f32/f64/i16/i32/i64, packed, fp64 high halves, 1/(2pi) precision)."""
    from asmevo.frontend.asm_parser import parse_instruction
    gen = _generate_module()
    lines = []
    for r in isa.records():
        mn, toks, mods = gen.parse_text(r.example)
        if len(toks) != len(r.operands):
            continue
        for i, o in enumerate(r.operands):
            if o.cls in ("SSRC", "VSRC", "VCSRC", "SCSRC"):
                for v in _FUZZ_VALUES:
                    nt = list(toks)
                    nt[i] = v
                    lines.append(mn + " " + ", ".join(nt) + (" " + " ".join(mods) if mods else ""))
    p = subprocess.run([llvm_mc, *MC], input="\n".join(lines) + "\n", capture_output=True,
                       text=True, timeout=600)
    bad = {int(m.group(1)) - 1 for m in re.finditer(r"<stdin>:(\d+):\d+: error", p.stderr)}
    sizes = iter(len(m.group(2).split(",")) for m in map(_ENC.match, p.stdout.splitlines()) if m)
    wrong, n = [], 0
    for j, line in enumerate(lines):
        if j in bad:
            continue
        n += 1
        want = next(sizes)
        got = isa.encoded_size(parse_instruction(line))
        if got != want:
            wrong.append((line, want, got))
    assert n > 30000
    assert not wrong, wrong[:20]

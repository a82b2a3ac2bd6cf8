"""PITFALLS.md cases for the code-object reader/writer: BR-24, BR-26, BR-30 (BR-28 is in
test_co_text_abi.py).  Oracles: the Triton/clang corpus, llvm-mc 19's e_flags, clang."""

from __future__ import annotations

import struct
import subprocess

import pytest

from asmevo.backend.assemble import assemble_bytes
from asmevo.backend.rebuild import recompute_register_counts, write_code_object
from asmevo.cli import main as cli_main
from asmevo.errors import CodeObjectError
from asmevo.frontend.asm_parser import parse_instruction
from asmevo.frontend.codeobject import (MACH_NAMES, e_flags_for_target, parse_target_id,
                                        read_code_object, target_for_e_flags)
from asmevo.frontend.descriptor import KernelDescriptor
from asmevo.frontend.disasm import disassemble
from asmevo.frontend.loader import load

from corpus_paths import CORPUS, require_tool

pytestmark = pytest.mark.corpus

TRITON = sorted((CORPUS / "triton").glob("*.hsaco")) if CORPUS else []


def _floor(kd: KernelDescriptor) -> int:
    """User SGPRs (preloaded kernargs included) + system SGPRs + 6 extra (gfx942)."""
    return (kd.user_sgpr_count + kd.enable_sgpr_workgroup_id_x + kd.enable_sgpr_workgroup_id_y
            + kd.enable_sgpr_workgroup_id_z + kd.enable_sgpr_workgroup_info
            + kd.enable_private_segment + 6)


# -- BR-24 ------------------------------------------------------------------------------

@pytest.mark.parametrize("path", TRITON, ids=lambda p: p.name)
def test_br24_triton_preload_counts(path):
    """The Triton kernels preload kernargs: USER_SGPR_COUNT includes the preload SGPRs and the
    compiler's SGPR granule covers them (the rule the writer must follow)."""
    co = read_code_object(path)
    kd = co.kernels[0].descriptor
    assert kd.kernarg_preload_spec_length > 0
    assert kd.user_sgpr_count == kd.implied_user_sgprs  # 2 (kernarg ptr) + preload dwords
    assert kd.sgpr_count >= _floor(kd)


@pytest.mark.parametrize("name", ["tr_vadd", "tr_matmul"])
def test_br24_code_object_recompute_keeps_preload_sgprs(tmp_path, corpus_dir, name):
    """A rebuilt Triton kernel whose code names only s0 still allocates every preloaded
    kernarg SGPR: the writer recomputes the granule from max(used, user incl. preload)."""
    m = disassemble(corpus_dir / "triton" / f"{name}.hsaco")
    k = m.kernel(name)
    kd = k.descriptor
    want = KernelDescriptor.granulate_sgprs(_floor(kd))
    assert want >= 2  # 14+ preload/user SGPRs: more than one granule of 8
    kd.granulated_wavefront_sgpr_count = 0  # the buggy value
    for b in k.blocks:
        b.instructions.clear()
    k.blocks[0].instructions[:] = [parse_instruction("s_mov_b32 s0, 0"), parse_instruction("s_endpgm")]
    recompute_register_counts(k)
    assert kd.granulated_wavefront_sgpr_count == want
    out = tmp_path / f"{name}.co"
    write_code_object(m, str(out))
    got = read_code_object(out).kernels[0].descriptor
    assert got.granulated_wavefront_sgpr_count == want
    assert got.kernarg_preload_spec_length == kd.kernarg_preload_spec_length


def test_br24_text_recompute_keeps_preload_sgprs(tmp_path, corpus_dir):
    """The same through a module loaded from Triton's .amdgcn with next_free_sgpr forced to 0."""
    m = load(corpus_dir / "triton" / "tr_vadd.amdgcn")
    k = m.kernel("tr_vadd")
    blk = m.amdhsa_kernel("tr_vadd")
    blk.fields[".amdhsa_next_free_sgpr"] = "0"
    k.descriptor = KernelDescriptor.from_directives(blk.fields)
    assert k.descriptor.granulated_wavefront_sgpr_count == 0
    for b in k.blocks:
        b.instructions.clear()
    k.blocks[0].instructions[:] = [parse_instruction("s_endpgm")]
    out = tmp_path / "t.co"
    write_code_object(m, str(out))
    got = read_code_object(out).kernels[0].descriptor
    assert got.user_sgpr_count == 14 and got.kernarg_preload_spec_length == 12
    assert got.granulated_wavefront_sgpr_count == KernelDescriptor.granulate_sgprs(14 + 1 + 6) == 2
    assert k.descriptor.granulated_wavefront_sgpr_count == 2


# -- BR-26 ------------------------------------------------------------------------------

#: COV5 implicit block, relative to hidden_block_count_x (PITFALLS BR-26, AMDGPUUsage).
_COV5_LAYOUT = {"hidden_block_count_x": 0, "hidden_block_count_y": 4, "hidden_block_count_z": 8,
                "hidden_group_size_x": 12, "hidden_group_size_y": 14, "hidden_group_size_z": 16,
                "hidden_remainder_x": 18, "hidden_remainder_y": 20, "hidden_remainder_z": 22,
                "hidden_global_offset_x": 40, "hidden_global_offset_y": 48,
                "hidden_global_offset_z": 56, "hidden_grid_dims": 64}


def test_br26_hidden_offsets_from_metadata(corpus_dir):
    """The hidden kernarg offsets come from the metadata .args, in the binary and in the text."""
    co = read_code_object(corpus_dir / "vadd_f32_O0.co")
    km = co.kernels[0].metadata
    assert co.code_object_version == 5 and km.raw is not None
    hidden = km.hidden_args()
    base = hidden["hidden_block_count_x"]
    end = max(a.offset + a.size for a in km.explicit_args())
    assert base == (end + 7) // 8 * 8 and base != end  # 8-aligned after the explicit ones (28 -> 32)
    for kind, rel in _COV5_LAYOUT.items():
        assert km.arg_offset(kind) == base + rel, kind
    # same offsets from the .s file's YAML
    text_md = load(corpus_dir / "vadd_f32_O0.s").kernel("vadd_f32").metadata
    offs = {a[".value_kind"]: a[".offset"] for a in text_md[".args"]}
    assert all(offs[k] == base + r for k, r in _COV5_LAYOUT.items())


def test_br26_offsets_are_read_not_assumed():
    """A layout that differs from the usual one is reported as written."""
    from asmevo.frontend.metadata import KernelMeta
    km = KernelMeta.from_dict({".name": "k", ".symbol": "k.kd", ".kernarg_segment_size": 64, ".args": [
        {".offset": 0, ".size": 4, ".value_kind": "by_value"},
        {".offset": 8, ".size": 2, ".value_kind": "hidden_group_size_x"},
        {".offset": 16, ".size": 4, ".value_kind": "hidden_block_count_x"}]})
    assert km.arg_offset("hidden_group_size_x") == 8 and km.arg_offset("hidden_block_count_x") == 16
    assert km.arg_offset("hidden_group_size_y") is None and not km.warnings


def test_br26_cov4_has_no_hidden_group_size(tmp_path, corpus_dir):
    """Under code object v4 the workgroup size comes from the dispatch packet: no
    hidden_group_size_* entry, amdhsa.version 1.1 (oracle: clang -mcode-object-version=4)."""
    clang = require_tool("clang")   # skips only when clang is not installed
    out = tmp_path / "v4.co"
    subprocess.run([clang, "-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx942",
                    "-nogpulib", "-O0", "-Xclang", "-mcode-object-version=4", "-o", str(out),
                    str(corpus_dir / "vadd_f32.cl")], check=True)
    co = read_code_object(out)
    km = co.kernels[0].metadata
    assert co.code_object_version == 4 and co.metadata.version == (1, 1)
    assert km.arg_offset("hidden_group_size_x") is None
    assert km.arg_offset("hidden_global_offset_x") is not None


# -- BR-30 ------------------------------------------------------------------------------

_MC_SRC = '\t.amdgcn_target "amdgcn-amd-amdhsa--{tid}"\n\t.amdhsa_code_object_version 5\n\t.text\n\ts_endpgm\n'


@pytest.mark.parametrize("tid,flags", [
    ("gfx90a", 0x53F), ("gfx940", 0x540), ("gfx941", 0x54B), ("gfx942", 0x54C),
    ("gfx942:xnack-", 0x64C), ("gfx942:xnack+", 0x74C), ("gfx942:sramecc+", 0xD4C),
    ("gfx942:sramecc-:xnack+", 0xB4C), ("gfx90a:sramecc+:xnack-", 0xE3F),
])
def test_br30_e_flags_match_llvm_mc(tmp_path, tid, flags):
    """e_flags <-> target id both ways; llvm-mc's e_flags for each target id are the oracle."""
    from asmevo.backend.assemble import run_mc
    obj = tmp_path / "t.o"
    run_mc(_MC_SRC.format(tid=tid), ["-filetype=obj", "-o", str(obj)])
    got = struct.unpack_from("<I", obj.read_bytes(), 48)[0]
    assert got == flags
    assert e_flags_for_target("amdgcn-amd-amdhsa--" + tid) == flags
    proc, feats = parse_target_id(tid)
    canon = proc + "".join(f":{n}{'+' if feats[n] == 'on' else '-'}" for n in ("sramecc", "xnack")
                           if n in feats)
    assert target_for_e_flags(flags) == "amdgcn-amd-amdhsa--" + canon


def test_br30_mach_table():
    """The EF_AMDGPU_MACH values of PITFALLS BR-30 (LLVM ELF.h), both directions."""
    for name, mach in {"gfx90a": 0x3F, "gfx940": 0x40, "gfx941": 0x4B, "gfx942": 0x4C,
                       "gfx950": 0x4F, "gfx9-generic": 0x51, "gfx9-4-generic": 0x5F}.items():
        assert MACH_NAMES[mach] == name
        assert e_flags_for_target(name) & 0xFF == mach
        assert target_for_e_flags(mach | 0x500) == f"amdgcn-amd-amdhsa--{name}"
    assert e_flags_for_target("gfx9-4-generic:sramecc+:xnack-", generic_version=1) == 0x01000E5F
    assert parse_target_id("amdgpu9.42-amd-amdhsa-unknown-gfx942") == ("gfx942", {})
    with pytest.raises(ValueError, match="unknown AMDGPU processor"):
        e_flags_for_target("gfx4242")
    with pytest.raises(ValueError, match="unknown feature"):
        e_flags_for_target("gfx942:tgsplit+")


@pytest.mark.parametrize("flags,name", [(0x01000E5F, "gfx9-4-generic"), (0x01000551, "gfx9-generic"),
                                        (0x54F, "gfx950"), (0x540, "gfx940"), (0x54B, "gfx941"),
                                        (0xE3F, "gfx90a")])
def test_br30_rejects_other_targets_never_retargets(tmp_path, corpus_dir, capsys, flags, name):
    """A code object for another processor or a generic target is refused with its decoded
    name, never read as gfx942 (and the CLI exits 2 without a traceback)."""
    data = bytearray((corpus_dir / "vadd_f32.co").read_bytes())
    struct.pack_into("<I", data, 48, flags)
    p = tmp_path / f"{name}.co"
    p.write_bytes(bytes(data))
    with pytest.raises(CodeObjectError, match=f"expected an AMDGPU gfx942 code object, got .*{name} ") as e:
        read_code_object(p)
    assert e.value.offset == 48
    if "generic" in name:
        assert "generic target" in str(e.value) and "not gfx942" in str(e.value)
        assert "generic version 1" in str(e.value)
    rc = cli_main(["dis", str(p)])
    err = capsys.readouterr().err
    assert rc == 2 and name in err and "Traceback" not in err


def test_br30_llvm_mc_generic_object_rejected(tmp_path):
    """llvm-mc 19's own gfx9-generic object (EF_AMDGPU_MACH 0x51) is decoded and refused."""
    data = assemble_bytes(_MC_SRC.format(tid="gfx9-generic").replace(
        "\t.amdhsa_code_object_version 5\n", "\t.amdhsa_code_object_version 6\n"))
    p = tmp_path / "g.co"
    p.write_bytes(data)
    flags = struct.unpack_from("<I", data, 48)[0]
    assert flags & 0xFF == 0x51
    assert target_for_e_flags(flags) == "amdgcn-amd-amdhsa--gfx9-generic"
    with pytest.raises(CodeObjectError, match="generic target gfx9-generic .*not gfx942"):
        read_code_object(p)


def test_br30_metadata_target_checked_exactly(tmp_path, corpus_dir):
    """amdhsa.target must name the e_flags target exactly (features included); Triton's
    ``amdgpu9.42-...-gfx942`` spelling is the same target, so no warning for the corpus."""
    for p in [corpus_dir / "vadd_f32.co", corpus_dir / "triton" / "tr_vadd.hsaco"]:
        assert not [w for w in read_code_object(p).warnings if "amdhsa.target" in w]
    src = _MC_SRC.format(tid="gfx942:xnack-").replace("\t.text\n\ts_endpgm\n", "") + (
        "\t.amdgpu_metadata\n---\namdhsa.kernels: []\namdhsa.target: amdgcn-amd-amdhsa--gfx942:xnack+\n"
        "amdhsa.version: [1, 2]\n...\n\t.end_amdgpu_metadata\n\t.text\n\ts_endpgm\n")
    p = tmp_path / "m.co"
    p.write_bytes(assemble_bytes(src))
    co = read_code_object(p)
    assert co.target_id == "amdgcn-amd-amdhsa--gfx942:xnack-"
    assert [w for w in co.warnings if "amdhsa.target is 'amdgcn-amd-amdhsa--gfx942:xnack+'" in w
            and "0x64c" in w]

"""dis -> asm round trip over the whole corpus, rebuild/patch paths and the CLI.

Oracles: the corpus code objects themselves (bytes, descriptors, metadata) and
llvm-objdump / llvm-mc.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from asmevo.backend.assemble import assemble_bytes
from asmevo.backend.patch import patch_in_place
from asmevo.backend.rebuild import recompute_register_counts, write_code_object
from asmevo.cli import main as cli_main
from asmevo.frontend.asm_parser import parse_instruction
from asmevo.frontend.codeobject import read_code_object
from asmevo.frontend.disasm import disassemble
from asmevo.frontend.loader import load
from asmevo.ir import AmdhsaKernel, Instruction, MetadataBlock, print_module
from asmevo.llvm import find_tool
from asmevo.tools.roundtrip import roundtrip

from asmevo.errors import ToolNotFoundError
from corpus_paths import STRICT, corpus_code_objects

pytestmark = pytest.mark.corpus
ALL = corpus_code_objects()


@pytest.mark.parametrize("path", ALL, ids=lambda p: str(p).split("corpus/")[-1])
def test_corpus_roundtrip(path):
    """dis then asm: identical .text bytes, every descriptor field, same decoded metadata."""
    checks = roundtrip(str(path))
    bad = [c.line() for c in checks if not c.ok]
    assert not bad, bad
    names = {c.name for c in checks}
    assert {"text", "metadata"} <= names and any(n.startswith("descriptor ") for n in names)


def test_aiter_fallbacks(corpus_dir):
    """Hand-written AITer descriptors with 112 SGPRs (GRANULATED_WAVEFRONT_SGPR_COUNT 13)
    need next_free_sgpr 106 > 102, which llvm-mc rejects: they are written as raw data;
    metadata llvm-mc calls invalid is written as the raw note."""
    m = disassemble(corpus_dir / "aiter/gfx942/topksoftmax/topksoftmax_4x128x4.co")
    k = m.kernels[0]
    assert k.descriptor.granulated_wavefront_sgpr_count == 13
    assert not any(isinstance(it, AmdhsaKernel) for it in m.items)
    text = print_module(m)
    assert f"{k.name}.kd:" in text and f".quad\t{k.name} - {k.name}.kd" in text
    m2 = disassemble(corpus_dir / "aiter/gfx942/allreduce_rmsnorm_N8192.co")
    assert not any(isinstance(it, MetadataBlock) for it in m2.items)
    assert '.section\t.note,"a",@note' in print_module(m2)
    # clang objects use the readable forms
    m3 = disassemble(corpus_dir / "vadd_f32.co")
    assert any(isinstance(it, AmdhsaKernel) for it in m3.items)
    assert any(isinstance(it, MetadataBlock) for it in m3.items)


def test_labels_and_pre_symbol_code(corpus_dir):
    # objdump's <.text>: 1 KiB of s_nop before the first symbol, kept as padding words
    m = disassemble(corpus_dir / "aiter/gfx942/topk_per_row_decode/asm_top_k_per_row_decode.co")
    text = print_module(m)
    assert "\t.text\n\t.fill\t256, 4, 0xbf800000\n" in text
    assert m.kernels[0].address == m.code_object.text.addr + 0x400
    assert next(m.kernels[0].instructions()).opcode == "s_trap"
    m = disassemble(corpus_dir / "aiter/gfx942/fmha_v4_fwd/MI300/fwd_hd128_i8fp8.co")
    text = print_module(m)
    # two local symbols at one address: one label, the other an alias
    assert ("\t.set\tcode_exit, label_skip_lse" in text) or ("\t.set\tlabel_skip_lse, code_exit" in text)
    k = m.kernels[0]
    labels = k.labels()
    for inst in k.instructions():
        if inst.opcode.startswith(("s_branch", "s_cbranch_")):
            assert str(inst.operands[-1]) in labels
        assert inst.address is not None and inst.encoding is not None


def test_vadd_structure(corpus_dir):
    m = disassemble(corpus_dir / "vadd_f32.co")
    k = m.kernel("vadd_f32")
    assert k.address == 0x1700 and k.is_kernel
    assert k.metadata[".name"] == "vadd_f32"
    insts = list(k.instructions())
    assert insts[0].text() == "s_load_dword s3, s[0:1], 0x18"
    assert insts[0].encoding == (0xC00200C0).to_bytes(4, "little") + (0x18).to_bytes(4, "little")
    br = next(i for i in insts if i.opcode == "s_cbranch_execz")
    assert br.address == 0x171C
    target_block = k.block(str(br.operands[0]))
    assert target_block.instructions[0].opcode == "s_endpgm"
    assert target_block.instructions[0].address == 0x1778
    assert m.target == "amdgcn-amd-amdhsa--gfx942"
    assert m.directive_value(".amdhsa_code_object_version") == "5"


def test_code_before_first_symbol(tmp_path):
    src = _KERNEL_SRC.replace("k:\n", "\ts_mov_b32 s0, 1\n\ts_endpgm\n\t.p2align 8\nk:\n")
    p = tmp_path / "pre.co"
    p.write_bytes(assemble_bytes(src))
    m = disassemble(p)
    anon = [k for k in m.kernels if not k.is_kernel]
    assert len(anon) == 1 and anon[0].address == m.code_object.text.addr
    assert [i.text() for i in anon[0].instructions()][:2] == ["s_mov_b32 s0, 1", "s_endpgm"]
    assert m.kernel("k").address == m.code_object.text.addr + 256
    assert all(c.ok for c in roundtrip(str(p)))


def _literal_kernel_object(tmp_path) -> str:
    """A code object whose v_mov_b32 has the literal 0x3f800000 (1.0) that llvm-mc would fold."""
    p = tmp_path / "lit.co"
    p.write_bytes(assemble_bytes(_KERNEL_SRC))
    return str(p)


_KERNEL_SRC = """\t.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
\t.amdhsa_code_object_version 5
\t.text
\t.globl k
\t.p2align 8
\t.type k,@function
k:
\t.long 0x7e0002ff, 0x3f800000
\tv_add_f32_e32 v0, 2.0, v0
\ts_endpgm
\t.section .rodata,"a",@progbits
\t.p2align 6
\t.amdhsa_kernel k
\t\t.amdhsa_next_free_vgpr 1
\t\t.amdhsa_next_free_sgpr 0
\t\t.amdhsa_accum_offset 4
\t.end_amdhsa_kernel
"""


def test_literal_folding_marked_raw(tmp_path):
    path = _literal_kernel_object(tmp_path)
    m = disassemble(path)
    insts = list(m.kernel("k").instructions())
    assert insts[0].opcode == "v_mov_b32_e32" and insts[0].raw
    assert len(insts[0].encoding) == 8
    assert not insts[1].raw
    text = print_module(m)
    assert ".long\t0x7e0002ff, 0x3f800000" in text
    checks = roundtrip(path)
    assert all(c.ok for c in checks), [c.line() for c in checks]


def _objdump_lines(path):
    out = subprocess.run([find_tool("llvm-objdump"), "-d", "--mcpu=gfx942", str(path)],
                         capture_output=True, text=True, check=True).stdout
    return [l for l in out.splitlines() if l.startswith("\t")]


def test_patch_in_place_same_size(tmp_path, corpus_dir):
    src = corpus_dir / "vadd_f32.co"
    m = disassemble(src)
    k = m.kernel("vadd_f32")
    add = next(i for i in k.instructions() if i.opcode == "v_add_f32_e32")
    k.replace(add, add.evolve(opcode="v_sub_f32_e32"))
    out = tmp_path / "p.co"
    assert patch_in_place(m, str(out)) is True
    a, b = src.read_bytes(), out.read_bytes()
    assert len(a) == len(b)
    diff = [i for i in range(len(a)) if a[i] != b[i]]
    off = m.code_object.text.offset + add.address - m.code_object.text.addr
    assert diff and all(off <= i < off + 4 for i in diff)
    assert any(l.lstrip().startswith("v_sub_f32_e32 v2, v6, v7") for l in _objdump_lines(out))


def test_patch_branch_and_refusal(tmp_path, corpus_dir):
    src = corpus_dir / "vadd_f32.co"
    m = disassemble(src)
    k = m.kernel("vadd_f32")
    br = next(i for i in k.instructions() if i.opcode == "s_cbranch_execz")
    k.replace(br, br.evolve(opcode="s_cbranch_execnz"))
    out = tmp_path / "b.co"
    assert patch_in_place(m, str(out))
    lines = _objdump_lines(out)
    assert any("s_cbranch_execnz 22" in l for l in lines)
    # inserting an instruction moves everything after it: no in-place patch
    m = disassemble(src)
    k = m.kernel("vadd_f32")
    first = next(k.instructions())
    k.insert_before(first, parse_instruction("s_nop 0"))
    assert patch_in_place(m, str(tmp_path / "no.co")) is False
    assert not (tmp_path / "no.co").exists()


def test_write_code_object_grows_registers(tmp_path, corpus_dir):
    m = disassemble(corpus_dir / "vadd_f32.co")
    k = m.kernel("vadd_f32")
    before = k.descriptor.copy()
    first = next(k.instructions())
    k.insert_before(first, parse_instruction("v_mov_b32_e32 v40, 0"))
    out = tmp_path / "w.co"
    assert write_code_object(m, str(out)) == "assembled"
    co = read_code_object(out)
    kd = co.kernels[0].descriptor
    assert kd.vgpr_count >= 41 and kd.granulated_workitem_vgpr_count > before.granulated_workitem_vgpr_count
    assert kd.accum_offset_vgprs >= 44
    assert co.kernels[0].metadata.vgpr_count == 41
    lines = _objdump_lines(out)
    assert lines[0].lstrip().startswith("v_mov_b32_e32 v40, 0")
    assert recompute_register_counts(k) == []  # idempotent


def test_descriptor_and_metadata_edits(tmp_path, corpus_dir):
    m = disassemble(corpus_dir / "vadd_f32.co")
    k = m.kernel("vadd_f32")
    k.descriptor.enable_sgpr_workgroup_id_y = 1
    k.descriptor.group_segment_fixed_size = 4096
    out = tmp_path / "d.co"
    assert write_code_object(m, str(out)) == "patched"
    kd = read_code_object(out).kernels[0].descriptor
    assert kd.enable_sgpr_workgroup_id_y == 1 and kd.group_segment_fixed_size == 4096
    # metadata change: cannot patch, goes through YAML
    k.metadata[".group_segment_fixed_size"] = 4096
    out2 = tmp_path / "e.co"
    assert write_code_object(m, str(out2)) == "assembled"
    co = read_code_object(out2)
    assert co.kernels[0].metadata.group_segment_fixed_size == 4096
    assert co.kernels[0].descriptor.group_segment_fixed_size == 4096
    # a raw (AITer) descriptor is edited field by field too
    m = disassemble(corpus_dir / "aiter/gfx942/topksoftmax/topksoftmax_4x128x4.co")
    k = m.kernels[0]
    k.descriptor.kernarg_size = 128
    out3 = tmp_path / "a.co"
    assert write_code_object(m, str(out3), allow_patch=False) == "assembled"
    co = read_code_object(out3)
    assert co.kernels[0].descriptor.kernarg_size == 128
    assert co.kernels[0].descriptor.diff(m.code_object.kernels[0].descriptor) == [("kernarg_size", 128, 0)]
    assert co.text.data == m.code_object.text.data
    # raw metadata note (llvm-mc rejects this document as YAML) is re-encoded from the dict
    m = disassemble(corpus_dir / "aiter/gfx942/allreduce_rmsnorm_N8192.co")
    assert not any(isinstance(it, MetadataBlock) for it in m.items)
    m.kernels[0].metadata[".max_flat_workgroup_size"] = 128
    out4 = tmp_path / "n.co"
    assert write_code_object(m, str(out4)) == "assembled"
    co = read_code_object(out4)
    assert co.kernels[0].metadata.max_flat_workgroup_size == 128
    assert co.kernels[0].metadata.raw == m.kernels[0].metadata


def test_loader(tmp_path, corpus_dir):
    m = load(corpus_dir / "vadd_f32.s")
    assert m.code_object is None and m.kernel("vadd_f32").num_instructions() > 10
    m = load(corpus_dir / "triton/tr_vadd.amdgcn")
    assert m.kernels and "amdgpu9.42" in (m.target or "")
    data = assemble_bytes(print_module(m))  # the Triton target line is fixed for llvm-mc 19
    p = tmp_path / "t.co"
    p.write_bytes(data)
    assert read_code_object(p).text.data == read_code_object(corpus_dir / "triton/tr_vadd.hsaco").text.data
    assert load(corpus_dir / "vadd_f32.co").code_object is not None
    from asmevo.errors import AsmevoError
    with pytest.raises(AsmevoError, match="no such file"):
        load(tmp_path / "missing.s")


# -- CLI -------------------------------------------------------------------------

def _cli(capsys, *argv):
    rc = cli_main(list(map(str, argv)))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def test_cli_dis_asm_roundtrip(tmp_path, corpus_dir, capsys):
    src = corpus_dir / "vadd_f32.co"
    rc, out, err = _cli(capsys, "dis", src)
    assert rc == 0 and ".amdhsa_kernel vadd_f32" in out and err == ""
    s = tmp_path / "v.s"
    assert _cli(capsys, "dis", src, "-o", s)[0] == 0
    assert s.read_text() == out
    co = tmp_path / "v.co"
    assert _cli(capsys, "asm", s, "-o", co)[0] == 0
    assert read_code_object(co).text.data == read_code_object(src).text.data
    rc, out, err = _cli(capsys, "roundtrip", src, "--keep", tmp_path / "keep")
    assert rc == 0
    assert [l.split(":")[0] for l in out.splitlines()[:3]] == ["target", "kernels", "text"]
    assert out.rstrip().endswith("identical")
    assert (tmp_path / "keep" / "vadd_f32.s").is_file()
    assert (tmp_path / "keep" / "vadd_f32.rebuilt.co").is_file()


def test_cli_dis_prints_metadata_warnings(corpus_dir, capsys):
    rc, out, err = _cli(capsys, "dis", corpus_dir / "aiter/gfx942/topksoftmax/topksoftmax_4x128x4.co")
    assert rc == 0 and out.startswith("\t.amdgcn_target")
    assert "warning: kernel _ZN5aiter19topksoftmax_4x128x4E: descriptor kernarg_size is 0, metadata " \
        ".kernarg_segment_size is 128" in err
    assert "warning: amdhsa.version is 1.0" in err


def test_cli_roundtrip_reports_difference(tmp_path, capsys, monkeypatch):
    """A round trip that loses bytes must print DIFFERENT and exit 1."""
    path = _literal_kernel_object(tmp_path)
    import asmevo.frontend.disasm as dz
    monkeypatch.setattr(dz, "_check", lambda module, b: None)  # skip raw detection
    rc, out, err = _cli(capsys, "roundtrip", path)
    assert rc == 1
    assert "text: DIFFERENT" in out


@pytest.fixture
def bad_inputs(tmp_path, corpus_dir):
    v = (corpus_dir / "vadd_f32.co").read_bytes()
    files = {}
    files["truncated"] = tmp_path / "trunc.co"
    files["truncated"].write_bytes(v[:1000])
    b = bytearray(v)
    b[18] = 0x3E
    files["x86 machine"] = tmp_path / "mach.co"
    files["x86 machine"].write_bytes(bytes(b))
    b = bytearray(v)
    b[48] = 0x3F
    files["gfx90a"] = tmp_path / "gfx90a.co"
    files["gfx90a"].write_bytes(bytes(b))
    files["not elf"] = tmp_path / "text.co"
    files["not elf"].write_text("hello\n")
    files["missing"] = tmp_path / "missing.co"
    try:
        clang = find_tool("clang")
    except ToolNotFoundError:   # clang absent: the e_flags flip still covers gfx90a
        if STRICT:
            raise
        clang = None
    if clang is not None:       # a failed compile is a failure, not a smaller test
        files["gfx90a object"] = tmp_path / "k90a.co"
        subprocess.run([clang, "-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa",
                        "-mcpu=gfx90a", "-nogpulib", "-o", str(files["gfx90a object"]),
                        str(corpus_dir / "vadd_f32.cl")], check=True)
    cc = shutil.which("cc")
    if cc:
        c = tmp_path / "a.c"
        c.write_text("int f(void) { return 1; }\n")
        files["x86 object"] = tmp_path / "a.o"
        subprocess.run([cc, "-c", str(c), "-o", str(files["x86 object"])], check=True)
    return files


@pytest.mark.parametrize("cmd", ["dis", "roundtrip"])
def test_cli_bad_inputs_exit_2(bad_inputs, capsys, cmd):
    expect = {"truncated": "expected", "x86 machine": "got an ELF file for x86-64",
              "gfx90a": "expected an AMDGPU gfx942 code object, got gfx90a", "not elf": "",
              "missing": "no such file", "x86 object": "expected an AMDGPU gfx942 code object",
              "gfx90a object": "expected an AMDGPU gfx942 code object, got gfx90a"}
    for what, path in bad_inputs.items():
        rc, out, err = _cli(capsys, cmd, path)
        assert rc == 2, (what, out, err)
        assert err.startswith(f"asmevo {cmd}: {path}"), (what, err)
        assert expect[what] in err, (what, err)
        assert "Traceback" not in err


def test_cli_refuses_to_overwrite_input(tmp_path, corpus_dir, capsys):
    co = tmp_path / "k.co"
    co.write_bytes((corpus_dir / "vadd_f32.co").read_bytes())
    rc, _, err = _cli(capsys, "dis", co, "-o", co)
    assert rc == 2 and "refusing to overwrite" in err
    assert co.read_bytes() == (corpus_dir / "vadd_f32.co").read_bytes()
    s = tmp_path / "k.s"
    shutil.copy(corpus_dir / "vadd_f32.s", s)
    rc, _, err = _cli(capsys, "asm", s, "-o", s)
    assert rc == 2 and "refusing to overwrite" in err
    assert s.read_text() == (corpus_dir / "vadd_f32.s").read_text()


def test_cli_asm_error_location(tmp_path, capsys):
    s = tmp_path / "bad.s"
    s.write_text('\t.amdgcn_target "amdgcn-amd-amdhsa--gfx942"\n\t.text\nk:\n\tv_add_f32_e32 v0, v1\n')
    rc, _, err = _cli(capsys, "asm", s, "-o", tmp_path / "bad.co")
    assert rc == 2
    assert f"{s}:4:" in err and "error" in err
    assert not (tmp_path / "bad.co").exists()


@pytest.mark.parametrize("features,flags,xnack,sramecc", [
    ("", 0x54C, "any", "any"),
    (":sramecc+:xnack-", 0xE4C, "off", "on"),
    (":xnack+", 0x74C, "on", "any"),
])
def test_target_id_feature_bits(tmp_path, features, flags, xnack, sramecc):
    """e_flags <-> target id both ways (PITFALLS BR-30): llvm-mc writes the bits for the
    .amdgcn_target we print, and we read them back to the same id."""
    src = _KERNEL_SRC.replace("amdgcn-amd-amdhsa--gfx942", "amdgcn-amd-amdhsa--gfx942" + features)
    p = tmp_path / "f.co"
    p.write_bytes(assemble_bytes(src))
    co = read_code_object(p)
    assert co.e_flags == flags and (co.xnack, co.sramecc) == (xnack, sramecc)
    assert co.target_id == "amdgcn-amd-amdhsa--gfx942" + features
    checks = roundtrip(str(p))
    assert all(c.ok for c in checks), [c.line() for c in checks]


@pytest.mark.parametrize("rel", ["vadd_f32.co", "triton/tr_matmul.hsaco",
                                 "aiter/gfx942/fmha_v4_fwd/MI300/fwd_hd128_i8fp8.co"])
def test_ir_path_parse_print_identity(corpus_dir, rel):
    """dis text -> parse_asm -> print gives the same text and the same kernel structure."""
    from asmevo.frontend.asm_parser import parse_asm
    m = disassemble(corpus_dir / rel)
    text = print_module(m)
    m2 = parse_asm(text, "dis.s")
    assert print_module(m2) == text
    for k, k2 in zip(m.kernels, m2.kernels):
        assert k.name == k2.name
        assert [b.label or "" for b in k.blocks][1:] == [b.label or "" for b in k2.blocks][1:]
        assert list(k.instructions()) == list(k2.instructions())


_MULTI_SRC = """\t.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
\t.amdhsa_code_object_version 5
\t.text
\t.globl k1
\t.p2align 8
\t.type k1,@function
\t.protected k1
k1:
\ts_cmp_eq_u32 s0, 0
\ts_cbranch_scc1 .Lk1_end
\tv_mov_b32_e32 v1, 0x3f800000
.Lk1_end:
\ts_endpgm
.Lk1_size:
\t.size k1, .Lk1_size-k1
\t.p2align 6
\t.type helper,@function
helper:
\ts_setpc_b64 s[30:31]
\t.size helper, 4
\t.globl k2
\t.p2align 8
\t.type k2,@function
k2:
\ts_branch .Lk2_b
.Lk2_b:
\tv_accvgpr_write_b32 a0, v0
\ts_endpgm
\t.long 0xbf9f0000
\t.long 0xbf9f0000
\t.section .rodata,"a",@progbits
\t.p2align 6
\t.amdhsa_kernel k1
\t\t.amdhsa_next_free_vgpr 2
\t\t.amdhsa_next_free_sgpr 1
\t\t.amdhsa_accum_offset 4
\t.end_amdhsa_kernel
\t.amdhsa_kernel k2
\t\t.amdhsa_next_free_vgpr 9
\t\t.amdhsa_next_free_sgpr 1
\t\t.amdhsa_accum_offset 4
\t\t.amdhsa_user_sgpr_kernarg_segment_ptr 1
\t.end_amdhsa_kernel
"""


def test_two_kernels_and_a_device_function(tmp_path):
    """Padding (s_nop, s_code_end) between and after kernels, a non-kernel function symbol,
    a kernel without .size, and no metadata note."""
    p = tmp_path / "multi.co"
    p.write_bytes(assemble_bytes(_MULTI_SRC))
    m = disassemble(p)
    assert [(k.name, k.is_kernel) for k in m.kernels] == [("k1", True), ("helper", False), ("k2", True)]
    text = print_module(m)
    assert "\t.fill\t2, 4, 0xbf9f0000\n" in text  # s_code_end after k2 is padding, not code
    assert [i.opcode for i in m.kernel("k2").instructions()][-1] == "s_endpgm"
    assert m.kernel("k2").descriptor.enable_sgpr_kernarg_segment_ptr == 1
    checks = roundtrip(str(p))
    assert all(c.ok for c in checks), [c.line() for c in checks]
    assert [c.name for c in checks].count("descriptor k1") == 1


def test_text_module_amdhsa_fields_grow(tmp_path, corpus_dir):
    """A module parsed from clang's .s: new registers raise .amdhsa_next_free_* so that the
    assembled descriptor allocates them."""
    m = load(corpus_dir / "vadd_f32.s")
    k = m.kernel("vadd_f32")
    k.insert_before(next(k.instructions()), parse_instruction("v_mov_b32_e32 v20, s30"))
    out = tmp_path / "t.co"
    assert write_code_object(m, str(out)) == "assembled"
    blk = m.amdhsa_kernel("vadd_f32")
    assert blk.fields[".amdhsa_next_free_vgpr"] == "21" and blk.fields[".amdhsa_next_free_sgpr"] == "31"
    assert blk.fields[".amdhsa_accum_offset"] == "24"
    kd = read_code_object(out).kernels[0].descriptor
    assert kd.vgpr_count == 24 and kd.sgpr_count >= 31 + 6 and kd.accum_offset_vgprs == 24


def _sources_and_objects():
    from corpus_paths import CORPUS
    if CORPUS is None:
        return []
    pairs = [(s, s.with_suffix(".co")) for s in sorted(CORPUS.glob("*.s"))]
    pairs += [(s, s.with_suffix(".hsaco")) for s in sorted((CORPUS / "triton").glob("*.amdgcn"))]
    return pairs


@pytest.mark.parametrize("src,co", _sources_and_objects(), ids=lambda p: p.name)
def test_asm_gives_the_compilers_layout(tmp_path, src, co, capsys):
    """`asmevo asm` (llvm-mc + ld.lld --no-undefined -shared, the Triton target line fixed) on the
    compiler's own assembly gives every allocated section of the compiler's code object: same
    names, addresses, sizes and bytes (only the empty non-allocated .AMDGPU.csdata may differ)."""
    out = tmp_path / "k.co"
    assert _cli(capsys, "asm", src, "-o", out)[0] == 0
    a, b = read_code_object(out), read_code_object(co)
    alloc = lambda c: [(s.name, s.addr, s.size, s.data) for s in c.sections if s.alloc]  # noqa: E731
    assert alloc(a) == alloc(b)
    assert a.e_flags == b.e_flags and a.abi_version == b.abi_version


@pytest.mark.parametrize("rel", ["vadd_f32.co", "triton/tr_matmul.hsaco",
                                 "aiter/gfx942/topksoftmax/topksoftmax_4x128x4.co"])
def test_unchanged_module_patches_to_identical_file(tmp_path, corpus_dir, rel):
    m = disassemble(corpus_dir / rel)
    out = tmp_path / "same.co"
    assert write_code_object(m, str(out)) == "patched"
    assert out.read_bytes() == (corpus_dir / rel).read_bytes()


_GETPC_SRC = """\t.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
\t.amdhsa_code_object_version 5
\t.text
\t.globl k
\t.p2align 8
\t.type k,@function
k:
\ts_getpc_b64 s[2:3]
\ts_add_u32 s2, s2, table@rel32@lo+4
\ts_addc_u32 s3, s3, table@rel32@hi+12
\ts_load_dword s4, s[2:3], 0x0
\ts_endpgm
\t.section .rodata,"a",@progbits
\t.p2align 6
\t.amdhsa_kernel k
\t\t.amdhsa_next_free_vgpr 1
\t\t.amdhsa_next_free_sgpr 5
\t\t.amdhsa_accum_offset 4
\t.end_amdhsa_kernel
\t.p2align 2
table:
\t.long 1, 2, 3, 4
\t.amdgpu_metadata
---
amdhsa.kernels:
  - .name: k
    .symbol: k.kd
    .kernarg_segment_size: 0
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .kernarg_segment_align: 4
    .wavefront_size: 64
    .sgpr_count: 11
    .vgpr_count: 1
    .max_flat_workgroup_size: 64
amdhsa.target: amdgcn-amd-amdhsa--gfx942
amdhsa.version:
  - 1
  - 2
...
\t.end_amdgpu_metadata
"""


def test_pc_relative_code(tmp_path):
    """s_getpc_b64 + rel32 literals pointing into .rodata become symbolic ``table@rel32@lo/hi``
    operands (the pair keeps its bytes); moving .rodata or inserting code before the
    s_getpc_b64 then rebuilds with offsets that still reach the table.  A getpc pair that
    does not point into a data section keeps its literals, and a move is refused."""
    from asmevo.errors import AsmevoError
    p = tmp_path / "getpc.co"
    p.write_bytes(assemble_bytes(_GETPC_SRC))
    assert all(c.ok for c in roundtrip(str(p)))
    m = disassemble(p)
    insts = list(m.kernel("k").instructions())
    assert not any(i.raw for i in insts)
    assert [i.text() for i in insts[1:3]] == [
        f"s_add_u32 s2, s2, table@rel32@lo+(.+4-.Lasmevo_pc_{insts[1].address:x})",
        f"s_addc_u32 s3, s3, table@rel32@hi+(.+4-.Lasmevo_pc_{insts[1].address:x})"]
    m.kernels[0].metadata[".args"] = [{".offset": 4 * i, ".size": 4, ".value_kind": "by_value"}
                                      for i in range(60)]
    m.kernels[0].metadata[".kernarg_segment_size"] = 240
    assert write_code_object(m, str(tmp_path / "moved.co")) == "assembled"
    from test_co_pcrel import resolved_targets
    moved = tmp_path / "moved.co"
    table = read_code_object(moved).symbol("table").value
    assert resolved_targets(moved) == [table] != resolved_targets(p)  # .rodata moved, still reached
    m = disassemble(p)
    k = m.kernel("k")
    k.insert_before(next(k.instructions()), parse_instruction("s_nop 0"))
    assert write_code_object(m, str(tmp_path / "moved2.co")) == "assembled"
    # a getpc pair that computes a code address (not data) keeps literals: a move is refused
    src = _GETPC_SRC.replace("table@rel32@lo+4", "k@rel32@lo+4").replace("table@rel32@hi+12", "k@rel32@hi+12")
    p2 = tmp_path / "code.co"
    p2.write_bytes(assemble_bytes(src))
    m = disassemble(p2)
    assert not any("@rel32@" in i.text() for i in m.kernel("k").instructions())
    k = m.kernel("k")
    k.insert_before(next(k.instructions()), parse_instruction("s_nop 0"))
    with pytest.raises(AsmevoError, match="s_getpc_b64 of kernel k"):
        write_code_object(m, str(tmp_path / "moved3.co"))
    assert not (tmp_path / "moved3.co").exists()

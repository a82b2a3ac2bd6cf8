"""Code-object reader, kernel descriptor and metadata: real corpus files as the oracle."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from asmevo.errors import CodeObjectError
from asmevo.frontend.codeobject import read_code_object
from asmevo.frontend.descriptor import DIRECTIVE_FIELDS, FIELD_NAMES, KernelDescriptor
from asmevo.frontend.metadata import decode_metadata, to_yaml

from corpus_paths import corpus_code_objects, require_tool

pytestmark = pytest.mark.corpus
ALL = corpus_code_objects()


def _amdhsa_fields(s_text: str) -> dict[str, int]:
    block = re.search(r"\.amdhsa_kernel \S+\n(.*?)\.end_amdhsa_kernel", s_text, re.S).group(1)
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"(\.amdhsa_\w+)\s+(\d+)", block)}


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_descriptor_round_trip_and_metadata(path):
    co = read_code_object(path)
    assert co.mach == 0x4C and co.processor == "gfx942"
    assert co.kernels, "every corpus object has a kernel"
    for k in co.kernels:
        kd = KernelDescriptor.from_bytes(k.descriptor_bytes)
        assert kd.to_bytes() == k.descriptor_bytes
        assert k.code_entry == k.address  # kd + entry offset lands on the code symbol
        assert k.metadata is not None and k.metadata.symbol == k.name + ".kd"
        assert k.metadata.wavefront_size == 64


def test_descriptor_matches_clang_directives(corpus_dir):
    """Oracle: the .amdhsa_* values clang wrote in K.s agree with the decoded K.co descriptor."""
    checked = 0
    for s_path in sorted(corpus_dir.glob("*.s")):
        co = read_code_object(s_path.with_suffix(".co"))
        fields = _amdhsa_fields(s_path.read_text())
        kd = co.kernels[0].descriptor
        for directive, attr in DIRECTIVE_FIELDS.items():
            if directive in fields:
                assert getattr(kd, attr) == fields[directive], (s_path.name, directive)
        # derived counts: allocation covers next_free_vgpr / next_free_sgpr (+6 extra on gfx942)
        nfv, nfs = fields[".amdhsa_next_free_vgpr"], fields[".amdhsa_next_free_sgpr"]
        assert kd.granulated_workitem_vgpr_count == KernelDescriptor.granulate_vgprs(nfv)
        assert kd.granulated_wavefront_sgpr_count == KernelDescriptor.granulate_sgprs(nfs + 6)
        assert kd.accum_offset_vgprs == fields[".amdhsa_accum_offset"]
        checked += 1
    assert checked >= 30


def test_descriptor_from_clang_directives(corpus_dir):
    """Oracle: the descriptor llvm-mc built from each clang .amdhsa_kernel block (in K.co)
    equals KernelDescriptor.from_directives of the same block (entry offset aside)."""
    from asmevo.frontend.asm_parser import parse_asm
    n = 0
    for s_path in sorted(corpus_dir.glob("*.s")):
        m = parse_asm(s_path.read_text(), str(s_path))
        blk = next(it for it in m.items if type(it).__name__ == "AmdhsaKernel")
        got = KernelDescriptor.from_directives(blk.fields)
        want = read_code_object(s_path.with_suffix(".co")).kernels[0].descriptor
        assert got.diff(want) == [("kernel_code_entry_byte_offset", 0, want.kernel_code_entry_byte_offset)], \
            s_path.name
        n += 1
    assert n >= 30
    # to_directives is the inverse for every corpus descriptor that has a directive form
    for path in ALL:
        for k in read_code_object(path).kernels:
            if not k.descriptor.directive_blockers():
                back = KernelDescriptor.from_directives(k.descriptor.to_directives())
                assert [d[0] for d in back.diff(k.descriptor)] == ["kernel_code_entry_byte_offset"], path
    with pytest.raises(ValueError, match="next_free_vgpr"):
        KernelDescriptor.from_directives({".amdhsa_next_free_sgpr": "0"})


def test_descriptor_known_bytes_br24():
    """PITFALLS BR-24 bytes: rsrc1 0x00af0040, rsrc2 0x1394, properties 0x1a, preload 4."""
    b = bytearray(64)
    b[8:12] = bytes.fromhex("10010000")
    b[0x30:0x34] = bytes.fromhex("4000af00")
    b[0x34:0x38] = bytes.fromhex("94130000")
    b[0x38:0x3a] = bytes.fromhex("1a00")
    b[0x3a:0x3c] = bytes.fromhex("0400")
    kd = KernelDescriptor.from_bytes(bytes(b))
    assert kd.kernarg_size == 0x110
    assert kd.user_sgpr_count == 10
    assert kd.granulated_wavefront_sgpr_count == 1
    assert kd.enable_sgpr_dispatch_ptr and kd.enable_sgpr_kernarg_segment_ptr and kd.enable_sgpr_dispatch_id
    assert kd.kernarg_preload_spec_length == 4
    assert kd.implied_user_sgprs == 10
    assert kd.to_bytes() == bytes(b)


def test_descriptor_every_field_editable():
    kd = KernelDescriptor()
    for name in FIELD_NAMES:
        if name == "reserved1":
            continue
        k2 = kd.copy()
        setattr(k2, name, 1)
        b = k2.to_bytes()
        assert sum(bin(x).count("1") for x in b) == 1, name
        assert KernelDescriptor.from_bytes(b).diff(kd) == [(name, 1, 0)]
    with pytest.raises(ValueError):
        KernelDescriptor(user_sgpr_count=32).to_bytes()
    with pytest.raises(CodeObjectError):
        KernelDescriptor.from_bytes(b"\0" * 63)


def test_metadata_warnings_aiter(corpus_dir):
    p = corpus_dir / "aiter/gfx942/topksoftmax/topksoftmax_4x128x4.co"
    co = read_code_object(p)
    assert co.code_object_version == 6
    assert co.metadata.version == (1, 0)
    km = co.kernels[0].metadata
    assert km.kernarg_segment_size == 128 and co.kernels[0].descriptor.kernarg_size == 0
    assert km.reqd_workgroup_size == (256, 1, 1)
    assert any("kernarg_size is 0" in w for w in co.warnings)
    assert any("amdhsa.version is 1.0" in w for w in co.warnings)
    assert co.kernels[0].descriptor.accum_offset_vgprs == 24  # LAUNCH.md: accum_offset 24


def test_metadata_vadd(corpus_dir):
    co = read_code_object(corpus_dir / "vadd_f32.co")
    km = co.kernels[0].metadata
    assert (km.name, km.symbol, km.kernarg_segment_size) == ("vadd_f32", "vadd_f32.kd", 28)
    assert [(a.offset, a.size, a.value_kind) for a in km.args] == [
        (0, 8, "global_buffer"), (8, 8, "global_buffer"), (16, 8, "global_buffer"), (24, 4, "by_value")]
    assert km.args[0].type_name == "float*" and km.args[0].address_space == "global"
    assert (km.sgpr_count, km.vgpr_count, km.agpr_count) == (14, 8, 0)
    assert co.warnings == []
    assert co.target_id == "amdgcn-amd-amdhsa--gfx942"
    assert co.xnack == "any" and co.sramecc == "any"
    assert to_yaml(co.metadata.raw).startswith("---\namdhsa.kernels:\n")


def test_metadata_bad_sizes_warn():
    import msgpack
    raw = {"amdhsa.version": [1, 2], "amdhsa.kernels": [{
        ".name": "k", ".symbol": "k.kd", ".kernarg_segment_size": 8,
        ".args": [{".offset": 0, ".size": 8, ".value_kind": "global_buffer"},
                  {".offset": 4, ".size": 0, ".value_kind": "by_value"},
                  {".offset": 8, ".size": 4, ".value_kind": "global_buffer"}]}]}
    md = decode_metadata(msgpack.packb(raw))
    text = " ".join(md.warnings)
    assert "size 0" in text and "overlaps" in text
    assert "(global_buffer) has size 4, expected 8" in text
    assert "end at byte 12 but .kernarg_segment_size is 8" in text
    with pytest.raises(CodeObjectError, match="MessagePack"):
        decode_metadata(b"\xc1")


# -- bad inputs ------------------------------------------------------------------

@pytest.fixture(scope="module")
def vadd(corpus_dir):
    return (corpus_dir / "vadd_f32.co").read_bytes()


@pytest.mark.parametrize("cut", [0, 3, 40, 63, 100, 0x300, 0x6f0, 0xc00, 0xd60])
def test_truncated(tmp_path, vadd, cut):
    p = tmp_path / "t.co"
    p.write_bytes(vadd[:cut])
    with pytest.raises(CodeObjectError) as e:
        read_code_object(p)
    assert e.value.file == str(p)
    assert "expected" in e.value.message
    assert e.value.offset is not None


@pytest.mark.parametrize("offset,value", [(0, 0x00), (4, 1), (5, 2), (18, 0x3e), (48, 0x3f),
                                          (7, 0), (58, 0x20), (60, 0xff), (62, 0xff), (40, 0xff)])
def test_corrupt_header(tmp_path, vadd, offset, value):
    b = bytearray(vadd)
    b[offset] = value
    p = tmp_path / "c.co"
    p.write_bytes(bytes(b))
    with pytest.raises(CodeObjectError) as e:
        read_code_object(p)
    assert e.value.offset is not None and "expected" in e.value.message


def test_not_elf_and_missing(tmp_path):
    p = tmp_path / "x.co"
    p.write_text("hello")
    with pytest.raises(CodeObjectError, match="not an ELF"):
        read_code_object(p)
    with pytest.raises(CodeObjectError, match="no such file"):
        read_code_object(tmp_path / "missing.co")


def test_x86_elf(tmp_path):
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no host C compiler")
    src = tmp_path / "a.c"
    src.write_text("int f(int x) { return x + 1; }\n")
    obj = tmp_path / "a.o"
    subprocess.run([cc, "-c", str(src), "-o", str(obj)], check=True)
    with pytest.raises(CodeObjectError, match=r"expected an AMDGPU gfx942 code object, got .*x86"):
        read_code_object(obj)


def test_gfx90a_object(tmp_path, corpus_dir):
    clang = require_tool("clang")   # skips only when clang is not installed
    out = tmp_path / "k.co"
    subprocess.run([clang, "-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx90a",
                    "-nogpulib", "-o", str(out), str(corpus_dir / "vadd_f32.cl")], check=True)
    with pytest.raises(CodeObjectError, match="expected an AMDGPU gfx942 code object, got gfx90a"):
        read_code_object(out)


def test_corrupt_section_and_note(tmp_path, vadd):
    import struct
    shoff = struct.unpack_from("<Q", vadd, 40)[0]
    b = bytearray(vadd)
    struct.pack_into("<Q", b, shoff + 7 * 64 + 32, 0x100000)  # .text sh_size
    p = tmp_path / "s.co"
    p.write_bytes(bytes(b))
    with pytest.raises(CodeObjectError, match="section 7") as e:
        read_code_object(p)
    assert e.value.offset == shoff + 7 * 64 + 24
    b = bytearray(vadd)
    struct.pack_into("<I", b, 0x200 + 4, 0x10000)  # note descsz
    p.write_bytes(bytes(b))
    with pytest.raises(CodeObjectError, match="note") as e:
        read_code_object(p)
    assert e.value.offset == 0x200
    b = bytearray(vadd)
    b[0x200 + 12 + 8] ^= 0xFF  # first msgpack byte of the metadata
    p.write_bytes(bytes(b))
    with pytest.raises(CodeObjectError, match="NT_AMDGPU_METADATA"):
        read_code_object(p)

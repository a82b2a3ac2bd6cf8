"""Kernel descriptor and metadata of modules loaded from assembly text (.s / .amdgcn).

Oracles: the corpus code objects built from the same sources (K.s -> K.co, K.amdgcn ->
K.hsaco), and llvm-mc 19 itself (what it encodes for an ``.amdhsa_kernel`` block, which
YAML scalars it stores as which msgpack types, which blocks it rejects).
"""

from __future__ import annotations

import pytest

from asmevo.backend.assemble import assemble_bytes
from asmevo.backend.rebuild import write_code_object
from asmevo.errors import AsmevoError, AsmSyntaxError
from asmevo.frontend.codeobject import read_code_object
from asmevo.frontend.descriptor import KernelDescriptor
from asmevo.frontend.loader import load
from asmevo.frontend.metadata import decode_metadata, iter_notes, read_yaml_metadata

from corpus_paths import CORPUS

pytestmark = pytest.mark.corpus


def _pairs():
    if CORPUS is None:
        return []
    out = [(s, s.with_suffix(".co")) for s in sorted(CORPUS.glob("*.s"))]
    out += [(s, s.with_suffix(".hsaco")) for s in sorted((CORPUS / "triton").glob("*.amdgcn"))]
    return out


PAIRS = _pairs()


def _note_metadata(data: bytes) -> dict:
    import io

    from elftools.elf.elffile import ELFFile
    elf = ELFFile(io.BytesIO(data))
    for s in elf.iter_sections():
        if s.header.sh_type == "SHT_NOTE":
            for n in iter_notes(s.data()):
                if n.owner == "AMDGPU" and n.type == 32:
                    return decode_metadata(n.desc).raw
    raise AssertionError("no NT_AMDGPU_METADATA note")


@pytest.mark.parametrize("src,obj", PAIRS, ids=lambda p: p.name)
def test_text_and_code_object_give_the_same_abi(src, obj):
    """load(K.s) and load(K.co) agree on every descriptor field (entry offset aside: it is a
    link-time value) and on every kernel's metadata entry, values and Python types."""
    a, b = load(src), load(obj)
    kb = {k.name: k for k in b.kernels if k.is_kernel and k.descriptor is not None}
    assert kb
    for name, k in kb.items():
        t = a.kernel(name)
        assert t.descriptor is not None and t.metadata is not None, name
        diff = [d for d in t.descriptor.diff(k.descriptor) if d[0] != "kernel_code_entry_byte_offset"]
        assert diff == [], (name, diff)
        assert t.descriptor.kernel_code_entry_byte_offset == 0
        assert t.metadata == k.metadata
        # same types too (True != 1 would compare equal in Python)
        assert repr(t.metadata) == repr(k.metadata)


@pytest.mark.parametrize("rel", [str(s.relative_to(CORPUS)) for s, _ in PAIRS])
def test_text_abi_equals_what_llvm_mc_assembles(corpus_dir, rel):
    """Oracle llvm-mc: assembling the file gives the descriptor bytes and the metadata note
    that the loader computed from the text (every corpus source: ~0.25 s each)."""
    path = corpus_dir / rel
    m = load(path)
    data = assemble_bytes(path.read_text(), filename=str(path))
    import tempfile
    with tempfile.NamedTemporaryFile(suffix=".co") as f:
        f.write(data)
        f.flush()
        co = read_code_object(f.name)
    note = _note_metadata(data)
    for ck in co.kernels:
        k = m.kernel(ck.name)
        got = k.descriptor.copy()
        got.kernel_code_entry_byte_offset = ck.descriptor.kernel_code_entry_byte_offset
        assert got.to_bytes() == ck.descriptor_bytes, ck.name
        entry = next(e for e in note["amdhsa.kernels"] if e[".name"] == ck.name)
        assert k.metadata == entry and repr(k.metadata) == repr(entry)


# Scalars whose msgpack type llvm-mc 19 decides by its own rules (quoting ignored).
_SCALARS = ["1", "'1'", '"2"', "-3", "0x10", "'0x10'", "010", "0o17", "0b101", "-0",
            "18446744073709551615", "yes", "on", "off", "y", "n", "True", "FALSE", "'true'",
            "1.5", "1e3", "+5", "2.", "null", "~", "1_000", ".inf", "1:2", "abc def", "'it''s'",
            "global_buffer", "'float*'", "", "''", '""', "[]", "{}", "[1, '2', x]"]


def test_yaml_scalar_types_match_llvm_mc(tmp_path):
    """Every scalar above, read by read_yaml_metadata, has the value and type llvm-mc stores."""
    body = "\n".join(f"  k{i}: {v}" for i, v in enumerate(_SCALARS))
    yaml_text = (f"---\namdhsa.kernels: []\nasmevo.probe:\n{body}\n"
                 "amdhsa.target: amdgcn-amd-amdhsa--gfx942\namdhsa.version: [1, 2]\n...\n")
    src = ('\t.amdgcn_target "amdgcn-amd-amdhsa--gfx942"\n\t.amdhsa_code_object_version 5\n'
           f"\t.amdgpu_metadata\n{yaml_text}\t.end_amdgpu_metadata\n")
    want = _note_metadata(assemble_bytes(src))
    got = read_yaml_metadata(yaml_text)
    assert set(want["asmevo.probe"]) == set(got["asmevo.probe"]) == {f"k{i}" for i in range(len(_SCALARS))}
    for i, v in enumerate(_SCALARS):
        w, g = want["asmevo.probe"][f"k{i}"], got["asmevo.probe"][f"k{i}"]
        assert (g, type(g)) == (w, type(w)), v
    assert got == want


def test_bad_metadata_yaml_located(tmp_path, corpus_dir):
    text = (corpus_dir / "vadd_f32.s").read_text()
    lines = text.splitlines(keepends=True)
    i = next(n for n, ln in enumerate(lines) if ln.strip() == ".amdgpu_metadata")
    lines.insert(i + 3, "  - .bad: [unclosed\n")
    p = tmp_path / "bad.s"
    p.write_text("".join(lines))
    with pytest.raises(AsmSyntaxError, match="malformed .amdgpu_metadata YAML") as e:
        load(p)
    assert e.value.file == str(p) and e.value.line is not None and i + 2 <= e.value.line <= i + 6


# -- BR-28: .amdhsa_reserve_xnack_mask must agree with the target id ---------------------

_XNACK_SRC = """\t.amdgcn_target "amdgcn-amd-amdhsa--gfx942{feat}"
\t.amdhsa_code_object_version 5
\t.text
\t.globl k
\t.p2align 8
\t.type k,@function
k:
\ts_endpgm
\t.section .rodata,"a",@progbits
\t.p2align 6
\t.amdhsa_kernel k
\t\t.amdhsa_next_free_vgpr 1
\t\t.amdhsa_next_free_sgpr 0
\t\t.amdhsa_accum_offset 4
\t\t.amdhsa_reserve_xnack_mask {mask}
\t.end_amdhsa_kernel
"""


@pytest.mark.parametrize("feat,mask", [("", 1), ("", 0), (":xnack-", 1), (":xnack-", 0),
                                       (":xnack+", 1), (":xnack+", 0), (":sramecc+:xnack-", 1)])
def test_br28_reserve_xnack_mask_vs_target(tmp_path, feat, mask):
    """PITFALLS BR-28: llvm-mc rejects a mask that does not match the target id's xnack
    setting; the loader rejects exactly the same blocks, with the block's line."""
    src = _XNACK_SRC.format(feat=feat, mask=mask)
    try:
        assemble_bytes(src)
        mc_ok = True
    except AsmSyntaxError as e:
        assert "does not match target id" in str(e)
        mc_ok = False
    p = tmp_path / "x.s"
    p.write_text(src)
    if mc_ok:
        assert load(p).kernel("k").descriptor is not None
    else:
        with pytest.raises(AsmSyntaxError, match="reserve_xnack_mask .* does not match target id") as e:
            load(p)
        assert e.value.line == 11
    assert mc_ok == (mask == (0 if "xnack-" in feat else 1))


def test_br28_writer_derives_the_mask_from_the_target(tmp_path):
    """Disassembling an xnack- object and rewriting its descriptor (a register-count change)
    gives a block llvm-mc accepts: the writer never copies a fixed reserve_xnack_mask."""
    src = _XNACK_SRC.format(feat=":xnack-", mask=0)
    co = tmp_path / "x.co"
    co.write_bytes(assemble_bytes(src))
    from asmevo.frontend.disasm import disassemble
    m = disassemble(co)
    k = m.kernel("k")
    k.descriptor.set_register_counts(num_vgprs=40)
    out = tmp_path / "y.co"
    write_code_object(m, str(out), allow_patch=False)
    new = read_code_object(out)
    assert new.target_id == "amdgcn-amd-amdhsa--gfx942:xnack-"
    assert new.kernels[0].descriptor.vgpr_count == 40


# -- rebuilding text modules --------------------------------------------------------------

def test_text_module_descriptor_and_metadata_edits_reach_the_object(tmp_path, corpus_dir):
    """Kernel.descriptor / Kernel.metadata edits on a module loaded from .s are written out."""
    m = load(corpus_dir / "vadd_f32.s")
    k = m.kernel("vadd_f32")
    k.descriptor.float_round_mode_32 = 2
    k.descriptor.group_segment_fixed_size = 512
    k.metadata[".group_segment_fixed_size"] = 512
    k.metadata[".max_flat_workgroup_size"] = 128
    out = tmp_path / "e.co"
    write_code_object(m, str(out))
    co = read_code_object(out)
    kd = co.kernels[0].descriptor
    assert kd.float_round_mode_32 == 2 and kd.group_segment_fixed_size == 512
    md = co.kernels[0].metadata
    assert md.group_segment_fixed_size == 512 and md.max_flat_workgroup_size == 128
    assert not [w for w in co.warnings if "group_segment" in w]


def test_unchanged_text_module_keeps_its_block(tmp_path, corpus_dir):
    """Writing an unedited text module keeps the .amdhsa_kernel block as written."""
    m = load(corpus_dir / "triton" / "tr_vadd.amdgcn")
    before = dict(m.amdhsa_kernel("tr_vadd").fields)
    out = tmp_path / "v.co"
    write_code_object(m, str(out))
    assert m.amdhsa_kernel("tr_vadd").fields == before
    want = read_code_object(corpus_dir / "triton" / "tr_vadd.hsaco").kernels[0].descriptor
    got = read_code_object(out).kernels[0].descriptor
    assert [d[0] for d in got.diff(want)] in ([], ["kernel_code_entry_byte_offset"])


def test_amdhsa_block_errors_located(tmp_path):
    src = _XNACK_SRC.format(feat="", mask=1).replace("\t\t.amdhsa_accum_offset 4\n", "")
    p = tmp_path / "n.s"
    p.write_text(src)
    with pytest.raises(AsmSyntaxError, match="accum_offset is required") as e:
        load(p)
    assert e.value.line == 11
    # an expression is left to llvm-mc: no descriptor, no error
    p.write_text(_XNACK_SRC.format(feat="", mask=1).replace(".amdhsa_next_free_vgpr 1",
                                                            ".amdhsa_next_free_vgpr 1+0"))
    assert load(p).kernel("k").descriptor is None
    with pytest.raises(ValueError):
        KernelDescriptor.from_directives({".amdhsa_next_free_vgpr": "1", ".amdhsa_next_free_sgpr": "0",
                                          ".amdhsa_accum_offset": "4",
                                          ".amdhsa_user_sgpr_kernarg_segment_ptr": "1",
                                          ".amdhsa_user_sgpr_count": "1"})
    assert isinstance(AsmSyntaxError("x"), AsmevoError)


def test_text_module_register_growth_reaches_metadata(tmp_path, corpus_dir):
    """New registers in a text module raise the block, the descriptor and the metadata counts
    (.vgpr_count / .sgpr_count incl. the 6 extra SGPRs, as in the binary path)."""
    from asmevo.frontend.asm_parser import parse_instruction
    m = load(corpus_dir / "vadd_f32.s")
    k = m.kernel("vadd_f32")
    k.insert_before(next(k.instructions()), parse_instruction("v_mov_b32_e32 v40, s50"))
    out = tmp_path / "g.co"
    write_code_object(m, str(out))
    co = read_code_object(out)
    kd, md = co.kernels[0].descriptor, co.kernels[0].metadata
    assert kd.vgpr_count >= 41 and kd.sgpr_count >= 51 + 6
    assert md.vgpr_count == 41 and md.sgpr_count == 51 + 6
    assert k.descriptor.vgpr_count == kd.vgpr_count and k.metadata[".vgpr_count"] == 41
    assert not [w for w in co.warnings if "kernel" in w]


def _dis_params():
    from corpus_paths import corpus_code_objects
    subset = {"vadd_f32.co", "tr_matmul.hsaco", "topksoftmax_4x128x4.co", "allreduce_rmsnorm_N8192.co",
              "fwd_hd128_i8fp8.co"}
    return [pytest.param(p, id=str(p.relative_to(CORPUS)),
                         marks=() if p.name in subset else pytest.mark.slow)
            for p in corpus_code_objects()]


@pytest.mark.parametrize("path", _dis_params())
def test_disassembly_text_gives_the_same_abi(tmp_path, path):
    """``asmevo dis K.co`` text loaded back has the descriptors and metadata of K.co, also
    where dis wrote them as raw data (AITer: raw ``NAME.kd`` words, raw metadata note).
    Default tier: one object of each form; every corpus object under ``slow``."""
    from asmevo.frontend.disasm import disassemble
    from asmevo.ir import AmdhsaKernel, MetadataBlock, print_module
    m = disassemble(path)
    s = tmp_path / "d.s"
    s.write_text(print_module(m))
    t = load(s)
    kernels = [k for k in m.kernels if k.is_kernel]
    assert kernels
    for k in kernels:
        tk = t.kernel(k.name)
        assert tk.descriptor is not None, k.name
        assert [d for d in tk.descriptor.diff(k.descriptor) if d[0] != "kernel_code_entry_byte_offset"] == []
        assert tk.metadata == k.metadata and repr(tk.metadata) == repr(k.metadata)
    if path.name == "topksoftmax_4x128x4.co":
        assert not any(isinstance(it, AmdhsaKernel) for it in t.items)  # the raw-data path was used
    if path.name == "allreduce_rmsnorm_N8192.co":
        assert not any(isinstance(it, MetadataBlock) for it in t.items)


def test_raw_note_text_module_metadata_edit(tmp_path, corpus_dir):
    """A dis text whose metadata is the raw note (AITer): a Kernel.metadata edit on the loaded
    text reaches the rebuilt object's note."""
    from asmevo.frontend.disasm import disassemble
    from asmevo.ir import MetadataBlock, print_module
    m = disassemble(corpus_dir / "aiter/gfx942/allreduce_rmsnorm_N8192.co")
    assert not any(isinstance(it, MetadataBlock) for it in m.items)
    s = tmp_path / "a.s"
    s.write_text(print_module(m))
    t = load(s)
    k = next(k for k in t.kernels if k.is_kernel)
    k.metadata[".max_flat_workgroup_size"] = 64
    out = tmp_path / "a.co"
    write_code_object(t, str(out))
    co = read_code_object(out)
    assert co.kernels[0].metadata.max_flat_workgroup_size == 64
    assert co.metadata.raw["amdhsa.kernels"][0] == k.metadata


def test_to_yaml_nil_and_empty_round_trip():
    from asmevo.frontend.metadata import to_yaml
    doc = {"amdhsa.kernels": [{".name": "k", ".x": None, ".y": [], ".z": {}, ".w": "a b"}]}
    assert read_yaml_metadata(to_yaml(doc)) == doc

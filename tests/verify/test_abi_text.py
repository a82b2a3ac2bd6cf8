"""ABI facts of modules parsed without ``fill_text_abi`` (the ABI layer builds them with the
frontend's functions): what llvm-mc rejects is ``rejected-abi`` with the frontend's message,
and metadata YAML is typed the way llvm-mc types it.  llvm-mc itself is the oracle."""

import re
import subprocess

import pytest

from asmevo.errors import AsmSyntaxError
from asmevo.frontend.descriptor import KernelDescriptor
from asmevo.frontend.loader import load
from asmevo.verify import verify
from asmevo.verify.abi import compare_abi, kernel_facts
from asmevo.verify.verdict import Status

from .helpers import parse, sub1

DISPATCH_ON = (r"\.amdhsa_user_sgpr_dispatch_ptr 0", ".amdhsa_user_sgpr_dispatch_ptr 1")


@pytest.fixture
def vadd(corpus_dir):
    return (corpus_dir / "vadd_f32.s").read_text()


def mc_accepts(llvm_mc, text, tmp_path):
    """Whether llvm-mc 19 assembles ``text`` for gfx942, and its diagnostics."""
    src = tmp_path / "mc.s"
    src.write_text(text)
    r = subprocess.run([llvm_mc, "-triple", "amdgcn-amd-amdhsa", "-mcpu=gfx942", "-filetype=obj",
                        str(src), "-o", str(tmp_path / "mc.o")], capture_output=True, text=True)
    return r.returncode == 0, r.stderr


def note_entry(text, tmp_path, name="c"):
    """The kernel's entry of the NT_AMDGPU_METADATA note llvm-mc writes for ``text``."""
    from asmevo.backend.assemble import assemble
    p = tmp_path / f"{name}.co"
    assemble(text, str(p))
    return load(str(p)).code_object.metadata.kernels[0].raw


def test_block_llvm_mc_rejects_is_rejected_abi(vadd, llvm_mc, tmp_path):
    # dispatch_ptr makes 4 user SGPRs while the block still says .amdhsa_user_sgpr_count 2
    cand = sub1(vadd, *DISPATCH_ON)
    ok, err = mc_accepts(llvm_mc, cand, tmp_path)
    assert not ok and "user_sgpr_count smaller" in err
    v = compare_abi(parse(vadd, "o.s"), parse(cand, "cand.s"))
    assert v.status is Status.REJECTED_ABI
    e = v.evidence[0]
    assert e.kind == "invalid-abi-text"
    block_line = cand.splitlines().index("\t.amdhsa_kernel vadd_f32") + 1
    assert (e.data["file"], e.data["line"], e.data["column"]) == ("cand.s", block_line, 1)
    # the frontend's own message: what loading the file reports
    path = tmp_path / "cand.s"
    path.write_text(cand)
    with pytest.raises(AsmSyntaxError) as exc:
        load(str(path))
    assert exc.value.message == e.data["message"]
    assert f"cand.s:{block_line}:1: error: {e.data['message']}" in v.message
    # the descriptor it cannot build is absent, not the lenient one
    f = kernel_facts(parse(cand, "cand.s"))["vadd_f32"]
    assert f.descriptor is None and [x.line for x in f.errors] == [block_line]


def test_rejected_block_verdict_through_the_verifier(vadd):
    # in-memory modules parsed from text are assembled before any layer reads them (verifier
    # version 7): llvm-mc refuses the block, so the candidate does not build
    v = verify(parse(vadd, "o.s"), parse(sub1(vadd, *DISPATCH_ON), "cand.s"), level="static")
    assert v.status is Status.BUILD_FAILED, v.text()
    # the ABI layer itself still names the block (compare_abi reads the parse)
    v = compare_abi(parse(vadd, "o.s"), parse(sub1(vadd, *DISPATCH_ON), "cand.s"))
    assert v.status is Status.REJECTED_ABI
    assert any(e.kind == "invalid-abi-text" for e in v.evidence)


def test_valid_descriptor_change_is_a_field_difference(vadd, llvm_mc, tmp_path):
    cand = sub1(sub1(vadd, *DISPATCH_ON), r"\.amdhsa_user_sgpr_count 2", ".amdhsa_user_sgpr_count 4")
    assert mc_accepts(llvm_mc, cand, tmp_path)[0]
    v = compare_abi(parse(vadd), parse(cand))
    assert v.status is Status.REJECTED_ABI
    assert {(e.kind, e.data.get("field")) for e in v.evidence} == {
        ("descriptor-field", "enable_sgpr_dispatch_ptr"), ("descriptor-field", "user_sgpr_count")}


def test_rejected_original_block_is_not_accepted(vadd):
    bad = sub1(vadd, *DISPATCH_ON)
    v = compare_abi(parse(bad, "o.s"), parse(vadd))
    assert v.status is Status.UNKNOWN_UNSUPPORTED  # descriptor known on one side only
    assert compare_abi(parse(bad, "o.s"), parse(bad)).status is Status.REJECTED_ABI


def test_expression_fields_are_unknown_not_accepted(vadd):
    expr = sub1(vadd, r"\.amdhsa_kernarg_size 28", ".amdhsa_kernarg_size 20+8")
    f = kernel_facts(parse(expr))["vadd_f32"]
    assert f.descriptor is None and f.descriptor_source == "amdhsa-expression" and not f.errors
    assert compare_abi(parse(expr), parse(expr)).status is Status.UNKNOWN_UNSUPPORTED
    other = sub1(vadd, r"\.amdhsa_kernarg_size 28", ".amdhsa_kernarg_size 24+8")
    assert compare_abi(parse(expr), parse(other)).status is Status.UNKNOWN_UNSUPPORTED


def test_abi_descriptor_is_the_frontend_builder(vadd):
    """The ABI layer's descriptor of a text kernel is llvm-mc's (the frontend's)."""
    m = parse(vadd)
    fields = m.amdhsa_kernel("vadd_f32").fields
    assert kernel_facts(m)["vadd_f32"].descriptor == KernelDescriptor.from_directives(fields)
    bad = parse(sub1(vadd, *DISPATCH_ON)).amdhsa_kernel("vadd_f32").fields
    with pytest.raises(ValueError):
        KernelDescriptor.from_directives(bad)

def add_key(text, line):
    return sub1(text, r"^(    \.max_flat_workgroup_size: 256)$", r"\1" + "\n    " + line)


def test_metadata_typed_as_llvm_mc_types_it(vadd, tmp_path):
    # Plain YAML 1.1 reads 1_0 as the integer 10; llvm-mc keeps the string "1_0", so the
    # candidate's note differs from the original's.
    orig, cand = add_key(vadd, ".custom_key: 1_0"), add_key(vadd, ".custom_key: 10")
    assert note_entry(orig, tmp_path, "o")[".custom_key"] == "1_0"
    assert note_entry(cand, tmp_path, "c")[".custom_key"] == 10
    v = compare_abi(parse(orig), parse(cand))
    assert v.status is Status.REJECTED_ABI
    assert [(e.kind, e.data["key"]) for e in v.evidence] == [("metadata-key", ".custom_key")]
    # ...and llvm-mc ignores quoting: '256' is the integer 256, the same note.
    quoted = sub1(vadd, r"\.max_flat_workgroup_size: 256", ".max_flat_workgroup_size: '256'")
    assert note_entry(quoted, tmp_path, "q") == note_entry(vadd, tmp_path, "v")
    assert compare_abi(parse(vadd), parse(quoted)).status is Status.ACCEPTED


def test_malformed_metadata_yaml_is_rejected_abi(vadd, llvm_mc, tmp_path):
    cand = add_key(vadd, ".custom_key: [1, 2")
    assert not mc_accepts(llvm_mc, cand, tmp_path)[0]
    v = compare_abi(parse(vadd, "o.s"), parse(cand, "cand.s"))
    assert v.status is Status.REJECTED_ABI
    e = v.evidence[0]
    assert e.kind == "invalid-abi-text" and e.data["file"] == "cand.s"
    assert re.search(r"malformed \.amdgpu_metadata YAML", e.message)
    key_line = cand.splitlines().index("    .custom_key: [1, 2") + 1
    assert key_line <= e.data["line"] <= key_line + 2

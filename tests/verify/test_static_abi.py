"""Static checks and ABI preservation on corpus kernels with targeted edits."""

import pytest

from asmevo.frontend.descriptor import KernelDescriptor
from asmevo.verify.abi import compare_abi, kernel_facts
from asmevo.verify.static import (AnalysisUnavailable, check_descriptor_counts, check_register_bounds,
                                  check_static, lds_requirement,
                                  scratch_requirement)
from asmevo.verify import static as static_mod
from asmevo.verify.verdict import Status

from .helpers import parse, sub1
from corpus_paths import CORPUS, corpus_code_objects


@pytest.fixture
def vadd(corpus_dir):
    return (corpus_dir / "vadd_f32.s").read_text()


@pytest.fixture
def mfma(corpus_dir):
    return (corpus_dir / "mfma_32x32x8_f16.s").read_text()


def st(orig_text, cand_text):
    return check_static(parse(orig_text, "o.s"), parse(cand_text), memory_order=False)


def test_abi_descriptor_matches_clang_comments(mfma, vadd):
    # clang's "; VGPRBlocks: 3 / SGPRBlocks: 1" comments are the oracle.
    kd = kernel_facts(parse(mfma))["mfma_32x32x8_f16"].descriptor
    assert (kd.granulated_workitem_vgpr_count, kd.granulated_wavefront_sgpr_count) == (3, 1)
    assert kd.accum_offset_vgprs == 16 and kd.vgpr_count == 32
    kd = kernel_facts(parse(vadd))["vadd_f32"].descriptor
    assert (kd.granulated_workitem_vgpr_count, kd.granulated_wavefront_sgpr_count) == (0, 1)


def test_unchanged_kernel_passes(vadd, mfma):
    assert st(vadd, vadd).status is Status.ACCEPTED
    assert st(mfma, mfma).status is Status.ACCEPTED


def test_vgpr_beyond_allocation(vadd):
    cand = sub1(vadd, r"v_add_f32_e32 v2, v6, v7", "v_add_f32_e32 v2, v6, v9")
    v = st(vadd, cand)
    assert v.status is Status.REJECTED_REGISTER_BOUNDS
    assert v.evidence[0].data["index"] == 9


def test_vgpr_at_accum_offset_rejected(mfma):
    # v16 is the first AGPR slot of the unified file (accum_offset 16).
    cand = sub1(mfma, r"v_perm_b32 v9, v7, v5, s8", "v_perm_b32 v16, v7, v5, s8")
    assert st(mfma, cand).status is Status.REJECTED_REGISTER_BOUNDS


def test_agpr_beyond_allocation(mfma):
    cand = sub1(mfma, r"v_accvgpr_write_b32 a15, 0", "v_accvgpr_write_b32 a16, 0")
    assert st(mfma, cand).status is Status.REJECTED_REGISTER_BOUNDS


def test_sgpr_reservation_counts(vadd):
    # 16 SGPRs allocated, 6 reserved (VCC, XNACK, FLAT_SCRATCH): s9 is the last one that fits.
    ok = sub1(vadd, r"s_load_dword s3, s\[0:1\], 0x18", "s_load_dword s9, s[0:1], 0x18")
    assert check_register_bounds(kernel_facts(parse(ok))["vadd_f32"]) == []
    # ...but it is beyond .amdhsa_next_free_sgpr 8, which the register-budget analysis enforces
    v = st(vadd, ok)
    assert v.status is Status.REJECTED_REGISTER_BOUNDS and v.evidence[0].kind == "budget-sgpr"
    bad = sub1(vadd, r"s_load_dword s3, s\[0:1\], 0x18", "s_load_dword s10, s[0:1], 0x18")
    v = st(vadd, bad)
    assert v.status is Status.REJECTED_REGISTER_BOUNDS and v.evidence[0].data["index"] == 10


def test_shrunk_descriptor_rejected(mfma, vadd):
    # 24 unified registers allocated: a15 sits at 16 + 15 = 31.
    cand = sub1(mfma, r"\.amdhsa_next_free_vgpr 32", ".amdhsa_next_free_vgpr 24")
    v = st(mfma, cand)
    assert v.status is Status.REJECTED_REGISTER_BOUNDS and v.evidence[0].data["file"] == "a"
    # vadd: 8 VGPRs is one granule; ACCUM_OFFSET 4 without AGPRs aliases nothing, so the
    # allocation still holds v7 -- only the register-budget analysis's stricter
    # .amdhsa_next_free_vgpr rule rejects it.
    cand = sub1(vadd, r"\.amdhsa_next_free_vgpr 8", ".amdhsa_next_free_vgpr 4")
    cand = sub1(cand, r"\.amdhsa_accum_offset 8", ".amdhsa_accum_offset 4")
    assert check_register_bounds(kernel_facts(parse(cand))["vadd_f32"]) == []
    v = st(vadd, cand)
    assert v.status is Status.REJECTED_REGISTER_BOUNDS and v.evidence[0].kind == "budget-vgpr"


def test_relative_rules_tolerate_what_the_original_does(mfma):
    # An original that aliases v16 with a0 may keep doing so; a candidate may not add it.
    orig = sub1(mfma, r"v_perm_b32 v9, v7, v5, s8", "v_perm_b32 v16, v7, v5, s8")
    assert st(orig, orig).status is Status.ACCEPTED
    assert st(mfma, orig).status is Status.REJECTED_REGISTER_BOUNDS


def test_metadata_under_reporting_rejected(vadd):
    cand = sub1(vadd, r"\.vgpr_count:\s+8", ".vgpr_count: 6")
    v = st(vadd, cand)
    assert v.status is Status.REJECTED_DESCRIPTOR_COUNTS
    assert v.evidence[0].kind == "metadata-count"


def test_entry_sgprs_must_fit(vadd):
    # 2 user + 1 system SGPR + 6 reserved = 9 > 8 allocated when next_free_sgpr is 1 (BR-24).
    cand = sub1(vadd, r"\.amdhsa_next_free_sgpr 8", ".amdhsa_next_free_sgpr 1")
    f = kernel_facts(parse(cand))["vadd_f32"]
    assert f.descriptor.sgpr_count == 8
    ev = check_descriptor_counts(f)
    assert [e.kind for e in ev] == ["entry-sgprs"]
    ok = sub1(vadd, r"\.amdhsa_next_free_sgpr 8", ".amdhsa_next_free_sgpr 3")
    assert check_descriptor_counts(kernel_facts(parse(ok))["vadd_f32"]) == []


def test_lds_requirement_and_size(corpus_dir):
    text = (corpus_dir / "transpose_lds.s").read_text()
    m = parse(text)
    need, at = lds_requirement(m.kernels[0])
    kd = kernel_facts(m)[m.kernels[0].name].descriptor
    assert 0 < need <= kd.group_segment_fixed_size
    small = sub1(text, r"\.amdhsa_group_segment_fixed_size \d+", ".amdhsa_group_segment_fixed_size 0")
    v = check_static(m, parse(small), memory_order=False)
    assert v.status is Status.REJECTED_DESCRIPTOR_COUNTS and v.evidence[0].kind == "lds-size"


def test_scratch_requirement(corpus_dir):
    text = (corpus_dir / "sgemm_tiled_O0.s").read_text()
    m = parse(text)
    need, _ = scratch_requirement(m.kernels[0])
    assert need > 0
    kd = kernel_facts(m)[m.kernels[0].name].descriptor
    assert need <= kd.private_segment_fixed_size


def test_missing_analysis_is_unknown_not_accepted(vadd, monkeypatch):
    def boom(kind, module, kernel):
        raise AnalysisUnavailable("not here")
    monkeypatch.setattr(static_mod, "_violations", boom)
    v = check_static(parse(vadd), parse(vadd), memory_order=True)
    assert v.status is Status.UNKNOWN_UNSUPPORTED


def test_new_violation_rejected_old_one_forgiven(vadd, monkeypatch):
    def fake(kind, module, kernel):
        if kind != "waitcnt":
            return []
        n = sum(1 for i in kernel.instructions() if i.opcode == "v_add_f32_e32")
        return [{"message": "use of v6 before vmcnt", "signature": ("v_add_f32_e32", "v6")}] * n
    monkeypatch.setattr(static_mod, "_violations", fake)
    assert check_static(parse(vadd), parse(vadd)).status is Status.ACCEPTED
    cand = vadd.replace("global_store_dword v[0:1], v2, off",
                        "v_add_f32_e32 v2, v6, v7\n\tglobal_store_dword v[0:1], v2, off")
    assert check_static(parse(vadd), parse(cand)).status is Status.REJECTED_WAITCNT


def test_abi_same(vadd):
    assert compare_abi(parse(vadd), parse(vadd)).status is Status.ACCEPTED


def test_abi_register_counts_may_change(vadd):
    cand = sub1(vadd, r"\.amdhsa_next_free_vgpr 8", ".amdhsa_next_free_vgpr 16")
    cand = sub1(cand, r"\.vgpr_count:\s+8", ".vgpr_count: 16")
    assert compare_abi(parse(vadd), parse(cand)).status is Status.ACCEPTED


@pytest.mark.parametrize("pattern,repl,kind", [
    (r"\.amdhsa_kernarg_size 28", ".amdhsa_kernarg_size 32", "descriptor-field"),
    (r"\.amdhsa_system_sgpr_workgroup_id_y 0", ".amdhsa_system_sgpr_workgroup_id_y 1", "descriptor-field"),
    (r"\.amdhsa_system_vgpr_workitem_id 0", ".amdhsa_system_vgpr_workitem_id 1", "descriptor-field"),
    # 4 implied user SGPRs > .amdhsa_user_sgpr_count 2: llvm-mc rejects the block
    (r"\.amdhsa_user_sgpr_dispatch_ptr 0", ".amdhsa_user_sgpr_dispatch_ptr 1", "invalid-abi-text"),
    (r"\.amdhsa_ieee_mode 1", ".amdhsa_ieee_mode 0", "descriptor-field"),
    (r"\.offset:         24", ".offset:         20", "metadata-key"),
    (r"\.kernarg_segment_size: 28", ".kernarg_segment_size: 32", "metadata-key"),
])
def test_abi_changes_rejected(vadd, pattern, repl, kind):
    v = compare_abi(parse(vadd), parse(sub1(vadd, pattern, repl)))
    assert v.status is Status.REJECTED_ABI
    assert v.evidence[0].kind == kind


def test_abi_renamed_kernel(vadd):
    cand = vadd.replace("vadd_f32", "vadd_g32")
    v = compare_abi(parse(vadd), parse(cand))
    assert v.status is Status.REJECTED_ABI and v.evidence[0].kind == "kernel-symbols"


def test_descriptor_user_count_default():
    kd = KernelDescriptor.from_directives({".amdhsa_user_sgpr_kernarg_segment_ptr": "1",
                                          ".amdhsa_next_free_vgpr": "9", ".amdhsa_next_free_sgpr": "10",
                                          ".amdhsa_accum_offset": "12"})
    assert kd.user_sgpr_count == 2
    assert kd.granulated_workitem_vgpr_count == 1 and kd.granulated_wavefront_sgpr_count == 1


def test_every_corpus_code_object_passes_against_itself(corpus_dir):
    """No false rejection on real kernels (clang, Triton, hand-written AITer)."""
    from asmevo.frontend.loader import load
    from corpus_paths import corpus_code_objects
    bad = []
    for p in corpus_code_objects():
        m = load(str(p))
        for v in (check_static(m, m, memory_order=False), compare_abi(m, m)):
            if not v.accepted:
                bad.append(f"{p.name}: {v.message}")
    assert bad == []


def test_new_read_of_an_uninitialised_register(vadd):
    # v6 is read before any write and not initialised by the ABI: the emulator would read 0.
    cand = sub1(vadd, r"s_load_dword s3, s\[0:1\], 0x18", "v_mov_b32_e32 v7, v6\n\ts_load_dword s3, s[0:1], 0x18")
    v = st(vadd, cand)
    assert v.status is Status.REJECTED_ABI and v.evidence[0].kind == "undefined-at-entry"
    assert v.evidence[0].data["registers"] == [["v", 6]]


def test_changed_constant_data_rejected(vadd):
    cand = vadd.replace("\t.long\t500                             ; 0x1f4", "\t.long\t501")
    assert cand != vadd
    v = compare_abi(parse(vadd), parse(cand))
    assert v.status is Status.REJECTED_ABI and v.evidence[0].kind == "data-directives"


def test_changed_rodata_in_code_object(corpus_dir, tmp_path, llvm_mc):
    from asmevo.backend.assemble import assemble
    from asmevo.frontend.loader import load
    text = (corpus_dir / "vadd_f32.s").read_text()
    p = tmp_path / "c.co"
    assemble(text.replace("\t.long\t500  ", "\t.long\t501  "), str(p))
    v = compare_abi(load(str(corpus_dir / "vadd_f32.co")), load(str(p)))
    assert v.status is Status.REJECTED_ABI and v.evidence[0].kind == "data-section"
    q = tmp_path / "same.co"
    assemble(text, str(q))
    assert compare_abi(load(str(corpus_dir / "vadd_f32.co")), load(str(q))).accepted


def test_forgiven_hazards_match_by_wait_states(vadd, monkeypatch):
    """The original's own violations are forgiven only when the candidate's are no worse,
    whatever order the analysis lists them in."""
    om, cm = parse(vadd, "o.s"), parse(vadd, "c.s")
    lists = {}

    def fake(kind, module, kernel):
        if kind != "hazard":
            return []
        return [{"message": f"h{a}", "signature": ("x",), "available": a} for a in lists[id(module)]]
    monkeypatch.setattr(static_mod, "_violations", fake)
    lists[id(om)], lists[id(cm)] = [3, 7], [7, 3]
    assert check_static(om, cm).status is Status.ACCEPTED
    lists[id(cm)] = [7, 2]
    v = check_static(om, cm)
    assert v.status is Status.REJECTED_HAZARD and v.evidence[0].data["available"] == 2
    lists[id(cm)] = [7, 3, 9]
    assert check_static(om, cm).status is Status.REJECTED_HAZARD


def _corpus_ids(paths):
    return [str(p.relative_to(CORPUS)) for p in paths]


def test_the_corpus_sweeps_see_every_code_object(corpus_dir):
    """What the per-code-object sweep below is parametrised over: clang, Triton and AITer,
    all of them."""
    files = corpus_code_objects()
    assert len(files) >= 69, [p.name for p in files]


@pytest.mark.slow
@pytest.mark.parametrize("path", corpus_code_objects(), ids=_corpus_ids(corpus_code_objects()))
def test_every_corpus_code_object_verifies_against_itself(corpus_dir, path):
    """Full static (waitcnt, hazards, budgets) + ABI + z3 of every corpus code object
    against itself: accepted (hand-written kernels' own hazards are forgiven).  Slow tier:
    runs in CI (scripts/test.sh), deselected by --quick.  One test per code object (the
    count is test_the_corpus_sweeps_see_every_code_object's), so that pytest-xdist spreads
    the sweep over its workers."""
    from asmevo.frontend.loader import load
    from asmevo.verify import verify
    m = load(str(path))
    v = verify(m, m, level="z3")
    assert v.accepted, f"{path.name}: {v.status.value}: {v.message}"


def test_descriptor_entry_must_be_the_kernel_symbol(corpus_dir):
    import copy
    from asmevo.frontend.loader import load
    from asmevo.verify.abi import check_entry_points
    m = load(str(corpus_dir / "vadd_f32.co"))
    assert check_entry_points(m) == []
    m2 = copy.copy(m)
    co = copy.copy(m.code_object)
    k = copy.copy(co.kernels[0])
    k.descriptor = k.descriptor.copy()
    k.descriptor.kernel_code_entry_byte_offset += 8   # hardware would skip two instructions
    co.kernels = [k]
    m2.code_object = co
    ev = check_entry_points(m2)
    assert [e.kind for e in ev] == ["entry-point"]

"""Differential testing: comparison rules, edge values, and whole-kernel verdicts on vadd_f32."""

import numpy as np
import pytest

from asmevo.verify.diff import compare_buffer, differential, edge_values, load_harness, trial_inputs
from asmevo.verify.verdict import Status

from .helpers import parse, sub1


def test_edge_values_cover_the_specials():
    f = edge_values(np.float32)
    bits = set(f.view(np.uint32).tolist())
    assert 0x80000000 in bits and 0x7F800000 in bits and 0xFF800000 in bits  # -0, +inf, -inf
    assert 0x00000001 in bits and 0x7FC00001 in bits                          # denormal, NaN payload
    i = edge_values(np.int32)
    assert {0, -1, 2**31 - 1, -2**31} <= set(i.tolist())
    assert {0, 2**32 - 1} <= set(edge_values(np.uint32).tolist())


def test_compare_bit_exact_and_nan_payloads():
    a = np.array([1.0, np.nan, 0.0], np.float32)
    assert compare_buffer(a, a.copy()) is None
    b = a.copy()
    b.view(np.uint32)[1] = 0x7FC00001          # another NaN payload
    mm = compare_buffer(a, b)
    assert mm is not None and mm.index == 1 and mm.count == 1
    c = a.copy()
    c[2] = -0.0
    assert compare_buffer(a, c).index == 2     # -0.0 is not +0.0 bit for bit
    # with a tolerance NaN matches NaN and close values match
    d = np.array([1.0 + 1e-7, np.nan, -0.0], np.float32)
    assert compare_buffer(a, d, (1e-5, 0.0)) is None
    assert compare_buffer(a, np.array([1.1, np.nan, 0], np.float32), (1e-5, 0.0)).index == 0
    # integers are exact even with a tolerance
    assert compare_buffer(np.array([1, 2], np.int32), np.array([1, 3], np.int32), (1.0, 1.0)).index == 1


@pytest.fixture
def vadd(corpus_dir):
    h = load_harness(str(corpus_dir / "manifest.json"), "vadd_f32")
    return h, (corpus_dir / "vadd_f32.s").read_text()


def test_trial_inputs_are_deterministic_and_use_edges(vadd):
    h, _ = vadd
    a1, k1 = trial_inputs(h, 1, 7)
    a2, _ = trial_inputs(h, 1, 7)
    assert k1 == "edge-float"
    assert np.array_equal(a1["a"].view(np.uint32), a2["a"].view(np.uint32))
    assert np.isnan(a1["a"]).any() and np.isinf(a1["a"]).any()
    r, k0 = trial_inputs(h, 0, 7)
    assert k0 == "random" and not np.isnan(r["a"]).any()


def test_identical_accepted(vadd):
    h, t = vadd
    v = differential(parse(t), parse(t), h, trials=3)
    assert v.status is Status.ACCEPTED


def test_output_mismatch_reports_first_difference(vadd):
    h, t = vadd
    c = sub1(t, r"v_add_f32_e32 v2, v6, v7", "v_sub_f32_e32 v2, v6, v7")
    v = differential(parse(t), parse(c), h, trials=3)
    assert v.status is Status.REJECTED_OUTPUT_MISMATCH
    d = v.evidence[0].data
    assert d["trial"] == 0 and d["buffer"] == "c" and d["index"] == 0


def test_float_operand_swap_differs_only_in_nan_payload(vadd):
    # v_add_f32 returns the first NaN operand's payload: swapping operands is visible
    # bit for bit on an edge trial, and invisible with a tolerance.
    h, t = vadd
    c = sub1(t, r"v_add_f32_e32 v2, v6, v7", "v_add_f32_e32 v2, v7, v6")
    v = differential(parse(t), parse(c), h, trials=3)
    assert v.status is Status.REJECTED_OUTPUT_MISMATCH and "nan" in v.message
    assert differential(parse(t), parse(c), h, trials=3, tolerance=(0.0, 0.0)).accepted


def test_stray_write_into_an_input(vadd):
    h, t = vadd
    c = sub1(t, r"global_store_dword v\[0:1\], v2, off", "global_store_dword v[4:5], v2, off")
    v = differential(parse(t), parse(c), h, trials=1)
    assert v.status is Status.REJECTED_STRAY_WRITE


def test_emulation_fault(vadd):
    h, t = vadd
    c = sub1(t, r"global_load_dword v6, v\[4:5\], off", "global_load_dword v6, v[4:5], off offset:-4096")
    v = differential(parse(t), parse(c), h, trials=1)
    assert v.status is Status.REJECTED_EMULATION_FAULT


def test_hang_is_a_fault(vadd):
    h, t = vadd
    c = sub1(t, r"^\.LBB0_2:\n\ts_endpgm", ".LBB0_2:\n\ts_branch .LBB0_2\n\ts_endpgm")
    v = differential(parse(t), parse(c), h, trials=1)
    assert v.status is Status.REJECTED_EMULATION_FAULT and v.evidence[0].kind == "hang"


def test_unemulated_instruction_is_unknown(vadd):
    h, t = vadd
    c = sub1(t, r"s_load_dword s3, s\[0:1\], 0x18",
             "s_load_dword s3, s[0:1], 0x18\n\ts_getreg_b32 s9, hwreg(HW_REG_HW_ID)")
    v = differential(parse(t), parse(c), h, trials=1)
    assert v.status is Status.UNKNOWN_UNSUPPORTED


def test_skipped_lds_initialisation_is_caught(corpus_dir):
    """Jumping over the LDS zero-initialisation is invisible with zero-filled LDS; edge
    trials start LDS with a pattern (hardware LDS is undefined at launch)."""
    h = load_harness(str(corpus_dir / "manifest.json"), "histogram_atomic")
    t = (corpus_dir / "histogram_atomic.s").read_text()
    c = sub1(t, r"s_cbranch_execz \.LBB0_2", "s_cbranch_execnz .LBB0_2")
    assert differential(parse(t), parse(t), h, trials=2).accepted
    v = differential(parse(t), parse(c), h, trials=2)
    assert v.status is Status.REJECTED_OUTPUT_MISMATCH and v.evidence[0].data["trial"] == 1

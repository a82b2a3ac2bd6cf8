"""The CU model reproduces the published MI300X latencies and peak rates (TIMING_FACTS.md)
within 15%, and memory-bound throughput scales with waves per SIMD until the per-CU HBM
share binds.  Every value is a model estimate."""

from __future__ import annotations

import pytest

from asmevo.perf import calibration as C
from asmevo.perf.machine import MI300X

TOL = 0.15


@pytest.fixture(scope="module")
def figures():
    return C.run_all(quick=True)


def test_every_published_figure_within_15_percent(figures):
    bad = [(f.name, f.value, f.published) for f in figures
           if f.check and f.published is not None and abs(f.ratio - 1) > TOL]
    assert not bad, bad
    names = " ".join(f.name for f in figures)
    for what in ("dependent VALU", "v_pk_fma_f32", "v_fma_f64", "transcendental",
                 "accumulate chain", "independent, 4 waves", "LDS pointer chase",
                 "bank conflict", "vL1 hit", "L2 hit", "Infinity Cache", "HBM", "SMEM",
                 "s_barrier"):
        assert what in names, what


@pytest.mark.parametrize("shape", [s[0] for s in C._MFMA])
def test_every_mfma_shape_class_is_covered(figures, shape):
    rows = [f for f in figures if f"MFMA {shape} " in f.name]
    assert len(rows) >= 2 and all(abs(f.ratio - 1) <= TOL for f in rows)
    assert any("chain" in f.name for f in rows) and any("independent" in f.name for f in rows)


def test_lds_conflicts_cost_bandwidth(figures):
    by = {f.name: f.value for f in figures}
    free = by["LDS bandwidth ds_read_b32, 8 waves"]
    conf = by["LDS ds_read_b32 32-way bank conflict, 8 waves"]
    assert conf * 8 < free


def test_latency_order(figures):
    by = {f.name: f.value for f in figures}
    assert by["SMEM pointer chase, sL1 hit"] < by["LDS pointer chase (ds_read_b32)"] * 2
    assert by["LDS pointer chase (ds_read_b32)"] < by["global pointer chase, vL1 hit"] \
        < by["global pointer chase, L2 hit"] < by["global pointer chase, HBM"]


def test_occupancy_scaling_of_a_memory_bound_loop():
    """Latency-bound at low occupancy (twice the waves, about twice the bytes/clk), then
    capped by the CU's share of HBM bandwidth (8.3 B/clk with every CU busy)."""
    s = C.occupancy_scaling(MI300X, waves=(1, 2, 4, 8), n=8)
    bw = [b for _, b in s]
    assert all(b2 >= b1 * 0.999 for b1, b2 in zip(bw, bw[1:]))
    assert 1.7 < bw[1] / bw[0] < 2.1
    cap = float(MI300X["bw.hbm_bytes_per_clk"]) / int(MI300X["cus"])
    assert bw[-1] <= cap * 1.01
    assert bw[-1] >= cap * (1 - TOL)


def test_model_is_deterministic():
    body = C.lds_stream("ds_read_b32", 7, [f"v{r}" for r in range(4, 12)])(16)
    a = C.run_model(body, block=256, lds=8192)
    b = C.run_model(body, block=256, lds=8192)
    assert a.cycles == b.cycles and (a.causes == b.causes).all()


def test_microbenchmark_kernels_assemble(llvm_mc):
    from asmevo.backend.assemble import assemble_bytes
    text = C.kernel_text(C.mfma_chain("v_mfma_f32_32x32x8_f16", "a[0:15]", "v[2:3]", "v[4:5]")(4)
                         + C.lds_chase(2) + C.global_chase(2) + C.smem_chase(2))
    assert assemble_bytes(text)[:4] == b"\x7fELF"

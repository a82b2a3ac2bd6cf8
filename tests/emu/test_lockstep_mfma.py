"""MFMA runs once for the running waves of a lockstep group (exec_mfma's group form):
accumulators bit-identical to running the waves one at a time, for float (f16, bf16, f32,
fp8, f64) and integer forms, constant and register C, BLGP / CBSZ / ABID / NEG, partial
EXEC (MFMA ignores EXEC), and waves that diverged (only the running ones are written)."""

import numpy as np
import pytest

from asmevo.emu.state import Wave, Workgroup
from tests.emu.conftest import run_group

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
LANES = np.arange(64)


def _run(lines, lockstep, nwaves=5, partial=False):
    rng = np.random.default_rng(11)
    waves = []
    for k in range(nwaves):
        wv = Wave(Workgroup((k, 0, 0), 0), 0)
        # small float-ish bit patterns: f16 / bf16 / f32 values of moderate range, so the
        # float64 sums carry real rounding; some exact negatives and zeros
        x = rng.integers(0, 1 << 32, (40, 64), dtype=np.uint64).astype(np.uint32)
        x &= np.uint32(0xBFFFBFFF)
        wv.v[0:40] = x
        wv.a[0:32] = rng.integers(0, 1 << 32, (32, 64), dtype=np.uint64).astype(np.uint32) & \
            np.uint32(0xBFFFFFFF)
        wv.s[8] = k
        wv.set_exec((LANES + k) % 3 != 0 if partial and k % 2 else np.ones(64, bool))
        waves.append(wv)
    run_group(lines, waves, None, lockstep)
    return waves


FORMS = [
    ["v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15]",
     "v_mfma_f32_16x16x16_f16 v[20:23], v[4:5], v[6:7], 0"],
    ["v_mfma_f32_32x32x8_f16 v[8:23], v[0:1], v[2:3], 0 blgp:3",
     "v_mfma_f32_16x16x16_bf16 a[0:3], v[4:5], v[6:7], a[4:7]"],
    ["v_mfma_f32_32x32x1_2b_f32 a[0:31], v0, v1, a[0:31] cbsz:1 abid:1 blgp:2",
     "v_mfma_f32_4x4x1_16b_f32 v[10:13], v2, v3, v[10:13] cbsz:2 abid:3"],
    ["v_mfma_i32_16x16x32_i8 a[0:3], v[0:1], v[2:3], 0",
     "v_mfma_i32_32x32x16_i8 v[8:23], v[4:5], v[6:7], v[8:23]"],
    ["v_mfma_f32_16x16x32_fp8_fp8 v[8:11], v[4:5], v[6:7], 0",
     "v_mfma_f32_16x16x32_bf8_fp8 a[8:11], v[0:1], v[2:3], a[8:11]"],
    ["v_mfma_f64_16x16x4_f64 v[8:15], v[0:1], v[2:3], v[8:15]",
     "v_mfma_f64_4x4x4_4b_f64 a[0:1], v[4:5], v[6:7], 0 blgp:5"],
]


@pytest.mark.parametrize("k", range(len(FORMS)))
@pytest.mark.parametrize("partial", [False, True])
def test_mfma_group_equals_one_wave(k, partial):
    a = _run(FORMS[k], True, partial=partial)
    b = _run(FORMS[k], False, partial=partial)
    for wa, wb in zip(a, b):
        assert np.array_equal(wa.v, wb.v)
        assert np.array_equal(wa.a, wb.a)
        assert (wa.count, wa.lanes) == (wb.count, wb.lanes)


def test_mfma_after_divergence_writes_only_running_waves():
    """Waves 1 and 3 branch around the MFMA: it runs for the others only."""
    lines = ["s_cmp_eq_u32 s8, 1", "s_cbranch_scc1 SKIP", "s_cmp_eq_u32 s8, 3",
             "s_cbranch_scc1 SKIP",
             "v_mfma_f32_32x32x8_f16 v[8:23], v[0:1], v[2:3], v[8:23]",
             "SKIP:", "v_mov_b32 v30, v8"]
    a = _run(lines, True)
    b = _run(lines, False)
    for wa, wb in zip(a, b):
        assert np.array_equal(wa.v, wb.v)
        assert (wa.count, wa.lanes) == (wb.count, wb.lanes)

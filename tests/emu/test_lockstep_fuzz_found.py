"""Lockstep results that differed from one wave at a time, found by the differential fuzzer
(tests/emu/lsfuzz.py, scripts/lockstep_fuzz.py) and shrunk; each case compares the two
modes (tests/emu/test_lockstep_batched.py ``_same``), with compiled blocks and without."""

import numpy as np
import pytest

from asmevo.emu import lockstep_block as LB
from tests.emu.test_lockstep_batched import _same

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@pytest.fixture(params=[True, False], ids=["blocks", "dispatch"])
def blocks(request, monkeypatch):
    monkeypatch.setattr(LB, "ENABLED", request.param)


def _nan_operands(k, wv):
    # an SGPR operand that differs between the waves (the lane-SGPR form of the group) and
    # is a NaN in wave 0, a VGPR that is a (different) NaN in every lane
    wv.s[31] = (0xFFBFFB77, 0x3F800000, 0x7FA00001, 0x40000000)[k % 4]
    wv.v[20] = 0x7FC00001
    wv.v[27] = 0x3F800000


@pytest.mark.parametrize("inst", ["v_fma_f32 v25, v20, s31, v27",
                                  "v_mul_f32_e64 v25, v20, s31",
                                  "v_add_f32_e64 v25, s31, v20",
                                  "v_max_f32_e64 v25, v20, s31",
                                  "v_pk_mul_f32 v[24:25], v[20:21], s[30:31]"])
def test_nan_payload_of_a_per_wave_sgpr_operand(inst, blocks):
    """Two NaN operands of a float operation, one an SGPR whose value differs between the
    waves: which NaN the result carries must be the one a wave alone gives.  (numpy picks the
    NaN by operand position and by whether an operand is broadcast from one element: the
    group's per-lane SGPR array picked the VGPR's NaN where a wave alone picks the SGPR's.)"""
    waves = _same([inst], nwaves=4, setup=_nan_operands)
    assert np.isnan(waves[0].v[25].view(np.float32)).all()

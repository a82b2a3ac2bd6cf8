"""A lane mask written by a scalar instruction and read per wave by a vector one.

In a lockstep group (asmevo.emu.lockstep) scalar instructions run once on the first running
wave, and what they write is copied to the other running waves later (at the end of a fast
run, or of a compiled block); a vector instruction reading an SGPR pair as a lane mask
(v_cndmask_b32, v_addc_co_u32, v_div_fmas' VCC) takes each wave's own row.  When the pair
held different values in the waves before the scalar write, the other waves must still see
the value just written: each case below equals running the waves one at a time, and the
value checked is the one a wave must compute (all lanes take the written mask), so a stale
row cannot pass.  The snippets run twice in a loop so that the group meets each straight run
again and compiles it (asmevo.emu.lockstep_block), and once in a self-loop."""

import numpy as np
import pytest

from asmevo.emu import lockstep_block as LB
from tests.emu.test_lockstep_batched import _partial, _same

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

# VCC and s[20:21] differ between the waves (v10, v11: random in each wave): neither 0 nor
# -1 in any wave; then scalar writes make them equal and vector reads use them.
PER_WAVE = ["v_cmp_gt_u32_e64 s[20:21], v11, v10", "v_cmp_lt_u32_e32 vcc, v11, v10"]


def _loop(body, times=2):
    return ["s_mov_b32 s40, 0", "LOOP:"] + PER_WAVE + body + [
        "s_add_u32 s40, s40, 1", f"s_cmp_lt_u32 s40, {times}", "s_cbranch_scc1 LOOP"]


CASES = {
    "cndmask_vcc": ["s_mov_b64 vcc, exec", "v_cndmask_b32_e32 v1, 0, v10, vcc"],
    "cndmask_sgpr": ["s_mov_b64 s[20:21], 0", "v_mov_b32_e32 v3, 7",
                     "v_cndmask_b32_e64 v1, v10, 5, s[20:21]"],
    "addc": ["s_mov_b64 vcc, -1", "v_addc_co_u32_e32 v1, vcc, 0, v10, vcc"],
    "not_in_block": ["s_not_b64 s[20:21], 0", "v_cndmask_b32_e64 v1, v10, 9, s[20:21]",
                     "v_add_u32_e32 v2, 1, v1"],
    "cselect": ["s_cmp_eq_u32 s40, s40", "s_cselect_b64 vcc, -1, 0",
                "v_cndmask_b32_e32 v1, 3, v10, vcc", "v_add_u32_e32 v2, v1, v1"],
}


@pytest.fixture(params=[True, False], ids=["blocks", "dispatch"])
def blocks(request, monkeypatch):
    """With compiled blocks, and with every instruction through _run_fast's dispatch."""
    monkeypatch.setattr(LB, "ENABLED", request.param)


@pytest.mark.parametrize("partial", [False, True])
@pytest.mark.parametrize("case", sorted(CASES))
def test_scalar_written_lane_mask_equals_one_wave(case, partial, blocks):
    waves = _same(_loop(CASES[case]), nwaves=4, setup=_partial if partial else None)
    w = waves[1]
    # what every wave must hold: the mask written by the scalar instruction, all lanes
    expect = {"cndmask_vcc": w.v[10], "cndmask_sgpr": w.v[10], "addc": w.v[10] + 1,
              "not_in_block": np.full(64, 9, np.uint32), "cselect": w.v[10]}[case]
    act = w.exec_mask
    assert np.array_equal(w.v[1][act], np.asarray(expect, np.uint32)[act])


def test_self_loop_reads_its_own_scalar_write(blocks):
    """A self-loop whose scalar write of VCC comes after the vector read of VCC: the read of
    the second pass must see the first pass's write in every wave."""
    lines = PER_WAVE + ["s_mov_b32 s40, 0", "v_mov_b32_e32 v1, 0", "LOOP:",
                        "v_add_u32_e32 v2, 1, v1", "v_cndmask_b32_e32 v1, v1, v2, vcc",
                        "s_mov_b64 vcc, -1", "s_add_u32 s40, s40, 1", "s_cmp_lt_u32 s40, 5",
                        "s_cbranch_scc1 LOOP"]
    waves = _same(lines, nwaves=4)
    for w in waves:
        first = w.v[11] < w.v[10]       # the compare's mask
        assert 0 < first.sum() < 64
        # first pass adds the compare's carry, the next four add 1 (VCC = -1)
        assert np.array_equal(w.v[1], first.astype(np.uint32) + 4)

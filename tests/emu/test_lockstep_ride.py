"""Waves with EXEC = 0 ride along a forward s_cbranch_execz's region in a lockstep group
(asmevo.emu.lockstep._ride) instead of splitting it, when nothing in the region changes a
wave without lanes (asmevo.emu.lockstep_forms.inert_without_lanes): registers, SGPRs, SCC,
LDS, instruction and lane counts equal running the waves one at a time; a region with one
instruction that would change such a wave splits the group as before."""

import numpy as np
import pytest

from asmevo.emu import lockstep as LS
from asmevo.emu import lockstep_block as LB
from asmevo.emu.lockstep_forms import inert_without_lanes
from asmevo.frontend.asm_parser import parse_instruction
from tests.emu.test_lockstep_batched import _same

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _tree(region, levels=(64, 32, 8)):
    """An LDS reduction tree as clang writes it (row_max): at each level the lanes below
    ``k`` of each wave's block of 64 (v0 = lane + 64 * wave) read, combine and write; the
    waves whose lanes are all above ``k`` have EXEC = 0 and jump."""
    out = ["v_lshlrev_b32_e32 v1, 2, v0", "ds_write_b32 v1, v10", "s_waitcnt lgkmcnt(0)",
           "s_barrier"]
    for j, k in enumerate(levels):
        out += [f"v_cmp_gt_u32_e32 vcc, {k}, v0", "s_and_saveexec_b64 s[0:1], vcc",
                f"s_cbranch_execz SKIP{j}"] + [x.format(k=4 * k) for x in region] + \
            [f"SKIP{j}:", "s_or_b64 exec, exec, s[0:1]", "s_waitcnt lgkmcnt(0)", "s_barrier"]
    return out


INERT = ["ds_read2_b32 v[2:3], v1 offset1:{k}", "s_waitcnt lgkmcnt(0)",
         "v_max_f32_e32 v3, v3, v3", "v_max_f32_e32 v2, v2, v3", "ds_write_b32 v1, v2",
]


def _calls(monkeypatch):
    calls = []
    orig = LS._Group.run_together

    def spy(self, *a):
        calls.append(1)
        return orig(self, *a)
    monkeypatch.setattr(LS._Group, "run_together", spy)
    return calls


@pytest.mark.parametrize("blocks", [True, False])
def test_inert_region_equals_one_wave_without_splitting(blocks, monkeypatch):
    monkeypatch.setattr(LB, "ENABLED", blocks)
    region = INERT[:5] + ["v_add_u32_e32 v4, v2, v3", "v_pk_add_f16 v5, v4, v2",
                          "v_accvgpr_write_b32 a1, v2", "s_nop 1"]
    calls = _calls(monkeypatch)
    waves = _same(_tree(region), nwaves=4)
    # waves 1-3 of the group (v0 >= 64) jump at every level in one-wave mode: fewer counted
    assert waves[0].count > waves[1].count == waves[2].count == waves[3].count
    assert waves[1].lanes < waves[0].lanes
    with np.errstate(all="ignore"):
        from tests.emu.test_lockstep_batched import _run
        calls.clear()
        _run(_tree(region), True, nwaves=4)
    # one group from start to end: the barriers complete inside it, no split at a branch
    assert len(calls) == 1


@pytest.mark.parametrize("bad", [
    "v_cmp_gt_u32_e32 vcc, 3, v2",              # VOPC: writes VCC (0 where EXEC is 0)
    "v_add_co_u32_e64 v4, s[6:7], v2, v3",      # carry-out to an SGPR pair
    "v_readfirstlane_b32 s6, v2",                # writes an SGPR whatever EXEC is
    "v_writelane_b32 v4, s6, 3",                 # writes a lane whatever EXEC is
    "s_mov_b32 s6, 5",                           # scalar: runs whatever EXEC is
])
def test_region_that_changes_a_wave_without_lanes_splits(bad, monkeypatch):
    region = INERT[:5] + [bad]
    calls = _calls(monkeypatch)
    _same(_tree(region, levels=(64,)), nwaves=4)
    with np.errstate(all="ignore"):
        from tests.emu.test_lockstep_batched import _run
        calls.clear()
        _run(_tree(region, levels=(64,)), True, nwaves=4)
    assert len(calls) > 1


@pytest.mark.parametrize("text,inert", [
    ("v_max_f32_e32 v2, v2, v3", True), ("ds_read2_b32 v[2:3], v1 offset1:8", True),
    ("ds_write_b32 v1, v2", True), ("global_store_dword v[2:3], v4, off", True),
    ("global_atomic_add v1, v2, s[4:5]", True), ("buffer_load_dword v1, v2, s[4:7], 0 offen", True),
    ("s_waitcnt vmcnt(0)", True), ("s_nop 3", True), ("v_accvgpr_write_b32 a1, v2", True),
    ("v_cmp_gt_u32_e32 vcc, 3, v2", False), ("v_cmpx_gt_u32_e32 vcc, 3, v2", False),
    ("v_add_co_u32_e32 v1, vcc, v2, v3", False), ("v_div_scale_f32 v1, vcc, v2, v2, v3", False),
    ("v_readlane_b32 s1, v2, 3", False), ("v_writelane_b32 v1, s2, 3", False),
    ("v_mfma_f32_32x32x8f16 a[0:15], v[0:1], v[2:3], a[0:15]", False),
    ("s_mov_b32 s1, 0", False), ("s_setprio 2", False), ("s_barrier", False),
    ("s_branch 0", False), ("buffer_load_dword v1, s[4:7], 0 lds", False),
    ("ds_gws_barrier v1 offset:0 gds", False), ("ds_append v1", False),
])
def test_inert_without_lanes(text, inert):
    assert inert_without_lanes(parse_instruction(text)) is inert

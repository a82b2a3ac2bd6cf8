"""VALU instructions whose SGPR operands differ between the waves of a lockstep group run
once, each lane reading its own wave's SGPRs (asmevo.emu.lockstep._LaneSGPRs): registers,
carry-out masks and counts equal running the waves one at a time, for 16/32/64-bit, float,
packed, carry and lane-mask forms, with partial EXEC."""

import numpy as np
import pytest

from asmevo.emu import lockstep as LS
from tests.emu.test_lockstep_batched import _partial, _same

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

# s8 = the wave's index, s9 = its workgroup (tests.emu.test_lockstep_batched._run)
VALU = [
    "s_lshl_b32 s10, s8, 3", "s_mul_i32 s11, s8, 0x01010101", "s_mov_b32 s12, 0x3f800000",
    "s_add_u32 s12, s12, s8",                         # per-wave float bits
    "v_add_u32_e32 v1, s8, v0", "v_mul_lo_u32 v2, v10, s11",
    "v_lshl_add_u64 v[4:5], v[10:11], 2, s[10:11]", "v_mad_u64_u32 v[6:7], s[20:21], v12, s11, v[14:15]",
    "v_fma_f32 v20, s12, v13, v14", "v_max_f32_e64 v21, s12, v15",
    "v_add_co_u32_e64 v22, s[30:31], s10, v16", "v_addc_co_u32_e64 v23, s[32:33], s11, v17, s[30:31]",
    "v_cndmask_b32_e64 v24, s10, v18, s[30:31]", "v_cmp_gt_u32_e64 s[34:35], s10, v0",
    "v_pk_add_f16 v25, s11, v19", "v_add_f16_e64 v26, s11, v12", "v_cvt_f32_u32_e32 v27, s11",
    "v_bfe_u32 v28, v13, s8, 5", "v_mov_b32_e32 v29, s11", "v_lshlrev_b64 v[30:31], s8, v[12:13]",
    "v_add_u32_e32 v32, vcc_lo, v0", "v_xad_u32 v33, s10, v14, s11",
]


@pytest.mark.parametrize("partial", [False, True])
def test_per_wave_sgpr_operands_equal_one_wave(partial):
    _same(VALU, nwaves=4, setup=_partial if partial else None)


def test_per_wave_sgpr_operands_run_once(monkeypatch):
    """The VALU instructions read the per-lane SGPRs (they ran wave by wave before); not
    those combining two float sources (v_fma_f32, v_max_f32, v_pk_add_f16, v_add_f16), which
    run once per run of waves with equal SGPRs, for the NaN they return
    (tests/emu/test_lockstep_fuzz_found.py)."""
    reads = []
    orig = LS._LaneSGPRs.__getitem__

    def spy(self, k):
        reads.append(k)
        return orig(self, k)
    monkeypatch.setattr(LS._LaneSGPRs, "__getitem__", spy)
    _same(VALU, nwaves=4)
    assert len(reads) >= 13


def _global(lines, lockstep, partial=False, bad=None):
    """Waves whose SGPR base s[4:5] differs (1 KiB each of one buffer; wave ``bad``'s points
    past it)."""
    from asmevo.emu.memory import GlobalMemory
    from asmevo.emu.state import Wave, Workgroup
    from tests.emu.conftest import run_group
    lanes = np.arange(64)
    mem = GlobalMemory()
    rng = np.random.default_rng(9)
    base = mem.map("buf", rng.integers(0, 256, 8192, dtype=np.uint8))
    waves = []
    for k in range(5):
        wv = Wave(Workgroup((k, 0, 0), 0), 0)
        b = base + 1024 * k + (1 << 20 if k == bad else 0)
        wv.s[4], wv.s[5] = b & 0xFFFFFFFF, b >> 32
        wv.v[4] = (lanes * 8 + 4 * k) % 512
        wv.v[10:14] = rng.integers(0, 1 << 32, (4, 64), dtype=np.uint64).astype(np.uint32)
        wv.set_exec((lanes + k) % 3 != 0 if partial and k % 2 else np.ones(64, bool))
        waves.append(wv)
    run_group(lines, waves, mem, lockstep)
    return waves, mem.region("buf").data.copy()


GLOBAL = ["global_load_dword v20, v4, s[4:5]", "global_load_dwordx2 v[21:22], v4, s[4:5] offset:8",
          "global_store_dword v4, v10, s[4:5] offset:16", "global_load_dword v24, v4, s[4:5] offset:16",
          "global_atomic_add v23, v4, v11, s[4:5] offset:4 glc",
          "global_atomic_smax v4, v12, s[4:5] offset:32"]


@pytest.mark.parametrize("partial", [False, True])
def test_per_wave_global_base_equals_one_wave(partial, monkeypatch):
    reads = []
    orig = LS._LaneSGPRs.__getitem__

    def spy(self, k):
        reads.append(k)
        return orig(self, k)
    monkeypatch.setattr(LS._LaneSGPRs, "__getitem__", spy)
    a, ma = _global(GLOBAL, True, partial)
    b, mb = _global(GLOBAL, False, partial)
    for wa, wb in zip(a, b):
        assert np.array_equal(wa.v, wb.v)
        assert (wa.count, wa.lanes) == (wb.count, wb.lanes)
    assert np.array_equal(ma, mb)
    assert len(reads) >= len(GLOBAL)


def test_per_wave_global_base_fault_names_the_same_lane():
    from asmevo.emu.memory import EmuError
    msgs = []
    for lockstep in (True, False):
        with pytest.raises(EmuError) as e:
            _global(GLOBAL[:1], lockstep, bad=3)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]

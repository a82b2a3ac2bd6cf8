"""Buffer (MUBUF) loads and stores run once for a lockstep group (asmevo.emu.lockstep,
exec_mubuf's per-lane V#): registers, memory and counts equal running the waves one at a
time, with a V# base, stride, num_records, ADD_TID and SGPR offset that differ between the
waves, out-of-range lanes, partial EXEC and overlapping stores."""

import numpy as np
import pytest

from asmevo.emu.executor import Program
from asmevo.emu.memory import GlobalMemory
from asmevo.emu.state import Wave, Workgroup
from tests.emu.conftest import run_group

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
LANES = np.arange(64)
NB = 1 << 14


def _run(lines, lockstep, nwaves=6, tid=False, stride=0, partial=False, shared=False):
    """``shared``: the waves' V#s overlap (else each wave has its own 1 KiB: stores of
    different instructions by different waves to one byte would race, and the two modes
    order them differently, as two schedules on hardware would)."""
    mem = GlobalMemory()
    rng = np.random.default_rng(3)
    base = mem.map("buf", rng.integers(0, 256, NB, dtype=np.uint8))
    waves = []
    for k in range(nwaves):
        wv = Wave(Workgroup((k, 0, 0), 0), 0)
        wv.v[0] = (LANES * 4 + 8 * k) % 512
        wv.v[1] = (LANES + k) % 40
        wv.v[10:20] = rng.integers(0, 1 << 32, (10, 64), dtype=np.uint32)
        b = base + (256 * (k % 3) if shared else 1024 * k)
        st = stride + 4 * (k % 2) if stride else 0
        wv.s[4] = b & 0xFFFFFFFF
        wv.s[5] = (b >> 32) | (st << 16)
        wv.s[6] = 1500 + 97 * k if not stride else 30 + k     # num_records
        wv.s[7] = (1 << 23) if tid and k % 2 else 0
        wv.s[8] = 16 * (k % 4)                                 # soffset
        wv.set_exec((LANES + k) % 3 != 0 if partial and k % 2 else np.ones(64, bool))
        waves.append(wv)
    run_group(lines, waves, mem, lockstep)
    return waves, mem.region("buf").data.copy()


CASES = {
    "offen": ["buffer_load_dword v2, v0, s[4:7], s8 offen offset:4",
              "buffer_load_dwordx2 v[3:4], v0, s[4:7], 0 offen",
              "buffer_store_dwordx4 v[10:13], v0, s[4:7], s8 offen offset:12",
              "buffer_load_dwordx4 v[20:23], v0, s[4:7], s8 offen"],
    "idxen": ["buffer_load_dword v2, v1, s[4:7], s8 idxen",
              "buffer_store_dword v11, v1, s[4:7], s8 idxen offset:8",
              "buffer_load_dwordx2 v[3:4], v1, s[4:7], 0 idxen offset:4"],
    "bytes": ["buffer_load_ubyte v2, v0, s[4:7], s8 offen offset:3",
              "buffer_load_sshort v3, v0, s[4:7], s8 offen offset:2",
              "buffer_store_byte v12, v0, s[4:7], s8 offen offset:1",
              "buffer_store_short v13, v0, s[4:7], 0 offen",
              "buffer_load_dword v4, v0, s[4:7], s8 offen"],
    "no_vaddr": ["buffer_load_dword v2, off, s[4:7], s8 offset:4",
                 "buffer_store_dword v11, off, s[4:7], s8 offset:16",
                 "buffer_load_dword v3, off, s[4:7], s8"],
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("tid,stride,partial", [(False, 0, False), (True, 0, True),
                                                (False, 8, False), (True, 12, True)])
def test_mubuf_group_equals_one_wave(case, tid, stride, partial):
    a, ma = _run(CASES[case], True, tid=tid, stride=stride, partial=partial)
    b, mb = _run(CASES[case], False, tid=tid, stride=stride, partial=partial)
    for wa, wb in zip(a, b):
        assert np.array_equal(wa.v, wb.v)
        assert np.array_equal(wa.s, wb.s)
        assert (wa.count, wa.lanes) == (wb.count, wb.lanes)
    assert np.array_equal(ma, mb)


@pytest.mark.parametrize("store", ["buffer_store_dword v11, v0, s[4:7], s8 offen",
                                   "buffer_store_short v12, v0, s[4:7], s8 offen offset:1",
                                   "buffer_store_dwordx2 v[12:13], v1, s[4:7], 0 idxen"])
def test_mubuf_overlapping_stores_land_in_wave_order(store):
    a, ma = _run([store], True, shared=True, stride=8 if "idxen" in store else 0)
    b, mb = _run([store], False, shared=True, stride=8 if "idxen" in store else 0)
    assert np.array_equal(ma, mb)


def test_mubuf_runs_once_for_the_group(monkeypatch):
    """The per-wave V#s do not split the group: the load's closure runs once."""
    calls = []
    orig = Program.__init__

    def init(self, *a, **k):
        orig(self, *a, **k)
        f = self.code[0]

        def counted(wv):
            calls.append(wv)
            return f(wv)
        self.code[0] = counted
    monkeypatch.setattr(Program, "__init__", init)
    _run(["buffer_load_dword v2, v0, s[4:7], s8 offen"], True)
    assert len(calls) == 1


#: returning atomics on addresses the waves share: the old values depend on the order of
#: the lanes (one instruction per run: two instructions on shared words race between waves)
ATOMICS = ["buffer_atomic_add v11, v0, s[4:7], s8 offen glc",
           "buffer_atomic_umax v12, v0, s[4:7], 0 offen",
           "buffer_atomic_cmpswap v[12:13], v0, s[4:7], s8 offen glc",
           "buffer_atomic_swap v14, v1, s[4:7], 0 idxen glc",
           "buffer_atomic_add_x2 v[12:13], v0, s[4:7], s8 offen offset:8 glc"]


@pytest.mark.parametrize("k", range(len(ATOMICS)))
@pytest.mark.parametrize("partial", [False, True])
def test_mubuf_atomics_group_equals_one_wave(k, partial):
    a, ma = _run([ATOMICS[k]], True, shared=True, partial=partial)
    b, mb = _run([ATOMICS[k]], False, shared=True, partial=partial)
    for wa, wb in zip(a, b):
        assert np.array_equal(wa.v, wb.v)
        assert (wa.count, wa.lanes) == (wb.count, wb.lanes)
    assert np.array_equal(ma, mb)


def _global(lines, lockstep, partial):
    mem = GlobalMemory()
    rng = np.random.default_rng(5)
    base = mem.map("buf", rng.integers(0, 256, 4096, dtype=np.uint8))
    waves = []
    for k in range(5):
        wv = Wave(Workgroup((k, 0, 0), 0), 0)
        a = base + (LANES * 12 + 4 * k) % 512           # waves overlap
        wv.v[2] = a & 0xFFFFFFFF
        wv.v[3] = a >> 32
        wv.v[4] = (LANES * 8 + 8 * k) % 256
        wv.v[10:16] = rng.integers(0, 1 << 32, (6, 64), dtype=np.uint32)
        wv.s[4], wv.s[5] = base & 0xFFFFFFFF, base >> 32
        wv.set_exec((LANES + k) % 4 != 0 if partial and k % 2 else np.ones(64, bool))
        waves.append(wv)
    run_group(lines, waves, mem, lockstep)
    return waves, mem.region("buf").data.copy()


@pytest.mark.parametrize("partial", [False, True])
@pytest.mark.parametrize("line", ["global_atomic_add v20, v[2:3], v10, off glc",
                                  "global_atomic_smax v4, v11, s[4:5] offset:16",
                                  "global_atomic_sub v21, v4, v12, s[4:5] glc",
                                  "global_atomic_cmpswap_x2 v[22:23], v[2:3], v[12:15], off "
                                  "offset:8 glc",
                                  "global_atomic_xor v[2:3], v13, off"])
def test_global_atomics_group_equals_one_wave(line, partial):
    a, ma = _global([line], True, partial)
    b, mb = _global([line], False, partial)
    for wa, wb in zip(a, b):
        assert np.array_equal(wa.v, wb.v)
        assert (wa.count, wa.lanes) == (wb.count, wb.lanes)
    assert np.array_equal(ma, mb)

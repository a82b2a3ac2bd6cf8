"""Lockstep execution of several waves (asmevo.emu.lockstep) gives exactly the results and
instruction counts of running the waves one at a time."""

import json
import os

import numpy as np
import pytest

from asmevo.emu import harness as H
from asmevo.emu import launch as L
from asmevo.emu import run_kernel
from asmevo.emu.memory import EmuError
from asmevo.frontend.loader import load
from tests.conftest import CORPUS

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
LANES = np.arange(64)

# wave-dependent control flow (readfirstlane of the wave id), uniform loops, lane ops with
# uniform and non-uniform selects, LDS exchange across a barrier
PROG = [
    "v_readfirstlane_b32 s8, v9",          # s8 = wave id (non-uniform SGPR)
    "s_mov_b32 s9, 0",
    "v_mov_b32_e32 v1, 0",
    ".Lloop:",
    "v_add_u32_e32 v1, s9, v1",            # uniform SGPR source: batched
    "v_add_u32_e32 v1, s8, v1",            # non-uniform SGPR source: wave by wave
    "s_add_u32 s9, s9, 1",
    "s_cmp_lt_u32 s9, 5",
    "s_cbranch_scc1 .Lloop",
    "v_writelane_b32 v2, s8, 3",
    "v_readlane_b32 s10, v0, 7",
    "v_readlane_b32 s11, v0, s8",
    "v_cmp_gt_u32_e32 vcc, 20, v0",
    "s_and_saveexec_b64 s[12:13], vcc",
    "v_mul_lo_u32 v3, v0, v0",
    "s_or_b64 exec, exec, s[12:13]",
    "s_cmp_eq_u32 s8, 1",
    "s_cbranch_scc1 .Lskip",
    "v_add_u32_e32 v4, 100, v0",
    ".Lskip:",
    "v_lshlrev_b32_e32 v5, 2, v0",
    "v_add_u32_e32 v5, s14, v5",
    "ds_write_b32 v5, v1",
    "s_barrier",
    "v_sub_u32_e32 v6, 255, v0",
    "v_lshlrev_b32_e32 v6, 2, v6",
    "ds_read_b32 v7, v6",
    "s_waitcnt lgkmcnt(0)",
    "v_mov_b32_e32 v8, s11",
]


def _run(snippet, lockstep):
    s = snippet(PROG, nwaves=4, lds=1024)
    for w, wv in enumerate(s.waves):
        wv.v[0] = LANES + 64 * w
        wv.v[9] = w
        wv.s[14] = 256 * (w // 2) * 0       # same LDS slots per wave pair (shared LDS)
        if w == 2:
            wv.set_exec(LANES < 48)
    old = L.LOCKSTEP
    L.LOCKSTEP = lockstep
    try:
        s.run()
    finally:
        L.LOCKSTEP = old
    return s


def test_lockstep_matches_one_wave_at_a_time(snippet):
    a = _run(snippet, True)
    b = _run(snippet, False)
    for wa, wb in zip(a.waves, b.waves):
        assert np.array_equal(wa.v[:16], wb.v[:16])
        assert np.array_equal(wa.s, wb.s)
        assert wa.scc == wb.scc and wa.count == wb.count and wa.done and wb.done
    assert np.array_equal(a.group.lds.words, b.group.lds.words)
    # the program did what it says (not vacuous): v1 = sum(s9) + 5 * wave id
    for w, wv in enumerate(a.waves):
        act = LANES < 48 if w == 2 else np.ones(64, bool)
        assert np.array_equal(wv.v[1][act], np.full(act.sum(), 10 + 5 * w))
        assert wv.v[2, 3] == w and wv.s[10] == 7 + 64 * w and wv.s[11] == w + 64 * w
        assert (wv.v[4][act] == (100 + LANES + 64 * w)[act]).all() == (w != 1)


def _corpus_entries():
    if CORPUS is None:
        return []
    out = []
    for sub in ("", "triton"):
        p = CORPUS / sub / "manifest.json"
        if p.is_file():
            out += [(str(p), e["name"]) for e in json.load(open(p))]
    return out


@pytest.mark.corpus
@pytest.mark.parametrize("manifest,name", _corpus_entries(),
                         ids=[n for _, n in _corpus_entries()])
def test_corpus_lockstep_bit_identical(corpus_dir, manifest, name, monkeypatch):
    # (and the waves' cached EXEC masks, which the group's EXEC view is made of, stay equal
    # to their EXEC words throughout)
    from asmevo.emu import lockstep as LS
    monkeypatch.setattr(LS, "_CHECK_EXEC", True)
    h = H.load_harness(manifest, name)
    module = load(os.path.join(h["_dir"], h["code_object"]))
    inputs = H.make_inputs(h, 1)
    old = L.LOCKSTEP
    try:
        L.LOCKSTEP = True
        r1 = run_kernel(module, h["kernel"], H.make_launch(h, inputs))
        L.LOCKSTEP = False
        r2 = run_kernel(module, h["kernel"], H.make_launch(h, inputs))
    finally:
        L.LOCKSTEP = old
    assert r1.instructions == r2.instructions and r1.waves == r2.waves
    assert r1.lane_instructions == r2.lane_instructions
    assert set(r1.outputs) == set(r2.outputs)
    for k in r1.outputs:
        assert r1.outputs[k].tobytes() == r2.outputs[k].tobytes(), k


def test_lockstep_global_fault_names_the_wave_lane(snippet):
    """A batched global load that faults is re-run wave by wave: the error names the
    faulting lane of its own wave (lane 5), as without lockstep."""
    msgs = []
    for lockstep in (True, False):
        s = snippet(["global_load_dword v1, v[2:3], off", "global_store_dword v[2:3], v1, off"],
                    nwaves=4)
        base = s.mem.map("buf", np.arange(256, dtype=np.uint32))
        for w, wv in enumerate(s.waves):
            a = base + 4 * (LANES + 64 * w)
            if w == 2:
                a[5] = 0x10            # unmapped
            wv.v[2] = a & 0xFFFFFFFF
            wv.v[3] = a >> 32
        old = L.LOCKSTEP
        L.LOCKSTEP = lockstep
        try:
            with pytest.raises(EmuError) as e:
                s.run()
        finally:
            L.LOCKSTEP = old
        msgs.append(str(e.value))
        # waves 0 and 1 loaded before wave 2 faulted
        assert np.array_equal(s.waves[1].v[1], LANES + 64)
    assert "lane 5" in msgs[0] and msgs[0] == msgs[1]


def test_lockstep_global_load_store_batched(snippet):
    s = snippet(["global_load_dwordx2 v[4:5], v[2:3], off offset:8",
                 "v_add_u32_e32 v4, v4, v5",
                 "global_store_dword v[2:3], v4, off"], nwaves=4)
    data = np.arange(64 * 4 + 4, dtype=np.uint32)
    base = s.mem.map("buf", data)
    for w, wv in enumerate(s.waves):
        a = base + 4 * (LANES + 64 * w)
        wv.v[2] = a & 0xFFFFFFFF
        wv.v[3] = a >> 32
    s.waves[3].set_exec(LANES % 3 == 0)
    s.run()
    out = s.mem.region("buf").data.view(np.uint32)
    i = np.arange(256)
    active = (i < 192) | ((i - 192) % 3 == 0)
    assert np.array_equal(out[:256][active], (2 * i + 5)[active])
    assert np.array_equal(out[:256][~active], i[~active])

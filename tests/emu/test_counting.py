"""Lane-instructions are counted honestly: the sum over executed instructions of
popcount(EXEC) at issue (scalar instructions included), beside the wave-instruction count,
the same with and without lockstep."""

import json
import os
import re

import numpy as np
import pytest

from asmevo.cli import main
from asmevo.emu import harness as H
from asmevo.emu import launch as L
from asmevo.emu import run_kernel
from asmevo.emu.state import EXEC
from asmevo.frontend.loader import load

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
LANES = np.arange(64)

# wave 1 starts with 48 lanes; lanes < 10 take the if; wave 1 (s8 == 1) skips a block
PROG = [
    "v_mov_b32_e32 v1, 0",                  # 64 | 48
    "v_cmp_gt_u32_e32 vcc, 10, v0",         # 64 | 48
    "s_and_saveexec_b64 s[2:3], vcc",       # 64 | 48 (EXEC at issue)
    "v_add_u32_e32 v1, 1, v1",              # 10 | 10
    "s_or_b64 exec, exec, s[2:3]",          # 10 | 10
    "s_cmp_eq_u32 s8, 1",                   # 64 | 48
    "s_cbranch_scc1 .Lskip",                # 64 | 48
    "v_add_u32_e32 v1, 2, v1",              # 64 | -
    "v_add_u32_e32 v1, 3, v1",              # 64 | -
    ".Lskip:",
    "v_add_u32_e32 v1, 4, v1",              # 64 | 48
]                                           # s_endpgm: 64 | 48
EXPECT = {0: (11, 64 * 9 + 10 * 2), 1: (9, 48 * 7 + 10 * 2)}


@pytest.mark.parametrize("lockstep", [True, False])
def test_lane_count_partial_wave_and_divergent_branch(snippet, lockstep):
    s = snippet(PROG, nwaves=2)
    for w, wv in enumerate(s.waves):
        wv.v[0] = LANES
        wv.s[8] = w
    s.waves[1].set_exec(LANES < 48)
    old = L.LOCKSTEP
    L.LOCKSTEP = lockstep
    try:
        s.run()
    finally:
        L.LOCKSTEP = old
    for w, wv in enumerate(s.waves):
        assert (wv.count, wv.lanes) == EXPECT[w]


def _oracle(module, h, inputs):
    """(wave-instructions, sum of popcount(EXEC) read from the SGPRs before each closure)
    of a one-wave-at-a-time run (closures wrapped; nothing of the counter is used)."""
    from asmevo.emu.launch import _program
    from asmevo.emu.memory import GlobalMemory
    prog = _program(module.kernel(h["kernel"]), GlobalMemory())
    tot = [0, 0]
    orig = list(prog.code)

    def wrap(f):
        def g(wv):
            e = int(wv.s[EXEC]) | (int(wv.s[EXEC + 1]) << 32)
            tot[0] += 1
            tot[1] += bin(e).count("1")
            return f(wv)
        return g
    prog.code[:] = [wrap(f) for f in orig]
    old = L.LOCKSTEP
    L.LOCKSTEP = False
    try:
        run_kernel(module, h["kernel"], H.make_launch(h, inputs))
    finally:
        L.LOCKSTEP = old
        prog.code[:] = orig
    return tot


@pytest.mark.corpus
@pytest.mark.parametrize("name", ["vadd_f32", "row_max", "wave_reduce_dpp"])
def test_run_result_counts_active_lanes(corpus_dir, name):
    man = str(corpus_dir / "manifest.json")
    h = H.load_harness(man, name)
    module = load(os.path.join(h["_dir"], h["code_object"]))
    inputs = H.make_inputs(h, 0)
    n, lanes = _oracle(module, h, inputs)
    for lockstep in (True, False):
        old = L.LOCKSTEP
        L.LOCKSTEP = lockstep
        try:
            r = run_kernel(module, h["kernel"], H.make_launch(h, inputs))
        finally:
            L.LOCKSTEP = old
        assert (r.instructions, r.lane_instructions) == (n, lanes)
    assert lanes < 64 * n       # these kernels have partial EXEC: not instructions x 64


@pytest.mark.corpus
def test_vadd_partial_last_wave_known_count(corpus_dir, capsys):
    """vadd_f32 with n = 1000 in 4 x 256 work items: 16 waves of 20 instructions; the last
    wave has 40 lanes from s_and_saveexec on (15 of its 20 instructions)."""
    e = next(x for x in json.load(open(corpus_dir / "manifest.json")) if x["name"] == "vadd_f32")
    assert [a["value"] for a in e["args"] if a["name"] == "n"] == [1000]
    rc = main(["run", str(corpus_dir / "vadd_f32.co"), "--harness", str(corpus_dir / "manifest.json"),
               "--entry", "vadd_f32"])
    out = capsys.readouterr().out
    assert rc == 0
    m = re.search(r"(\d+) wave-instructions \((\d+) lane-instructions\)", out)
    assert m, out
    assert int(m.group(1)) == 320
    assert int(m.group(2)) == 15 * 20 * 64 + 5 * 64 + 15 * 40 == 20120

"""Two semantics where tinygrad's CDNA emulator (test/mockgpu/amd/emu.py, a9069c177a) and
asmevo's disagree, pinned with independent numpy oracles (benchmarks/emulate.py's docstring
has the evidence):

* a DPP instruction whose destination is also its swizzled source (``v_add_u32_dpp v1, v1,
  v1 quad_perm:[1,0,3,2]``, as clang emits for ``__builtin_amdgcn_update_dpp`` reductions)
  reads every lane's source before any lane is written: one SIMD operation, not a loop over
  lanes that sees its own earlier writes (tinygrad's order, which makes wave_reduce_dpp's sums
  1.4-1.6x too large);
* private (scratch) memory belongs to each work-item: the waves of one workgroup, interleaved
  at ``s_barrier``, never see each other's spills at the same scratch offset (tinygrad gives
  all waves of a dispatch one 64-lane scratch buffer, so sgemm_tiled_O0 reads wave 3's
  spilled row index and accumulator in every wave).

Each runs with the lockstep executor and compiled blocks, lockstep without blocks, and one
wave at a time (``asmevo.emu.launch.LOCKSTEP``, ``asmevo.emu.lockstep_block.ENABLED``)."""

import numpy as np
import pytest

from asmevo.emu import launch as L
from asmevo.emu import lockstep_block as LB
from asmevo.emu.executor import Program
from asmevo.emu.launch import _run_group
from asmevo.emu.memory import GlobalMemory, ScratchMemory
from asmevo.emu.state import Wave, Workgroup

from .conftest import build_kernel

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
LANES = np.arange(64)
MODES = [(True, True), (True, False), (False, False)]   # (LOCKSTEP, compiled blocks)
IDS = ["lockstep+blocks", "lockstep", "one-wave"]


def _run(lines, nwaves, setup, lockstep, blocks, scratch=0):
    group = Workgroup((0, 0, 0), 1024)
    waves = [Wave(group, i, ScratchMemory(scratch) if scratch else None) for i in range(nwaves)]
    for w, wv in enumerate(waves):
        wv.set_exec(np.ones(64, bool))
        setup(w, wv)
    prog = Program(build_kernel(list(lines) + ["s_endpgm"]), GlobalMemory())
    old = L.LOCKSTEP, LB.ENABLED
    L.LOCKSTEP, LB.ENABLED = lockstep, blocks
    try:
        with np.errstate(all="ignore"):
            _run_group(prog, waves, 100000)
    finally:
        L.LOCKSTEP, LB.ENABLED = old
    assert all(wv.done for wv in waves)
    return waves


# -- DPP with vdst == vsrc0 -------------------------------------------------------------------
def _src_lane(ctrl):
    """Source lane of every lane for a DPP control and whether it lies in the row (written
    here, not taken from the emulator): quad_perm [a,b,c,d], row_ror:n, row_shr:n, row_shl:n."""
    kind, arg = ctrl
    row, i = LANES & ~15, LANES & 15
    if kind == "quad_perm":
        return (LANES & ~3) + np.asarray(arg)[LANES & 3], np.ones(64, bool)
    if kind == "row_ror":
        return row + ((i - arg) & 15), np.ones(64, bool)
    if kind == "row_shr":
        return row + i - arg, i >= arg
    if kind == "row_shl":
        return row + i + arg, i + arg <= 15
    raise ValueError(kind)


def _dpp_parallel(x, ctrl, op):
    """Every lane reads the *old* source of its source lane (bound_ctrl:1: 0 out of row)."""
    src, ok = _src_lane(ctrl)
    s0 = np.where(ok, x[np.where(ok, src, 0)], 0).astype(np.uint32)
    return op(s0, x)


def _dpp_lane_order(x, ctrl, op):
    """The wrong model (tinygrad's): lanes 0..63 in turn, each seeing earlier lanes' writes."""
    src, ok = _src_lane(ctrl)
    y = x.copy()
    for lane in range(64):
        s0 = np.uint32(y[src[lane]]) if ok[lane] else np.uint32(0)
        y[lane] = op(np.array([s0], np.uint32), x[lane:lane + 1])[0]
    return y


def _add_u32(a, b):
    return (a.astype(np.uint64) + b.astype(np.uint64)).astype(np.uint32)


def _mov(a, b):
    return a


REDUCE = [("quad_perm", (1, 0, 3, 2)), ("quad_perm", (2, 3, 0, 1)), ("row_ror", 4),
          ("row_ror", 8)]


def _ctrl_text(ctrl):
    kind, arg = ctrl
    return f"quad_perm:[{','.join(map(str, arg))}]" if kind == "quad_perm" else f"{kind}:{arg}"


@pytest.mark.parametrize("lockstep,blocks", MODES, ids=IDS)
def test_inplace_dpp_row_reduction_reads_old_values(lockstep, blocks):
    """wave_reduce_dpp's four in-place adds, three times round a loop (the second visit runs
    as a compiled block): after one pass every lane holds its 16-lane row sum (mod 2^32)."""
    body = []
    for c in REDUCE:
        body += [f"v_add_u32_dpp v1, v1, v1 {_ctrl_text(c)} row_mask:0xf bank_mask:0xf "
                 "bound_ctrl:1", "s_nop 1"]
    lines = ["s_mov_b32 s7, 3", "LOOP:"] + body + [
        "s_add_i32 s7, s7, -1", "s_cmp_eq_u32 s7, 0", "s_cbranch_scc0 LOOP"]
    rng = np.random.default_rng(11)
    data = [rng.integers(0, 1 << 32, 64, dtype=np.uint64).astype(np.uint32) for _ in range(4)]

    def setup(w, wv):
        wv.v[1] = data[w]
    waves = _run(lines, 4, setup, lockstep, blocks)
    for w, wv in enumerate(waves):
        want = data[w].copy()
        wrong = data[w].copy()
        for _ in range(3):
            for c in REDUCE:
                want = _dpp_parallel(want, c, _add_u32)
                wrong = _dpp_lane_order(wrong, c, _add_u32)
        rows = data[w].astype(np.uint64).reshape(4, 16).sum(1)
        assert np.array_equal(want, np.repeat(rows * 256 % (1 << 32), 16).astype(np.uint32))
        assert not np.array_equal(want, wrong)          # the test tells the two models apart
        assert np.array_equal(wv.v[1], want), f"wave {w}"


@pytest.mark.parametrize("lockstep,blocks", MODES, ids=IDS)
@pytest.mark.parametrize("ctrl", [("row_shr", 1), ("row_shl", 1), ("quad_perm", (3, 2, 1, 0)),
                                  ("row_ror", 1)], ids=["row_shr", "row_shl", "quad_rev", "ror"])
def test_inplace_dpp_mov_is_a_permutation(ctrl, lockstep, blocks):
    """``v_mov_b32_dpp v1, v1 CTRL bound_ctrl:1`` moves the old values (row_shr:1 in lane
    order would smear lane 0 of each row over the whole row)."""
    lines = [f"v_mov_b32_dpp v1, v1 {_ctrl_text(ctrl)} row_mask:0xf bank_mask:0xf bound_ctrl:1"]
    vals = (LANES * 7 + 3).astype(np.uint32)

    def setup(w, wv):
        wv.v[1] = vals + w
    waves = _run(lines, 2, setup, lockstep, blocks)
    for w, wv in enumerate(waves):
        want = _dpp_parallel(vals + np.uint32(w), ctrl, _mov)
        if ctrl[0] != "row_shl":    # (row_shl reads upward: lane order happens to agree)
            assert not np.array_equal(want, _dpp_lane_order(vals + np.uint32(w), ctrl, _mov))
        assert np.array_equal(wv.v[1], want), f"wave {w}"


@pytest.mark.parametrize("lockstep,blocks", MODES, ids=IDS)
def test_inplace_dpp_f32_add(lockstep, blocks):
    """The float path too: ``v_add_f32_dpp v1, v1, v1 quad_perm:[1,0,3,2]`` gives each lane
    pair the sum of its two old values (small integers: exact)."""
    lines = ["v_add_f32_dpp v1, v1, v1 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf "
             "bound_ctrl:1"]
    vals = (LANES + 1).astype(np.float32)

    def setup(w, wv):
        wv.v[1] = (vals * (w + 1)).view(np.uint32)
    waves = _run(lines, 2, setup, lockstep, blocks)
    for w, wv in enumerate(waves):
        v = vals * (w + 1)
        assert np.array_equal(wv.v[1].view(np.float32), v + v[LANES ^ 1]), f"wave {w}"


@pytest.mark.parametrize("lockstep,blocks", MODES, ids=IDS)
def test_dpp_add_disabled_lanes_keep_vdst(lockstep, blocks):
    """``v_add_u32_dpp v6, v1, v1 row_shr:1 row_mask:0x5`` without bound_ctrl: lanes of the
    disabled rows (1, 3) and lanes whose source is outside the row (lane 0 of a row) are not
    written (LLVM D34716: DPP "may not write to certain lanes of the output"); tinygrad writes
    ``old vdst + vsrc1`` there, which only a ``v_mov`` (or an op with 0 in vsrc1) hides."""
    lines = ["v_add_u32_dpp v6, v1, v1 row_shr:1 row_mask:0x5 bank_mask:0xf"]
    vals = (LANES * 5 + 11).astype(np.uint32)

    def setup(w, wv):
        wv.v[1] = vals + w
        wv.v[6] = 0x55
    waves = _run(lines, 2, setup, lockstep, blocks)
    row, i = LANES // 16, LANES & 15
    for w, wv in enumerate(waves):
        x = (vals + w).astype(np.int64)
        written = (row % 2 == 0) & (i >= 1)
        want = np.where(written, x[np.maximum(LANES - 1, 0)] + x, 0x55)
        assert np.array_equal(wv.v[6], want), f"wave {w}"


# -- private memory of the waves of one workgroup ---------------------------------------------
@pytest.mark.parametrize("lockstep,blocks", MODES, ids=IDS)
def test_scratch_is_private_to_each_wave_across_barriers(lockstep, blocks):
    """Four waves spill different values to the same scratch offsets, meet at a barrier,
    spill again and reload: each wave reads its own values (sgemm_tiled_O0's -O0 spills)."""
    lines = ["scratch_store_dword off, v1, s0 offset:8",
             "scratch_store_dwordx2 off, v[2:3], s0 offset:16",
             "s_waitcnt vmcnt(0)", "s_barrier",
             "scratch_load_dword v4, off, s0 offset:8",
             "s_waitcnt vmcnt(0)", "v_add_u32_e32 v4, 5, v4",
             "scratch_store_dword off, v4, s0 offset:8",
             "s_waitcnt vmcnt(0)", "s_barrier",
             "scratch_load_dword v5, off, s0 offset:8",
             "scratch_load_dwordx2 v[6:7], off, s0 offset:16",
             "s_waitcnt vmcnt(0)"]

    def setup(w, wv):
        wv.s[0] = 0
        wv.v[1] = LANES + 1000 * w
        wv.v[2] = LANES * 3 + 7 * w
        wv.v[3] = 0xFFFF0000 + w
    waves = _run(lines, 4, setup, lockstep, blocks, scratch=64)
    for w, wv in enumerate(waves):
        assert np.array_equal(wv.v[4], LANES + 1000 * w + 5), f"wave {w}"
        assert np.array_equal(wv.v[5], LANES + 1000 * w + 5), f"wave {w}"
        assert np.array_equal(wv.v[6], LANES * 3 + 7 * w), f"wave {w}"
        assert (wv.v[7] == 0xFFFF0000 + w).all(), f"wave {w}"

"""Compiled blocks of a lockstep group (asmevo.emu.lockstep_block, lockstep_blockgen) give
the results, instruction and lane counts and errors of the dispatching path and of one wave
at a time: a self-loop with the inline forms (global loads at a VGPR-pair address, a scalar
load, generated scalar code, v_lshl_add_u64, f32 FMAs on operands whose float64 sum needs
the exact path), with full EXEC, partial EXEC, waves whose trip counts differ, a global and
a scalar load that fault inside the loop, an unaligned address (the closure's way), and the
instruction limit reached inside the loop."""

import numpy as np
import pytest

from asmevo.emu import launch as L
from asmevo.emu import lockstep_block as LB
from asmevo.emu.executor import Program
from asmevo.emu.launch import _run_group
from asmevo.emu.memory import EmuError, GlobalMemory
from asmevo.emu.state import Wave, Workgroup

from .conftest import build_kernel
from .test_exec_fast import _special_f32

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
LANES = np.arange(64, dtype=np.uint64)

LOOP = [
    "s_mov_b32 s7, s20",
    "v_mov_b32_e32 v4, 0",
    "v_mov_b32_e32 v5, 1.0",
    "LOOP:",
    "global_load_dword v1, v[2:3], off",
    "s_load_dword s0, s[2:3], 0x0",
    "s_add_i32 s7, s7, -1",
    "s_add_u32 s2, s2, 4",
    "s_addc_u32 s3, s3, 0",
    "global_load_dwordx2 v[6:7], v[2:3], off offset:8",
    "v_lshl_add_u64 v[2:3], v[2:3], 0, 4",
    "v_lshl_add_u64 v[8:9], v[10:11], 1, s[12:13]",
    "s_cmp_eq_u32 s7, 0",
    "s_waitcnt vmcnt(0) lgkmcnt(0)",
    "v_fmac_f32_e32 v4, s0, v1",
    "v_fma_f32 v5, v6, v4, v7",
    "v_add_u32_e32 v10, v8, v1",
    "global_load_dword v12, v[2:3], off offset:4",     # (read only by an FMA: float32)
    "s_waitcnt vmcnt(0)",
    "v_fmac_f32_e32 v13, v12, v4",
    "v_fmac_f32_e32 v14, 0.5, v12",                    # (a constant operand)
    "v_fma_f32 v15, v12, s0, v15",                     # (the SGPR second)
    "s_cbranch_scc0 LOOP",
    "v_add_u32_e32 v11, 7, v4",
]


def _run(setup, lockstep, blocks, nwaves=4, limit=100000):
    """Run LOOP on ``nwaves`` waves set up by ``setup(waves, mem)``; (waves, program, error
    message or None)."""
    mem = GlobalMemory()
    group = Workgroup((0, 0, 0), 1024)
    waves = [Wave(group, i, None) for i in range(nwaves)]
    for wv in waves:
        wv.set_exec(np.ones(64, bool))
    setup(waves, mem)
    prog = Program(build_kernel(LOOP + ["s_endpgm"]), mem)
    old = L.LOCKSTEP, LB.ENABLED
    L.LOCKSTEP, LB.ENABLED = lockstep, blocks
    err = None
    try:
        with np.errstate(all="ignore"):
            _run_group(prog, waves, limit)
    except EmuError as e:
        err = str(e)
    finally:
        L.LOCKSTEP, LB.ENABLED = old
    return waves, prog, err, mem


def _setup(trips=(20, 20, 20, 20), partial=False, bad_lane=None, bad_scalar=False,
           unaligned=False):
    def setup(waves, mem):
        rng = np.random.default_rng(7)
        a = mem.map("A", _special_f32(rng, 64 * len(waves) * 40))
        x = mem.map("x", _special_f32(rng, 40))
        for w, wv in enumerate(waves):
            addr = a + 4 * 40 * (LANES + 64 * w)
            if bad_lane is not None and w == 1:
                addr[bad_lane] = a + 4 * 64 * len(waves) * 40 - 4 * 9     # leaves A in the loop
            if unaligned and w == 3:
                addr[9] += 2        # (the closure's general path reads it)
            wv.v[2] = addr & 0xFFFFFFFF
            wv.v[3] = addr >> 32
            wv.v[10] = rng.integers(0, 1 << 32, 64, dtype=np.uint64).astype(np.uint32)
            wv.v[11] = rng.integers(0, 1 << 32, 64, dtype=np.uint64).astype(np.uint32)
            xa = x + (4 * 36 if bad_scalar else 0)
            wv.s[2], wv.s[3] = xa & 0xFFFFFFFF, xa >> 32
            wv.s[12], wv.s[13] = 0xFFFFFFF0, 0x12345
            wv.s[20] = trips[w]
            if partial and w == 2:
                wv.set_exec((LANES % 3) != 0)
    return setup


def _same(runs):
    (wa, _, ea, _) = runs[0]
    for wb, _, eb, _ in runs[1:]:
        assert ea == eb
        for x, y in zip(wa, wb):
            assert np.array_equal(x.v[:16], y.v[:16])
            assert np.array_equal(x.s, y.s)
            assert (x.scc, x.count, x.lanes, x.done) == (y.scc, y.count, y.lanes, y.done)


def _compiled(prog):
    return [b for b in prog._lockstep_blocks if isinstance(b, LB.Block)]


@pytest.mark.parametrize("case", ["full", "partial", "trips", "unaligned", "fault",
                                  "scalar_fault", "limit"])
def test_block_matches_dispatch_and_one_wave(case):
    kw, limit = {}, 100000
    if case == "partial":
        kw = dict(partial=True)
    elif case == "trips":
        kw = dict(trips=(20, 20, 13, 20))
    elif case == "unaligned":
        kw = dict(unaligned=True)
    elif case == "fault":
        kw = dict(bad_lane=5)
    elif case == "scalar_fault":
        kw = dict(bad_scalar=True)
    elif case == "limit":
        limit = 150
    runs = [_run(_setup(**kw), ls, bl, limit=limit)
            for ls, bl in ((True, True), (True, False), (False, False))]
    if runs[0][2] is None:
        _same(runs)
    else:   # (one wave at a time, the waves before the failing one ran further)
        _same(runs[:2])
        assert runs[2][2] == runs[0][2]
    waves, prog, err, _ = runs[0]
    blk = _compiled(prog)
    # not vacuous: the loop ran as a compiled block (with its inline forms), the fault and
    # the limit were reached
    assert blk and blk[0].full is not None and "astype(F64)" in blk[0].source
    assert "words_f32[" in blk[0].source
    if case in ("fault", "scalar_fault"):
        assert err is not None and "outside every mapped buffer" in err
    elif case == "limit":
        assert err is not None and "more than 150 instructions" in err
    else:
        assert err is None and all(wv.done for wv in waves)
        assert waves[0].count > 200


def test_block_full_exec_path_taken(monkeypatch):
    """With full EXEC the inline variant runs (its calls are counted)."""
    calls = []
    real = LB._build

    def build(body, params, name):
        fn, src = real(body, params, name)

        def counted(*a):
            calls.append(name)
            return fn(*a)
        return counted, src
    monkeypatch.setattr(LB, "_build", build)
    _run(_setup(), True, True)
    assert any(n.endswith("full>") for n in calls)


def test_long_run_split_into_bounded_blocks():
    """A straight run longer than MAX_LEN becomes several blocks, none longer."""
    lines = ["v_add_u32_e32 v1, 1, v1", "s_add_u32 s4, s4, 1"] * (LB.MAX_LEN + 5)
    mem = GlobalMemory()
    prog = Program(build_kernel(lines + ["s_endpgm"]), mem)
    from asmevo.emu.lockstep import _F_UNI, _F_VEC, _fast_forms
    b = LB.blocks(prog, _fast_forms(prog), _F_VEC, _F_UNI)
    starts = [pc for pc, x in enumerate(b) if x is not None]
    ends = prog._lockstep_block_ends
    assert len(starts) >= 3 and all(ends[p] - p <= LB.MAX_LEN for p in starts)
    assert all(ends[p] <= q for p, q in zip(starts, starts[1:]))


def test_inline_fma_risk_test_is_npbackend_s():
    """The inline FMA's double-rounding test on the dwords of the float64 sums flags exactly
    the lanes of asmevo.semantics.npbackend._fma32's test (midpoints, the subnormal range,
    zeros, NaNs, infinities, random bits)."""
    from asmevo.emu.lockstep_blockgen import fma_buffers
    rng = np.random.default_rng(3)
    n = 4096
    u = rng.integers(0, 1 << 63, n, dtype=np.uint64) | \
        (rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(63))
    k = rng.integers(0, 5, n)
    u[k == 1] = (u[k == 1] & ~np.uint64(0x1FFFFFFF)) | np.uint64(0x10000000)   # midpoints
    u[k == 2] &= np.uint64(0x800FFFFFFFFFFFFF) | (np.uint64(0x380) << np.uint64(52))
    u[k == 3] = (u[k == 3] & np.uint64(0x800FFFFFFFFFFFFF)) | \
        (rng.integers(0x37F, 0x383, int((k == 3).sum()), dtype=np.uint64) << np.uint64(52))
    u[:8] = [0, 1 << 63, 0x7FF0000000000000, 0x7FF8000000000001, 0x3810000000000000,
             0x380FFFFFFFFFFFFF, 0x3FF0000010000000, 0x3FF0000030000000]
    T, TW, TM, TB, RX, RA, RL = fma_buffers(n)
    T.view(np.uint64)[:] = u
    np.bitwise_xor(TW, RX, out=TM)
    np.bitwise_and(TM, RA, out=TM)
    mine = np.less(TM, RL, out=TB).reshape(n, 2).any(axis=1)
    ref = ((u & np.uint64(0x1FFFFFFF)) == np.uint64(0x10000000)) | \
        ((u & np.uint64(0x7FF0000000000000)) < np.uint64(0x3810000000000000))
    assert np.array_equal(mine, ref) and 100 < ref.sum() < n


def test_scc_result_dropped_only_where_nothing_sees_it():
    """Generated scalar code leaves out an SCC result only when the next SCC access writes
    it and no instruction before that can leave the block (a load may fault)."""
    lines = ["s_add_i32 s7, s7, -1", "global_load_dword v1, v[2:3], off",
             "s_add_u32 s2, s2, 4", "s_add_u32 s3, s3, 1", "s_cmp_eq_u32 s3, 0",
             "s_cbranch_scc0 L", "L:"]
    prog = Program(build_kernel(lines + ["s_endpgm"]), GlobalMemory())
    from asmevo.emu.lockstep import _F_UNI, _F_VEC, _fast_forms
    fast = _fast_forms(prog)
    LB.blocks(prog, fast, _F_VEC, _F_UNI)
    end = prog._lockstep_block_ends[0]
    insts = [(pc, f"c{pc}", None, None, None) for pc in range(end)]
    params = {f"c{pc}": prog.code[pc] for pc in range(end)}
    assert LB._scc_dead(prog, fast, params, insts, True) == {2, 3}


def test_alignment_known_from_the_address_arithmetic():
    """An inline load skips the alignment test while its address pair is known to be a
    multiple of 4 (checked before, then advanced by multiples of 4); an SGPR step that is
    not one makes it test again (the unaligned loads take the closure's way)."""
    lines = ["s_mov_b32 s7, 12", "LOOP:",
             "global_load_dword v1, v[2:3], off",
             "v_lshl_add_u64 v[2:3], v[2:3], 0, s[14:15]",
             "s_sub_u32 s14, s14, 2",
             "s_add_i32 s7, s7, -1",
             "s_cmp_eq_u32 s7, 0",
             "s_waitcnt vmcnt(0)",
             "v_add_u32_e32 v4, v4, v1",
             "s_cbranch_scc0 LOOP"]

    def run(lockstep, blocks):
        mem = GlobalMemory()
        group = Workgroup((0, 0, 0), 1024)
        waves = [Wave(group, i, None) for i in range(2)]
        base = mem.map("A", np.arange(64 * 2 * 40, dtype=np.uint32) * 2654435761)
        for w, wv in enumerate(waves):
            wv.set_exec(np.ones(64, bool))
            addr = base + 4 * 40 * (LANES + 64 * w)
            wv.v[2], wv.v[3] = addr & 0xFFFFFFFF, addr >> 32
            wv.s[14], wv.s[15] = 24, 0     # steps 24, 22, ...: every other one unaligned
        prog = Program(build_kernel(lines + ["s_endpgm"]), mem)
        old = L.LOCKSTEP, LB.ENABLED
        L.LOCKSTEP, LB.ENABLED = lockstep, blocks
        try:
            _run_group(prog, waves, 100000)
        finally:
            L.LOCKSTEP, LB.ENABLED = old
        return waves, prog, None, mem
    runs = [run(ls, bl) for ls, bl in ((True, True), (True, False), (False, False))]
    _same(runs)
    src = _compiled(runs[0][1])[0].source
    assert "ok = al2 or" in src and "al2 = (al2) and (not s.item(14) & 3)" in src


FMA_LOOP = [
    "s_mov_b32 s7, s20",
    "LOOP:",
    "global_load_dword v1, v[2:3], off",
    "s_load_dword s0, s[2:3], 0x0",
    "s_add_i32 s7, s7, -1",
    "s_add_u32 s2, s2, 4",
    "s_addc_u32 s3, s3, 0",
    "v_lshl_add_u64 v[2:3], v[2:3], 0, 4",
    "s_cmp_eq_u32 s7, 0",
    "s_waitcnt vmcnt(0) lgkmcnt(0)",
    "v_fmac_f32_e32 v4, s0, v1",            # (an SGPR factor: NaNs among them)
    "v_fma_f32 v5, v5, v5, v5",             # (the destination is every source)
    "v_fmac_f32_e32 v6, v1, v1",            # (lanes * lanes)
    "v_fma_f32 v8, s0, v11, v12",           # (midpoint lanes: the correctly rounded way)
    "v_fma_f32 v13, v1, v11, v12",
    "v_fma_f32 v14, v1, s0, v14",           # (the SGPR second)
    "v_fmac_f32_e32 v15, 0x3f800001, v1",   # (a literal)
    "v_add_u32_e32 v9, s7, v9",             # (a closure reading a scalar local's SGPR)
    "s_cbranch_scc0 LOOP",
    "v_add_u32_e32 v10, s7, v4",
    "s_endpgm",
]


def test_inline_fma_forms_and_scalar_locals_bit_exact():
    """The inline FMA forms (an SGPR, a literal or lanes as factors, the destination as
    source, NaN payloads, infinities, subnormals, signed zeros, binary32-midpoint sums) and
    the scalar locals of a self-loop (SGPRs and SCC across passes, written back before a
    closure reads them) give the bits of the instruction-by-instruction runs."""
    from .test_exec_fast import MIDPOINT

    def run(lockstep, blocks, nwaves=2):
        rng = np.random.default_rng(11)
        mem = GlobalMemory()
        group = Workgroup((0, 0, 0), 1024)
        waves = [Wave(group, i, None) for i in range(nwaves)]
        trips = 24
        a_words = _special_f32(rng, 64 * nwaves * trips)
        a_words[::7] = MIDPOINT[0]
        x_words = _special_f32(rng, trips)
        x_words[3] = MIDPOINT[0]
        x_words[5] = 0x7FC00123     # (a quiet NaN with a payload)
        x_words[6] = 0x7F800005     # (a signaling one)
        a = mem.map("A", a_words)
        x = mem.map("x", x_words)
        for w, wv in enumerate(waves):
            wv.set_exec(np.ones(64, bool))
            addr = a + 4 * trips * (LANES + 64 * w)
            wv.v[2], wv.v[3] = addr & 0xFFFFFFFF, addr >> 32
            for r in (4, 5, 6, 9, 14, 15):
                wv.v[r] = _special_f32(rng, 64)
            wv.v[11] = np.where(LANES % 2 == 0, MIDPOINT[1], _special_f32(rng, 64))
            wv.v[12] = np.where(LANES % 3 == 0, MIDPOINT[2], _special_f32(rng, 64))
            wv.s[2], wv.s[3] = x & 0xFFFFFFFF, x >> 32
            wv.s[20] = trips
        prog = Program(build_kernel(FMA_LOOP), mem)
        old = L.LOCKSTEP, LB.ENABLED
        L.LOCKSTEP, LB.ENABLED = lockstep, blocks
        try:
            with np.errstate(all="ignore"):
                _run_group(prog, waves, 100000)
        finally:
            L.LOCKSTEP, LB.ENABLED = old
        return waves, prog, None, mem

    runs = [run(ls, bl) for ls, bl in ((True, True), (True, False), (False, False))]
    for (wa, *_), (wb, *_) in zip(runs, runs[1:]):
        for x, y in zip(wa, wb):
            assert np.array_equal(x.v[:16], y.v[:16])
            assert np.array_equal(x.s, y.s) and x.scc == y.scc and x.done and y.done
    blk = _compiled(runs[0][1])
    src = blk[0].source
    # not vacuous: the loop ran inline with the new forms and its SGPRs in locals
    assert blk[0].full is not None and "X[()] = " in src and "O_" in src
    assert "s7 = " in src and "scc = bool(" in src and "s[7] = s7" in src
    v = runs[0][0][0].v
    assert np.isnan(v[4].view(np.float32)).any() and (v[8] != v[13]).any()


def test_inline_fma_slow_way_taken_for_midpoints(monkeypatch):
    """The midpoint lanes of the FMA test above go the correctly rounded way (fma32)."""
    from asmevo.emu import lockstep_blockgen as G
    calls = []
    real = G.NAMESPACE["fma32"]
    monkeypatch.setitem(G.NAMESPACE, "fma32", lambda *a: calls.append(1) or real(*a))
    test_inline_fma_forms_and_scalar_locals_bit_exact()
    assert calls

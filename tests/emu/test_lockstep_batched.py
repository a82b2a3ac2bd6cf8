"""The group forms of asmevo.emu.lockstep (LDS, VOPC, SALU bitwise/saveexec, scratch,
per-workgroup SGPR operands, diverged waves) give bit-identical registers, LDS, scratch,
SCC, instruction and lane counts to running the waves one at a time; with partial EXEC
and with values that differ between the waves."""

import numpy as np
import pytest

from asmevo.emu import launch as L
from asmevo.emu.memory import ScratchMemory
from asmevo.emu.state import Wave, Workgroup
from tests.emu.conftest import run_group

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
LANES = np.arange(64)


def _run(lines, lockstep, nwaves=4, lds=4096, scratch=0, setup=None, groups=1, limit=100000):
    """Run ``lines`` on ``nwaves`` waves per workgroup, ``groups`` workgroups whose LDS are
    segments of one buffer (as asmevo.emu.launch lays them out)."""
    seg = lds
    buf = np.zeros(seg * groups, np.uint8)
    wgs = [Workgroup((g, 0, 0), lds, buf[g * seg:(g + 1) * seg]) for g in range(groups)]
    waves = []
    rng = np.random.default_rng(7)
    for g, wg in enumerate(wgs):
        wg.lds.words[:] = rng.integers(0, 1 << 32, wg.lds.words.size, dtype=np.uint32)
        for i in range(nwaves):
            wv = Wave(wg, i, ScratchMemory(scratch) if scratch else None)
            k = len(waves)
            wv.v[0] = LANES + 64 * i
            wv.v[9] = k
            wv.v[10:20] = rng.integers(0, 1 << 32, (10, 64), dtype=np.uint32)
            wv.s[8] = k
            wv.s[9] = g
            wv.set_exec(np.ones(64, bool))
            if scratch:
                wv.scratch.words[:] = rng.integers(0, 1 << 32, wv.scratch.words.shape,
                                                   dtype=np.uint32)
            if setup:
                setup(k, wv)
            waves.append(wv)
    run_group(lines, waves, None, lockstep, limit=limit)
    return waves, wgs


def _same(lines, **kw):
    a, ga = _run(lines, True, **kw)
    b, gb = _run(lines, False, **kw)
    for wa, wb in zip(a, b):
        assert np.array_equal(wa.v, wb.v)
        assert np.array_equal(wa.a, wb.a)
        assert np.array_equal(wa.s, wb.s)
        assert (wa.scc, wa.count, wa.lanes, wa.done) == (wb.scc, wb.count, wb.lanes, True)
        assert np.array_equal(wa.exec_mask, wb.exec_mask) and wa.exec_n == wb.exec_n
        if wa.scratch is not None:
            assert np.array_equal(wa.scratch.words, wb.scratch.words)
    for x, y in zip(ga, gb):
        assert np.array_equal(x.lds.words, y.lds.words)
    return a


def _partial(k, wv):
    if k % 2:
        wv.set_exec((LANES + 3 * k) % 5 != 0)


# each wave writes its own 1 KiB of LDS, except one store that all waves make to the same
# words (the waves' order decides, in both modes); a barrier separates writes and the
# reads of other waves' words
LDS = [
    "v_and_b32_e32 v2, 63, v0",
    "v_lshlrev_b32_e32 v2, 2, v2",
    "v_and_b32_e32 v3, 3, v9",
    "v_lshl_add_u32 v2, v3, 10, v2",               # 4 * lane + 1024 * (wave in group)
    "ds_write2_b32 v2, v10, v11 offset0:1 offset1:64",
    "ds_write_b64 v2, v[12:13] offset:512",
    "v_and_b32_e32 v4, 60, v2",
    "ds_write_b32 v4, v14 offset:4096",             # the same words in every wave
    "s_barrier",
    "v_xor_b32_e32 v5, 0x400, v2",
    "ds_read_b32 v39, v5 offset:512",               # the neighbour wave's words
    "ds_read_b32 v40, v4 offset:4096",
    "ds_read2_b32 v[20:21], v2 offset0:3 offset1:130",
    "ds_read2st64_b32 v[22:23], v2 offset1:2",
    "ds_read_b128 v[24:27], v2 offset:16",
    "ds_read2_b64 v[28:31], v2 offset0:1 offset1:9",
    "ds_write2_b64 v2, v[16:17], v[18:19] offset0:2 offset1:3",
    "ds_read_b64 v[32:33], v2 offset:24",
    "ds_swizzle_b32 v34, v10 offset:swizzle(SWAP,16)",
    "ds_swizzle_b32 v35, v11 offset:swizzle(BITMASK_PERM,\"01pip\")",
    "v_and_b32_e32 v3, 0xfc, v12",
    "ds_bpermute_b32 v36, v3, v13",
    "ds_permute_b32 v37, v3, v14",
    "ds_permute_b32 v38, v3, v14 offset:4",
]


@pytest.mark.parametrize("setup", [None, _partial], ids=["full", "partial"])
@pytest.mark.parametrize("groups", [1, 2])
def test_lds_forms(setup, groups):
    _same(LDS, setup=setup, groups=groups, nwaves=4 // groups, lds=8192)


def test_lds_out_of_range_falls_back_to_the_wave_error():
    from asmevo.emu.memory import EmuError
    msgs = []
    for lockstep in (True, False):
        with pytest.raises(EmuError) as e:
            _run(["v_lshlrev_b32_e32 v2, 4, v0", "ds_read2_b32 v[4:5], v2 offset1:255"],
                 lockstep, lds=2048)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


SALU = [
    "v_cmp_gt_u32_e64 s[10:11], v9, v0",            # differs per wave
    "v_cmp_lt_u32_e32 vcc, s8, v0",
    "s_xor_b64 s[12:13], s[10:11], vcc",
    "s_andn2_b64 s[14:15], s[12:13], s[10:11]",
    "s_orn2_b64 s[16:17], vcc, s[14:15]",
    "s_not_b64 s[18:19], s[16:17]",
    "s_mov_b64 s[20:21], s[18:19]",
    "s_nor_b64 s[22:23], s[10:11], s[20:21]",
    "s_and_b32 s24, s10, s12",
    "s_and_saveexec_b64 s[30:31], s[10:11]",
    "v_add_u32_e32 v1, s8, v0",
    "s_andn2_saveexec_b64 s[32:33], s[30:31]",
    "v_add_u32_e32 v1, 7, v1",
    "s_or_b64 exec, exec, s[30:31]",
    "v_cmpx_gt_u32_e32 vcc, 40, v0",
    "v_mov_b32_e32 v4, v1",
    "s_mov_b64 exec, -1",
    "v_cmp_ne_u32_e64 s[34:35], s9, v9",             # per-workgroup SGPR: per run
    "v_cmpx_lt_u32_e64 s[36:37], s9, v0",
    "v_mov_b32_e32 v46, 1",
    "s_mov_b64 exec, -1",
    "s_cselect_b32 s36, 1, 2",
    "v_add_co_u32_e32 v40, vcc, v10, v11",              # carry-out masks, one per wave
    "v_mad_u64_u32 v[42:43], s[40:41], v10, v11, v[12:13]",
    "v_sub_co_u32_e64 v44, s[42:43], s9, v10",          # per-workgroup SGPR operand
    "v_addc_co_u32_e32 v45, vcc, v10, v11, vcc",        # carry-in: wave by wave
    "s_and_b64 s[44:45], s[40:41], s[42:43]",
]


@pytest.mark.parametrize("setup", [None, _partial], ids=["full", "partial"])
def test_vopc_and_scalar_bitwise_forms(setup):
    w = _same(SALU, setup=setup, groups=2, nwaves=2)
    assert len({int(wv.s[12]) | int(wv.s[13]) << 32 for wv in w}) > 1   # not vacuous


SCRATCH = [
    "s_mov_b32 s4, 16",
    "scratch_store_dwordx2 off, v[10:11], s4 offset:8",
    "scratch_store_dword off, v12, off offset:4",
    "scratch_load_dwordx4 v[20:23], off, s4",
    "scratch_load_dword v24, off, off offset:4",
    "s_mov_b32 s5, 2",
    "scratch_load_dword v25, off, s5",              # unaligned: the byte path
    "v_lshlrev_b32_e32 v2, 2, v0",
    "v_and_b32_e32 v2, 60, v2",
    "scratch_load_dword v26, v2, off",              # per-lane address
]


@pytest.mark.parametrize("setup", [None, _partial], ids=["full", "partial"])
def test_scratch_forms(setup):
    _same(SCRATCH, setup=setup, scratch=64)


DIVERGE = [
    "s_mov_b32 s10, 0",
    ".Lloop:",                                       # trip count = wave index + 1
    "v_add_u32_e32 v1, s10, v1",
    "s_add_u32 s10, s10, 1",
    "s_cmp_le_u32 s10, s8",
    "s_cbranch_scc1 .Lloop",
    "v_cmp_gt_u32_e32 vcc, 70, v0",                  # waves 2.. have EXEC = 0 inside
    "s_and_saveexec_b64 s[2:3], vcc",
    "s_cbranch_execz .Lend_if",
    "v_lshlrev_b32_e32 v5, 2, v0",
    "ds_write_b32 v5, v1",
    ".Lend_if:",
    "s_or_b64 exec, exec, s[2:3]",
    "s_barrier",
    "v_lshlrev_b32_e32 v6, 2, v0",
    "v_and_b32_e32 v6, 0x1fc, v6",
    "ds_read_b32 v7, v6",
    "v_add_u32_e32 v8, s8, v7",                      # SGPR operand differs per wave
    "s_cmp_eq_u32 s8, 1",
    "s_cbranch_scc0 .Lskip",
    "s_barrier",                                     # a barrier only wave 1 reaches here
    ".Lskip:",
    "s_barrier",
    "v_add_u32_e32 v11, v8, v1",
]


@pytest.mark.parametrize("setup", [None, _partial], ids=["full", "partial"])
def test_diverged_waves_regroup(setup):
    _same(DIVERGE, setup=setup)


def test_per_workgroup_sgpr_operand_runs_per_group():
    w = _same(["v_add_u32_e32 v1, s9, v0", "v_mul_lo_u32 v2, s9, v1",
               "v_cmp_gt_u32_e32 vcc, s9, v0", "v_cndmask_b32_e64 v3, 0, 1, vcc"],
              groups=4, nwaves=2, setup=_partial)
    assert w[7].v[1, 5] == 3 + 5 + 64


def test_group_forms_are_used(monkeypatch):
    """Not vacuous: the forms above run for the whole group (no wave-by-wave fallback)."""
    from asmevo.emu import lockstep as LS
    used = []
    for fname in ("_ds_batch", "_cmp_batch", "_sbit_batch", "_scratch_batch"):
        f = getattr(LS, fname)

        def wrap(*a, _f=f, _n=fname, **k):
            r = _f(*a, **k)
            used.append((_n, r))
            return r
        monkeypatch.setattr(LS, fname, wrap)
    _run(LDS, True, lds=8192, setup=_partial)
    _run(SALU, True, groups=2, nwaves=2, setup=_partial)
    _run(SCRATCH, True, scratch=64, setup=_partial)
    n = {k: sum(1 for a, r in used if a == k and r is not False) for k in dict(used)}
    assert n["_ds_batch"] == 16 and n["_scratch_batch"] == 4
    assert ("_scratch_batch", False) in used        # the unaligned load: wave by wave
    assert n["_cmp_batch"] >= 5 and n["_sbit_batch"] >= 8


def test_runaway_loop_that_splits_and_merges_is_stopped():
    from asmevo.emu.memory import EmuError
    prog = [".Lloop:", "s_cmp_eq_u32 s8, 0", "s_cbranch_scc1 .La", "s_nop 0", ".La:",
            "s_branch .Lloop"]
    for lockstep in (True, False):
        with pytest.raises(EmuError, match="runaway"):
            _run(prog, lockstep, limit=1000)


DPP = [
    "v_add_u32_dpp v20, v10, v11 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf",
    "v_add_u32_dpp v21, v10, v11 row_shr:3 row_mask:0xf bank_mask:0xf bound_ctrl:1",
    "v_add_u32_dpp v22, v10, v11 row_shl:1 row_mask:0xa bank_mask:0xf",
    "v_mov_b32_dpp v23, v12 row_bcast:15 row_mask:0xa bank_mask:0xf",
    "v_mov_b32_dpp v24, v12 row_bcast:31 row_mask:0xc bank_mask:0xf",
    "v_max_f32_dpp v25, v13, v14 wave_shr:1 row_mask:0xf bank_mask:0x5",
    "v_add_f32_dpp v26, v13, v14 row_ror:7 row_mask:0xf bank_mask:0xf bound_ctrl:1",
    "v_mov_b32_dpp v27, v15 row_mirror row_mask:0xf bank_mask:0xf",
    "v_add_u32_dpp v28, v15, v11 wave_rol:1 row_mask:0xf bank_mask:0xf",
]


@pytest.mark.parametrize("setup", [None, _partial], ids=["full", "partial"])
def test_dpp_forms(setup):
    from asmevo.emu.lockstep import classify
    from asmevo.frontend.asm_parser import parse_instruction
    assert all(classify(parse_instruction(x))[0] == "vec" for x in DPP)   # for the group
    _same(DPP, setup=setup)


ATOMICS = [
    "v_and_b32_e32 v2, 0x3c, v10",                   # 16 words: many lanes per word
    "v_mov_b32_e32 v3, 0x42",
    "ds_add_u32 v2, v11",
    "ds_sub_u32 v2, v12 offset:64",
    "ds_xor_b32 v2, v13 offset:128",
    "ds_or_b32 v2, v13 offset:192",
    "ds_and_b32 v2, v14 offset:256",
    "ds_min_u32 v2, v15 offset:320",
    "ds_max_i32 v2, v15 offset:384",
    "ds_min_i32 v2, v16 offset:448",
    "ds_max_u32 v2, v16 offset:512",
    "ds_add_rtn_u32 v20, v2, v11 offset:576",        # with return: lane by lane
    "ds_add_u32 v3, v11 offset:2",                    # unaligned: byte path
    "s_barrier",
    "ds_read_b128 v[24:27], v2",
]


@pytest.mark.parametrize("setup", [None, _partial], ids=["full", "partial"])
@pytest.mark.parametrize("groups", [1, 2])
def test_lds_atomics(setup, groups):
    _same(ATOMICS, setup=setup, groups=groups, nwaves=4 // groups)


def test_lds_atomics_equal_lane_by_lane(monkeypatch):
    """The all-lanes update gives what the lane-by-lane loop gives."""
    from asmevo.emu import exec_ds, lockstep_forms
    fast, gf = _run(ATOMICS, True, setup=_partial)
    monkeypatch.setattr(exec_ds, "UFUNC_AT", {})
    monkeypatch.setattr(lockstep_forms, "UFUNC_AT", {})
    slow, gs = _run(ATOMICS, False, setup=_partial)
    for a, b in zip(fast, slow):
        assert np.array_equal(a.v, b.v) and a.lanes == b.lanes
    assert np.array_equal(gf[0].lds.words, gs[0].lds.words)


GLOBAL_ATOMICS = [
    "v_and_b32_e32 v2, 15, v10",
    "v_lshlrev_b32_e32 v2, 2, v2",
    "global_atomic_add v2, v11, s[2:3]",
    "global_atomic_umax v2, v12, s[2:3] offset:64",
    "global_atomic_smin v2, v13, s[2:3] offset:128",
    "global_atomic_xor v2, v14, s[2:3] offset:192",
]


def test_global_atomics_equal_lane_by_lane(snippet, monkeypatch):
    from asmevo.emu import exec_mem
    outs = []
    for fast in (True, False):
        if not fast:
            monkeypatch.setattr(exec_mem, "UFUNC_AT", {})
        s = snippet(GLOBAL_ATOMICS, nwaves=2)
        base = s.mem.map("buf", np.arange(64, dtype=np.uint32))
        rng = np.random.default_rng(3)
        for wv in s.waves:
            wv.v[10:15] = rng.integers(0, 1 << 32, (5, 64), dtype=np.uint32)
            wv.s[2], wv.s[3] = base & 0xFFFFFFFF, base >> 32
        s.waves[1].set_exec(LANES % 3 != 0)
        s.run()
        outs.append(s.mem.region("buf").words.copy())
    assert np.array_equal(outs[0], outs[1]) and not np.array_equal(outs[0], np.arange(64))


SALU_GROUPS = [
    "s_mul_i32 s20, s9, 3",                  # s9: the workgroup (2 waves each)
    "s_lshl_b32 s22, s20, 2",                # writes SCC
    "s_cselect_b32 s23, 5, 6",
    "s_cmp_eq_u32 s9, 1",
    "s_cselect_b32 s24, 7, 8",               # SCC differs between the groups
    "s_add_u32 s25, s20, s8",                # differs in every wave: wave by wave
    "s_and_saveexec_b64 s[26:27], s[20:21]",
    "v_mov_b32_e32 v30, s25",
    "s_mov_b64 exec, -1",
    "s_cmp_lt_u32 s9, 2",
    "s_cbranch_scc1 .Lx",
    "s_mul_i32 s28, s9, s9",
    ".Lx:",
    "s_add_u32 s29, s9, 1",
    "s_sext_i32_i8 s30, s20",                # (not a numpy form: once per group)
    "s_ff1_i32_b32 s31, s22",
]


def test_scalar_groups(monkeypatch):
    from asmevo.emu import lockstep as LS
    calls = []
    orig = LS._Group._run_groups
    monkeypatch.setattr(LS._Group, "_run_groups",
                        lambda self, *a: calls.append(1) or orig(self, *a))

    def setup(k, wv):
        wv.s[20:22] = 0
        wv.s[21] = 1 << (k % 3)      # an EXEC source that differs
    _same(SALU_GROUPS, groups=4, nwaves=2, setup=setup)
    assert len(calls) >= 2


LM_SOURCES = [
    "v_cmp_gt_u32_e64 s[10:11], v9, v0",             # a mask that differs per wave
    "v_cmp_lt_u32_e32 vcc, v11, v10",
    "v_cndmask_b32_e64 v20, v12, v13, s[10:11]",
    "v_cndmask_b32_e32 v21, v12, v13, vcc",
    "v_cndmask_b32_e64 v22, 0, 1.0, s[10:11]",
    "v_add_co_u32_e32 v23, vcc, v10, v11",
    "v_addc_co_u32_e32 v24, vcc, v12, v13, vcc",     # carry in and out
    "v_subb_co_u32_e64 v25, s[12:13], v14, s9, s[10:11]",
    "v_cndmask_b32_e64 v26, v12, v13, -1",
    "v_div_fmas_f32 v27, v12, v13, v14",              # implicit VCC
]


@pytest.mark.parametrize("setup", [None, _partial], ids=["full", "partial"])
def test_lane_mask_sources(setup):
    from asmevo.emu.lockstep import classify
    from asmevo.frontend.asm_parser import parse_instruction
    assert classify(parse_instruction(LM_SOURCES[2]))[0] == "vec"
    _same(LM_SOURCES, setup=setup, groups=2, nwaves=2)


@pytest.mark.slow
@pytest.mark.corpus
@pytest.mark.parametrize("name", ["aiter_topksoftmax", "aiter_bwd_odo_fp16",
                                  "aiter_bwd_dq_convert_fp16", "aiter_i8gemm_16x128",
                                  "aiter_i8gemm_16x128_splitk2"])
def test_aiter_lockstep_bit_identical(corpus_dir, name):
    """The hand-written AITer kernels (buffer loads to LDS, MFMA, DPP, wide scalar loads):
    outputs, counts and lane counts with and without lockstep are identical."""
    import os
    from asmevo.emu import harness as H
    from asmevo.emu import run_kernel
    from asmevo.frontend.loader import load
    co_root = corpus_dir / "aiter" / "gfx942"
    if not co_root.is_dir():
        pytest.skip("no AITer corpus")
    h = H.load_harness(os.path.join(os.path.dirname(__file__), "data", name + ".json"))
    module = load(str(co_root / h["code_object"]))
    inputs = H.make_inputs(h, 1)
    res = []
    old = L.LOCKSTEP
    try:
        for lockstep in (True, False):
            L.LOCKSTEP = lockstep
            res.append(run_kernel(module, h["kernel"], H.make_launch(h, inputs)))
    finally:
        L.LOCKSTEP = old
    a, b = res
    assert (a.instructions, a.lane_instructions, a.waves) == \
        (b.instructions, b.lane_instructions, b.waves)
    for k in a.outputs:
        assert a.outputs[k].tobytes() == b.outputs[k].tobytes(), k


SUBDWORD = [
    "v_and_b32_e32 v2, 0x3ff, v10",
    "v_and_b32_e32 v3, 0x3fe, v10",
    "v_mov_b32_e32 v20, v12",
    "v_mov_b32_e32 v21, v13",
    "ds_read_u8 v4, v2",
    "ds_read_i8 v5, v2 offset:3",
    "ds_read_u16 v6, v3",
    "ds_read_i16 v7, v3 offset:6",
    "ds_read_u16 v8, v2",                              # odd addresses: the byte path
    "ds_read_u16_d16 v20, v3 offset:2",
    "ds_read_u16_d16_hi v20, v3 offset:4",
    "ds_read_u8_d16_hi v21, v2",
    "ds_read_i8_d16 v21, v2 offset:1",
]


@pytest.mark.parametrize("setup", [None, _partial], ids=["full", "partial"])
@pytest.mark.parametrize("groups", [1, 2])
def test_lds_subdword_reads(setup, groups):
    _same(SUBDWORD, setup=setup, groups=groups, nwaves=4 // groups)


def _snp_program():
    from asmevo.emu.lockstep_forms import SNP_OPS
    from asmevo.semantics.registry import lookup
    lines = []
    for k, name in enumerate(sorted(SNP_OPS)):
        spec = lookup(name)
        w = lambda ty: int(ty[1:])                                     # noqa: E731
        srcs = []
        for j, ty in enumerate(spec.src):
            if w(ty) == 64:
                srcs.append(f"s[{10 + 2 * j}:{11 + 2 * j}]")
            else:
                srcs.append(f"s{10 + j}" if (k + j) % 3 else str(-5 + k))   # some constants
        dst = [f"s[{40 + 2 * (k % 8)}:{41 + 2 * (k % 8)}]" if w(t) == 64 else f"s{40 + k % 16}"
               for t in spec.dst]
        lines += [f"{name} {', '.join(dst + srcs)}", "s_cselect_b32 s60, 1, 0",
                  "v_mov_b32_e32 v30, s60", "v_add_u32_e32 v31, s40, v31",
                  "s_add_u32 s10, s10, s41", "s_cmp_lt_u32 s11, s12"]
    return lines


def test_scalar_numpy_forms_equal_the_int_closures(monkeypatch):
    from asmevo.emu import lockstep as LS
    used = []
    orig = LS._snp_batch
    monkeypatch.setattr(LS, "_snp_batch", lambda *a: used.append(a[0][1]) or orig(*a))
    rng = np.random.default_rng(11)
    vals = rng.integers(0, 1 << 32, (8, 12), dtype=np.uint64).astype(np.uint32)
    vals[:, 2] &= 0x3f                                  # small shift counts in s12
    vals[1, :4] = [0xFFFFFFFF, 1, 0x80000000, 0x7FFFFFFF]

    def setup(k, wv):
        wv.s[10:22] = vals[k]
        wv.scc = bool(k % 2)
    _same(_snp_program(), nwaves=8, setup=setup)
    from asmevo.emu.lockstep_forms import SNP_OPS
    from asmevo.semantics.registry import lookup
    assert {lookup(n).fn for n in SNP_OPS} <= set(used)     # every one ran for the group

"""The trace-driven CU model on real corpus kernels: it runs on every one, is deterministic,
and ranks what it should (metamorphic tests of issue 10).  Every figure is a model estimate."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from asmevo.emu import harness as H
from asmevo.frontend.asm_parser import parse_instruction
from asmevo.frontend.loader import load
from asmevo.perf import estimate
from asmevo.perf.machine import MI300X, Machine, Param
from asmevo.perf.profile import BOTTLENECKS, CAUSES

#: all workgroups on one CU: makes occupancy matter for the corpus' small launches
ONE_CU = Machine("MI300X, one CU", dict(MI300X.params, cus=Param("cus", 1, "CUs", "test", "I")))

METAMORPHIC = ["vadd_f32", "sgemm_tiled", "softmax_row", "transpose_lds", "layernorm",
               "mfma_16x16x16_f16", "row_sum", "scan_inclusive_i32_O1"]


def _entries(corpus_dir):
    for sub in ("", "triton"):
        p = corpus_dir / sub / "manifest.json"
        if p.is_file():
            for e in json.load(open(p)):
                yield str(p), e["name"]


def _setup(corpus_dir, name):
    man = next(m for m, n in _entries(corpus_dir) if n == name)
    h = H.load_harness(man, name)
    path = os.path.join(h["_dir"], h["code_object"])
    return h, path


def _cycles(path, h, edit=None, machine=None):
    m = load(path)
    k = m.kernel(h["kernel"])
    if edit is not None:
        edit(k)
    with np.errstate(all="ignore"):
        p = estimate(m, k, harness=h, machine=machine)
    return p.kernel()


def _hot_loop_inst(kp, k):
    """The instruction with the most attributed clk among those executed more often than
    the kernel's first one (inside a loop), else the hottest one."""
    insts = list(k.instructions())
    first = kp.instructions[0].hits
    rows = [r for r in kp.instructions if r.hits > first] or kp.instructions
    r = max(rows, key=lambda r: (r.latency, -r.index))
    return insts[r.index]


def test_every_corpus_kernel_profiles(corpus_dir):
    n = 0
    for man, name in _entries(corpus_dir):
        h = H.load_harness(man, name)
        m = load(os.path.join(h["_dir"], h["code_object"]))
        with np.errstate(all="ignore"):
            p = estimate(m, h["kernel"], harness=h)
        assert p.estimated and p.source == "model-trace"
        k = p.kernel()
        assert k.cycles > 0 and k.microseconds == pytest.approx(k.cycles / 2100)
        assert 1 <= k.occupancy <= 8 and k.bottleneck in BOTTLENECKS
        insts = list(m.kernel(h["kernel"]).instructions())
        assert [r.index for r in k.instructions] == list(range(len(insts)))
        for r in k.instructions:
            assert set(r.causes) <= set(CAUSES)
            assert r.latency == pytest.approx(sum(r.causes.values()), rel=1e-6, abs=1e-6)
            assert r.stall + r.idle <= r.latency + 1e-6
        json.dumps(p.to_json())
        n += 1
    assert n >= 30


@pytest.mark.parametrize("name", ["sgemm_tiled", "transpose_lds"])
def test_deterministic(corpus_dir, name):
    h, path = _setup(corpus_dir, name)
    a, b = _cycles(path, h), _cycles(path, h)
    assert a.cycles == b.cycles
    assert [r.causes for r in a.instructions] == [r.causes for r in b.instructions]


@pytest.mark.parametrize("name", METAMORPHIC)
def test_nop_in_hot_loop_never_faster(corpus_dir, name):
    h, path = _setup(corpus_dir, name)
    base = _cycles(path, h)

    def edit(k):
        k.insert_before(_hot_loop_inst(base, k), parse_instruction("s_nop 7"))
    assert _cycles(path, h, edit).cycles >= base.cycles


@pytest.mark.parametrize("name", METAMORPHIC)
def test_wait_after_every_global_load_never_faster(corpus_dir, name):
    h, path = _setup(corpus_dir, name)
    base = _cycles(path, h)

    def edit(k):
        for inst in [i for i in k.instructions() if i.opcode.startswith(("global_load", "buffer_load"))]:
            k.insert_after(inst, parse_instruction("s_waitcnt vmcnt(0)"))
    assert _cycles(path, h, edit).cycles >= base.cycles


@pytest.mark.parametrize("name", ["vadd_f32", "row_sum", "conv1d", "gather_scatter_f32"])
def test_halved_occupancy_never_faster_when_memory_bound(corpus_dir, name):
    h, path = _setup(corpus_dir, name)
    base = _cycles(path, h, machine=ONE_CU)

    def edit(k):
        from asmevo.analysis.regbudget import RegisterBudget
        occ = RegisterBudget(k).occupancy
        d = k.descriptor
        while RegisterBudget(k).occupancy > max(1, occ // 2):
            d.granulated_workitem_vgpr_count += 1
    low = _cycles(path, h, edit, machine=ONE_CU)
    assert low.occupancy <= max(1, base.occupancy // 2)
    assert low.cycles >= base.cycles


@pytest.mark.parametrize("name", METAMORPHIC)
def test_needless_wait_removed_never_slower(corpus_dir, name):
    """A kernel with a needless wait (a copy of each s_waitcnt right after it: the counters
    are already there) is never faster than the kernel without them."""
    h, path = _setup(corpus_dir, name)
    base = _cycles(path, h)

    def edit(k):
        for inst in [i for i in k.instructions() if i.opcode == "s_waitcnt"]:
            k.insert_after(inst, parse_instruction(inst.text()))
    assert base.cycles <= _cycles(path, h, edit).cycles


@pytest.mark.parametrize("name", METAMORPHIC)
def test_waits_relaxed_to_what_is_needed_never_slower(corpus_dir, name):
    """Relaxing every s_waitcnt to what the waitcnt analysis says it needs never costs time."""
    from asmevo.analysis.waitcnt import MAX, WaitcntAnalysis, make_waitcnt, parse_waitcnt
    h, path = _setup(corpus_dir, name)
    base = _cycles(path, h)
    changed = []

    def edit(k):
        wa = WaitcntAnalysis(k)
        for inst in [i for i in k.instructions() if i.opcode == "s_waitcnt"]:
            have = parse_waitcnt(inst)
            need = wa.required(inst)
            new = (need.get("vmcnt", MAX[0]), need.get("lgkmcnt", MAX[1]), have[2])
            new = tuple(max(a, b) for a, b in zip(new, have))
            if new != have:
                w = make_waitcnt(new)
                k.replace(inst, [w] if w is not None else [])
                changed.append(inst)
    relaxed = _cycles(path, h, edit)
    assert relaxed.cycles <= base.cycles


# ------------------------------------------------------------------ placement (no corpus)
def _chase(n=8):
    from asmevo.perf import calibration as C
    return C.global_chase(n)


def _chase_cycles(grid, **kw):
    from asmevo.perf import calibration as C
    buf = C._chain_buffer(2048, 128, 1024)
    return C.run_model(_chase(), block=256, grid=grid, buf=buf, **kw)


def test_workgroups_overlap_up_to_the_wave_slots_then_queue():
    """Latency-bound waves: 8 workgroups of 4 waves (32 = 8 per SIMD) overlap; 16 take
    two rounds, the second in the slots the first frees."""
    one = _chase_cycles(1).cycles
    eight = _chase_cycles(8)
    sixteen = _chase_cycles(16)
    assert eight.workgroups == 8 and sixteen.waves == 64
    assert eight.cycles < 1.5 * one
    assert 1.6 * eight.cycles < sixteen.cycles < 2.4 * eight.cycles


def test_lds_limits_resident_workgroups():
    """32 KiB of LDS per workgroup: two resident at a time, so 8 take 4 rounds (the later
    ones faster: the chain is then in the L1)."""
    free = _chase_cycles(8).cycles
    lds = _chase_cycles(8, lds=32768).cycles
    assert lds > 2.2 * free


def test_occupancy_limits_resident_waves():
    free = _chase_cycles(8).cycles
    low = _chase_cycles(8, occupancy=2).cycles       # 2 waves per SIMD: 2 workgroups at a time
    assert low > 2.2 * free


def test_lds_the_trace_touches_counts_for_occupancy():
    """A kernel whose descriptor declares no LDS but addresses 40 KiB of it (dynamic LDS, as
    Triton kernels do) holds one workgroup per CU in the model."""
    from asmevo.emu.launch import Arg, Launch
    from asmevo.perf import calibration as C
    body = "v_mov_b32 v1, 0xa000\nds_write_b32 v1, v0\ns_waitcnt lgkmcnt(0)\n"
    m = C.load_kernel(C.kernel_text(body))
    la = Launch((256, 1, 1), (2, 1, 1), [Arg("buf", "buffer", "uint32",
                                              data=np.zeros(64, np.uint32), role="inout")])
    kp = estimate(m, "k", la).kernel()
    assert kp.extra["lds_per_workgroup"] >= 0xa004
    assert kp.occupancy_limit == "lds"

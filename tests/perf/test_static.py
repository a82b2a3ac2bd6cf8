"""Static per-wave estimate (asmevo/perf/static.py): issue, waits, hazards, weights, occupancy,
parameters read from the machine description, determinism; corpus kernels run."""

import pytest

from asmevo.frontend.asm_parser import parse_asm
from asmevo.perf.machine import MI300X, load_machine
from asmevo.perf.static import MODEL, POLICY, estimate_static, straight_line_cycles


def kernel_text(body: str, name: str = "k") -> str:
    lines = "\n".join("\t" + ln.strip() if ln.strip() and not ln.strip().endswith(":") else ln.strip()
                      for ln in body.strip().splitlines())
    return (f"\t.text\n\t.globl\t{name}\n\t.type\t{name},@function\n{name}:\n{lines}\n"
            f".Lfunc_end0:\n\t.size\t{name}, .Lfunc_end0-{name}\n")


def module(body: str):
    return parse_asm(kernel_text(body), "k.s")


def insts(body: str):
    return list(module(body).kernels[0].instructions())


def static(body: str, machine=None):
    m = module(body)
    return estimate_static(m, m.kernels[0], machine=machine).kernel()


def test_profile_shape_and_labels():
    m = module("v_add_f32_e32 v1, v0, v0\ns_endpgm")
    p = estimate_static(m, "k")
    assert p.source == "model-static" and p.estimated is True
    assert p.model == MODEL and p.model["name"] and p.model["version"]
    kp = p.kernel()
    assert [r.index for r in kp.instructions] == [0, 1]
    assert [r.pc for r in kp.instructions] == [0, 4]
    assert kp.cycles > 0 and kp.microseconds == pytest.approx(kp.cycles / MI300X.clock_mhz)
    assert kp.occupancy == 8 and kp.occupancy_limit == "waves"
    assert sum(w.share for w in kp.windows) == pytest.approx(1.0)


def test_issue_slot_and_nop_wait_states():
    slot = MI300X["issue.wave_slot_clk"]
    ws = MI300X["issue.wait_state_clk"]
    base = straight_line_cycles(insts("v_add_f32_e32 v1, v0, v0\nv_add_f32_e32 v2, v1, v1"))
    nop = straight_line_cycles(insts("v_add_f32_e32 v1, v0, v0\ns_nop 7\nv_add_f32_e32 v2, v1, v1"))
    assert base == 2 * slot
    assert nop - base == 8 * ws  # s_nop 7 supplies 8 wait states
    kp = static("s_nop 3\ns_endpgm")
    assert kp.instructions[0].causes == {"hazard": 4 * ws}


def test_waitcnt_costs_the_outstanding_load_latency():
    body = "global_load_dword v1, v[2:3], off\ns_waitcnt vmcnt(0)\nv_add_f32_e32 v4, v1, v1\ns_endpgm"
    kp = static(body)
    f = POLICY["load_l2_fraction"]
    load = f * MI300X["latency.l2_hit"] + (1 - f) * MI300X["latency.hbm"]
    wait = kp.instructions[1]
    assert wait.causes["vmcnt"] == pytest.approx(load - MI300X["issue.wave_slot_clk"])
    # vmcnt(1) with one load outstanding waits for nothing
    kp = static("global_load_dword v1, v[2:3], off\ns_waitcnt vmcnt(1)\ns_endpgm")
    assert "vmcnt" not in kp.instructions[1].causes
    # in-order vmcnt: vmcnt(1) after two loads waits for the first
    kp = static("global_load_dword v1, v[2:3], off\nglobal_load_dword v5, v[2:3], off\n"
                "s_waitcnt vmcnt(1)\ns_endpgm")
    assert kp.instructions[2].causes["vmcnt"] == pytest.approx(load - 2 * MI300X["issue.wave_slot_clk"])


def test_lgkm_smem_out_of_order_waits_for_all():
    kp = static("s_load_dword s4, s[0:1], 0x0\ns_load_dword s5, s[0:1], 0x4\n"
                "s_waitcnt lgkmcnt(1)\ns_endpgm")
    # SMEM returns out of order: lgkmcnt(1) identifies nothing, the model waits for all
    assert kp.instructions[2].causes["lgkmcnt"] > 0


def test_parameters_come_from_the_machine(tmp_path):
    f = tmp_path / "slow.toml"
    f.write_text('name = "slow-hbm"\n[latency]\nhbm = 1800\n')
    slow = load_machine(str(f))
    body = "global_load_dword v1, v[2:3], off\ns_waitcnt vmcnt(0)\ns_endpgm"
    a = static(body)
    b = static(body, machine=slow)
    assert b.extra["wave_latency"] > a.extra["wave_latency"]
    m = module(body)
    assert estimate_static(m, "k", machine=slow).machine == "slow-hbm"


def test_mfma_dependency_and_pipe():
    ws = MI300X["issue.wait_state_clk"]
    # independent MFMAs: the second waits for the pipe (8 passes of a 32x32x8 f16)
    ind = static("v_mfma_f32_32x32x8_f16 v[0:15], v[32:33], v[34:35], v[0:15]\n"
                 "v_mfma_f32_32x32x8_f16 v[16:31], v[32:33], v[34:35], v[16:31]\ns_endpgm")
    assert ind.instructions[1].causes.get("pipe", 0) == pytest.approx(8 * 4 - MI300X["issue.wave_slot_clk"])
    # a VALU reading the result waits passes + 3 wait states (GCNHazardRecognizer gfx940)
    dep = static("v_mfma_f32_32x32x8_f16 v[0:15], v[32:33], v[34:35], v[0:15]\n"
                 "v_add_f32_e32 v40, v0, v0\ns_endpgm")
    assert dep.instructions[1].causes["dependency"] > 8 * 4 - MI300X["issue.wave_slot_clk"]
    assert dep.instructions[1].causes["dependency"] <= (8 + 3 + 1) * ws


def test_loop_and_branch_weights():
    body = """
    s_mov_b32 s4, 0
    .LBB0_1:
    v_add_f32_e32 v1, v1, v1
    s_add_u32 s4, s4, 1
    s_cmp_lg_u32 s4, 16
    s_cbranch_scc1 .LBB0_1
    s_cmp_eq_u32 s5, 0
    s_cbranch_scc1 .LBB0_3
    v_add_f32_e32 v2, v1, v1
    .LBB0_3:
    s_endpgm
    """
    kp = static(body)
    hits = [r.hits for r in kp.instructions]
    assert hits[0] == 1.0
    assert hits[1:5] == [POLICY["loop_weights"][0]] * 4
    assert hits[7] == POLICY["uniform_branch"]      # the uniform if body
    assert hits[-1] == 1.0                          # the join post-dominates the branch
    w = kp.windows[0]
    assert (w.start, w.end) == (1, 4) and w.block == ".LBB0_1"


def test_occupancy_scales_a_latency_bound_kernel():
    body = "global_load_dword v1, v[2:3], off\ns_waitcnt vmcnt(0)\nv_add_f32_e32 v4, v1, v1\ns_endpgm"
    m = module(body)
    full = estimate_static(m, "k").kernel()
    m2 = module(body.replace("v4", "v255"))  # 256 VGPRs: 2 waves per SIMD
    low = estimate_static(m2, "k").kernel()
    assert low.occupancy == 2 and low.occupancy_limit == "vgpr"
    assert low.cycles > full.cycles


def test_deterministic():
    body = "global_load_dword v1, v[2:3], off\ns_waitcnt vmcnt(0)\nv_exp_f32_e32 v4, v1\ns_endpgm"
    m = module(body)
    a = estimate_static(m, "k")
    b = estimate_static(module(body), "k")
    assert a.digest() == b.digest()


@pytest.mark.corpus
def test_corpus_clang_kernels(corpus_dir):
    from asmevo.frontend.loader import load
    for co in sorted(corpus_dir.glob("*.co"))[:40]:
        m = load(str(co))
        for k in m.kernels:
            if not k.is_kernel:
                continue
            kp = estimate_static(m, k, top=5).kernel(k.name)
            assert kp.cycles > 0, co
            assert len(kp.instructions) == k.num_instructions()
            assert all(0 < w.share <= 1 for w in kp.windows)
            assert kp.bottleneck


def test_loop_top_wait_pays_for_the_previous_iteration():
    """A load issued at the bottom of a loop and waited for at its top (software pipelining):
    the steady-state pass charges the wait (ACO's single pass would not)."""
    body = """
    global_load_dword v1, v[2:3], off
    s_mov_b32 s4, 0
    s_mov_b32 s5, 0
    s_mov_b32 s6, 0
    s_mov_b32 s7, 0
    s_mov_b32 s8, 0
    s_mov_b32 s9, 0
    .LBB0_1:
    s_waitcnt vmcnt(0)
    v_add_f32_e32 v4, v1, v4
    global_load_dword v1, v[2:3], off
    s_add_u32 s4, s4, 1
    s_cmp_lg_u32 s4, 16
    s_cbranch_scc1 .LBB0_1
    s_endpgm
    """
    kp = static(body)
    wait = kp.instructions[7]
    f = POLICY["load_l2_fraction"]
    load = f * MI300X["latency.l2_hit"] + (1 - f) * MI300X["latency.hbm"]
    # per iteration the wait covers the previous iteration's load minus the 4 slots from its
    # issue to the end of the iteration (the entry path, 7 slots, is the max-join's loser)
    assert wait.causes["vmcnt"] / wait.hits == pytest.approx(load - 4 * MI300X["issue.wave_slot_clk"])


def test_vmem_pipe_takes_the_wave_bytes_at_the_vl1_rate():
    kp = static("global_load_dwordx4 v[4:7], v[2:3], off\nglobal_load_dwordx4 v[8:11], v[2:3], off\n"
                "s_endpgm")
    busy = 64 * 16 / MI300X["bw.vl1_bytes_per_clk_cu"]  # 1 KiB per wave at 128 B/clk = 8 clk
    assert kp.instructions[1].causes["pipe"] == pytest.approx(busy - MI300X["issue.wave_slot_clk"])


@pytest.mark.slow
@pytest.mark.corpus
def test_largest_aiter_kernel_within_budget(corpus_dir):
    """benchmarks/profile.py measures it (target 3 s); here a 2x margin on CPU time for a
    loaded machine."""
    import time
    from asmevo.frontend.loader import load
    path = max((corpus_dir / "aiter").rglob("*.co"), key=lambda p: p.stat().st_size)
    m = load(str(path))
    k = max((k for k in m.kernels if k.is_kernel), key=lambda k: k.num_instructions())
    assert k.num_instructions() > 30000
    t = time.process_time()
    kp = estimate_static(m, k, top=10).kernel(k.name)
    assert time.process_time() - t < 6.0
    assert kp.cycles > 0 and len(kp.windows) == 10

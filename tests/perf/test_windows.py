"""Hot windows (asmevo/perf/windows.py): cut inside blocks, merged over a loop body, ranked by
attributed clk, shares and pcs, bottleneck classes from causes and instruction categories."""

from asmevo.frontend.asm_parser import parse_asm
from asmevo.perf.profile import BOTTLENECKS, InstructionRow
from asmevo.perf.windows import MAX_LEN, classify, hot_windows, kernel_pcs, row_causes


def kernel(body: str):
    lines = "\n".join(ln.strip() if ln.strip().endswith(":") else "\t" + ln.strip()
                      for ln in body.strip().splitlines() if ln.strip())
    text = f"\t.text\n\t.globl\tk\n\t.type\tk,@function\nk:\n{lines}\n.Lend:\n\t.size\tk, .Lend-k\n"
    return parse_asm(text, "k.s").kernels[0]


def rows_for(k, cycles, causes=None):
    out = []
    for i, (inst, pc) in enumerate(zip(k.instructions(), kernel_pcs(k))):
        c = cycles[i]
        out.append(InstructionRow(i, pc, inst.text(), 1, c, 0.0, 0.0,
                                  dict(causes[i]) if causes else ({"issue": c} if c else {})))
    return out


def test_windows_stay_inside_blocks_and_rank():
    k = kernel("""
    v_add_f32_e32 v1, v0, v0
    v_add_f32_e32 v2, v0, v0
    s_cbranch_scc1 .LBB0_2
    v_mul_f32_e32 v3, v0, v0
    v_mul_f32_e32 v4, v0, v0
    .LBB0_2:
    s_endpgm
    """)
    rows = rows_for(k, [4, 4, 4, 40, 40, 4])
    ws = hot_windows(k, rows)
    assert [(w.start, w.end) for w in ws] == [(3, 4), (0, 2), (5, 5)]
    assert abs(sum(w.share for w in ws) - 1.0) < 1e-9
    assert ws[0].share == 80 / 96 and ws[0].start_pc == 12 and ws[0].end_pc == 16
    assert hot_windows(k, rows, top=1) == ws[:1]
    assert all(w.bottleneck in BOTTLENECKS for w in ws)


def test_long_block_is_cut_around_its_hottest_run_and_cold_ends_trimmed():
    n = 100
    k = kernel("\n".join(["v_add_f32_e32 v1, v0, v0"] * n + ["s_endpgm"]))
    cyc = [0.0] * 10 + [1.0] * 40 + [50.0] * 5 + [1.0] * 45 + [0.0]
    ws = hot_windows(k, rows_for(k, cyc))
    assert all(w.end - w.start + 1 <= MAX_LEN for w in ws)
    hot = ws[0]
    assert hot.start <= 50 and hot.end >= 54
    assert min(w.start for w in ws) == 10  # the zero-clk head is trimmed
    assert sum(w.cycles for w in ws) == sum(cyc)


def test_loop_body_blocks_merge():
    k = kernel("""
    s_mov_b32 s4, 0
    .LBB0_1:
    v_add_f32_e32 v1, v1, v1
    s_cbranch_vccz .LBB0_3
    v_mul_f32_e32 v2, v1, v1
    .LBB0_3:
    s_add_u32 s4, s4, 1
    s_cmp_lg_u32 s4, 16
    s_cbranch_scc1 .LBB0_1
    s_endpgm
    """)
    ws = hot_windows(k, rows_for(k, [4, 32, 32, 32, 32, 32, 32, 4]))
    assert (ws[0].start, ws[0].end) == (1, 6) and ws[0].block == ".LBB0_1"


def test_bottleneck_classes():
    k = kernel("""
    global_load_dword v1, v[2:3], off
    s_waitcnt vmcnt(0)
    ds_read_b32 v5, v6
    s_waitcnt lgkmcnt(0)
    s_nop 7
    v_mfma_f32_32x32x8_f16 v[0:15], v[32:33], v[34:35], v[0:15]
    s_barrier
    s_endpgm
    """)
    insts = list(k.instructions())
    R = lambda c: InstructionRow(0, 0, "", 1, sum(c.values()), 0, 0, c)  # noqa: E731
    assert classify(insts[:2], [None, R({"vmcnt": 500})]) == "memory-latency"
    assert classify(insts[:2], [None, R({"vmcnt": 500})], "memory-bandwidth") == "memory-bandwidth"
    assert classify(insts[2:4], [None, R({"lgkmcnt": 50})]) == "lds"
    assert classify(insts[4:5], [R({"hazard": 32})]) == "hazard-nops"
    assert classify(insts[5:6], [R({"pipe": 64, "issue": 4})]) == "mfma"
    assert classify(insts[6:7], [R({"barrier": 100})]) == "barrier"
    assert classify(insts[:1], [R({"idle": 100, "issue": 4})]) == "occupancy"


def test_hardware_rows_without_causes():
    k = kernel("s_waitcnt vmcnt(0) lgkmcnt(0)\ns_barrier\nv_add_f32_e32 v1, v0, v0\ns_endpgm")
    insts = list(k.instructions())
    r = InstructionRow(0, 0, "", 3, 100.0, 80.0, 10.0)
    assert row_causes(r, insts[0]) == {"idle": 10.0, "vmcnt": 80.0, "issue": 10.0}
    assert row_causes(r, insts[1])["barrier"] == 80.0
    assert row_causes(r, insts[2])["dependency"] == 80.0

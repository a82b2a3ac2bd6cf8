"""compare(a, b): speedup, per-window deltas matched across shifted indices, estimate flags."""

import pytest

from asmevo.frontend.asm_parser import parse_asm
from asmevo.perf import compare as compare_reexported
from asmevo.perf.compare import align, compare
from asmevo.perf.profile import Profile
from asmevo.perf.static import estimate_static

BODY = """
s_mov_b32 s4, 0
.LBB0_1:
global_load_dword v1, v[2:3], off
s_waitcnt vmcnt(0)
v_add_f32_e32 v4, v1, v1
s_add_u32 s4, s4, 1
s_cmp_lg_u32 s4, 16
s_cbranch_scc1 .LBB0_1
v_mul_f32_e32 v5, v4, v4
s_endpgm
"""


def prof(body: str) -> Profile:
    lines = "\n".join(ln.strip() if ln.strip().endswith(":") else "\t" + ln.strip()
                      for ln in body.strip().splitlines() if ln.strip())
    m = parse_asm(f"\t.text\n\t.globl\tk\n\t.type\tk,@function\nk:\n{lines}\n.Le:\n\t.size\tk, .Le-k\n",
                  "k.s")
    return estimate_static(m, "k")


def test_reexported():
    assert compare_reexported(prof(BODY), prof(BODY)).speedup == 1.0


def test_speedup_and_window_deltas_follow_shifted_indices():
    a = prof(BODY)
    # candidate: a nop before the loop shifts every index; the loop wait is gone (faster)
    b = prof(BODY.replace("s_mov_b32 s4, 0", "s_mov_b32 s4, 0\ns_nop 0").replace(
        "s_waitcnt vmcnt(0)\n", ""))
    c = compare(a, b)
    assert c.speedup == pytest.approx(a.kernel().cycles / b.kernel().cycles) and c.speedup > 1
    assert c.faster and c.estimated and c.both_estimated and c.same_model and not c.note
    loop = next(d for d in c.windows if d.a_start == 1)
    assert loop.b_start == 2  # shifted by the inserted nop
    assert loop.delta < 0
    assert c.to_json()["speedup"] == c.speedup


def test_slower_candidate_and_sources():
    a = prof(BODY)
    b = prof(BODY.replace("v_add_f32_e32 v4, v1, v1", "v_add_f32_e32 v4, v1, v1\ns_nop 7"))
    c = compare(a, b)
    assert c.speedup < 1 and not c.faster
    hw = Profile.from_json(b.to_json())
    hw.estimated = False
    hw.source = "hardware"
    hw.model = {"name": "rocprofv3-att", "version": "stats_csv"}
    c2 = compare(a, hw)
    assert c2.estimated and not c2.both_estimated and not c2.same_model and c2.note


def test_missing_kernel():
    with pytest.raises(KeyError):
        compare(prof(BODY), prof(BODY), kernel="nope")


def test_align_by_opcode_survives_renames():
    a = ["v_add_f32_e32 v1, v0, v0", "s_nop 0", "v_mul_f32_e32 v2, v1, v1", "s_endpgm"]
    b = ["v_add_f32_e32 v9, v0, v0", "v_mul_f32_e32 v8, v9, v9", "s_endpgm"]
    assert align(a, b) == {0: 0, 2: 1, 3: 2}


def test_align_is_fast_and_exact_on_a_long_kernel():
    import random
    import time
    rng = random.Random(7)
    ops = ["v_add_f32_e32", "v_mul_f32_e32", "v_fma_f32", "s_add_u32", "global_load_dword",
           "s_waitcnt", "v_mfma_f32_32x32x8_f16", "ds_read_b32"]
    a = [f"{rng.choice(ops)} v{rng.randrange(256)}, v{rng.randrange(256)}" for _ in range(30000)]
    b = list(a)
    b.insert(10, "s_nop 0")           # near the start
    del b[15001]                      # in the middle (a[15000] is gone)
    b[20000] = b[20000].split()[0] + " v999, v998"   # a renamed instruction
    b.insert(len(b) - 5, "s_nop 7")   # near the end
    t = time.process_time()
    amap = align(a, b)
    assert time.process_time() - t < 5.0
    assert amap[0] == 0 and amap[10] == 11 and amap[14999] == 15000
    assert 15000 not in amap and amap[15001] == 15001
    assert amap[20000 - 1 + 0] == 20000 - 1 + 0 and amap[20000] == 20000  # renamed: by opcode
    assert amap[len(a) - 1] == len(b) - 1

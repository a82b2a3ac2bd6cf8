"""Tests written for the mutants of asmevo/emu that survived the mutation probe
(scripts/mutation_probe.py, seed 14): each names the mutant it kills.  Oracles: the same
computation written another way (VGPR vs AGPR operands), the ISA guide's register layout,
hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
LANES = np.arange(64)


def test_mfma_f64_reads_agpr_pairs_like_vgpr_pairs(snippet):
    # exec_common 64-bit AGPR reader: high dword << 32 (mutant: << 33)
    rng = np.random.default_rng(5)
    a = rng.uniform(-4, 4, 64)
    b = rng.uniform(-4, 4, 64)
    ab = a.view(np.uint64)
    bb = b.view(np.uint64)
    lo = lambda x: (x & 0xFFFFFFFF).astype(np.uint32)            # noqa: E731
    hi = lambda x: (x >> np.uint64(32)).astype(np.uint32)        # noqa: E731
    outs = []
    for srcs in ("v[2:3], v[4:5]", "a[2:3], a[4:5]"):
        s = snippet([f"v_mfma_f64_4x4x4_4b_f64 v[0:1], {srcs}, 0", "s_nop 7", "s_nop 7"])
        for f in (s.w.v, s.w.a):
            f[2], f[3], f[4], f[5] = lo(ab), hi(ab), lo(bb), hi(bb)
        s.run()
        outs.append((s.w.v[0].astype(np.uint64) | (s.w.v[1].astype(np.uint64) << np.uint64(32))).copy())
    assert np.array_equal(outs[0], outs[1])
    assert np.any(outs[0] != 0)


def test_getreg_of_mode_by_number_and_by_name(snippet):
    # exec_lane: hwreg 1 is MODE (mutant: only the name, or 2)
    s = snippet(["s_getreg_b32 s10, hwreg(HW_REG_MODE, 0, 32)", "s_getreg_b32 s11, hwreg(1, 0, 32)",
                 "s_getreg_b32 s12, hwreg(1, 4, 4)"])
    s.run()
    assert int(s.w.s[10]) == int(s.w.s[11])
    assert int(s.w.s[12]) == (int(s.w.s[10]) >> 4) & 0xF


def test_global_atomic_swap_returns_old_and_stores_new():
    # exec_mem atomic `swap` -> the new value (mutant: the rule dropped)
    from planted_kernels import run_text_kernel
    body = """
        v_or_b32_e32 v2, 0x5000, v0
        global_atomic_swap v3, v1, v2, s[4:5] glc
        s_waitcnt vmcnt(0)
        global_store_dword v1, v3, s[4:5] offset:256
        v_mov_b32_e32 v4, 0
        v_or_b32_e32 v5, 0x7000, v0
        global_atomic_swap_x2 v[6:7], v4, v[4:5], s[8:9] glc
    """
    out = run_text_kernel(body, np.zeros(8, np.uint32), block=64, out_words=128,
                          out_init=0x1234)
    assert out[:64].tolist() == (0x5000 | LANES).tolist()     # the new values
    assert out[64:128].tolist() == [0x1234] * 64               # the old ones returned


def test_trace_smem_address_is_the_full_64_bit_base():
    # trace.py SMEM address: base = lo | hi << 32 (mutant: &)
    from asmevo.emu import run_kernel
    from asmevo.emu.launch import Arg, Launch
    from asmevo.emu.trace import Tracer
    from planted_kernels import load_text_kernel
    m = load_text_kernel("""
        v_mov_b32_e32 v2, s2
        v_mov_b32_e32 v3, s3
        v_mov_b32_e32 v4, 0
        global_store_dwordx2 v4, v[2:3], s[4:5]
    """)
    tr = Tracer()
    la = Launch((64, 1, 1), (1, 1, 1), [
        Arg("out", "buffer", "uint32", data=np.zeros(4, np.uint32), role="out"),
        Arg("in", "buffer", "uint32", data=np.zeros(4, np.uint32), role="in"),
        Arg("n", "scalar", "int32", value=0)])
    res = run_kernel(m, "k", la, trace=tr)
    out = np.asarray(res.outputs["out"]).view(np.uint32)
    kernarg = int(out[0]) | (int(out[1]) << 32)
    assert kernarg >> 32, "the kernarg segment is above 4 GiB in the emulator's map"
    (w,) = tr.waves
    smem = [int(np.asarray(a).ravel()[0]) for pos, a in sorted(w.addrs.items())][:3]
    assert smem == [kernarg, kernarg + 8, kernarg + 16]


@pytest.mark.parametrize("doc,words", [([5], "the number 5"), ([True], "the boolean true"),
                                       (["x"], "the string 'x'"), ([[1]], "a list")])
def test_harness_errors_name_what_they_got(tmp_path, doc, words):
    # harness._kind (mutant: the number case dropped -> "None")
    import json
    from asmevo.emu.harness import load_harness
    from asmevo.errors import AsmevoError
    p = tmp_path / "h.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(AsmevoError, match=f"is {words}; expected an object"):
        load_harness(str(p))


def test_global_atomic_pk_add_bf16_rounds_ties_to_even():
    # exec_mem pk_add_bf16: RNE is + 0x7fff + lsb (mutant: + 0x8000 rounds ties up)
    from planted_kernels import run_text_kernel
    body = """
        v_mov_b32_e32 v2, 0x3b803b80
        v_mov_b32_e32 v3, 0
        global_atomic_pk_add_bf16 v3, v2, s[4:5]
        v_mov_b32_e32 v4, 0x3c003c00
        global_atomic_pk_add_bf16 v3, v4, s[4:5] offset:4
    """
    # 1.0 + 2**-8 = 0x3f808000 in f32: exactly halfway, the even bf16 is 0x3f80;
    # 1.0 + 2**-7 = 0x3f810000: exact, 0x3f81
    out = run_text_kernel(body, np.zeros(4, np.uint32), block=1, out_words=2, out_init=0x3F803F80)
    assert [hex(int(x)) for x in out[:2]] == ["0x3f803f80", "0x3f813f81"]


def test_trace_scratch_addresses_interleave_dwords_by_lane():
    # trace.py scratch: (offset >> 2) * 256 + lane * 4 + (offset & 3) (mutant: << 2)
    from asmevo.emu import run_kernel
    from asmevo.emu.launch import Arg, Launch
    from asmevo.emu.trace import SCRATCH_BASE, Tracer
    from planted_kernels import kernel_text
    from asmevo.frontend.asm_parser import parse_asm
    from asmevo.frontend.loader import fill_text_abi
    text = kernel_text("""
        scratch_store_dword off, v0, off offset:0
        scratch_store_dword off, v0, off offset:4
        scratch_store_dword off, v0, off offset:12
    """).replace(".amdhsa_private_segment_fixed_size 0", ".amdhsa_private_segment_fixed_size 16") \
        .replace("\t\t.amdhsa_user_sgpr_dispatch_id 1\n",
                 "\t\t.amdhsa_user_sgpr_dispatch_id 1\n\t\t.amdhsa_enable_private_segment 1\n") \
        .replace(".private_segment_fixed_size: 0", ".private_segment_fixed_size: 16")
    m = parse_asm(text, "k.s")
    fill_text_abi(m)
    tr = Tracer()
    la = Launch((64, 1, 1), (1, 1, 1), [
        Arg("out", "buffer", "uint32", data=np.zeros(4, np.uint32), role="out"),
        Arg("in", "buffer", "uint32", data=np.zeros(4, np.uint32), role="in"),
        Arg("n", "scalar", "int32", value=0)])
    run_kernel(m, "k", la, trace=tr)
    (w,) = tr.waves
    addrs = [np.asarray(a, np.uint64) for _, a in sorted(w.addrs.items())][-3:]
    base = int(addrs[0][0])
    assert base >= SCRATCH_BASE
    for a, off in zip(addrs, (0, 4, 12)):
        assert (a.astype(np.int64) - base).tolist() == [(off >> 2) * 256 + 4 * ln for ln in range(64)]


LOCKSTEP_PROG = """
    s_load_dword s10, s[2:3], 0x10
    v_lshrrev_b32_e32 v2, 6, v0
    s_waitcnt lgkmcnt(0)
    v_and_b32_e32 v3, 63, v0
    v_add_u32_e32 v3, v3, v2
    v_cmpx_gt_u32_e32 vcc, 40, v3
    v_add_u32_e32 v4, s10, v0
    s_mov_b64 exec, -1
    v_mov_b32_e32 v5, s10
    v_cmp_gt_u32_e64 s[12:13], 20, v3
    v_cndmask_b32_e64 v6, 0, 1, s[12:13]
    v_add_u32_e32 v4, v4, v6
    global_store_dword v1, v4, s[4:5]
"""


def test_lockstep_matches_wave_by_wave_with_exec_writes_and_scalar_loads():
    # lockstep_forms: instructions that load SGPRs from memory or write EXEC are not run in
    # the shared form (mutant: the guard dropped)
    import asmevo.emu.launch as L
    from planted_kernels import run_text_kernel
    outs = []
    for lockstep in (True, False):
        old = L.LOCKSTEP
        L.LOCKSTEP = lockstep
        try:
            outs.append(run_text_kernel(LOCKSTEP_PROG, np.zeros(4, np.uint32), block=256,
                                        n=1000, out_words=256, out_init=7))
        finally:
            L.LOCKSTEP = old
    assert outs[0].tolist() == outs[1].tolist()
    tid = np.arange(256)
    t3 = (tid & 63) + (tid >> 6)
    want = np.where(t3 < 40, 1000 + tid + (t3 < 20), 0)     # v4 stays 0 where EXEC was off
    assert outs[1].tolist() == want.tolist()


def test_scratch_store_with_per_lane_offsets(snippet):
    # exec_mem scratch store: the uniform-offset fast path only when the offset is uniform
    # (mutant: `o is None` flipped -- per-lane offsets took the uniform path)
    s = snippet(["scratch_store_dword v1, v0, off", "scratch_store_dword off, v2, off offset:64",
                 "scratch_load_dword v3, v1, off", "scratch_load_dword v4, off, off offset:64"],
                scratch=256)
    s.w.v[0] = LANES * 3 + 1
    s.w.v[1] = (LANES % 8) * 4          # eight different private offsets
    s.w.v[2] = LANES + 100
    s.run()
    assert s.w.v[3].tolist() == (LANES * 3 + 1).tolist()
    assert s.w.v[4].tolist() == (LANES + 100).tolist()
    # a uniform but unaligned offset takes the general path too
    s = snippet(["scratch_store_dword off, v2, off offset:6", "scratch_load_dword v4, off, off offset:6",
                 "scratch_load_ushort v5, off, off offset:8"], scratch=256)
    s.w.v[2] = LANES * 0x10001 + 0x12340000
    s.run()
    assert s.w.v[4].tolist() == s.w.v[2].tolist()
    assert s.w.v[5].tolist() == (s.w.v[2] >> 16).tolist()


def test_ds_cmpst_compares_data0_and_stores_data1(snippet):
    # exec_ds: DS_CMPST_B32 -- MEM = (MEM == DATA) ? DATA2 : MEM (CDNA3 ISA guide)
    # (mutant: the second data operand dropped)
    s = snippet(["ds_write_b32 v1, v2", "s_waitcnt lgkmcnt(0)",
                 "ds_cmpst_b32 v1, v3, v4", "s_waitcnt lgkmcnt(0)",
                 "ds_cmpst_rtn_b32 v5, v1, v6, v7", "s_waitcnt lgkmcnt(0)",
                 "ds_read_b32 v8, v1", "s_waitcnt lgkmcnt(0)"])
    s.w.v[1] = LANES * 4
    s.w.v[2] = np.where(LANES % 2 == 0, 5, 6)      # even lanes hold 5, odd lanes 6
    s.w.v[3] = 5                                     # compare with 5 ...
    s.w.v[4] = 9                                     # ... and store 9 where equal
    s.w.v[6] = 9
    s.w.v[7] = 11
    s.run()
    first = np.where(LANES % 2 == 0, 9, 6)
    assert s.w.v[5].tolist() == first.tolist()                     # the old value returned
    assert s.w.v[8].tolist() == np.where(first == 9, 11, 6).tolist()

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

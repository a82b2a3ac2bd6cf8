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

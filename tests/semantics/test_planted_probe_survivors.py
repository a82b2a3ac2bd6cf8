"""Tests written for the mutants of asmevo/semantics that survived the mutation probe
(scripts/mutation_probe.py, seed 14): each names the mutant it kills.

Oracles: the CDNA3 ISA guide's pseudocode (hand-computed values), and the emulator (numpy
backend) for the z3 backend's own code paths (DPP row_newbcast, swizzles, FMA_MIX without
op_sel, the always-false compare, buffer idxen+offen), which both backends must agree on.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
import z3

from asmevo.frontend.asm_parser import parse_instruction as P
from asmevo.semantics import lookup
from asmevo.semantics.npbackend import NP
from asmevo.verify.equiv import check_windows

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _f32(x):
    return np.array([x], np.float32).view(np.uint32)


def _f64(x):
    return np.array([x], np.float64).view(np.uint64)


# valu.py `big = 96 if w == 32 else 768` (mutant: w == 31): V_DIV_SCALE's "numerator far above
# the denominator" branch -- exponent(S2) - exponent(S1) >= 96 (f32) / 768 (f64): D scaled by
# 2**64 / 2**128 when S0 == S1, VCC set.
@pytest.mark.parametrize("w,big,sc", [(32, 96, 64), (64, 768, 128)])
def test_div_scale_numerator_far_above_denominator(w, big, sc):
    enc = _f32 if w == 32 else _f64
    fn = lookup(f"v_div_scale_f{w}").fn
    d, vcc = fn(NP, enc(1.0), enc(1.0), enc(2.0 ** (big + 4)))
    assert bool(np.asarray(vcc).ravel()[0]) is True
    got = np.asarray(d).view(np.float32 if w == 32 else np.float64).ravel()[0]
    assert got == 2.0 ** sc
    # below the threshold: nothing scaled, VCC clear
    d, vcc = fn(NP, enc(1.0), enc(1.0), enc(2.0 ** (big - 4)))
    assert bool(np.asarray(vcc).ravel()[0]) is False
    assert np.asarray(d).view(np.float32 if w == 32 else np.float64).ravel()[0] == 1.0


# immediates.py: an integer literal of an f64 operand outside the inline range -16..64 is the
# high 32 bits of the double (mutants: range 64 -> 65; the rule dropped).
def test_f64_integer_literal_is_the_high_half():
    from asmevo.semantics.immediates import imm_bits
    assert imm_bits(64, "f64") == 64                      # inline constant
    assert imm_bits(65, "f64") == 65 << 32                # literal: high half
    assert imm_bits(-17, "f64") == 0xFFFFFFEF << 32
    assert imm_bits(0x40080000, "f64") == struct.unpack("<Q", struct.pack("<d", 3.0))[0]
    assert imm_bits(65, "b64") == 65                      # integer operands: not shifted


def test_f64_integer_literal_in_an_emulated_kernel():
    from planted_kernels import run_text_kernel
    body = """
        v_mov_b32_e32 v2, 0
        v_mov_b32_e32 v3, 0
        v_add_f64 v[4:5], 0x40080000, v[2:3]
        v_add_f64 v[6:7], 64, v[2:3]
        v_mov_b32_e32 v8, 0
        global_store_dwordx2 v8, v[4:5], s[4:5]
        global_store_dwordx2 v8, v[6:7], s[4:5] offset:8
    """
    out = run_text_kernel(body, np.zeros(4, np.uint32), block=1, out_words=4)
    assert out[:2].view(np.float64).tolist() == [3.0]
    # an integer inline constant is its integer bit pattern, not converted to a float
    assert int(out[2:4].view(np.uint64)[0]) == 64


# -- z3 backend paths, against the emulator --------------------------------------------

def _z3_vs_emulator(prog, vinit, check_v):
    import test_z3_backend as tz        # tests/semantics is on sys.path (conftest)
    tz._compare_with_emulator(prog, vinit, {}, check_v,
                              lanes=(0, 1, 2, 3, 5, 7, 8, 15, 16, 17, 30, 31, 32, 47, 48, 63))


VALS = (np.arange(64, dtype=np.uint32) * 0x01000193 + 0x2545F491) & 0xFFFFFFFF


def test_dpp_row_newbcast_z3_matches_emulator():
    # z3backend `src = row | lane_n` (mutant: &)
    _z3_vs_emulator(["v_mov_b32_dpp v1, v0 row_newbcast:5 row_mask:0xf bank_mask:0xf",
                     "v_add_u32_dpp v2, v0, v0 row_newbcast:14 row_mask:0xf bank_mask:0xf"],
                    {0: VALS, 1: np.zeros(64, np.uint32), 2: np.zeros(64, np.uint32)}, [1, 2])


def test_swizzle_reverse_and_default_offset():
    # lanes.py REVERSE `lane & ~(g - 1)` (mutant: ~(g + 1)); z3backend's swizzle default
    # offset 0 (mutant: -1)
    _z3_vs_emulator(["ds_swizzle_b32 v1, v0 offset:swizzle(REVERSE,8)",
                     "ds_swizzle_b32 v2, v0 offset:swizzle(REVERSE,4)",
                     "ds_swizzle_b32 v3, v0"],
                    {0: VALS}, [1, 2, 3])
    import test_z3_backend as tz
    s = tz._snippet_class()(["ds_swizzle_b32 v1, v0 offset:swizzle(REVERSE,8)"])
    s.w.v[0] = np.arange(64, dtype=np.uint32)
    s.run()
    lanes = np.arange(64)
    want = (lanes & ~7) | (7 - (lanes & 7))
    assert s.w.v[1].tolist() == want.tolist()
    r = check_windows([P("ds_swizzle_b32 v3, v0")], [P("ds_swizzle_b32 v3, v0 offset:0")])
    assert r.status == "equivalent", r.text()


def test_fma_mix_without_op_sel_z3_matches_emulator():
    # z3backend `_mix`: op_sel absent means (0, 0, 0) (mutant: (0, -1, 0))
    h = np.array([1.5, -2.0, 0.25, 3.0], np.float16).view(np.uint16).astype(np.uint32)
    v1 = np.resize(h[0] | (h[1] << 16), 64).astype(np.uint32)
    v2 = np.resize(h[2] | (h[3] << 16), 64).astype(np.uint32)
    v3 = np.resize(h[1] | (h[2] << 16), 64).astype(np.uint32)
    _z3_vs_emulator(["v_fma_mix_f32 v4, v1, v2, v3 op_sel_hi:[1,1,1]"],
                    {1: v1, 2: v2, 3: v3}, [4])
    r = check_windows([P("v_fma_mix_f32 v4, v1, v2, v3 op_sel_hi:[1,1,1]")],
                      [P("v_fma_mix_f32 v4, v1, v2, v3 op_sel:[0,0,0] op_sel_hi:[1,1,1]")],
                      live_out=[("v", 4)])
    assert r.status == "equivalent", r.text()


def test_always_false_compare_writes_zero():
    # z3backend fcmp("f") returns False (mutant: falls through to an ordered compare)
    for ins in ("v_cmp_f_f32_e32 vcc, v1, v2", "v_cmp_f_f64_e32 vcc, v[2:3], v[4:5]"):
        r = check_windows([P(ins)], [P("s_mov_b64 vcc, 0")], live_out=[("vcc_lo",), ("vcc_hi",)])
        assert r.status == "equivalent", (ins, r.text())
    r = check_windows([P("v_cmp_tru_f32_e32 vcc, v1, v2")], [P("s_mov_b64 vcc, exec")],
                      live_out=[("vcc_lo",), ("vcc_hi",)])
    assert r.status == "equivalent", r.text()


def test_buffer_idxen_offen_is_modelled():
    # z3backend: with idxen and offen, the index is vaddr[31:0] (mutant: a 33-bit field)
    w = [P("buffer_load_dword v5, v[0:1], s[4:7], 0 idxen offen")]
    r = check_windows(w, w)
    assert r.status == "equivalent", r.text()
    w2 = [P("buffer_store_dword v5, v[0:1], s[4:7], 0 idxen offen")]
    assert check_windows(w2, w2).status == "equivalent"
    # a different index register is a different address
    r = check_windows(w2, [P("buffer_store_dword v5, v[2:3], s[4:7], 0 idxen offen")])
    assert r.status == "not equivalent", r.text()


@pytest.mark.parametrize("ctrl", ["row_shl:3", "row_shr:5", "row_ror:7", "row_mirror", "row_half_mirror",
                                  "quad_perm:[2,0,3,1]", "row_bcast:15", "row_bcast:31",
                                  "wave_shl:1", "wave_shr:1", "wave_rol:1", "wave_ror:1"])
def test_dpp_controls_z3_match_emulator(ctrl):
    # z3backend row_shl `L + n` (mutant: L - n), and the other controls alike
    _z3_vs_emulator([f"v_mov_b32_dpp v1, v0 {ctrl} row_mask:0xf bank_mask:0xf",
                     f"v_add_u32_dpp v2, v0, v0 {ctrl} row_mask:0xf bank_mask:0xf bound_ctrl:1"],
                    {0: VALS, 1: np.full(64, 77, np.uint32), 2: np.full(64, 5, np.uint32)}, [1, 2])

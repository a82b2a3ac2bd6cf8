"""The hand-written closures of asmevo.emu.exec_fast give the general closures' values, bit
for bit: one wave and lockstep groups, full and partial EXEC, SGPR operands equal or
different between the waves, and f32 FMA operands whose float64 sum needs the exact path
(binary32 midpoints, subnormal results, NaN, infinities)."""

import numpy as np
import pytest

from asmevo.emu import exec_valu
from asmevo.emu.state import Wave, Workgroup

from .conftest import run_group

CASES = [
    "v_lshl_add_u64 v[2:3], v[2:3], 0, 4",
    "v_lshl_add_u64 v[4:5], v[2:3], 2, s[8:9]",
    "v_lshl_add_u64 v[2:3], v[2:3], 3, v[6:7]",
    "v_lshl_add_u64 v[0:1], v[6:7], 9, -1",
    "v_fmac_f32_e32 v4, s0, v1",
    "v_fmac_f32_e32 v4, v2, v1",
    "v_fmac_f32_e64 v4, v2, v1",
    "v_fmac_f32_e32 v4, 0.5, v1",
    "v_fma_f32 v4, v1, v2, v3",
    "v_fma_f32 v4, v1, s3, 1.0",
    "v_fma_f32 v4, s3, 0.5, v2",        # a product of two scalars, lanes added (it crashed)
    "v_fma_f32 v4, 2.0, s0, v1",
    "v_max_f32_e32 v4, v4, v4",
    "v_max_f32_e32 v5, v3, v3",
    "v_min_f32_e64 v2, v6, v6",
    "v_add_u32_e32 v4, s6, v4",
    "v_add_u32_e32 v1, 64, v1",
    "v_add_u32_e64 v2, v3, -1",
    "v_sub_u32_e32 v2, v3, v4",
    "v_subrev_u32_e32 v2, s3, v4",
    "v_and_b32_e32 v0, 31, v0",
    "v_or_b32_e32 v5, v1, v2",
    "v_xor_b32_e64 v5, s1, v2",
    "v_add_f32_e32 v4, v4, v5",
    "v_add_f32_e32 v4, 0.5, v5",
    "v_sub_f32_e32 v4, v1, v5",
    "v_subrev_f32_e32 v4, s2, v5",
    "v_mul_f32_e32 v4, 0x3fc00000, v5",
    "v_lshlrev_b32_e32 v1, 2, v0",
    "v_lshrrev_b32_e32 v1, 37, v0",
    "v_ashrrev_i32_e32 v3, 31, v2",
    "v_ashrrev_i32_e64 v3, 5, s2",
    "v_mov_b32_e32 v4, 0",
    "v_mov_b32_e32 v4, v1",
    "v_mov_b32_e32 v4, s5",
    "v_mov_b32_e32 v4, 1.0",
]


def _special_f32(rng, n):
    """float32 bit patterns: ordinary values, subnormals, zeros, infinities, NaNs, powers of
    two (sums that land on binary32 midpoints)."""
    pick = rng.integers(0, 6, n)
    out = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    out[pick == 1] = rng.integers(1, 1 << 23, int((pick == 1).sum())).astype(np.uint32)
    out[pick == 2] = np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00001, 0x3F800000,
                               0x7F800001, 0xFFA00000],     # (the last two: signaling NaNs)
                              np.uint32)[rng.integers(0, 8, int((pick == 2).sum()))]
    e = rng.integers(100, 150, int((pick == 3).sum())).astype(np.uint32)
    out[pick == 3] = e << np.uint32(23)
    out[pick == 4] = (rng.integers(100, 150, int((pick == 4).sum())).astype(np.uint32)
                      << np.uint32(23)) | np.uint32(1)
    return out


#: a * b + c whose float64 sum lands on a binary32 midpoint it is not (1 + 2**-23 + 2**-24 -
#: 2**-54 rounds to the midpoint, then to even: 0x3f800002; correctly rounded: 0x3f800001)
MIDPOINT = (0x3F800100, 0x337FFE00, 0x3F800001)


def _waves(seed, nwaves, partial, same_sgprs):
    rng = np.random.default_rng(seed)
    g = Workgroup((0, 0, 0), 1024)
    waves = []
    for k in range(nwaves):
        wv = Wave(g, k)
        wv.v[:16] = _special_f32(rng, 16 * 64).reshape(16, 64)
        wv.s[:16] = _special_f32(np.random.default_rng(seed if same_sgprs else seed + k), 16)
        # lane 5: the double-rounding case in every operand order the cases use
        a, b, c = MIDPOINT
        wv.v[1, 5], wv.v[2, 5], wv.v[3, 5], wv.v[4, 5] = a, b, c, c
        wv.s[0] = wv.s[3] = b
        m = rng.random(64) < 0.6 if partial else np.ones(64, bool)
        wv.set_exec(m)
        waves.append(wv)
    return waves


def _state(waves):
    return [(wv.v[:16].copy(), wv.s[:16].copy()) for wv in waves]


@pytest.mark.parametrize("text", CASES)
@pytest.mark.parametrize("nwaves,partial,same", [(1, False, True), (1, True, True),
                                                 (4, False, True), (4, True, False),
                                                 (3, False, False)])
def test_fast_closures_match_general(monkeypatch, text, nwaves, partial, same):
    for seed in range(3):
        fast = run_group([text], _waves(seed, nwaves, partial, same))
        with monkeypatch.context() as mp:
            mp.setattr(exec_valu, "fast_valu", lambda inst, spec, nxt: None)
            slow = run_group([text], _waves(seed, nwaves, partial, same))
        for (fv, fs), (sv, ss) in zip(_state(fast), _state(slow)):
            assert np.array_equal(fv, sv), text
            assert np.array_equal(fs, ss), text


def test_fast_forms_are_used():
    """The forms above compile to exec_fast's closures (not silently to the general ones)."""
    from asmevo.emu import exec_fast
    from asmevo.frontend.asm_parser import parse_instruction
    from asmevo.semantics.registry import lookup
    for text in CASES:
        inst = parse_instruction(text)
        assert exec_fast.fast_valu(inst, lookup(inst.opcode), 1) is not None, text
    for text in ("v_fmac_f32_e64 v4, -v2, v1", "v_fma_f32 v4, v1, v2, v3 clamp",
                 "v_lshl_add_u64 v[2:3], v[2:3], v0, 4", "v_add_f32_e64 v4, v1, v2 mul:2",
                 "v_lshlrev_b32_e32 v1, v2, v0", "v_add_u32_e64 v2, v3, v4 clamp",
                 "v_mov_b32_sdwa v1, v2 dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:DWORD",
                 "v_add_f32_dpp v1, v2, v3 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf"):
        inst = parse_instruction(text)
        assert exec_fast.fast_valu(inst, lookup(inst.opcode), 1) is None, text

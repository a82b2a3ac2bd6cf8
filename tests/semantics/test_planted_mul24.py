"""The 24-bit multiplies read exactly 24 bits of each source (CDNA3 ISA guide, VOP2/VOP3
``V_MUL_U32_U24``, ``V_MUL_I32_I24``, ``V_MUL_HI_*_24``, ``V_MAD_*24``): bits 24..31 are
ignored, and the signed forms sign-extend from bit 23.

A planted bug that widens the mask by one bit (0xFFFFFF -> 0x1FFFFFF, or sign from bit 24)
passed every tier before these tests: the values here set bit 24 (and bit 23) on purpose.
Checked on the numpy backend (emulator), the z3 backend (verifier) and end to end through
the emulator on an assembled-text kernel.
"""

from __future__ import annotations

import numpy as np
import pytest

from asmevo.semantics import lookup
from asmevo.semantics.npbackend import NP

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

M32 = 0xFFFFFFFF
#: operands with bit 24 and/or bit 23 set, and garbage in bits 25..31
VALS = [0x01000000, 0x01000003, 0x00800000, 0x00FFFFFF, 0x01FFFFFF, 0xFF800001, 0x017FFFFF,
        0x00000007, 0xFE000005, 0x80C00000]


def u24(x):
    return x & 0xFFFFFF


def i24(x):
    x &= 0xFFFFFF
    return x - (1 << 24) if x & 0x800000 else x


REF = {
    "v_mul_u32_u24": lambda a, b: (u24(a) * u24(b)) & M32,
    "v_mul_i32_i24": lambda a, b: (i24(a) * i24(b)) & M32,
    "v_mul_hi_u32_u24": lambda a, b: ((u24(a) * u24(b)) >> 32) & M32,
    "v_mul_hi_i32_i24": lambda a, b: ((i24(a) * i24(b)) >> 32) & M32,
}
MAD = {
    "v_mad_u32_u24": lambda a, b, c: (u24(a) * u24(b) + c) & M32,
    "v_mad_i32_i24": lambda a, b, c: (i24(a) * i24(b) + c) & M32,
}


def _pairs():
    return [(a, b) for a in VALS for b in VALS]


@pytest.mark.parametrize("name", sorted(REF))
def test_numpy_backend_reads_24_bits(name):
    a = np.array([p[0] for p in _pairs()], np.uint32)
    b = np.array([p[1] for p in _pairs()], np.uint32)
    got = np.asarray(lookup(name).fn(NP, a, b)).astype(np.uint64) & M32
    want = [REF[name](int(x), int(y)) for x, y in zip(a, b)]
    bad = [(hex(x), hex(y), hex(int(g)), hex(w)) for x, y, g, w in zip(a, b, got, want) if int(g) != w]
    assert bad == []


@pytest.mark.parametrize("name", sorted(MAD))
def test_numpy_backend_mad_reads_24_bits(name):
    a = np.array([p[0] for p in _pairs()], np.uint32)
    b = np.array([p[1] for p in _pairs()], np.uint32)
    c = np.full(len(a), 0x12345, np.uint32)
    got = np.asarray(lookup(name).fn(NP, a, b, c)).astype(np.uint64) & M32
    want = [MAD[name](int(x), int(y), 0x12345) for x, y in zip(a, b)]
    assert [int(g) for g in got] == want


def test_bit_24_is_ignored_exactly():
    # the smallest witnesses: with a mask one bit wider each of these changes
    assert int(lookup("v_mul_u32_u24").fn(NP, np.uint32([0x01000003]), np.uint32([2]))[0]) == 6
    assert int(lookup("v_mul_i32_i24").fn(NP, np.uint32([0x01000001]), np.uint32([5]))[0]) == 5
    # bit 23 is the sign of the i24 forms
    assert int(lookup("v_mul_i32_i24").fn(NP, np.uint32([0x00800000]), np.uint32([1]))[0]) \
        == 0xFF800000
    assert int(lookup("v_mul_hi_u32_u24").fn(NP, np.uint32([0x01FFFFFF]),
                                             np.uint32([0x01FFFFFF]))[0]) == 0xFFFF
    assert int(lookup("v_mul_hi_i32_i24").fn(NP, np.uint32([0x01000000]), np.uint32([0x7FFFFF]))[0]) == 0
    assert int(lookup("v_mul_hi_i32_i24").fn(NP, np.uint32([0x00800000]),
                                             np.uint32([0x7FFFFF]))[0]) == 0xFFFFC000


# -- z3 backend: the verifier proves the 24-bit forms equal to an explicit mask + 32-bit
#    multiply, and refuses the same with a mask one bit wider --------------------------

def _w(*lines):
    from asmevo.frontend.asm_parser import parse_instruction
    return [parse_instruction(x) for x in lines]


Z3_CASES = [
    ("v_mul_u32_u24_e32 v0, v1, v2",
     ["v_and_b32_e32 v3, 0xffffff, v1", "v_and_b32_e32 v4, 0xffffff, v2",
      "v_mul_lo_u32 v0, v3, v4"],
     ["v_and_b32_e32 v3, 0x1ffffff, v1", "v_and_b32_e32 v4, 0x1ffffff, v2",
      "v_mul_lo_u32 v0, v3, v4"]),
    ("v_mul_i32_i24_e32 v0, v1, v2",
     ["v_bfe_i32 v3, v1, 0, 24", "v_bfe_i32 v4, v2, 0, 24", "v_mul_lo_u32 v0, v3, v4"],
     ["v_bfe_i32 v3, v1, 0, 25", "v_bfe_i32 v4, v2, 0, 25", "v_mul_lo_u32 v0, v3, v4"]),
    ("v_mul_hi_u32_u24_e32 v0, v1, v2",
     ["v_and_b32_e32 v3, 0xffffff, v1", "v_and_b32_e32 v4, 0xffffff, v2",
      "v_mul_hi_u32 v0, v3, v4"],
     ["v_and_b32_e32 v3, 0x1ffffff, v1", "v_and_b32_e32 v4, 0x1ffffff, v2",
      "v_mul_hi_u32 v0, v3, v4"]),
    ("v_mul_hi_i32_i24_e32 v0, v1, v2",
     ["v_bfe_i32 v3, v1, 0, 24", "v_bfe_i32 v4, v2, 0, 24", "v_mul_hi_i32 v0, v3, v4"],
     ["v_bfe_i32 v3, v1, 0, 25", "v_bfe_i32 v4, v2, 0, 25", "v_mul_hi_i32 v0, v3, v4"]),
]


@pytest.mark.parametrize("inst,same,wider", Z3_CASES, ids=[c[0].split("_e32")[0] for c in Z3_CASES])
def test_z3_backend_reads_24_bits(inst, same, wider):
    from asmevo.verify.equiv import check_windows
    r = check_windows(_w(inst), _w(*same), live_out=[("v", 0)])
    assert r.status == "equivalent", r.text()
    r = check_windows(_w(inst), _w(*wider), live_out=[("v", 0)])
    assert r.status == "not equivalent", r.text()


# -- end to end: an assembled-text kernel run by the emulator -----------------------------

def test_emulated_kernel_reads_24_bits():
    from planted_kernels import run_text_kernel
    body = """
        global_load_dword v2, v1, s[8:9]
        global_load_dword v3, v1, s[8:9] offset:256
        s_waitcnt vmcnt(0)
        v_mul_u32_u24_e32 v4, v2, v3
        v_mul_i32_i24_e32 v5, v2, v3
        v_mul_hi_u32_u24_e32 v6, v2, v3
        v_mul_hi_i32_i24_e32 v7, v2, v3
        global_store_dword v1, v4, s[4:5]
        global_store_dword v1, v5, s[4:5] offset:256
        global_store_dword v1, v6, s[4:5] offset:512
        global_store_dword v1, v7, s[4:5] offset:768
    """
    rng = np.random.default_rng(24)
    a = np.array(VALS * 7, np.uint32)[:64]
    b = rng.permutation(a)
    inp = np.zeros(256, np.uint32)
    inp[:64], inp[64:128] = a, b
    out = run_text_kernel(body, inp, block=64)
    for k, name in enumerate(["v_mul_u32_u24", "v_mul_i32_i24", "v_mul_hi_u32_u24", "v_mul_hi_i32_i24"]):
        want = [REF[name](int(x), int(y)) for x, y in zip(a, b)]
        assert [int(v) for v in out[64 * k:64 * k + 64]] == want, name

"""Every kind of instruction that writes an SGPR through the executor's scalar writer
(``swriter``): lane reads (fast and general paths), s_getpc_b64, s_getreg_b32, s_memtime,
SALU results and EXEC writes.  Expected values follow the CDNA3 ISA guide's definitions
(V_READFIRSTLANE_B32: the first active lane; S_GETPC_B64: the next instruction's byte
address; S_GETREG_B32: the hwreg bit field, right-aligned)."""

import numpy as np

from asmevo.emu.state import EXEC, VCC

from .conftest import build_kernel

LANES = np.arange(64)


def test_readfirstlane_into_exec_refreshes_the_mask(snippet):
    s = snippet(["v_readfirstlane_b32 exec_lo, v0", "v_mov_b32_e32 v2, 7"])
    s.w.v[0] = 0
    s.w.v[0, 10] = 0xC00                    # lanes 10 and 11
    s.w.set_exec(LANES >= 10)               # first active lane: 10; EXEC_HI stays all ones
    s.run()
    assert s.w.s[EXEC] == 0xC00 and s.w.s[EXEC + 1] == 0xFFFFFFFF
    assert np.array_equal(s.w.v[2], np.where((LANES == 10) | (LANES == 11) | (LANES >= 32), 7, 0))


def test_readlane_general_path(snippet):
    # VCC and EXEC destinations take the general (not the plain-SGPR) path
    s = snippet(["s_mov_b32 s2, 41", "v_readlane_b32 vcc_lo, v0, 37",
                 "v_readlane_b32 vcc_hi, v0, s2", "v_readfirstlane_b32 s3, v0"])
    s.w.v[0] = 0xFFFF0000 + LANES
    s.w.set_exec(LANES >= 5)
    s.run()
    assert (s.w.s[VCC], s.w.s[VCC + 1], s.w.s[3]) == (0xFFFF0025, 0xFFFF0029, 0xFFFF0005)


def test_getpc_writes_a_64_bit_address(snippet):
    s = snippet([])
    s.kernel = build_kernel(["s_nop 0", "s_getpc_b64 s[4:5]", "s_endpgm"])
    base = 0x1_2345_6780
    for k, inst in enumerate(s.kernel.blocks[0].instructions):
        inst.address = base + 4 * k
    s.run()
    assert (s.w.s[4], s.w.s[5]) == (0x2345_6788, 0x1)   # the s_endpgm after it


def test_getreg_mode_field(snippet):
    s = snippet(["s_getreg_b32 s0, hwreg(HW_REG_MODE, 4, 4)", "s_getreg_b32 s1, hwreg(HW_REG_MODE)"])
    s.w.mode = 0x3A0
    s.run()
    assert (s.w.s[0], s.w.s[1]) == (0xA, 0x3A0)


def test_memtime_splits_the_counter(snippet):
    s = snippet(["s_memtime s[2:3]"])
    s.w.count = (5 << 32) | 7               # instructions this wave has run so far
    s.run()
    assert (s.w.s[2], s.w.s[3]) == (7, 5)


def test_salu_64_bit_and_exec_results(snippet):
    s = snippet(["s_mov_b64 s[6:7], -2", "s_mov_b32 s8, 0x80000000", "s_not_b64 exec, s[6:7]",
                 "v_mov_b32_e32 v1, 3"])
    s.run()
    assert (s.w.s[6], s.w.s[7], s.w.s[8]) == (0xFFFFFFFE, 0xFFFFFFFF, 0x80000000)
    assert (s.w.s[EXEC], s.w.s[EXEC + 1]) == (1, 0)
    assert np.array_equal(s.w.v[1], np.where(LANES == 0, 3, 0))

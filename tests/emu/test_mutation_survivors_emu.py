"""Tests for mutants of asmevo/emu that survived the mutation probe
(scripts/mutation_probe.py, seed 14; docs/verify.md, "Mutation pass").  Each names the
mutant it kills."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def test_setreg_of_a_mode_field_at_an_offset_reads_back(snippet):
    # exec_lane s_setreg: the value goes to bits [offset, offset+size) of MODE
    # (mutant: `v << off` -> `v >> off`, which wrote 0 to every field above bit 0)
    s = snippet(["s_getreg_b32 s10, hwreg(HW_REG_MODE, 0, 32)",
                 "s_mov_b32 s0, 0x5",
                 "s_setreg_b32 hwreg(HW_REG_MODE, 12, 9), s0",        # EXCP_EN
                 "s_getreg_b32 s11, hwreg(HW_REG_MODE, 12, 9)",
                 "s_getreg_b32 s12, hwreg(HW_REG_MODE, 0, 32)",
                 "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 12, 9), 0x3",
                 "s_getreg_b32 s13, hwreg(HW_REG_MODE, 12, 9)"])
    s.run()
    assert int(s.w.s[11]) == 0x5
    assert int(s.w.s[12]) == (int(s.w.s[10]) & ~(0x1FF << 12)) | (0x5 << 12)
    assert int(s.w.s[13]) == 0x3

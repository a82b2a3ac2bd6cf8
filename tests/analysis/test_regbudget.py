"""Register budget: usage vs grant (AMDGPUUsage descriptor rules), PITFALLS BR-24, occupancy."""

import pytest

from asmevo.analysis import AnalysisManager
from asmevo.analysis.regbudget import (RegisterBudget, occupancy_lds, occupancy_sgprs,
                                       occupancy_vgprs)
from asmevo.frontend.asm_parser import parse_asm
from asmevo.frontend.descriptor import KernelDescriptor


def _kernel(body: str, fields: dict):
    amd = "\n".join(f"\t\t.amdhsa_{k} {v}" for k, v in fields.items())
    text = (f"\t.text\n\t.globl k\n\t.type k,@function\nk:\n{body}\n\ts_endpgm\n.Lend:\n"
            f"\t.size k, .Lend-k\n\t.rodata\n\t.amdhsa_kernel k\n{amd}\n\t.end_amdhsa_kernel\n")
    m = parse_asm(text, "<t>")
    return m.kernels[0], AnalysisManager(m)


BASE = {"next_free_vgpr": 8, "next_free_sgpr": 10, "accum_offset": 8,
        "user_sgpr_kernarg_segment_ptr": 1, "user_sgpr_count": 2}


def test_within_budget():
    k, am = _kernel("\tv_mov_b32_e32 v7, s9", BASE)
    r = am.get(RegisterBudget, k)
    assert r.used == {"v": 8, "a": 0, "s": 10}
    assert (r.abi.vgpr_alloc, r.abi.sgpr_alloc) == (8, 16)
    assert r.problems == [] and r.occupancy == 8


def test_vgpr_beyond_grant_and_agpr_overlap():
    k, am = _kernel("\tv_mov_b32_e32 v9, 0\n\tv_accvgpr_write_b32 a0, v9", dict(BASE))
    r = am.get(RegisterBudget, k)
    whats = sorted(p.what for p in r.problems)
    # v9 is beyond accum_offset 8 (AGPRs start there) and beyond next_free_vgpr 8
    assert "vgpr" in whats
    assert any("accum_offset" in p.message for p in r.problems)


def test_sgpr_reserved_and_user_sgprs_br24():
    # s10 used + 6 reserved (VCC, FLAT_SCRATCH, XNACK_MASK) = 17 > 16 granted
    k, am = _kernel("\ts_mov_b32 s10, 0", BASE)
    r = am.get(RegisterBudget, k)
    assert [p.what for p in r.problems] == ["sgpr", "sgpr"]
    # BR-24: 10 user SGPRs (dispatch ptr, kernarg ptr, dispatch id, 4 preloaded) + 2 workgroup
    # ids with a grant computed from the used SGPRs only: the descriptor of the PR's buggy bytes
    d = KernelDescriptor.from_bytes(bytes(48) + bytes.fromhex("0000af00" "94130000" "1a00" "0400")
                                    + bytes(4))
    k2, am2 = _kernel("\ts_mov_b32 s0, 0", {})
    k2.descriptor = d
    r2 = AnalysisManager(am2.module).get(RegisterBudget, k2)
    assert r2.abi.user_sgpr_count == 10 and r2.abi.sgpr_alloc == 8
    assert any(p.what == "user_sgpr" for p in r2.problems)
    fixed = KernelDescriptor.from_bytes(bytes(48) + bytes.fromhex("4000af00" "94130000" "1a00"
                                                                   "0400") + bytes(4))
    k2.descriptor = fixed
    r3 = AnalysisManager(am2.module).get(RegisterBudget, k2)
    assert r3.abi.sgpr_alloc == 16
    assert not any(p.what == "user_sgpr" for p in r3.problems)


@pytest.mark.parametrize("vgprs,waves", [(1, 8), (64, 8), (65, 7), (128, 4), (256, 2), (257, 1),
                                         (512, 1)])
def test_occupancy_vgprs(vgprs, waves):
    assert occupancy_vgprs(vgprs) == waves


def test_occupancy_sgprs_and_lds():
    assert [occupancy_sgprs(n) for n in (16, 80, 88, 100, 108)] == [8, 8, 8, 8, 7]
    assert occupancy_lds(0, 256) == 8
    assert occupancy_lds(65536, 256) == 1        # one work-group of 4 waves per CU
    assert occupancy_lds(32768, 512) == 4        # two work-groups of 8 waves
    assert occupancy_lds(256, 64) == 8           # single-wave work-groups: up to 32 per CU

"""nop-trim with the hazard analysis: nops shrink to what the rules require (exact output)."""

from __future__ import annotations

import pytest

from passes_helpers import norm, opt

pytest.importorskip("asmevo.analysis.hazards")


def test_shrinks_to_the_required_wait_states():
    # VALU writes an SGPR, a VALU reads it: 2 wait states (ISA_NOTES hazard row 13)
    out, inst = opt("""
        k:
        v_readfirstlane_b32 s0, v1
        s_nop 4
        v_add_u32_e32 v2, s0, v2
        s_nop 7
        global_store_dword v[4:5], v2, off
        s_endpgm
    """, "nop-trim")
    assert out == norm("""
        v_readfirstlane_b32 s0, v1
        s_nop 1
        v_add_u32_e32 v2, s0, v2
        global_store_dword v[4:5], v2, off
        s_endpgm
    """)
    s = inst.stats["nop-trim"]
    assert (s["removed-nops"], s["shortened-nops"], s["nop-wait-states-removed"]) == (1, 1, 11)


def test_intervening_instructions_count_as_wait_states():
    out, _ = opt("""
        k:
        v_readfirstlane_b32 s0, v1
        s_nop 1
        v_mov_b32_e32 v3, 0
        v_add_u32_e32 v2, s0, v3
        global_store_dword v[4:5], v2, off
        s_endpgm
    """, "nop-trim")
    assert out.splitlines()[1] == "s_nop 0"


def test_a_nop_that_serves_a_later_consumer_is_kept():
    # VALU writes s0; VMEM reads it 5 wait states later (row 1); the nop sits before an
    # unrelated instruction but provides those wait states
    src = """
        k:
        v_readfirstlane_b32 s0, v1
        s_nop 3
        v_mov_b32_e32 v3, 0
        global_store_dword v3, v2, s[0:1]
        s_endpgm
    """
    out, _ = opt(src, "nop-trim")
    assert out == norm(src.replace("k:\n", ""))


def test_dce_removal_that_would_open_a_hazard_gets_a_nop():
    # removing the dead v_mov between the SGPR write and its VALU reader would leave
    # 1 wait state where 2 are needed: dce removes it and repairs with s_nop 0
    out, inst = opt("""
        k:
        v_readfirstlane_b32 s0, v1
        v_mov_b32_e32 v9, 1
        s_nop 0
        v_add_u32_e32 v2, s0, v2
        global_store_dword v[4:5], v2, off
        s_endpgm
    """, "dce")
    assert out == norm("""
        v_readfirstlane_b32 s0, v1
        s_nop 0
        s_nop 0
        v_add_u32_e32 v2, s0, v2
        global_store_dword v[4:5], v2, off
        s_endpgm
    """)
    out2, inst = opt("k:\n" + out, "nop-trim")
    assert out2.splitlines()[1:3] == ["s_nop 1", "v_add_u32_e32 v2, s0, v2"]
    assert inst.stats["nop-trim"]["merged-nops"] == 1

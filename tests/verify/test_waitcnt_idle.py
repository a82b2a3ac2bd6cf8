"""The static layer's removed-wait check: a wait may go when the candidate has nothing
outstanding for that counter in the window (its memory operations became moves), and
must stay while anything is still outstanding."""

from __future__ import annotations

import textwrap

from asmevo.frontend.asm_parser import parse_asm
from asmevo.verify.static import _weakened_waits

ORIG = """
k:
global_load_dword v1, v[2:3], off
scratch_load_dword v4, off, s33 offset:4
s_waitcnt vmcnt(0)
v_add_u32_e32 v5, v4, v1
global_store_dword v[2:3], v5, off
s_endpgm
"""


def _weakened(cand: str) -> list:
    mo = parse_asm(textwrap.dedent(ORIG), "o.s")
    mc = parse_asm(textwrap.dedent(cand), "c.s")
    return _weakened_waits(mo, mo.kernels[0], mc.kernels[0], mc)


def test_wait_for_nothing_outstanding_may_go():
    assert _weakened("""
        k:
        v_mov_b32_e32 v1, v7
        v_mov_b32_e32 v4, v6
        v_add_u32_e32 v5, v4, v1
        global_store_dword v[2:3], v5, off
        s_endpgm
    """) == []


def test_wait_for_a_load_still_outstanding_must_stay():
    out = _weakened("""
        k:
        global_load_dword v1, v[2:3], off
        v_mov_b32_e32 v4, v6
        v_add_u32_e32 v5, v4, v1
        global_store_dword v[2:3], v5, off
        s_endpgm
    """)
    assert len(out) == 1 and "vmcnt(0)" in out[0]["message"]


def test_a_store_still_outstanding_counts_too():
    """No load is left, but a store issued in the window keeps vmcnt busy, so the
    waiver does not apply (conservative: the wait is still reported)."""
    out = _weakened("""
        k:
        global_store_dword v[8:9], v0, off
        v_mov_b32_e32 v1, v7
        v_mov_b32_e32 v4, v6
        v_add_u32_e32 v5, v4, v1
        global_store_dword v[2:3], v5, off
        s_endpgm
    """)
    assert len(out) == 1 and "vmcnt(0)" in out[0]["message"]


def test_a_store_outstanding_that_nothing_needs_is_waived_by_the_required_test():
    """The candidate's pending store is never read back and meets no memory-order
    point before s_endpgm, so a wait at any point of the window would be required for
    nothing (contrast the previous test, where a later store is an order point)."""
    out = _weakened("""
        k:
        global_store_dword v[8:9], v0, off
        v_mov_b32_e32 v1, v7
        v_mov_b32_e32 v4, v6
        v_add_u32_e32 v5, v4, v1
        s_endpgm
    """)
    assert out == []

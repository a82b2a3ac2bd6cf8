"""z3 windows model shared memory (global, LDS) with one generic lane's stores only, so
forwarding a store to a later load must not be proved: another lane may have stored to
the same address (found by the relational-proof helper)."""

from __future__ import annotations

from asmevo.frontend.asm_parser import parse_asm
from asmevo.verify.equiv import EQUIVALENT, check_windows


def _w(text: str):
    return list(parse_asm("k:\n" + text.strip() + "\ns_endpgm\n", "t.s").kernels[0]
                .instructions())[:-1]


def test_lds_store_to_load_forwarding_is_not_proved():
    """Lanes 0 and 1 may store to the same LDS address: the load returns whichever
    lane's value landed, not necessarily this lane's v1."""
    a = _w("ds_write_b32 v0, v1\ns_waitcnt lgkmcnt(0)\nds_read_b32 v2, v0")
    b = _w("ds_write_b32 v0, v1\nv_mov_b32_e32 v2, v1")
    r = check_windows(a, b, live_out={"v2"})
    assert r.status != EQUIVALENT, r


def test_global_store_to_load_forwarding_is_not_proved():
    a = _w("global_store_dword v[4:5], v1, off\ns_waitcnt vmcnt(0)\n"
           "global_load_dword v2, v[4:5], off")
    b = _w("global_store_dword v[4:5], v1, off\nv_mov_b32_e32 v2, v1")
    r = check_windows(a, b, live_out={"v2"})
    assert r.status != EQUIVALENT, r


def test_loads_without_an_earlier_store_are_still_proved():
    a = _w("ds_read_b32 v2, v0\nv_add_u32_e32 v3, v2, v2")
    b = _w("ds_read_b32 v2, v0\nv_lshlrev_b32_e32 v3, 1, v2")
    assert check_windows(a, b, live_out={"v3"}).status == EQUIVALENT

"""The z3 layer's cross-wave guard: which window changes count as moving memory
operations across ``s_barrier``."""

from __future__ import annotations

from asmevo.frontend.asm_parser import parse_asm
from asmevo.verify.equiv import _barrier_order_changed


def _w(text: str):
    return list(parse_asm("k:\n" + text.strip() + "\ns_endpgm\n", "t.s").kernels[0]
                .instructions())[:-1]


def test_renamed_registers_in_the_same_order_are_not_a_move():
    a = _w("ds_write_b32 v0, v1\ns_barrier\nds_read_b32 v2, v0")
    b = _w("ds_write_b32 v0, v11\ns_barrier\nds_read_b32 v12, v0")
    assert not _barrier_order_changed(a, b)


def test_an_lds_store_moved_across_the_barrier_is_a_move():
    a = _w("ds_write_b32 v0, v1\ns_barrier\nds_read_b32 v2, v0")
    b = _w("s_barrier\nds_write_b32 v0, v1\nds_read_b32 v2, v0")
    assert _barrier_order_changed(a, b)


def test_a_load_swapped_with_the_barrier_is_a_move():
    a = _w("global_load_dword v1, v[2:3], off\ns_barrier")
    b = _w("s_barrier\nglobal_load_dword v1, v[2:3], off")
    assert _barrier_order_changed(a, b)


def test_private_scratch_accesses_do_not_count():
    """scratch-promote removes a spill store next to a barrier: private memory is
    invisible to other waves (z3 still compares the values)."""
    a = _w("scratch_store_dword off, v1, s33 offset:4\ns_barrier\nds_read_b32 v2, v0")
    b = _w("s_barrier\nds_read_b32 v2, v0")
    assert not _barrier_order_changed(a, b)

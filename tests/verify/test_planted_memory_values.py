"""The z3 window check compares the *values* written to memory, not only how many writes,
their sizes, masks and addresses.

A planted bug that dropped the stored values from the comparison passed every tier: no
test had two windows whose only difference was the data of a store.  Here the register
state after the windows is the same on purpose, so only the memory writes can tell them
apart: two stores to one address in the other order, a different data register, the
same on LDS and scratch, and on real corpus kernels at kernel level
(:func:`asmevo.verify.equiv.check_kernels` and ``verify(level="z3")``).
"""

from __future__ import annotations

import pytest

from asmevo.frontend.asm_parser import parse_instruction
from asmevo.verify.equiv import check_kernels, check_windows
from asmevo.verify.verdict import Status

from .helpers import parse, sub1


def W(*lines):
    return [parse_instruction(x) for x in lines]


NO_REGS = []     # live-out: no register, so only the memory writes are compared


@pytest.mark.parametrize("store", [
    "global_store_dword v[0:1], {d}, off",
    "global_store_dword v[0:1], {d}, off offset:16",
    "ds_write_b32 v0, {d}",
    "scratch_store_dword v0, {d}, off",
    "buffer_store_dword {d}, v0, s[4:7], 0 offen",
])
def test_a_different_stored_value_is_not_equivalent(store):
    a, b = W(store.format(d="v2")), W(store.format(d="v3"))
    r = check_windows(a, b, live_out=NO_REGS)
    assert r.status == "not equivalent", r.text()
    assert check_windows(a, W(store.format(d="v2")), live_out=NO_REGS).status == "equivalent"


@pytest.mark.parametrize("store", [
    "global_store_dword v[0:1], {d}, off",
    "ds_write_b32 v0, {d}",
    "scratch_store_dword v0, {d}, off",
])
def test_two_stores_to_one_address_in_the_other_order(store):
    # same number of writes, same sizes, masks and addresses: only the values differ
    a = W(store.format(d="v2"), store.format(d="v3"))
    b = W(store.format(d="v3"), store.format(d="v2"))
    r = check_windows(a, b, live_out=NO_REGS)
    assert r.status == "not equivalent", r.text()
    r = check_windows(a, b)                      # default live-out: every written unit
    assert r.status == "not equivalent", r.text()


def test_stored_value_computed_differently_is_compared():
    # v4 is overwritten afterwards in both windows, so the registers agree at the end
    a = W("v_add_u32_e32 v4, v2, v3", "global_store_dword v[0:1], v4, off", "v_mov_b32_e32 v4, 0")
    b = W("v_sub_u32_e32 v4, v2, v3", "global_store_dword v[0:1], v4, off", "v_mov_b32_e32 v4, 0")
    r = check_windows(a, b)
    assert r.status == "not equivalent", r.text()
    assert any("write" in d for d in r.differing), r.differing
    c = W("v_add_u32_e32 v4, v3, v2", "global_store_dword v[0:1], v4, off", "v_mov_b32_e32 v4, 0")
    assert check_windows(a, c).status == "equivalent"


def test_wide_store_one_dword_differs():
    a = W("global_store_dwordx2 v[0:1], v[2:3], off")
    b = W("v_mov_b32_e32 v9, v2", "global_store_dwordx2 v[0:1], v[8:9], off")
    # b stores (v8, v2) where a stores (v2, v3): same address and size
    r = check_windows(a, b, live_out=NO_REGS)
    assert r.status == "not equivalent", r.text()


# -- real corpus kernels, kernel level -------------------------------------------------

def test_vadd_storing_an_input_instead_of_the_sum_is_rejected(corpus_dir):
    text = (corpus_dir / "vadd_f32.s").read_text()
    orig = parse(text, "vadd_f32.s")
    cand = parse(sub1(text, r"global_store_dword v\[0:1\], v2, off$", "global_store_dword v[0:1], v6, off"))
    v = check_kernels(orig, cand)
    assert v.status is Status.REJECTED_COUNTEREXAMPLE, v.text()


def test_int_bitops_storing_an_operand_instead_of_the_result_is_rejected(corpus_dir):
    text = (corpus_dir / "int_bitops_u32.s").read_text()
    orig = parse(text, "int_bitops_u32.s")
    cand = parse(sub1(text, r"global_store_dword v\[6:7\], v3, off$", "global_store_dword v[6:7], v12, off"))
    v = check_kernels(orig, cand)
    assert v.status is Status.REJECTED_COUNTEREXAMPLE, v.text()
    # control: the commutative swap of the xor that feeds the store is proved
    ok = parse(sub1(text, r"v_xor_b32_e32 v12, v14, v13$", "v_xor_b32_e32 v12, v13, v14"))
    assert check_kernels(orig, ok).status is Status.ACCEPTED


def test_transpose_lds_writing_another_value_to_lds_is_rejected(corpus_dir):
    from asmevo.verify import verify
    text = (corpus_dir / "transpose_lds.s").read_text()
    orig = parse(text, "transpose_lds.s")
    # ds_write_b32 v1, v0 -> write the address instead of the data: only LDS contents differ
    cand = parse(sub1(text, r"ds_write_b32 v1, v0$", "ds_write_b32 v1, v1"))
    v = verify(orig, cand, level="z3")
    assert v.outcome != "accepted", v.text()


# -- mutation-probe survivors in asmevo/verify/equiv.py -----------------------------------

def test_live_out_that_is_not_a_register_is_an_error():
    # equiv.parse_units (mutant: the error dropped -> the unit silently ignored)
    from asmevo.errors import AsmevoError
    from asmevo.verify.equiv import parse_units
    for bad in ("foo", "v0, bar", "12"):
        with pytest.raises(AsmevoError, match="is not a register"):
            parse_units(bad)
    assert parse_units("v[2:3], s4") == [("v", 2), ("v", 3), ("s", 4)]


def test_a_changed_sgpr_live_after_the_window_is_compared(corpus_dir):
    # check_kernels keeps a scalar unit when the code after the window reads it
    # (mutant: `in after_any` -> `not in`, which dropped exactly the live ones)
    text = (corpus_dir / "int_bitops_u32.s").read_text()
    orig = parse(text, "int_bitops_u32.s")
    import re
    m = re.search(r"^\s*s_load_dwordx2 (s\[\d+:\d+\]), s\[\d+:\d+\], 0x(\w+)$", text, re.M)
    assert m, "the kernel loads a pointer from the kernarg segment"
    cand = parse(sub1(text, re.escape(m.group(0).strip()) + "$",
                      m.group(0).strip().replace(f"0x{m.group(2)}", hex(int(m.group(2), 16) + 8))))
    v = check_kernels(orig, cand)
    assert v.outcome == "rejected", v.text()

"""A window may drop, keep or reorder global loads, but never load what the original does not.

The register and memory-write comparisons cannot see a load whose value is unused, yet such
a load may fault (an unmapped page) where the original does not: the adversarial round of
2026-12-01 had a null load and a one-past-the-end prefetch accepted.  ``check_windows``
(and the relational proof's block obligations) now prove every candidate load covered by a
load of the original (:func:`asmevo.verify.equiv.read_coverage`), else the answer is unknown.
"""

from __future__ import annotations

import pytest

from asmevo.frontend.asm_parser import parse_instruction as P
from asmevo.verify.equiv import check_windows

BASE = ["global_load_dwordx2 v[4:5], v[2:3], off", "v_mov_b32 v9, 7"]
LIVE = [("v", 9)]


def _w(lines):
    return [P(t) for t in lines]


@pytest.mark.parametrize("extra", [
    "global_load_dword v10, v[2:3], off offset:8",     # past the original's 8 bytes
    "global_load_dword v10, v[6:7], off",              # another address
    "s_load_dword s10, s[0:1], 0x0",                   # a scalar load K0 never makes
    "global_load_dwordx4 v[10:13], v[2:3], off",       # wider than the original's
    "global_load_dwordx2 v[10:11], v[2:3], off offset:4",  # half inside, half past
])
def test_an_extra_load_is_not_proved(extra):
    r = check_windows(_w(BASE), _w(BASE + [extra]), live_out=LIVE)
    assert not r.equivalent
    assert "loads global memory" in r.reason


@pytest.mark.parametrize("extra", [
    "global_load_dword v10, v[2:3], off",              # the first half of the original's
    "global_load_dword v10, v[2:3], off offset:4",     # the second half
    "global_load_dwordx2 v[10:11], v[2:3], off",       # the same bytes again
])
def test_a_load_inside_an_original_load_is_proved(extra):
    assert check_windows(_w(BASE), _w(BASE + [extra]), live_out=LIVE).equivalent


def test_a_wide_load_over_adjacent_original_loads_is_proved():
    """The widen move: two adjacent dword loads become one dwordx2."""
    a = _w(["global_load_dword v4, v[2:3], off", "global_load_dword v5, v[2:3], off offset:4"])
    b = _w(["global_load_dwordx2 v[4:5], v[2:3], off"])
    assert check_windows(a, b).equivalent
    gap = _w(["global_load_dword v4, v[2:3], off", "global_load_dword v5, v[2:3], off offset:8"])
    wide = _w(["global_load_dwordx4 v[10:13], v[2:3], off", "v_mov_b32 v9, 7"])
    assert not check_windows(gap + _w(["v_mov_b32 v9, 7"]), wide, live_out=LIVE).equivalent


def test_dropped_and_reordered_loads_are_proved():
    a = _w(["global_load_dword v4, v[2:3], off", "global_load_dword v5, v[6:7], off"])
    b = _w(["global_load_dword v5, v[6:7], off", "global_load_dword v4, v[2:3], off"])
    assert check_windows(a, b).equivalent
    assert check_windows(a, b[:1], live_out=[("v", 5)]).equivalent


def test_a_load_under_a_narrower_exec_is_covered_but_not_the_reverse():
    """Lanes are compared one by one: the candidate's load must touch memory only in lanes
    where the original's does."""
    full = ["global_load_dword v4, v[2:3], off", "v_mov_b32 v9, 7"]
    masked = ["s_mov_b64 s[20:21], exec", "s_and_b64 exec, exec, s[22:23]",
              "global_load_dword v4, v[2:3], off", "s_mov_b64 exec, s[20:21]", "v_mov_b32 v9, 7"]
    extra_full = ["s_mov_b64 s[20:21], exec", "s_and_b64 exec, exec, s[22:23]",
                  "global_load_dword v4, v[2:3], off", "s_mov_b64 exec, s[20:21]",
                  "global_load_dword v10, v[2:3], off", "v_mov_b32 v9, 7"]
    assert check_windows(_w(full), _w(masked), live_out=LIVE).equivalent
    other = [m.replace("s_and_b64 exec, exec,", "s_mov_b64 exec,") for m in masked]
    r = check_windows(_w(full), _w(other), live_out=LIVE)       # lanes K0 leaves alone
    assert not r.equivalent and "loads global memory" in r.reason
    r = check_windows(_w(masked), _w(extra_full), live_out=LIVE)
    assert not r.equivalent and "loads global memory" in r.reason

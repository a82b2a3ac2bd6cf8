"""Verdicts must not depend on machine load (issue 14).

The relational proof's budget and every z3 query used to be wall-clock limits, so the same
pair was ``accepted`` in one run and ``unknown-unproved`` under load.  Budgets are now z3
resource limits (``rlimit``, counted in solver steps); a generous wall-clock safety net can
only turn a result into ``unknown``.  These tests simulate a very slow machine with a fake
clock, and check that a budget that runs out does so deterministically.
"""

from __future__ import annotations

import time

import pytest
import z3

from asmevo.frontend.asm_parser import parse_asm
from asmevo.verify import relational
from asmevo.verify.equiv import check_windows, set_solver_limits, unknown_reason

from . import test_relational as tr


class _SlowClock:
    """``time`` stand-in whose clock advances ``step`` seconds more at every reading: a
    machine so loaded that every step of the proof takes that long."""

    def __init__(self, step: float):
        self.step = step
        self.extra = 0.0

    def monotonic(self) -> float:
        self.extra += self.step
        return time.monotonic() + self.extra


@pytest.mark.parametrize("pair", ["LOOP", "BRANCH"])
def test_relational_verdict_does_not_depend_on_wall_clock(monkeypatch, pair):
    o, c = getattr(tr, pair + "_O"), getattr(tr, pair + "_C")
    fast = tr.prove(o, c)
    assert fast.status == relational.EQUIVALENT, fast.reason
    # every clock reading 1 s later than the last: the old 40 s wall-clock budget ran out
    # after about 40 readings (the loop proof reads the clock about 50 times)
    monkeypatch.setattr(relational, "time", _SlowClock(1.0))
    slow = tr.prove(o, c)
    assert slow.status == fast.status, slow.reason
    # (the query count may differ by a guess round: z3 keeps state across proofs in one
    # process, so the second proof is not a replay of the first; the verdict must agree)


def test_relational_resource_budget_is_deterministic():
    """A budget too small for the proof gives the same unknown, at the same query, every
    time: it counts z3's resource units, not seconds."""
    rs = [tr.prove(tr.LOOP_O, tr.LOOP_C, budget_s=0.001) for _ in range(2)]
    assert all(r.status == relational.UNKNOWN and r.unknown_kind == "timeout" for r in rs)
    assert "resource budget" in rs[0].reason, rs[0].reason
    assert rs[0].queries == rs[1].queries and rs[0].reason == rs[1].reason


def _w(*lines):
    return list(parse_asm("k:\n" + "\n".join(lines) + "\n", "w.s").kernels[0].instructions())


def test_window_query_stops_at_its_resource_limit():
    """check_windows' budget (``timeout_ms``) is a resource limit: a query that cannot be
    decided in it says so, with a reason that names the deterministic limit."""
    a = _w("v_mul_lo_u32 v0, v1, v2", "v_mul_lo_u32 v0, v0, v3", "v_mul_hi_u32 v4, v0, v1")
    b = _w("v_mul_lo_u32 v0, v2, v3", "v_mul_lo_u32 v0, v0, v1", "v_mul_hi_u32 v4, v1, v0")
    r1 = check_windows(a, b, timeout_ms=1)
    r2 = check_windows(a, b, timeout_ms=1)
    assert r1.status == r2.status == "unknown" and r1.unknown_kind == "timeout"
    assert "deterministic" in r1.reason, r1.reason


def test_solver_limits_are_resource_limits_with_a_safety_net():
    s = z3.Solver()
    rl, start = set_solver_limits(s, 2)
    x, y = z3.BitVecs("x y", 64)
    s.add(z3.And(x * y * x + y == 0x123456789ABCDEF1, z3.UGT(x, 3), z3.UGT(y, 3)))
    assert s.check() == z3.unknown
    assert unknown_reason(s, rl, start).endswith("(deterministic)")
    # huge nominal budgets (tests pass 2**32-1 to mean "no wall clock") stay valid z3 values
    set_solver_limits(z3.Solver(), 2**32 - 1)

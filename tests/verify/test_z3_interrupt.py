"""Ctrl-C during a z3 query stops asmevo (newcomer finding: ``asmevo evolve`` went on).

z3 catches SIGINT inside ``check()`` and answers ``unknown`` ("interrupted from keyboard"), so
Python never raised KeyboardInterrupt: the interrupt turned a proof into unknown and the run
continued.  :func:`asmevo.verify.equiv.solver_check` turns that answer into the interrupt."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
import z3

from asmevo.verify.equiv import solver_check


def _hard_solver():
    x, y = z3.BitVecs("x y", 64)
    s = z3.Solver()
    s.set("timeout", 60_000)
    # factoring a 62-bit semiprime by bit-blasting: many seconds
    s.add(x * y == 2147483647 * 2147483629, z3.UGT(x, 1), z3.UGT(y, 1),
          z3.ULT(x, 2**32), z3.ULT(y, 2**32))
    return s


def test_sigint_inside_a_query_raises_keyboard_interrupt():
    s = _hard_solver()
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    t0 = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            solver_check(s)
    finally:
        timer.cancel()
    assert time.monotonic() - t0 < 30


def test_other_unknowns_are_answers():
    s = _hard_solver()
    s.set("timeout", 200)
    assert solver_check(s) == z3.unknown

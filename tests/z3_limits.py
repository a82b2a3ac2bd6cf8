"""Deterministic z3 limits for tests whose verdict must not depend on machine load.

A wall-clock z3 timeout makes a proof's outcome a function of how busy the machine is
(issue 14: a re-check under the verifier's 10 s budget).  Tests that need a proof to
succeed use :func:`deterministic_z3`: the wall-clock timeout is lifted out of reach
(:data:`NO_WALL_CLOCK_MS`) and z3's resource limit (``rlimit``, counted in solver steps,
the same on every machine and under any load) bounds the work instead.
"""

from __future__ import annotations

import contextlib

#: z3's timeout parameter is an unsigned 32-bit count of milliseconds: about 49 days.
NO_WALL_CLOCK_MS = 2**32 - 1
#: Steps z3 may take per query (``rlimit``); the peephole proofs need far fewer.
RLIMIT = 50_000_000


@contextlib.contextmanager
def deterministic_z3(rlimit: int = RLIMIT):
    import z3
    z3.set_param("rlimit", rlimit)
    try:
        yield NO_WALL_CLOCK_MS
    finally:
        z3.set_param("rlimit", 0)

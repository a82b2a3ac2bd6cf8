"""Live progress (rich) and the JSON-lines event log ``events.jsonl`` of a run directory.

Every event is one line ``{"t": unix time, "event": NAME, ...}`` (fields in docs/evolve.md):
``start`` / ``resume`` (kernel, seed, budget, replayed_rounds, operators, k0_cycles),
``candidate`` (step, hash, operator, status, cycles, accepted, seconds), ``step`` (a step
without a new candidate: outcome ``duplicate``, ``no-op``, ``no-candidate``,
``agent-failure``, ``operator-error`` or ``over-budget``, with its message), ``best`` (a new
best: hash, cycles, speedup), ``stop`` (reason), ``final`` (the final check's verdict),
``interrupted``.  Every event that carries a cycles or speed-up figure also says where it
comes from: ``cycles_source`` (``model``: estimated by the timing model; ``device``:
measured) and ``timing`` (:func:`asmevo.evolve.score.timing_label`, e.g. ``estimated by the
timing model asmevo-cu 1``).
"""

from __future__ import annotations

import json
import os
import sys
import time


#: event fields that hold a cycles or speed-up figure (the event then says where it came from)
TIMED_FIELDS = ("cycles", "speedup", "k0_cycles", "best_cycles")


def timing_fields(scorer: dict) -> dict:
    """``{"cycles_source": "model" | "device", "timing": label}`` for a run's scorer."""
    from .score import timing_label
    return {"cycles_source": "device" if scorer.get("name") == "hip-events" else "model",
            "timing": timing_label(scorer)}


class EventLog:
    """``events.jsonl``; ``timing`` (:func:`timing_fields`) is added to every event that
    carries a cycles or speed-up figure."""

    def __init__(self, run_dir: str, timing: dict | None = None):
        self.f = open(os.path.join(run_dir, "events.jsonl"), "a", buffering=1)
        self.timing = dict(timing or {})

    def emit(self, event: str, **kw) -> None:
        rec = {"t": round(time.time(), 3), "event": event, **kw}
        if self.timing and any(k in kw for k in TIMED_FIELDS):
            rec.update(self.timing)
        self.f.write(json.dumps(rec, default=str) + "\n")

    def close(self) -> None:
        self.f.close()


class Progress:
    """A rich progress bar on stderr: evaluated / budget, accepted, best speed-up (labelled:
    the timing model's estimate, or measured on a device), rate."""

    def __init__(self, budget: int, quiet: bool = False, measured: bool = False):
        self.quiet = quiet
        self.kind = "measured" if measured else "estimated"
        self.p = None
        if quiet:
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress as RP, TextColumn, \
            TimeElapsedColumn
        # auto_refresh=False: no refresh thread.  z3's Python objects release their C
        # objects in __del__; a garbage collection run by another thread (rich's refresh
        # thread allocates while the main thread sits in a z3 call, which releases the GIL)
        # freed them concurrently with that call -- z3 contexts are not thread-safe -- and
        # the run died with SIGSEGV inside libz3 (reproduced on matvec's relational proofs
        # at a terminal, never with --quiet).  The bar is redrawn by update() instead.
        self.p = RP(TextColumn("evolve"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("{task.fields[info]}"), TimeElapsedColumn(),
                    console=Console(file=sys.stderr), transient=False, auto_refresh=False)
        self.task = self.p.add_task("evolve", total=budget, info="")
        self.p.start()

    def update(self, evaluated: int, accepted: int, speedup: float, rate: float) -> None:
        if self.p is not None:
            self.p.update(self.task, completed=evaluated,
                          info=f"accepted {accepted}  best {speedup:.3f}x ({self.kind})  "
                               f"{rate:.0f}/min")
            self.p.refresh()

    def close(self) -> None:
        if self.p is not None:
            self.p.stop()
            self.p = None

    def print(self, msg: str) -> None:
        if not self.quiet:
            print(msg, file=sys.stderr)

"""Live progress (rich) and the JSON-lines event log ``events.jsonl`` of a run directory.

Every event is one line ``{"t": unix time, "event": NAME, ...}``: ``start``, ``resume``,
``candidate`` (hash, step, operator, status, cycles, accepted), ``step`` (a step without a
new candidate: duplicate, no-candidate, agent-failure), ``best`` (new best), ``restart``,
``round``, ``stop`` (reason), ``final`` (the final check's verdict), ``interrupted``.
"""

from __future__ import annotations

import json
import os
import sys
import time


class EventLog:
    def __init__(self, run_dir: str):
        self.f = open(os.path.join(run_dir, "events.jsonl"), "a", buffering=1)

    def emit(self, event: str, **kw) -> None:
        self.f.write(json.dumps({"t": round(time.time(), 3), "event": event, **kw},
                                default=str) + "\n")

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
        self.p = RP(TextColumn("evolve"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("{task.fields[info]}"), TimeElapsedColumn(),
                    console=Console(file=sys.stderr), transient=False)
        self.task = self.p.add_task("evolve", total=budget, info="")
        self.p.start()

    def update(self, evaluated: int, accepted: int, speedup: float, rate: float) -> None:
        if self.p is not None:
            self.p.update(self.task, completed=evaluated,
                          info=f"accepted {accepted}  best {speedup:.3f}x ({self.kind})  "
                               f"{rate:.0f}/min")

    def close(self) -> None:
        if self.p is not None:
            self.p.stop()
            self.p = None

    def print(self, msg: str) -> None:
        if not self.quiet:
            print(msg, file=sys.stderr)

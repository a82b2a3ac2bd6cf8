"""The live progress bar runs no thread of its own.

z3's Python objects free their C objects in ``__del__``.  With rich's auto-refresh thread
running, a garbage collection in that thread (while the main thread was inside a z3 call,
which releases the GIL) freed z3 objects concurrently with the call, and ``asmevo evolve``
died with SIGSEGV inside libz3 -- at a terminal only, never with ``--quiet`` (newcomer test
on matvec's relational proofs, 2026-12-01).  So the bar must not start a thread.
"""

from __future__ import annotations

import io
import sys
import threading

from asmevo.evolve.progress import Progress


def test_the_progress_bar_starts_no_thread(monkeypatch):
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    before = {t.ident for t in threading.enumerate()}
    p = Progress(budget=10)
    try:
        p.update(3, 2, 1.25, 30.0)
        started = [t.name for t in threading.enumerate() if t.ident not in before]
        assert started == [], started
    finally:
        p.close()


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_update_redraws_the_bar(monkeypatch):
    """Without the refresh thread, update() itself draws the bar on a terminal."""
    out = _Tty()
    monkeypatch.setattr(sys, "stderr", out)
    p = Progress(budget=10)
    p.update(4, 3, 1.409, 12.0)
    shown = out.getvalue()
    p.close()
    assert "1.409x (estimated)" in shown


def test_the_bar_counts_every_accepted_candidate(tmp_path, monkeypatch):
    """The last update's accepted count equals the run's (newcomer test: the bar learned of
    a round's accepted candidates only when the round ended, so it ended one round short)."""
    import json
    from asmevo.evolve import progress
    from asmevo.evolve.config import load_config
    from asmevo.evolve.loop import run_evolve
    from evolve_helpers import VADD_CO, VADD_JSON
    seen = []
    monkeypatch.setattr(progress.Progress, "update",
                        lambda self, evaluated, accepted, speedup, rate: seen.append(accepted))
    cfg = load_config(None, {"kernel_file": str(VADD_CO), "harness": str(VADD_JSON),
                             "out": str(tmp_path / "run"), "budget": 6, "final_trials": 2,
                             "quiet": True})
    assert run_evolve(cfg, install_sigint=False).exit_status == 0
    rep = json.loads((tmp_path / "run" / "report.json").read_text())
    acc = sum(o["accepted"] for o in rep["operators"].values())
    assert acc > 0 and seen and seen[-1] == acc

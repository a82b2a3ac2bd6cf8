"""Ctrl-C for a long run: one press stops the loop at once or, at the latest, at its next check.

Python delivers SIGINT as ``KeyboardInterrupt`` in whatever code the main thread is running.
When that is a finaliser -- z3's ``AstRef.__del__`` runs often during a proof -- Python
prints "Exception ignored in ..." with a traceback and drops the exception, and the run
went on to its budget (newcomer finding: 1 of 4 interrupted ``asmevo evolve`` runs ended
with exit 0 after 200 candidates).  :class:`Interrupts` installs a SIGINT handler that
records the press and raises ``KeyboardInterrupt`` except inside a ``__del__`` (where it
would be dropped and print a traceback); :meth:`Interrupts.check`, called by the loop at
every round and candidate, raises it for a press that has not yet been raised.
"""

from __future__ import annotations

import signal
import threading


class Interrupts:
    """Context manager: SIGINT handling for the loop (main thread only; elsewhere a no-op).

    Attributes:
        pending: a SIGINT arrived (it stays set: the loop ends on it).
    """

    def __init__(self, install: bool = True):
        self.install = install and threading.current_thread() is threading.main_thread()
        self.pending = False
        self._old = None

    def _handler(self, signum, frame) -> None:
        self.pending = True
        f = frame
        while f is not None:            # inside a finaliser: a raise would be dropped
            if f.f_code.co_name == "__del__":
                return
            f = f.f_back
        raise KeyboardInterrupt

    def check(self) -> None:
        """Raise ``KeyboardInterrupt`` when a SIGINT arrived (it may have been dropped)."""
        if self.pending:
            raise KeyboardInterrupt

    def __enter__(self) -> "Interrupts":
        if self.install:
            self._old = signal.signal(signal.SIGINT, self._handler)
        return self

    def __exit__(self, *exc) -> None:
        if self.install and self._old is not None:
            signal.signal(signal.SIGINT, self._old)

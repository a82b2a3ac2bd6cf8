"""Ctrl-C for a long run: every press stops it, at once or within a moment, cleanly.

Python delivers SIGINT as ``KeyboardInterrupt`` in whatever code the main thread runs, which
loses a press, or breaks z3, in three places a proof spends its time:

* **inside a z3 query.**  z3 installs its own SIGINT handler for the length of
  ``Solver.check`` (its ``ctrl_c`` parameter, on by default): Python's handler never runs, and
  z3 only cancels the query -- the answer is unknown ("interrupted from keyboard"), or, when
  the query ends before z3 looks at its cancel flag (most queries take milliseconds), a
  normal answer, and the press is gone (about 1 ``asmevo evolve`` in 70 went on to its budget
  and exited 0).  :class:`Interrupts` turns z3's handler off and stops the running query
  itself: a thread woken by Python's handler (``signal.set_wakeup_fd``) calls
  ``Z3_interrupt`` on the query the main thread has registered (:func:`z3_query`), and the
  query's end raises the press.
* **inside a finaliser** (``__del__``, e.g. z3's ``AstRef.__del__``, run at any moment by the
  garbage collector): an exception raised there is dropped with "Exception ignored in ..."
  and a traceback.
* **inside z3's Python code**: a ``KeyboardInterrupt`` between z3 making an object and
  recording it (``Context.__init__`` before ``self.owner``) left a half-made object whose
  ``__del__`` printed "Exception ignored ... AttributeError: ... 'owner'"; one between an
  ``AstRef`` and its ``Z3_inc_ref`` makes its ``__del__`` drop a reference z3 never took.

In the last two places (and in this module's own bookkeeping) :class:`Interrupts`' handler
only records the press: it is raised where it is safe -- by the watcher thread signalling the
main thread again a moment later, at the next z3 query's start or end, or at the loop's next
:meth:`Interrupts.check`.  A finaliser the handler cannot tell by its name (a weakref
callback run by the garbage collector, e.g. ``WeakSet._remove``) drops the exception through
``sys.unraisablehook``: the hook installed meanwhile takes a dropped ``KeyboardInterrupt``
as not raised (nothing printed) and the watcher signals again.

The state is the process's (SIGINT is): one :class:`Interrupts` at a time, in the main thread.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

#: seconds between the watcher's attempts to stop a query / raise a press held back
RETRY_S = 0.05

_lock = threading.RLock()    # re-entrant: the handler may run while the main thread holds it
_active = False      # an Interrupts is installed (only then are queries registered)
_pending = False     # a press arrived (stays set until the Interrupts is left)
_raised = False      # ... and a KeyboardInterrupt was raised for it
_resent = 0          # SIGINTs the watcher sent to raise a held-back press, not yet handled
_query = None        # the z3 solver whose check() the main thread runs


def check() -> None:
    """Raise ``KeyboardInterrupt`` when Ctrl-C was pressed (wherever it landed)."""
    global _raised
    if _pending:
        with _lock:
            _raised = True
        raise KeyboardInterrupt


def raise_interrupt() -> None:
    """Raise ``KeyboardInterrupt`` for a press seen elsewhere (a z3 query that answered
    "interrupted"), recorded as raised so that the watcher does not raise it again."""
    global _pending, _raised
    if _active:
        with _lock:
            _pending = _raised = True
    raise KeyboardInterrupt


class z3_query:
    """``with z3_query(solver): solver.check()``: while an :class:`Interrupts` is installed
    and the caller is the main thread, Ctrl-C stops this query (``Z3_interrupt`` from the
    watcher thread), and a press raises ``KeyboardInterrupt`` at the query's start and end --
    also when the query answered before it was stopped, so that no press is lost."""

    __slots__ = ("solver", "on")

    def __init__(self, solver):
        self.solver = solver
        self.on = False

    def __enter__(self):
        global _query
        if _active and threading.current_thread() is threading.main_thread():
            check()
            with _lock:
                self.on = True
                _query = self.solver
        return self.solver

    def __exit__(self, *exc):
        global _query
        if self.on:
            with _lock:
                _query = None
            check()
        return False


def _stop_query() -> None:
    """Stop the registered query (the watcher's thread; under ``_lock``)."""
    if _query is not None:
        try:
            _query.ctx.interrupt()      # Z3_interrupt: documented thread-safe
        except Exception:  # noqa: BLE001 - a solver being torn down: nothing to stop
            pass


class Interrupts:
    """Context manager: SIGINT handling for a long run (main thread only; elsewhere a no-op).

    While it is entered z3's own SIGINT handling is off (``ctrl_c``), a press stops the
    z3 query in progress, and a press is raised as ``KeyboardInterrupt`` at once unless it
    landed in a finaliser or in z3's Python code (then a moment later, see the module).

    Attributes:
        pending: a SIGINT arrived (it stays set: the loop ends on it).
    """

    def __init__(self, install: bool = True):
        self.install = install and threading.current_thread() is threading.main_thread()
        self._old = None
        self._old_wakeup = -1
        self._pipe = None
        self._thread = None
        self._closing = False
        self._ctrl_c = None
        self._old_hook = None

    @property
    def pending(self) -> bool:
        return _pending

    def check(self) -> None:
        """Raise ``KeyboardInterrupt`` when a SIGINT arrived (it may have been held back)."""
        check()

    # the handler (main thread) ------------------------------------------------------
    def _handler(self, signum, frame) -> None:
        global _pending, _raised, _resent
        with _lock:
            if _raised and _resent:  # the watcher's, for a press raised since: done
                _resent -= 1
                return
            _pending = True
            if _held_back(frame):
                return
            _raised = True
        raise KeyboardInterrupt

    def _unraisable(self, u) -> None:
        """``sys.unraisablehook``: a ``KeyboardInterrupt`` dropped where it was raised (a
        finaliser or weakref callback) is raised again by the watcher, and not printed."""
        global _raised
        if u.exc_type is not None and issubclass(u.exc_type, KeyboardInterrupt):
            with _lock:
                _raised = False
            if self._pipe is not None:
                try:
                    os.write(self._pipe[1], bytes([signal.SIGINT]))   # (wakes the watcher)
                except OSError:
                    pass
            return
        (self._old_hook or sys.__unraisablehook__)(u)

    # the watcher (its own thread) ---------------------------------------------------
    def _watch(self, rfd: int, main_id: int) -> None:
        global _resent
        while True:
            try:
                data = os.read(rfd, 512)
            except OSError:
                return
            if self._closing or not data:
                return
            if signal.SIGINT not in data:
                continue
            # the main thread may be inside a query (Python's handler runs when it returns):
            # stop it; the query's end raises the press.  A press held back (a finaliser,
            # z3's code) is signalled again until it is raised.
            while True:
                with _lock:
                    if self._closing or _raised:
                        break
                    _stop_query()
                time.sleep(RETRY_S)
                with _lock:
                    if self._closing or _raised:
                        break
                    _resent += 1
                    signal.pthread_kill(main_id, signal.SIGINT)

    def __enter__(self) -> "Interrupts":
        global _active, _pending, _raised, _resent
        if not self.install:
            return self
        with _lock:
            _active, _pending, _raised, _resent = True, False, False, 0
        self._old = signal.signal(signal.SIGINT, self._handler)
        self._old_hook, sys.unraisablehook = sys.unraisablehook, self._unraisable
        r, w = os.pipe()
        os.set_blocking(w, False)
        try:
            self._old_wakeup = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
        except ValueError:
            os.close(r)
            os.close(w)
        else:
            self._pipe = (r, w)
            self._thread = threading.Thread(target=self._watch, args=(r, threading.get_ident()),
                                            name="asmevo-interrupts", daemon=True)
            self._thread.start()
        try:        # after the handler: a press in these z3 calls is held back, not lost
            import z3
            self._ctrl_c = z3.get_param("ctrl_c")
            z3.set_param("ctrl_c", False)
        except ImportError:     # no z3: no query to stop
            self._ctrl_c = None
        return self

    def __exit__(self, *exc) -> None:
        global _active, _pending, _raised, _resent, _query
        if not self.install or self._old is None:
            return
        with _lock:
            self._closing = True
        if self._pipe is not None:
            try:
                os.write(self._pipe[1], b"\0")
            except OSError:
                pass
            self._thread.join(5)
            signal.set_wakeup_fd(self._old_wakeup)
        signal.signal(signal.SIGINT, self._old)
        self._old = None
        if sys.unraisablehook == self._unraisable:
            sys.unraisablehook = self._old_hook
        if self._pipe is not None:
            for fd in self._pipe:
                os.close(fd)
            self._pipe = None
        with _lock:
            _active, _pending, _raised, _resent, _query = False, False, False, 0, None
        if self._ctrl_c is not None:
            import z3
            z3.set_param("ctrl_c", self._ctrl_c)


def _held_back(frame) -> bool:
    """Whether a ``KeyboardInterrupt`` raised in ``frame`` would be dropped or break
    something: the stack holds a finaliser, z3's Python code, or this module's own
    bookkeeping (a query half registered)."""
    z3file = getattr(sys.modules.get("z3"), "__file__", None)
    z3dir = os.path.dirname(z3file) + os.sep if z3file else None
    f = frame
    while f is not None:
        code = f.f_code
        if (code.co_name == "__del__" or code.co_filename == __file__
                or (z3dir and code.co_filename.startswith(z3dir))):
            return True
        f = f.f_back
    return False

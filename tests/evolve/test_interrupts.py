"""Ctrl-C is not lost in a finaliser (newcomer finding: SIGINT landing in z3's
``AstRef.__del__`` printed "Exception ignored ... KeyboardInterrupt" and ``asmevo evolve``
ran on to its budget, exit 0)."""

from __future__ import annotations

import gc
import os
import signal
import sys
import time

import pytest

from asmevo.evolve.interrupt import Interrupts


class _SignalsInDel:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)
        t = time.monotonic()
        while time.monotonic() - t < 0.2:    # Python runs the handler here, inside __del__
            pass


def _unraisable(monkeypatch) -> list:
    seen: list = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append(u.exc_type))
    return seen


def test_sigint_inside_a_finaliser_is_raised_at_the_next_check(monkeypatch):
    seen = _unraisable(monkeypatch)
    with Interrupts() as ints:
        x = _SignalsInDel()
        del x
        gc.collect()
        assert ints.pending
        with pytest.raises(KeyboardInterrupt):
            ints.check()
    assert seen == []        # nothing dropped ("Exception ignored in ...")


def test_sigint_elsewhere_raises_at_once():
    with Interrupts() as ints:
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            t = time.monotonic()
            while time.monotonic() - t < 5:
                pass
        assert ints.pending


def test_without_a_press_check_is_silent_and_the_old_handler_comes_back():
    old = signal.getsignal(signal.SIGINT)
    with Interrupts() as ints:
        assert signal.getsignal(signal.SIGINT) != old
        ints.check()
    assert signal.getsignal(signal.SIGINT) == old


def test_default_handler_drops_it_in_a_finaliser(monkeypatch):
    """The failure mode itself: with Python's own handler the interrupt is dropped."""
    seen = _unraisable(monkeypatch)
    x = _SignalsInDel()
    del x
    gc.collect()
    assert seen == [KeyboardInterrupt]

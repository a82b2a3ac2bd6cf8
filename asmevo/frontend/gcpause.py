"""Pause the cyclic garbage collector while a large IR is built.

A disassembly of a large kernel makes some 100,000 objects that all stay alive; every
collection they trigger walks everything made so far, about a third of the build time
(``asmevo dis`` of the largest AITer kernel).  :func:`gc_paused` disables the collector
and, on exit, restores it without the collection that the pending count would otherwise
trigger at the next allocation: the objects made meanwhile join the oldest generation
(``gc.freeze()`` then ``gc.unfreeze()`` move them there without walking them), where a
full collection finds any garbage among them as usual.
"""

from __future__ import annotations

import contextlib
import gc


@contextlib.contextmanager
def gc_paused():
    """Disable the cyclic collector for the ``with`` body; restore its state afterwards."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if gc.get_freeze_count() == 0:  # nothing frozen by the caller: age, don't walk
                gc.freeze()
                gc.unfreeze()
            gc.enable()

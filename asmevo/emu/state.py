"""Wave and workgroup state of the emulator.

Register files (CDNA3 ISA guide, "State"; gfx942 wave64):

* ``v``: VGPRs, ``(512, 64)`` uint32 -- row ``i`` is ``v[i]`` across the 64 lanes;
* ``a``: AGPRs (ACC VGPRs), ``(256, 64)`` uint32;
* ``s``: SGPRs and the special registers that alias SGPR numbers on GFX9,
  ``(128,)`` uint32: s0..s101, flat_scratch 102-103, xnack_mask 104-105,
  vcc 106-107, ttmp0..15 108-123, m0 124, exec 126-127;
* ``scc``: a Python bool.

The EXEC mask is cached as a bool ``(64,)`` array (``exec_mask``) with
``exec_all``/``exec_any`` flags; every write of EXEC goes through
:meth:`Wave.sync_exec`.
"""

from __future__ import annotations

import numpy as np

from .memory import LocalMemory

#: SGPR numbers of special registers (GFX9 map).
SPECIAL_SGPR = {
    "flat_scratch": 102, "flat_scratch_lo": 102, "flat_scratch_hi": 103,
    "xnack_mask": 104, "xnack_mask_lo": 104, "xnack_mask_hi": 105,
    "vcc": 106, "vcc_lo": 106, "vcc_hi": 107, "m0": 124,
    "exec": 126, "exec_lo": 126, "exec_hi": 127,
}
TTMP_BASE = 108
EXEC = 126
VCC = 106
M0 = 124
NUM_SGPR_SLOTS = 128

#: High 32 bits of the flat apertures (``src_shared_base`` / ``src_private_base``).
SHARED_APERTURE_HI = 0x10000
PRIVATE_APERTURE_HI = 0x20000

LANES = np.arange(64)
_MASKS: dict = {}   # EXEC value -> read-only bool (64,) mask (masks repeat a lot)


def lane_mask(value: int) -> np.ndarray:
    """A 64-bit lane mask as a read-only bool (64,) array (cached: masks repeat a lot)."""
    m = _MASKS.get(value)
    if m is None:
        m = np.unpackbits(np.frombuffer(value.to_bytes(8, "little"), np.uint8),
                          bitorder="little").view(bool)
        m.setflags(write=False)
        if len(_MASKS) < 4096:
            _MASKS[value] = m
    return m


_ALL = lane_mask(0xFFFFFFFFFFFFFFFF)
_STATES: dict = {}  # EXEC value -> exec_flags(value)


def exec_flags(value: int) -> tuple:
    """What a wave caches of EXEC ``value``: ``(exec_mask, exec_all, exec_any, exec_n)``
    (:meth:`Wave.sync_exec`); cached as :func:`lane_mask` is."""
    f = _STATES.get(value)
    if f is None:
        f = (lane_mask(value), value == 0xFFFFFFFFFFFFFFFF, value != 0, value.bit_count())
        if len(_STATES) < 4096:
            _STATES[value] = f
    return f


class Workgroup:
    """Shared state of one workgroup: its LDS and its id."""

    def __init__(self, wg_id: tuple[int, int, int], lds_bytes: int, lds_store=None):
        self.id = wg_id
        self.lds = LocalMemory(lds_bytes, "LDS", lds_store)


class Wave:
    """Architectural state of one wave64."""

    __slots__ = ("v", "a", "s", "scc", "exec_mask", "exec_all", "exec_any", "pc", "done",
                 "group", "scratch", "index", "count", "mode", "gpr_idx", "trapsts", "exec_n",
                 "lanes")

    def __init__(self, group: Workgroup, index: int, scratch=None, regs=None):
        """``regs``: optional zeroed ``(v, a, s)`` arrays of shapes (512, 64), (256, 64),
        (128,) to use (views into the shared files of :mod:`asmevo.emu.lockstep`; ``v`` and
        ``a`` may have fewer rows: :meth:`Program.register_rows`)."""
        if regs is not None:
            self.v, self.a, self.s = regs
        else:
            self.v = np.zeros((512, 64), np.uint32)
            self.a = np.zeros((256, 64), np.uint32)
            self.s = np.zeros(NUM_SGPR_SLOTS, np.uint32)
        self.scc = False
        self.exec_mask = _ALL
        self.exec_all = True
        self.exec_any = True
        self.exec_n = 64        # popcount(EXEC)
        self.lanes = 0          # sum of popcount(EXEC) over the instructions executed
        self.pc = 0
        self.done = False
        self.group = group
        self.scratch = scratch
        self.index = index
        self.count = 0
        # MODE: round nearest (0), denorm 32 = 3, denorm 16/64 = 3, dx10_clamp, ieee
        self.mode = 0xF0 | (1 << 8) | (1 << 9)
        self.gpr_idx = None
        self.trapsts = 0

    def sync_exec(self) -> None:
        """Recompute the cached EXEC mask after a write of s[126:127]."""
        self.exec_mask, self.exec_all, self.exec_any, self.exec_n = \
            exec_flags(self.s.item(EXEC) | (self.s.item(EXEC + 1) << 32))

    def set_exec(self, mask: np.ndarray) -> None:
        """Set EXEC from a bool (64,) mask."""
        self.s[EXEC:EXEC + 2] = np.packbits(mask, bitorder="little").view(np.uint32)
        self.sync_exec()

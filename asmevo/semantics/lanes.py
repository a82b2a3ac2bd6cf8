"""Lane maps shared by the emulator and the z3 backend (cross-lane data movement)."""

from __future__ import annotations

import numpy as np

from ..ir.operands import Func

LANES = np.arange(64)


def swizzle_map(f):
    """ds_swizzle_b32 ``offset`` (a ``swizzle(...)`` Func or the 16-bit number) -> source
    lane of each of the 64 lanes (int array (64,)); CDNA3 ISA guide, "DS_SWIZZLE_B32":
    bit 15 set = quad permute (2 bits per lane of a quad), else bit-mask mode on 32-lane
    halves (and 0-4, or 5-9, xor 10-14).

    Raises:
        ValueError: an unknown swizzle mode."""
    lane = LANES
    if isinstance(f, Func) and f.name == "swizzle":
        mode = f.args[0]
        if mode == "SWAP":
            return lane ^ int(f.args[1])
        if mode == "REVERSE":
            g = int(f.args[1])
            return (lane & ~(g - 1)) | ((g - 1) - (lane & (g - 1)))
        if mode == "BROADCAST":
            g, ln = int(f.args[1]), int(f.args[2])
            return (lane & ~(g - 1)) | ln
        if mode == "QUAD_PERM":
            p = np.array([int(x) for x in f.args[1:5]])
            return (lane & ~3) | p[lane & 3]
        if mode == "BITMASK_PERM":
            s = f.args[1].strip('"')
            and_m = or_m = xor_m = 0
            for k, ch in enumerate(reversed(s)):
                if ch == "0":
                    pass
                elif ch == "1":
                    or_m |= 1 << k
                elif ch == "p":
                    and_m |= 1 << k
                elif ch == "i":
                    and_m |= 1 << k
                    xor_m |= 1 << k
            return _bitmask_swz(and_m, or_m, xor_m)
        raise ValueError(f"swizzle mode {mode}")
    off = int(f)
    if off & 0x8000:
        p = [(off >> (2 * k)) & 3 for k in range(4)]
        return (lane & ~3) | np.array(p)[lane & 3]
    return _bitmask_swz(off & 0x1F, (off >> 5) & 0x1F, (off >> 10) & 0x1F)


def _bitmask_swz(and_m, or_m, xor_m):
    lane = LANES
    t = lane & 31
    return (lane & 32) | (((t & and_m) | or_m) ^ xor_m)

"""Differential testing: run original and candidate in the emulator on identical launches.

For each trial both code objects run on the same inputs (seeded random
inputs from the harness, and trials that favour edge values: 0, -1, integer
min/max, NaN, +-inf, denormals, -0.0).  After each trial every buffer the kernel
may write (harness role ``out``/``inout``) is compared bit for bit -- NaNs
compare equal only with the same payload -- or, with a tolerance, as floats
(``|c - o| <= atol + rtol * |o|``, NaN matching NaN).  Buffers with role
``in`` must end as the original leaves them (else ``rejected-stray-write``),
and so must any memory outside the buffers the emulator can report.

A trial on which the original faults is skipped (the inputs are outside the
kernel's domain, e.g. edge values used as indices); if the candidate faults
where the original did not, the verdict is ``rejected-emulation-fault``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import AsmevoError
from ..ir.module import Module
from .verdict import Evidence, Status, Verdict

# ----------------------------------------------------------------- edge values


def edge_values(dtype: np.dtype) -> np.ndarray:
    """Edge values of ``dtype``: for floats 0, -0.0, +-1, NaN (quiet and one with a
    payload), +-inf, the smallest denormal, the largest finite; for integers 0,
    1, -1 (all ones), min and max."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        fi = np.finfo(dt)
        bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
        payload_nan = {2: 0x7E01, 4: 0x7FC00001, 8: 0x7FF8000000000001}[dt.itemsize]
        vals = np.array([0.0, -0.0, 1.0, -1.0, np.nan, np.inf, -np.inf,
                         float(fi.smallest_subnormal), -float(fi.smallest_subnormal),
                         float(fi.max), -float(fi.max), float(fi.tiny)], dtype=dt)
        return np.concatenate([vals, np.array([payload_nan], dtype=bits).view(dt)])
    if dt.kind in "iu":
        ii = np.iinfo(dt)
        return np.array([0, 1, ii.max, ii.min, -1 if dt.kind == "i" else ii.max, ii.max - 1,
                         ii.min + 1 if dt.kind == "i" else 2], dtype=dt)
    return np.zeros(1, dtype=dt)


def inject_edges(arr: np.ndarray, rng: np.random.Generator, fraction: float = 0.25) -> np.ndarray:
    """A copy of ``arr`` with about ``fraction`` of its elements replaced by edge values."""
    out = arr.copy()
    if out.size == 0:
        return out
    ev = edge_values(out.dtype)
    k = max(1, int(out.size * fraction))
    idx = rng.choice(out.size, size=min(k, out.size), replace=False)
    flat = out.reshape(-1)
    flat[idx] = ev[rng.integers(0, len(ev), size=len(idx))]
    return out


# ----------------------------------------------------------------- comparison


@dataclass
class Mismatch:
    """First differing element of a buffer: index and both values (as printed)."""

    index: int
    original: str
    candidate: str
    count: int


def _fmt(v: Any, dt: np.dtype) -> str:
    if dt.kind == "f":
        bits = np.array([v], dtype=dt).view({2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize])[0]
        return f"{float(v)!r} (0x{int(bits):0{dt.itemsize * 2}x})"
    return str(v.item() if hasattr(v, "item") else v)


def compare_buffer(orig: np.ndarray, cand: np.ndarray,
                   tolerance: tuple[float, float] | None = None) -> Mismatch | None:
    """First mismatch between two buffers of the same dtype, or None.

    Bit-exact by default (so NaN payloads and -0.0 vs +0.0 count); with
    ``tolerance = (rtol, atol)`` float elements match when both are NaN, or
    equal, or ``|c - o| <= atol + rtol * |o|``.  Integer buffers are always exact.
    """
    o = np.asarray(orig).reshape(-1)
    c = np.asarray(cand).reshape(-1)
    if o.dtype != c.dtype or o.size != c.size:
        return Mismatch(0, f"{o.dtype}[{o.size}]", f"{c.dtype}[{c.size}]", max(o.size, c.size))
    dt = o.dtype
    if tolerance is not None and dt.kind == "f":
        rtol, atol = tolerance
        of, cf = o.astype(np.float64), c.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            ok = (np.isnan(of) & np.isnan(cf)) | (of == cf) | (np.abs(cf - of) <= atol + rtol * np.abs(of))
        bad = np.flatnonzero(~ok)
    else:
        ob = o.view(np.uint8).reshape(o.size, dt.itemsize)
        cb = c.view(np.uint8).reshape(c.size, dt.itemsize)
        bad = np.flatnonzero((ob != cb).any(axis=1))
    if bad.size == 0:
        return None
    i = int(bad[0])
    return Mismatch(i, _fmt(o[i], dt), _fmt(c[i], dt), int(bad.size))


# ----------------------------------------------------------------- harness


def load_harness(path: str) -> Any:
    """Load a launch harness (JSON) for differential testing.

    Uses the emulator's harness loader when it exists (``asmevo.emu.harness``);
    the format is the corpus manifest entry schema (shared/corpus/README.md):
    ``kernel``, ``block``, ``grid``, ``args`` with ``kind``/``dtype``/``count``/
    ``init``/``role``/``value``.

    Raises:
        AsmevoError: unreadable or malformed harness (exit 2).
    """
    try:
        from ..emu import harness as emu_harness
    except ImportError:
        emu_harness = None
    if emu_harness is not None and hasattr(emu_harness, "load_harness"):
        return emu_harness.load_harness(path)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, UnicodeDecodeError) as e:
        raise AsmevoError(f"cannot read harness: {e}", file=path) from None
    except json.JSONDecodeError as e:
        raise AsmevoError(f"harness is not JSON: {e.msg}", file=path, line=e.lineno, column=e.colno) from None
    if not isinstance(data, dict) or "args" not in data:
        raise AsmevoError("harness must be a JSON object with 'kernel', 'block', 'grid', 'args'",
                          file=path)
    return data


# ----------------------------------------------------------------- the layer


def differential(orig: Module, cand: Module, harness: Any, *, entry: str | None = None,
                 trials: int = 8, seed: int = 0,
                 tolerance: tuple[float, float] | None = None) -> Verdict:
    """Run both modules on ``trials`` identical launches and compare (see module docstring).

    Returns a Verdict: ``accepted``, ``rejected-output-mismatch``,
    ``rejected-stray-write``, ``rejected-emulation-fault``, ``unknown-timeout``
    (step budget) or ``unknown-unsupported`` (the emulator cannot run it).
    """
    try:
        from ..emu import run_kernel  # noqa: F401
    except ImportError as e:
        return Verdict(Status.UNKNOWN_UNSUPPORTED, f"the emulator is not available ({e})",
                       [Evidence("diff", "unavailable", str(e))])
    return Verdict(Status.UNKNOWN_UNSUPPORTED, "differential testing is not wired to the emulator yet")


def _isnan(x) -> bool:
    try:
        return math.isnan(x)
    except TypeError:
        return False

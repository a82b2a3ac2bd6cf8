"""Differential testing: run original and candidate in the emulator on identical launches.

For each trial both code objects run on the same inputs (seeded random
inputs from the harness, and trials that favour edge values: 0, -1, integer
min/max, NaN, +-inf, denormals, -0.0).  After each trial every buffer the kernel
may write (harness role ``out``/``inout``) is compared bit for bit -- NaNs
compare equal only with the same payload -- or, with a tolerance, as floats
(``|c - o| <= atol + rtol * |o|``, NaN matching NaN).  On edge trials
LDS starts filled with a seeded pattern rather than zeros (hardware LDS is
undefined at launch).  Buffers with role
``in`` must end as the original leaves them (else ``rejected-stray-write``),
and so must any memory outside the buffers the emulator can report.

A trial on which the original faults is skipped (the inputs are outside the
kernel's domain, e.g. edge values used as indices); if the candidate faults
where the original did not, the verdict is ``rejected-emulation-fault``.
"""

from __future__ import annotations

import contextlib
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


def load_harness(path: str, entry: str | None = None) -> dict:
    """Load a launch harness (JSON) for differential testing, through the emulator's
    loader (:func:`asmevo.emu.harness.load_harness`): one corpus manifest entry, or a
    manifest list from which ``entry`` picks one (shared/corpus/README.md schema).

    Raises:
        AsmevoError: unreadable or malformed harness (exit 2).
    """
    from ..emu.harness import load_harness as _load
    return _load(path, entry)


# ----------------------------------------------------------------- the layer

class EmulatorInternalError(AsmevoError):
    """The emulator itself failed (a Python exception, not an emulated fault): the
    layer cannot decide, so this is never a rejection nor an acceptance."""


# An emulator that says it cannot run something has not found a fault: unknown, never
# rejected (e.g. "s_setreg to MODE selects a rounding mode ...; not emulated").
_UNSUPPORTED_MARKS = ("emulator internal error", "has no semantics", "is not emulated",
                      "cannot be emulated", "not emulated", "not supported", "unsupported")


def _classify(err: Exception) -> str:
    """``"unsupported"`` (the emulator cannot run it), ``"hang"`` or ``"fault"``."""
    msg = str(err)
    if any(m in msg for m in _UNSUPPORTED_MARKS):
        return "unsupported"
    if "runaway" in msg:
        return "hang"
    return "fault"


def trial_inputs(harness: dict, trial: int, seed: int) -> tuple[dict, str]:
    """Inputs of trial ``trial``: ``(name -> array/scalar, kind)``.

    Kinds cycle ``random`` (the harness's own generator, seed ``seed + trial``),
    ``edge-float`` (about a quarter of every float input element replaced by edge
    values, output buffers prefilled with random bytes) and ``edge-all`` (also
    integer inputs).  Scalars keep the harness values (they size the launch).
    """
    from ..emu.harness import make_inputs
    s = seed + trial
    inputs = make_inputs(harness, s)
    kind = ("random", "edge-float", "edge-all")[trial % 3]
    rng = np.random.default_rng([s, 0x5EED])
    for a in harness["args"]:
        if a["kind"] != "buffer":
            continue
        v = inputs[a["name"]]
        role = a.get("role", "in")
        if role == "out" and kind != "random":
            inputs[a["name"]] = rng.integers(0, 256, v.nbytes, dtype=np.uint8).view(v.dtype).copy()
        elif role in ("in", "inout") and kind != "random":
            if v.dtype.kind == "f" or kind == "edge-all":
                inputs[a["name"]] = inject_edges(v, rng)
    return inputs, kind


@contextlib.contextmanager
def _lds_fill(seed: int | None):
    """Fill every workgroup's LDS with a seeded byte pattern instead of zeros while
    running (hardware LDS starts undefined; the emulator zero-fills it, which hides a
    candidate that skips initialising LDS).  Both modules of a trial get the same
    pattern.  This wraps :class:`asmevo.emu.memory.LocalMemory` construction for the
    duration of the run; it does nothing if that class does not look as expected.
    ``seed=None``: no fill."""
    if seed is None:
        yield
        return
    from ..emu import memory as emem
    cls = getattr(emem, "LocalMemory", None)
    orig_init = getattr(cls, "__init__", None)
    if cls is None or orig_init is None:
        yield
        return
    fill = np.random.default_rng([seed, 0x1D5]).integers(0, 256, 1 << 16, dtype=np.uint8)

    def init(self, size, space, *a, **kw):
        orig_init(self, size, space, *a, **kw)
        store = getattr(self, "_store", None)
        if isinstance(store, np.ndarray) and store.dtype == np.uint8:
            n = min(store.size, fill.size)
            store[:n] = fill[:n]

    cls.__init__ = init
    try:
        yield
    finally:
        cls.__init__ = orig_init


def _run(module: Module, kernel: str, harness: dict, inputs: dict, limit: int | None,
         lds_seed: int | None = None, device=None):
    from ..emu.harness import make_launch
    launch = make_launch(harness, {k: (v.copy() if isinstance(v, np.ndarray) else v)
                                   for k, v in inputs.items()})
    if limit is not None:
        launch.max_instructions_per_wave = limit
    if device is not None and getattr(device, "hardware", False):
        # a real GPU (asmevo.device): the same launch through the device interface; the
        # loaded code object is kept per module for the trials
        loaded = _LOADED.get((id(device), id(module)))
        if loaded is None:
            loaded = _LOADED[(id(device), id(module))] = device.load(module)
        return loaded.run(kernel, launch)
    from ..device.emulator import EmulatorLoaded     # the default device: the emulator
    try:
        with _lds_fill(lds_seed):
            return EmulatorLoaded(module).run(kernel, launch)
    except AsmevoError:
        raise
    except Exception as e:  # noqa: BLE001 - an emulator bug must not decide a verdict
        raise EmulatorInternalError(f"emulator internal error: {type(e).__name__}: {e}") from e


#: (device, module) -> code object loaded on a real device, for the trials of one verification
_LOADED: dict = {}


def differential(orig: Module, cand: Module, harness: Any, *, entry: str | None = None,
                 trials: int = 8, seed: int = 0,
                 tolerance: tuple[float, float] | None = None, cache: dict | None = None,
                 device=None) -> Verdict:
    """Run both modules on ``trials`` identical launches and compare (see module docstring).

    ``harness`` is a loaded harness dict (or a path); its ``kernel`` is run.
    ``cache``: optional dict reused across calls with the *same* original module
    and harness (e.g. many candidates of one kernel): the original's results per
    trial are kept there.
    ``device``: an :class:`asmevo.device.Device` that runs both kernels (None: the embedded
    emulator).  On a real GPU stores outside the buffers are not seen (only the buffers'
    contents are compared, input buffers included).

    Returns a Verdict: ``accepted``, ``rejected-output-mismatch``,
    ``rejected-stray-write``, ``rejected-emulation-fault``,
    ``unknown-unsupported`` (the emulator cannot run one of them, or every
    trial was outside the original's domain).
    """
    try:
        return _differential(orig, cand, harness, entry=entry, trials=trials, seed=seed,
                             tolerance=tolerance, cache=cache, device=device)
    finally:
        for key in [k for k in _LOADED if device is not None and k[0] == id(device)]:
            _LOADED.pop(key).close()


def _differential(orig, cand, harness, *, entry, trials, seed, tolerance, cache, device):
    if not isinstance(harness, dict):
        harness = load_harness(str(harness), entry)
    kernel = harness.get("kernel") or entry
    if not kernel:
        raise AsmevoError("the harness names no kernel", file=harness.get("_file"))
    roles = {a["name"]: a.get("role", "in") for a in harness["args"] if a["kind"] == "buffer"}
    skipped: list[str] = []
    ran = 0
    for t in range(trials):
        inputs, kind = trial_inputs(harness, t, seed)
        lds_seed = None if kind == "random" else seed + t
        key = (id(orig), id(harness), kernel, t, seed)
        try:
            if cache is not None and key in cache:
                ro = cache[key]
                if isinstance(ro, AsmevoError):
                    raise ro
            else:
                try:
                    ro = _run(orig, kernel, harness, inputs, None, lds_seed, device)
                except AsmevoError as e:
                    if cache is not None:
                        cache[key] = e
                    raise
                if cache is not None:
                    cache[key] = ro
        except AsmevoError as e:
            if isinstance(e, EmulatorInternalError):
                skipped.append(f"trial {t} ({kind}): emulator internal error on the original: "
                               f"{str(e)[:160]}")
                continue
            if _classify(e) == "unsupported":
                return Verdict(Status.UNKNOWN_UNSUPPORTED, f"the emulator cannot run the original: {e}",
                               [Evidence("diff", "unsupported", str(e), {"trial": t, "side": "original"})])
            if kind == "random":
                raise AsmevoError(f"the original faults on the harness inputs (trial {t}): "
                                  f"{getattr(e, 'message', e)}",
                                  file=harness.get("_file")) from None
            skipped.append(f"trial {t} ({kind}): original faults: {str(e)[:160]}")
            continue
        limit = 4 * max(ro.instructions, 1) + 100_000
        try:
            rc = _run(cand, kernel, harness, inputs, limit, lds_seed, device)
        except AsmevoError as e:
            c = _classify(e)
            data = {"trial": t, "trial_kind": kind, "error": str(e)}
            if c == "unsupported":
                return Verdict(Status.UNKNOWN_UNSUPPORTED, f"the emulator cannot run the candidate: {e}",
                               [Evidence("diff", "unsupported", str(e), data)])
            return Verdict(Status.REJECTED_EMULATION_FAULT,
                           f"trial {t} ({kind}): the candidate {'hangs' if c == 'hang' else 'faults'} "
                           f"where the original does not: {e}",
                           [Evidence("diff", c, str(e), data)])
        ran += 1
        extra = sorted(set(map(tuple, rc.writes_outside)) - set(map(tuple, ro.writes_outside)))
        if extra:
            r0 = extra[0]
            return Verdict(Status.REJECTED_STRAY_WRITE,
                           f"trial {t} ({kind}): the candidate writes {r0[2]} bytes at offset {r0[1]} of "
                           f"{r0[0]}, which is not an output",
                           [Evidence("diff", "stray-write", f"{len(extra)} write(s) outside outputs",
                                     {"trial": t, "writes": [list(x) for x in extra[:16]]})])
        for name in sorted(roles, key=lambda n: (roles[n] == "in", n)):
            o, c = ro.outputs.get(name), rc.outputs.get(name)
            if o is None or c is None:
                continue
            mm = compare_buffer(o, c, tolerance if roles[name] != "in" else None)
            if mm is None:
                continue
            st = Status.REJECTED_STRAY_WRITE if roles[name] == "in" else Status.REJECTED_OUTPUT_MISMATCH
            what = "input buffer" if roles[name] == "in" else "output"
            return Verdict(st, f"trial {t} ({kind}): {what} {name}[{mm.index}]: original {mm.original}, "
                               f"candidate {mm.candidate} ({mm.count} element(s) differ)",
                           [Evidence("diff", "first-mismatch", f"{name}[{mm.index}]",
                                     {"trial": t, "trial_kind": kind, "seed": seed + t, "buffer": name,
                                      "index": mm.index, "original": mm.original,
                                      "candidate": mm.candidate, "count": mm.count})])
    if ran == 0:
        return Verdict(Status.UNKNOWN_UNSUPPORTED, "no trial ran: the original faults on every input",
                       [Evidence("diff", "skipped", s) for s in skipped])
    v = Verdict(Status.ACCEPTED, f"{ran} trial(s) identical" + (f", {len(skipped)} skipped"
                                                                 if skipped else ""),
                [Evidence("diff", "trials", f"{ran} of {trials} trials compared",
                          {"ran": ran, "skipped": skipped})])
    return v

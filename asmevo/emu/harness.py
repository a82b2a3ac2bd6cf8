"""Run descriptions (harness JSON) in the corpus manifest-entry schema.

A harness file is either one manifest entry (a JSON object) or a manifest (a
list of entries, one picked with ``entry``).  Keys used: ``name``, ``kernel``,
``block``, ``grid``, ``args`` (in kernel order: ``name``, ``kind`` buffer|scalar,
``dtype``, ``count``/``init`` for buffers, ``value`` for scalars, ``role``
in|out|inout), ``reference`` (``file.py:function`` relative to the harness
file), ``rtol``/``atol``; optional ``dynamic_lds`` (bytes; default: the rest of the
64 KiB LDS).  See ../shared/corpus/README.md.

Inputs are drawn with ``np.random.default_rng(seed)``, buffers in argument
order, exactly as the corpus ``check_manifest.py`` does for seed 0.
"""

from __future__ import annotations

import importlib.util
import json
import os

import numpy as np

from ..errors import AsmevoError
from .launch import Arg, Launch

_INITS = ("zeros", "ones", "arange", "uniform(", "randint(")

#: Largest total size of the harness buffers (bytes); checked before allocating, so a
#: huge ``count`` is a located error rather than a MemoryError.
MAX_BUFFER_BYTES = 4 << 30


def _init_bounds(init: str) -> tuple[float, float] | None:
    """``(lo, hi)`` of ``uniform(lo, hi)`` / ``randint(lo, hi)``; ``None`` when malformed."""
    import re
    m = re.fullmatch(r"(?:uniform|randint)\(\s*([^,()]+?)\s*,\s*([^,()]+?)\s*\)", init)
    if not m:
        return None
    try:
        lo, hi = float(m.group(1)), float(m.group(2))
    except ValueError:
        return None
    if not (np.isfinite(lo) and np.isfinite(hi)) or lo > hi or \
            (init.startswith("randint") and (lo != int(lo) or hi != int(hi) or lo >= hi)):
        return None
    return lo, hi


def load_harness(path: str, entry: str | None = None) -> dict:
    """Read a harness/manifest JSON file and return one entry (a dict with
    ``_dir`` set to the file's directory).

    Raises:
        AsmevoError: unreadable JSON, several entries and no ``entry``, unknown
            entry name, or an entry that does not follow the schema.
    """
    try:
        with open(path) as f:
            doc = json.load(f)
    except OSError as e:
        raise AsmevoError(f"cannot read harness: {e.strerror}", file=path) from None
    except json.JSONDecodeError as e:
        raise AsmevoError(f"harness is not valid JSON: {e.msg}", file=path, line=e.lineno,
                          column=e.colno) from None
    if isinstance(doc, list):
        if entry is None:
            if len(doc) == 1:
                e = doc[0]
            else:
                raise AsmevoError(f"harness holds {len(doc)} entries; choose one with --entry "
                                  f"({', '.join(str(x.get('name')) for x in doc[:8])}...)", file=path)
        else:
            found = [x for x in doc if isinstance(x, dict) and x.get("name") == entry]
            if not found:
                raise AsmevoError(f"no entry named {entry!r} in the harness", file=path)
            e = found[0]
    elif isinstance(doc, dict):
        if entry is not None and doc.get("name") != entry:
            raise AsmevoError(f"the harness entry is {doc.get('name')!r}, not {entry!r}", file=path)
        e = doc
    else:
        raise AsmevoError("harness must be a JSON object or list of objects", file=path)
    _validate(e, path)
    e = dict(e)
    e["_dir"] = os.path.dirname(os.path.abspath(path))
    e["_file"] = path
    return e


def _validate(e, path):
    def bad(msg):
        raise AsmevoError(f"entry {e.get('name')!r}: {msg}", file=path)
    if not isinstance(e, dict):
        bad("not an object")
    for k in ("block", "grid", "args"):
        if k not in e:
            bad(f"missing key {k!r}")
    for k in ("block", "grid"):
        v = e[k]
        if not (isinstance(v, list) and 1 <= len(v) <= 3 and all(isinstance(x, int) and x >= 1 for x in v)):
            bad(f"{k} must be a list of 1-3 positive integers")
    for i, a in enumerate(e["args"]):
        if not isinstance(a, dict) or "name" not in a or a.get("kind") not in ("buffer", "scalar"):
            bad(f"argument #{i} needs a name and kind buffer|scalar")
        if not isinstance(a.get("dtype"), str):
            bad(f"argument {a['name']}: dtype must be a string such as \"float32\"")
        try:
            np.dtype(a.get("dtype"))
        except (TypeError, ValueError):
            bad(f"argument {a['name']}: unknown dtype {a.get('dtype')!r}")
        if a["kind"] == "buffer":
            if not isinstance(a.get("count"), int) or isinstance(a["count"], bool) or a["count"] < 0:
                bad(f"buffer {a['name']}: count must be a non-negative integer")
            init = a.get("init", "zeros")
            if not isinstance(init, str) or not init.startswith(_INITS):
                bad(f"buffer {a['name']}: unknown init {init!r}")
            if init.startswith(("uniform(", "randint(")) and _init_bounds(init) is None:
                bad(f"buffer {a['name']}: init {init!r}; expected uniform(LO, HI) or randint(LO, HI) "
                    "with finite numbers LO <= HI (integers LO < HI for randint)")
            if init not in ("zeros", "ones", "arange") and not init.startswith(("uniform(", "randint(")):
                bad(f"buffer {a['name']}: unknown init {init!r}")
            if a.get("role", "in") not in ("in", "out", "inout"):
                bad(f"buffer {a['name']}: role must be in, out or inout")
        elif "value" not in a:
            bad(f"scalar {a['name']}: missing value")
    total = sum(a["count"] * np.dtype(a["dtype"]).itemsize for a in e["args"] if a["kind"] == "buffer")
    if total > MAX_BUFFER_BYTES:
        bad(f"buffers total {total} bytes; at most {MAX_BUFFER_BYTES} bytes (4 GiB) are supported")


def make_input(a: dict, rng) -> np.ndarray:
    """One buffer's initial contents per its ``init``."""
    n, dt, init = a["count"], np.dtype(a["dtype"]), a.get("init", "zeros")
    if init == "zeros":
        return np.zeros(n, dt)
    if init == "ones":
        return np.ones(n, dt)
    if init == "arange":
        return np.arange(n).astype(dt)
    lo, hi = _init_bounds(init)
    if init.startswith("uniform"):
        return rng.uniform(lo, hi, n).astype(dt)
    return rng.integers(int(lo), int(hi), n).astype(dt)


def make_inputs(harness: dict, seed: int = 0) -> dict:
    """Argument name -> initial buffer (ndarray) or scalar value."""
    rng = np.random.default_rng(seed)
    out = {}
    for a in harness["args"]:
        out[a["name"]] = make_input(a, rng) if a["kind"] == "buffer" else a["value"]
    return out


def make_launch(harness: dict, inputs: dict) -> Launch:
    """A :class:`Launch` for the entry with the given inputs."""
    args = []
    for a in harness["args"]:
        if a["kind"] == "buffer":
            args.append(Arg(a["name"], "buffer", a["dtype"], data=np.asarray(inputs[a["name"]]),
                            role=a.get("role", "in")))
        else:
            args.append(Arg(a["name"], "scalar", a["dtype"], value=inputs[a["name"]]))
    return Launch(tuple(harness["block"]), tuple(harness["grid"]), args,
                  dynamic_lds=harness.get("dynamic_lds"))


def reference(harness: dict, inputs: dict) -> dict:
    """Expected outputs from the entry's ``reference`` function.

    Raises:
        AsmevoError: no reference, file or function missing, or the reference file or
            function raised (``reference FILE:FUNC raised TYPE: MESSAGE``).
    """
    ref = harness.get("reference")
    if not ref or ":" not in ref:
        raise AsmevoError(f"entry {harness.get('name')!r} has no reference 'file.py:function'",
                          file=harness.get("_file"))
    fname, func = ref.rsplit(":", 1)
    path = os.path.join(harness["_dir"], fname)
    if not os.path.isfile(path):
        raise AsmevoError(f"reference file {path} not found", file=harness.get("_file"))
    spec = importlib.util.spec_from_file_location(f"_asmevo_ref_{abs(hash(path))}", path)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except Exception as e:
        raise AsmevoError(f"reference {path} raised {type(e).__name__}: {e} while loading",
                          file=harness.get("_file")) from None
    f = getattr(mod, func, None)
    if f is None or not callable(f):
        raise AsmevoError(f"reference function {func} not in {path}", file=harness.get("_file"))
    kw = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in inputs.items()}
    try:
        out = f(**kw)
    except Exception as e:
        raise AsmevoError(f"reference {path}:{func} raised {type(e).__name__}: {e}",
                          file=harness.get("_file")) from None
    if not isinstance(out, dict):
        raise AsmevoError(f"reference {path}:{func} returned {type(out).__name__}; expected a dict "
                          "of output buffer name -> array", file=harness.get("_file"))
    return out


def compare(harness: dict, got: dict, want: dict) -> list[str]:
    """Mismatch messages (empty when all outputs match): np.allclose with the entry's
    rtol/atol, bit-exact when both are 0 (NaNs compare equal)."""
    rtol = float(harness.get("rtol", 0) or 0)
    atol = float(harness.get("atol", 0) or 0)
    errs = []
    for name, exp in want.items():
        g = got.get(name)
        if g is None:
            errs.append(f"{name}: not produced")
            continue
        exp = np.asarray(exp)
        if g.shape != exp.shape:
            errs.append(f"{name}: shape {g.shape}, expected {exp.shape}")
            continue
        if rtol == 0 and atol == 0:
            if exp.dtype.kind == "f":
                ok = (g.view(np.dtype(f"u{g.dtype.itemsize}")) == exp.astype(g.dtype).view(
                    np.dtype(f"u{g.dtype.itemsize}"))) | (np.isnan(g) & np.isnan(exp))
                ok |= (g == exp)
            else:
                ok = g == exp
        else:
            gf, ef = g.astype(np.float64), exp.astype(np.float64)
            ok = np.isclose(gf, ef, rtol=rtol, atol=atol, equal_nan=True)
        if not np.all(ok):
            i = int(np.argmin(ok))
            errs.append(f"{name}: {int((~ok).sum())} of {ok.size} elements differ; first at index "
                        f"{i}: got {g[i]!r}, expected {exp[i]!r}")
    return errs

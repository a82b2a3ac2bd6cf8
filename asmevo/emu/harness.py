"""Run descriptions (harness JSON) in the corpus manifest-entry schema.

A harness file is either one manifest entry (a JSON object) or a manifest (a
list of entries, one picked with ``entry``).  Keys used: ``name``, ``kernel``,
``block``, ``grid``, ``args`` (in kernel order: ``name``, ``kind`` buffer|scalar,
``dtype``, ``count``/``init`` for buffers, ``value`` for scalars, ``role``
in|out|inout), ``reference`` (``file.py:function`` relative to the harness
file), ``rtol``/``atol``; optional ``dynamic_lds`` (bytes; default: the rest of the
64 KiB LDS); ``source``, ``asm``, ``code_object`` and ``opt`` are accepted (the corpus
records them) and not used.  Any other key is bad input (:data:`ENTRY_KEYS`,
:data:`ARG_KEYS`).  See ../shared/corpus/README.md.

Inputs are drawn with ``np.random.default_rng(seed)``, buffers in argument
order, exactly as the corpus ``check_manifest.py`` does for seed 0.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os

import numpy as np

from ..errors import AsmevoError, unknown_kernel_error
from .launch import Arg, Launch

#: Argument kinds, and the ``init`` forms a buffer may have (for messages).
KINDS = ("buffer", "scalar")
INIT_FORMS = ("zeros, ones, arange (0..count-1), uniform(LO,HI) (floats in [LO, HI)), "
              "randint(LO,HI) (integers in [LO, HI))")

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


#: Harness size and shape limits, checked while reading (a located error, never a crash).
MAX_HARNESS_BYTES = 64 << 20
MAX_JSON_DEPTH = 64
MAX_INT_DIGITS = 40
#: Numpy dtypes a harness argument may have (numbers the emulator can load and compare).
DTYPES = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float16", "float32", "float64")
_DISPATCH_MAX = (1 << 32) - 1   # hsa_kernel_dispatch_packet_t grid_size_{x,y,z} are uint32


def _json_position(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def _check_json_depth(text: str, path: str) -> None:
    """Refuse nesting deeper than :data:`MAX_JSON_DEPTH` (json would recurse until Python's
    recursion limit), located at the bracket that goes too deep."""
    from ..limits import json_too_deep
    at = json_too_deep(text, MAX_JSON_DEPTH)
    if at is not None:
        raise AsmevoError(f"harness nested more than {MAX_JSON_DEPTH} levels deep; expected "
                          "a manifest entry (an object) or a list of entries", file=path,
                          line=at[0], column=at[1])


class _BadNumber(Exception):
    pass


def _parse_json(text: str, path: str):
    """``json.loads`` with located errors for what the schema never needs: integers longer
    than :data:`MAX_INT_DIGITS` digits, ``NaN``/``Infinity`` and deep nesting."""
    _check_json_depth(text, path)

    def parse_int(s):
        if len(s.lstrip("-")) > MAX_INT_DIGITS:
            raise _BadNumber(s)
        return int(s)

    def parse_constant(s):
        raise _BadNumber(s)

    try:
        return json.loads(text, parse_int=parse_int, parse_constant=parse_constant)
    except json.JSONDecodeError as e:
        raise AsmevoError(f"harness is not valid JSON: {e.msg}", file=path, line=e.lineno,
                          column=e.colno) from None
    except _BadNumber as e:
        tok = e.args[0]
        import re
        m = re.search(r"(?<![\w.])" + re.escape(tok[:64]), text)
        ln, col = _json_position(text, m.start()) if m else (None, None)
        what = (f"an integer of {len(tok.lstrip('-'))} digits (at most {MAX_INT_DIGITS} are "
                "accepted)" if tok[-1:].isdigit() else f"{tok} (not a JSON number)")
        raise AsmevoError(f"harness holds {what}; expected a number that fits the argument's "
                          "dtype", file=path, line=ln, column=col) from None
    except RecursionError:
        raise AsmevoError(f"harness nested too deeply (more than {MAX_JSON_DEPTH} levels)",
                          file=path) from None


def load_harness(path: str, entry: str | None = None) -> dict:
    """Read a harness/manifest JSON file and return one entry (a dict with
    ``_dir`` set to the file's directory).

    Raises:
        AsmevoError: unreadable JSON, several entries and no ``entry``, unknown
            entry name, or an entry that does not follow the schema.
    """
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_HARNESS_BYTES + 1)
    except OSError as e:
        raise AsmevoError(f"cannot read harness: {e.strerror}", file=path) from None
    if len(raw) > MAX_HARNESS_BYTES:
        raise AsmevoError(f"harness larger than {MAX_HARNESS_BYTES >> 20} MiB; expected a JSON "
                          "manifest entry or list", file=path, offset=MAX_HARNESS_BYTES)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise AsmevoError(f"harness is not UTF-8 text (byte {e.start}); expected JSON", file=path,
                          offset=e.start) from None
    doc = _parse_json(text, path)
    if isinstance(doc, list):
        for i, x in enumerate(doc):
            if not isinstance(x, dict):
                raise AsmevoError(f"manifest entry #{i} is {_kind(x)}; expected an object",
                                  file=path)
            if "name" in x and not isinstance(x["name"], str):
                raise AsmevoError(f"manifest entry #{i}: name is {_kind(x['name'])}; expected a "
                                  "string", file=path)
        if entry is None:
            if len(doc) == 1:
                e = doc[0]
            elif not doc:
                raise AsmevoError("harness is an empty list; expected manifest entries", file=path)
            else:
                raise AsmevoError(f"harness holds {len(doc)} entries; choose one with --entry "
                                  f"({', '.join(str(x.get('name')) for x in doc[:8])}...)", file=path)
        else:
            found = [x for x in doc if x.get("name") == entry]
            if not found:
                raise AsmevoError(f"--entry {entry!r}: no entry of that name in the harness"
                                  f"{_closest(entry, [str(x.get('name')) for x in doc], 'entries')}",
                                  file=path)
            e = found[0]
    elif isinstance(doc, dict):
        if "name" in doc and not isinstance(doc["name"], str):
            raise AsmevoError(f"name is {_kind(doc['name'])}; expected a string", file=path)
        if entry is not None and doc.get("name") != entry:
            raise AsmevoError(f"--entry {entry!r}: the harness holds one entry, "
                              f"{doc.get('name')!r}; expected --entry {doc.get('name')!r} or no "
                              "--entry", file=path)
        e = doc
    else:
        raise AsmevoError("harness must be a JSON object or list of objects", file=path)
    _validate(e, path, text)
    e = dict(e)
    e["_dir"] = os.path.dirname(os.path.abspath(path))
    e["_file"] = path
    return e


def _closest(name: str, names: list[str], what: str) -> str:
    """``; closest: 'a', 'b'; its <what>: ...``: up to three names nearest ``name``
    (difflib's ratio, then names it begins or is part of), then every name (the first 64)."""
    import difflib
    near = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    low = name.lower()
    near += [n for n in names if n not in near and low and (n.lower().startswith(low)
                                                          or low in n.lower())][:3 - len(near)]
    listed = ", ".join(names[:64]) + (f", ... ({len(names)} in all)" if len(names) > 64 else "")
    closest = f"; closest: {', '.join(repr(n) for n in near)}" if near else ""
    return f"{closest}; its {what}: {listed or '(none)'}"


def _kernels_of(original: str, module=None):
    """(kernel names, a function name -> KernelConfig) of ``module`` when given, else of the
    code object or assembly file ``original`` (a code object is read without disassembling
    it)."""
    from .launch import kernel_config
    if module is not None:
        ks = {k.name: k for k in module.kernels if k.is_kernel}
        return list(ks), lambda n: kernel_config(module, ks[n])
    from ..frontend.loader import is_code_object
    if is_code_object(original):
        from types import SimpleNamespace
        from ..frontend.codeobject import read_code_object
        co = read_code_object(original)
        ks = {k.name: k for k in co.kernels}
        holder = SimpleNamespace(code_object=co, source=original, items=())
        return list(ks), lambda n: kernel_config(holder, ks[n])
    from ..frontend.loader import load_bytes
    m = load_bytes(original)     # the kernels and metadata of the bytes the text assembles to
    ks = {k.name: k for k in m.kernels if k.is_kernel}
    return list(ks), lambda n: kernel_config(m, ks[n])


def checked_entry(harness_path: str | None, entry: str | None, original: str, *,
                  module=None, kernel: str | None = None, fits: bool = False,
                  reference: bool = False) -> dict | None:
    """The harness entry ``--harness``/``--entry`` pick (None without ``--harness``), checked
    against the original before any work, the one check every command taking ``--entry``
    makes (run, verify, profile, evolve, asmevo-opt --verify): an ``--entry`` that names no
    entry of the harness (:func:`load_harness` lists the nearest names and every entry), a
    harness entry whose kernel the original lacks, a ``--kernel`` (``kernel``) or, without
    ``--harness``, an ``--entry`` that names no kernel of the original, is bad input: one
    line naming the option, the file, and the entries or kernels there are.

    Args:
        original: the original's path (for messages; its kernels are read from it unless
            ``module``, the original already loaded, is given).
        kernel: the ``--kernel`` given (it overrides the entry's ``kernel``).
        fits: also check the entry's launch against the kernel's metadata
            (:func:`asmevo.emu.launch.check_launch`: shape, required workgroup size,
            arguments), naming the harness file, the entry and the original.
        reference: the command compares with the entry's ``reference`` (``run --check``,
            ``evolve``): check it now (:func:`check_reference`), not after the kernel ran.

    Raises:
        AsmevoError: as above (exit 2), or a harness that does not load.
    """
    harness = load_harness(harness_path, entry) if harness_path else None
    name = kernel or (harness.get("kernel") if harness is not None else entry)
    if not name:
        if reference and harness is not None:
            check_reference(harness)
        return harness
    have, config = _kernels_of(original, module)
    if name not in have:
        listed = f"its kernels: {', '.join(have)}" if have else "it holds no kernel"
        if kernel:
            raise unknown_kernel_error(kernel, have, original)
        if harness is not None:
            which = f"--entry {entry!r}: the harness entry" if entry else \
                f"harness entry {harness.get('name')!r}"
            raise AsmevoError(f"{which} ({harness_path}) runs kernel {name!r}, which this file "
                              f"does not hold; {listed}", file=original)
        raise AsmevoError(f"--entry {entry!r}: no kernel of that name in this file; {listed}",
                          file=original)
    if fits and harness is not None:
        from .launch import check_launch
        cfg = config(name)
        try:
            check_launch(cfg, _shape_launch(harness))
        except AsmevoError as e:
            which = f"entry {harness['name']!r} of this harness" if harness.get("name") else \
                "this harness"
            raise AsmevoError(f"{e.message} ({which}, against kernel {name} of {original})",
                              file=harness_path) from None
    if reference and harness is not None:
        check_reference(harness)
    return harness


def _shape_launch(harness: dict) -> Launch:
    """The entry's launch with empty buffers (what :func:`check_launch` looks at: shape,
    argument kinds and dtypes), so nothing is allocated or drawn."""
    args = [Arg(a["name"], "buffer", a["dtype"], data=np.zeros(0, np.dtype(a["dtype"])),
                role=a.get("role", "in")) if a["kind"] == "buffer" else
            Arg(a["name"], "scalar", a["dtype"], value=a["value"]) for a in harness["args"]]
    return Launch(tuple(harness["block"]), tuple(harness["grid"]), args,
                  dynamic_lds=harness.get("dynamic_lds"))


def _kind(v) -> str:
    """What a JSON value is, for messages."""
    if isinstance(v, bool):
        return f"the boolean {str(v).lower()}"
    if isinstance(v, (int, float)):
        return f"the number {v!r}"
    if isinstance(v, str):
        return f"the string {v[:40]!r}"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    return "null" if v is None else type(v).__name__


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _scalar_fits(v, dt: np.dtype) -> bool:
    """Whether the JSON value ``v`` is representable in ``dt`` without overflow or rounding
    to a non-integer."""
    if dt.kind == "b":
        return isinstance(v, bool) or (_is_int(v) and v in (0, 1))
    if isinstance(v, bool) or not _is_number(v):
        return False
    if dt.kind in "iu":
        if isinstance(v, float):
            if not (math.isfinite(v) and v == int(v)):
                return False
            v = int(v)
        info = np.iinfo(dt)
        return info.min <= v <= info.max
    if not math.isfinite(v):
        return False
    return bool(abs(v) <= np.finfo(dt).max)


#: Keys of a manifest entry (the corpus README's schema, plus ``dynamic_lds``) and of one of
#: its arguments; any other key is bad input (a misspelt ``rtol`` would be ignored and the
#: comparison silently become bit-exact).
ENTRY_KEYS = ("name", "source", "asm", "code_object", "kernel", "opt", "block", "grid", "args",
              "reference", "rtol", "atol", "dynamic_lds")
ARG_KEYS = ("name", "kind", "dtype", "count", "init", "value", "role")
#: Argument keys that belong to one kind only (README: "Scalars have value and no
#: count/init; buffers have count and init, no value").
_KIND_ONLY = {"buffer": ("count", "init"), "scalar": ("value",)}


def _key_line(text: str | None, key: str) -> tuple[int | None, int | None]:
    """Line and column of ``"key":`` in the harness text when it occurs there exactly once
    (else ``(None, None)``: a position that could be another entry's is not given)."""
    if not text:
        return None, None
    import re
    found = [m.start() for m in re.finditer(re.escape(json.dumps(key)) + r"\s*:", text)]
    return _json_position(text, found[0]) if len(found) == 1 else (None, None)


def _unknown_key(key: str, valid: tuple[str, ...], where: str, path, text) -> AsmevoError:
    import difflib
    near = difflib.get_close_matches(key, valid, n=1, cutoff=0.5)
    closest = f"; closest valid key: {near[0]!r}" if near else ""
    ln, col = _key_line(text, key)
    return AsmevoError(f"{where}: unknown key {key!r}{closest}; valid keys: {', '.join(valid)}",
                       file=path, line=ln, column=col)


def _validate(e, path, text=None):
    def bad(msg):
        raise AsmevoError(f"entry {e.get('name')!r}: {msg}", file=path)
    if not isinstance(e, dict):
        raise AsmevoError("harness entry is not an object", file=path)
    for k in e:
        if k not in ENTRY_KEYS:
            raise _unknown_key(k, ENTRY_KEYS, f"entry {e.get('name')!r}", path, text)
    for k in ("name", "kernel"):
        if k in e and not isinstance(e[k], str):
            bad(f"{k} is {_kind(e[k])}; expected a string")
    for k in ("block", "grid", "args"):
        if k not in e:
            bad(f"missing key {k!r}")
    for k in ("block", "grid"):
        v = e[k]
        if not (isinstance(v, list) and 1 <= len(v) <= 3 and all(_is_int(x) and x >= 1 for x in v)):
            bad(f"{k} must be a list of 1-3 positive integers")
    block = list(e["block"]) + [1] * (3 - len(e["block"]))
    grid = list(e["grid"]) + [1] * (3 - len(e["grid"]))
    if block[0] * block[1] * block[2] > 1024:
        bad(f"block {e['block']} has {block[0] * block[1] * block[2]} work-items; at most 1024 "
            "per workgroup")
    for d, (b, g) in enumerate(zip(block, grid)):
        if b * g > _DISPATCH_MAX:
            bad(f"grid {e['grid']} x block {e['block']}: {b * g} work-items in dimension {'xyz'[d]}; "
                f"at most {_DISPATCH_MAX} (the dispatch packet's 32-bit grid size)")
    if not isinstance(e["args"], list):
        bad(f"args is {_kind(e['args'])}; expected a list of argument objects")
    seen = set()
    for i, a in enumerate(e["args"]):
        if isinstance(a, dict):
            which = f"argument {a['name']!r}" if isinstance(a.get("name"), str) and a["name"] \
                else f"argument #{i}"
            for k in a:
                if k not in ARG_KEYS:
                    raise _unknown_key(k, ARG_KEYS, f"entry {e.get('name')!r}: {which}", path,
                                       text)
        if not isinstance(a, dict):
            bad(f"argument #{i} is {_kind(a)}; expected an object with keys "
                f"{', '.join(ARG_KEYS)}")
        if not isinstance(a.get("name"), str) or not a["name"]:
            bad(f"argument #{i} needs a name (a non-empty string)"
                + (f"; its name is {_kind(a['name'])}" if "name" in a else ""))
        if a.get("kind") not in KINDS:
            kind = a.get("kind")
            import difflib
            near = difflib.get_close_matches(kind, KINDS, n=1, cutoff=0.5) \
                if isinstance(kind, str) else []
            what = ("missing key 'kind'" if "kind" not in a else f"unknown kind {kind!r}"
                    if isinstance(kind, str) else f"kind is {_kind(kind)}")
            bad(f"argument {a['name']}: {what}"
                + (f"; closest: {near[0]!r}" if near else "")
                + f"; valid kinds: {', '.join(KINDS)}")
        for other, keys in _KIND_ONLY.items():
            if other != a["kind"]:
                for k in keys:
                    if k in a:
                        own = " and ".join(_KIND_ONLY[a["kind"]])
                        bad(f"{a['kind']} {a['name']}: key {k!r} is for {other}s only; a "
                            f"{a['kind']} takes {own}")
        if a["name"] in seen:
            bad(f"argument #{i}: name {a['name']!r} is used twice")
        seen.add(a["name"])
        if not isinstance(a.get("dtype"), str):
            bad(f"argument {a['name']}: dtype must be a string such as \"float32\"")
        try:
            dt = np.dtype(a.get("dtype"))
        except (TypeError, ValueError):
            bad(f"argument {a['name']}: unknown dtype {a.get('dtype')!r}; expected one of "
                f"{', '.join(DTYPES)}")
        if dt.name not in DTYPES:
            bad(f"argument {a['name']}: dtype {a['dtype']!r} is not supported; expected one of "
                f"{', '.join(DTYPES)}")
        if "role" in a and a["role"] not in ("in", "out", "inout"):
            bad(f"argument {a['name']}: role must be in, out or inout")
        if a["kind"] == "buffer":
            if not _is_int(a.get("count")) or a["count"] < 0:
                bad(f"buffer {a['name']}: count must be a non-negative integer")
            init = a.get("init", "zeros")
            if not isinstance(init, str) or not (init in ("zeros", "ones", "arange")
                                                 or init.startswith(("uniform(", "randint("))):
                what = f"unknown init {init!r}" if isinstance(init, str) else \
                    f"init is {_kind(init)}"
                bad(f"buffer {a['name']}: {what}; valid inits: {INIT_FORMS}")
            if init.startswith(("uniform(", "randint(")) and _init_bounds(init) is None:
                bad(f"buffer {a['name']}: init {init!r}; expected uniform(LO, HI) or randint(LO, HI) "
                    "with finite numbers LO <= HI (integers LO < HI for randint)")
        else:
            if "value" not in a:
                bad(f"scalar {a['name']}: missing value")
            if not _scalar_fits(a["value"], dt):
                bad(f"scalar {a['name']}: value {_kind(a['value'])} does not fit dtype {dt.name}; "
                    "expected a number in its range")
    ref = e.get("reference")
    if ref is not None:
        if not isinstance(ref, str) or ":" not in ref:
            bad(f"reference is {_kind(ref)}; expected \"FILE.py:FUNCTION\"")
        fname, func = ref.rsplit(":", 1)
        if not fname.endswith(".py") or not func.isidentifier():
            bad(f"reference {ref!r}: expected \"FILE.py:FUNCTION\" (a Python file relative to the "
                "harness and a function name)")
    for k in ("rtol", "atol"):
        if k in e and e[k] is not None and not (_is_number(e[k]) and math.isfinite(e[k])
                                                and e[k] >= 0):
            bad(f"{k} is {_kind(e[k])}; expected a finite number >= 0")
    if e.get("dynamic_lds") is not None:
        v = e["dynamic_lds"]
        if not _is_int(v) or not 0 <= v <= 65536:
            bad(f"dynamic_lds is {_kind(v)}; expected an integer number of bytes, 0..65536")
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
    if not _is_int(seed) or seed < 0:
        raise AsmevoError(f"--seed {seed}: expected a non-negative integer", file=harness.get("_file"))
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


def harness_sha256(harness: dict) -> str:
    """SHA-256 of what an entry's results depend on: its fields (the ``_``-prefixed ones the
    loader adds excluded) and the bytes of its ``reference`` Python file (``None`` when it
    has none or the file cannot be read), so a changed reference is another harness."""
    import hashlib
    import json
    ref = harness.get("reference")
    ref_sha = None
    if isinstance(ref, str) and ":" in ref and harness.get("_dir"):
        try:
            with open(os.path.join(harness["_dir"], ref.rsplit(":", 1)[0]), "rb") as f:
                ref_sha = hashlib.sha256(f.read()).hexdigest()
        except OSError:
            pass
    entry = {k: v for k, v in harness.items() if not k.startswith("_")}
    return hashlib.sha256(json.dumps({"entry": entry, "reference_sha256": ref_sha},
                                     sort_keys=True).encode()).hexdigest()


def _reference_function(harness: dict):
    """The entry's ``reference`` function, loaded from its file (each call: the entry stays
    plain data that pickles for pool workers).

    Raises:
        AsmevoError: no reference, a file that is missing, not Python or raises while
            loading, or no function of that name in it.
    """
    ref = harness.get("reference")
    if not isinstance(ref, str) or ":" not in ref:
        raise AsmevoError(f"entry {harness.get('name')!r} has no reference 'file.py:function'",
                          file=harness.get("_file"))
    fname, func = ref.rsplit(":", 1)
    path = os.path.join(harness["_dir"], fname)
    if not fname.endswith(".py"):
        raise AsmevoError(f"reference file {fname!r} is not a Python file; expected "
                          "\"FILE.py:FUNCTION\"", file=harness.get("_file"))
    if not os.path.isfile(path):
        raise AsmevoError(f"reference file {path} not found", file=harness.get("_file"))
    spec = importlib.util.spec_from_file_location(f"_asmevo_ref_{abs(hash(path))}", path)
    if spec is None or spec.loader is None:
        raise AsmevoError(f"reference file {path} cannot be loaded as a Python module",
                          file=harness.get("_file"))
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except Exception as e:
        raise AsmevoError(f"reference {path} raised {type(e).__name__}: {e} while loading",
                          file=harness.get("_file")) from None
    f = getattr(mod, func, None)
    if f is None or not callable(f):
        raise AsmevoError(f"reference function {func} not in {path}", file=harness.get("_file"))
    return f


def reference(harness: dict, inputs: dict) -> dict:
    """Expected outputs from the entry's ``reference`` function.

    Raises:
        AsmevoError: no reference, file or function missing, or the reference file or
            function raised (``reference FILE:FUNC raised TYPE: MESSAGE``).
    """
    f = _reference_function(harness)
    where = f"{os.path.join(harness['_dir'], harness['reference'].rsplit(':', 1)[0])}:" \
            f"{harness['reference'].rsplit(':', 1)[1]}"
    kw = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in inputs.items()}
    try:
        out = f(**kw)
    except Exception as e:
        raise AsmevoError(f"reference {where} raised {type(e).__name__}: {e}",
                          file=harness.get("_file")) from None
    if not isinstance(out, dict):
        raise AsmevoError(f"reference {where} returned {type(out).__name__}; expected a dict "
                          "of output buffer name -> array", file=harness.get("_file"))
    return out


def check_reference(harness: dict) -> None:
    """Check the entry's ``reference`` before any kernel runs (the commands that compare
    against it: ``run --check``, ``evolve``): it loads, its function exists, it runs on the
    seed-0 inputs, and it returns a dict naming only buffers of the entry, each with the
    buffer's ``count`` elements (what :func:`compare` needs), with a value for every output
    buffer (role ``out``/``inout``; an entry without one is refused too: a reference that
    checks nothing would pass vacuously).  Nothing to check without a ``reference`` key.

    Raises:
        AsmevoError: naming the harness file, the entry and the ``reference`` key (exit 2).
    """
    ref = harness.get("reference")
    if ref is None:
        return
    which = f"entry {harness.get('name')!r}: " if harness.get("name") else ""

    def bad(msg: str):
        raise AsmevoError(f"{which}key 'reference' ({ref!r}): {msg}", file=harness.get("_file"))
    try:
        want = reference(harness, make_inputs(harness, 0))
    except AsmevoError as e:
        bad(e.message)
    buffers = {a["name"]: a for a in harness["args"] if a["kind"] == "buffer"}
    outputs = output_buffers(harness)
    if not outputs:
        bad("the entry marks no buffer as an output (\"role\": \"out\" or \"inout\"), so the "
            "reference has nothing to check; expected the role of every buffer the kernel writes")
    for name, value in want.items():
        a = buffers.get(name)
        if a is None:
            listed = ", ".join(buffers) or "none"
            bad(f"the function returned {name!r}, which names no buffer of the entry; expected "
                f"output buffer names (its buffers: {listed})")
        try:
            shape = np.shape(value)
        except Exception:  # noqa: BLE001 - anything numpy cannot size
            shape = None
        if shape != (a["count"],):
            bad(f"the function returned {name!r} with shape {shape}; expected {a['count']} "
                f"elements (the buffer's count), a 1-D array")
    missing = [n for n in outputs if n not in want]
    if missing:
        got = ", ".join(repr(n) for n in want) or "nothing"
        bad(f"the function returned no value for output buffer{'s' if len(missing) > 1 else ''} "
            f"{', '.join(repr(n) for n in missing)} (it returned {got}); expected an array for "
            f"every buffer the entry marks out or inout: {', '.join(outputs)}")


def output_buffers(harness: dict) -> list[str]:
    """Names of the entry's output buffers (role ``out`` or ``inout``), in argument order:
    the buffers its ``reference`` must give a value for."""
    return [a["name"] for a in harness.get("args", ())
            if a["kind"] == "buffer" and a.get("role", "in") in ("out", "inout")]


def match_sentence(harness: dict, want: dict) -> str:
    """What a passing comparison with the reference checked, as a sentence: ``3 output
    buffers (c, d, e) match the numpy reference (rtol=0, atol=0)``."""
    names = list(want)
    n = len(names)
    return (f"{n} output buffer{'' if n == 1 else 's'} ({', '.join(names)}) "
            f"match{'es' if n == 1 else ''} the numpy reference "
            f"(rtol={harness.get('rtol', 0)}, atol={harness.get('atol', 0)})")


def compare(harness: dict, got: dict, want: dict) -> list[str]:
    """Mismatch messages (empty when all outputs match): np.allclose with the entry's
    rtol/atol; bit-exact when both are 0, as the corpus README says (the reference's value
    converted to the output's dtype: -0.0 and +0.0 differ; any NaN matches any NaN)."""
    try:
        rtol = float(harness.get("rtol", 0) or 0)
        atol = float(harness.get("atol", 0) or 0)
    except (TypeError, ValueError):
        raise AsmevoError("rtol/atol must be numbers", file=harness.get("_file")) from None
    errs = [f"{name}: the reference gives no value for this output buffer"
            for name in output_buffers(harness) if name not in want]
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
            else:
                ok = g == exp
        else:
            gf, ef = g.astype(np.float64), exp.astype(np.float64)
            ok = np.isclose(gf, ef, rtol=rtol, atol=atol, equal_nan=True)
        if not np.all(ok):
            i = int(np.argmin(ok))
            got_s, exp_s = _shown(g[i], exp[i])
            errs.append(f"{name}: {int((~ok).sum())} of {ok.size} elements differ; first at index "
                        f"{i}: got {got_s}, expected {exp_s}")
    return errs


def _shown(got, exp) -> tuple[str, str]:
    """Two differing elements as plain numbers (``1.5``, not numpy's ``np.float64(1.5)``),
    each as its dtype prints it; when those read the same, every digit of the value, and
    for floats whose values print alike too (NaNs of different payloads) the bits."""
    got, exp = np.asarray(got)[()], np.asarray(exp)[()]
    a, b = str(got), str(exp)
    if a == b and got.dtype.kind == "f" and exp.dtype.kind == "f":
        a, b = repr(float(got)), repr(float(exp))
        if a == b:
            def bits(x):
                return f"0x{int(x.view(np.dtype(f'u{x.dtype.itemsize}'))):0{2 * x.dtype.itemsize}x}"
            a, b = f"{a} (bits {bits(got)})", f"{b} (bits {bits(exp)})"
    return a, b

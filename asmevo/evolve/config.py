"""Every option of ``asmevo evolve``, read from a TOML file and overridden by flags.

A config file holds the same keys as the command line (``-`` or ``_`` alike), at top level
or under an ``[evolve]`` table::

    budget = 300
    seed = 0
    operators = ["passes", "mutate", "crossover"]
    [evolve.islands]          # nested tables are flattened: islands_count = 4
    count = 4

Unknown keys, wrong types and bad values are bad input (exit 2), reported in one message that
names the file and the key as written (``islands.count``) with its line, or the line:column of
a TOML syntax error; a bad value given by a flag names the flag.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from dataclasses import dataclass, field, fields

from ..errors import AsmevoError


class BadOption(AsmevoError):
    """A bad option value; ``key`` names the option (``load_config`` says where it was set)."""

    def __init__(self, key: str, message: str):
        super().__init__(f"bad option {key}: {message}")
        self.key = key
        self.detail = message


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)

#: built-in operator names (``--operators``); ``agent`` is added by ``--agent CMD``
BUILTIN_OPERATORS = ("passes", "mutate", "crossover")


@dataclass
class EvolveConfig:
    """All options.  Field docs are printed in docs/evolve.md."""

    kernel_file: str = ""            #: K0: the code object (or assembly) to optimise
    harness: str = ""                #: harness / manifest JSON
    entry: str | None = None         #: harness entry (manifest list)
    kernel: str | None = None        #: kernel symbol (default: the harness's, else the only one)
    out: str = ""                    #: run directory
    budget: int = 300                #: distinct candidates to evaluate (K0 not counted)
    time: float | None = None        #: wall-clock limit in seconds (``--time 30m``)
    seed: int = 0
    jobs: int = 1                    #: local worker processes
    batch: int = 4                   #: proposals per round (fixed: results do not depend on --jobs)
    operators: list = field(default_factory=lambda: list(BUILTIN_OPERATORS))
    agent: str | None = None         #: agent command (shell words), adds the ``agent`` operator
    agent_timeout: float = 60.0      #: seconds per agent call
    allow_agent_passes: bool = False  #: run IR pass plugins an agent sends (separate process)
    require: str = "proved"          #: proved | tested
    chain_proofs: bool = True        #: prove a child against its proved parent first (gate.py)
    executor: str = "local"          #: local | ray
    ray_address: str | None = None
    trials: int = 4                  #: differential trials per candidate (fresh seed each round)
    final_trials: int = 32           #: trials of the final check (new seeds)
    z3_timeout_ms: int = 3000
    islands: int = 4
    island_size: int = 8
    migration_interval: int = 10     #: rounds between ring migrations of island bests
    stagnation: int = 60             #: steps without improvement of an island before it restarts
    target_speedup: float | None = None  #: stop early at this estimated speed-up
    max_steps_factor: int = 6        #: stop after budget * this many steps (duplicates included)
    ucb_c: float = 1.0               #: UCB1 exploration constant
    ucb_window: int = 200            #: UCB1 sees the last N pulls of each operator
    device: str = "emu"              #: what runs and times candidates: emu | hip[:N]
    timing_samples: int = 10         #: paired timed launches per kernel on a real device
    resume: bool = False
    quiet: bool = False

    def validate(self) -> "EvolveConfig":
        """Check every value; raises :class:`BadOption` naming the key (``load_config`` adds
        where the value came from: the config file and its line, or the flag)."""
        def bad(key, msg):
            raise BadOption(key, msg)
        if self.require not in ("proved", "tested"):
            bad("require", f"must be 'proved' or 'tested', not {self.require!r}")
        if not isinstance(self.chain_proofs, bool):
            bad("chain_proofs", f"must be true or false, not {self.chain_proofs!r}")
        if self.executor not in ("local", "ray"):
            bad("executor", f"must be 'local' or 'ray', not {self.executor!r}")
        for k in ("budget", "jobs", "batch", "trials", "final_trials", "islands", "island_size",
                  "migration_interval", "stagnation", "max_steps_factor", "ucb_window",
                  "z3_timeout_ms"):
            v = getattr(self, k)
            if not isinstance(v, int) or isinstance(v, bool) or v < (0 if k == "budget" else 1):
                bad(k, f"must be a {'non-negative' if k == 'budget' else 'positive'} integer, "
                       f"not {v!r}")
        for k, lo, what in (("time", 0, "positive"), ("target_speedup", 0, "positive"),
                            ("agent_timeout", 0, "positive"), ("ucb_c", None, "non-negative")):
            v = getattr(self, k)
            if v is None and k in ("time", "target_speedup"):
                continue
            if not _is_number(v) or v != v or (v <= lo if lo is not None else v < 0):
                bad(k, f"must be a {what} number, not {v!r}")
        dev = str(self.device or "emu").strip().lower()
        m = re.fullmatch(r"(emu|emulator)|hip(?::([0-9]+))?", dev)
        if not isinstance(self.device, str) or not m:
            bad("device", f"must be 'emu' or 'hip[:N]', not {self.device!r}")
        self.device = "emu" if m.group(1) else f"hip:{int(m.group(2) or 0)}"
        from ..device.timing import AcceptRule
        ts = self.timing_samples
        if not isinstance(ts, int) or isinstance(ts, bool) or ts < AcceptRule.min_samples:
            bad("timing_samples", f"must be an integer >= {AcceptRule.min_samples} (the "
                                  f"acceptance rule's minimum), not {ts!r}")
        ops = list(self.operators)
        known = set(BUILTIN_OPERATORS) | {"agent"}
        for o in ops:
            if not isinstance(o, str) or o not in known:
                bad("operators", f"unknown operator {o!r}; known: {', '.join(sorted(known))}")
        if self.agent and "agent" not in ops:
            ops.append("agent")
        if "agent" in ops and not self.agent:
            bad("operators", "operator 'agent' needs --agent CMD")
        if not ops:
            bad("operators", "no operator enabled")
        self.operators = ops
        return self

    def to_json(self) -> dict:
        return dataclasses.asdict(self)

    #: options that define the search (a resumed run must use the same)
    SEARCH_KEYS = ("seed", "batch", "operators", "require", "chain_proofs", "trials", "islands", "island_size",
                   "migration_interval", "stagnation", "ucb_c", "ucb_window", "kernel")


_UNITS = {"": 1, "s": 1, "m": 60, "min": 60, "h": 3600}


def parse_duration(text) -> float:
    """``90``, ``90s``, ``30m``, ``1.5h`` -> seconds.

    Raises:
        AsmevoError: not a duration.
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text)
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(s|m|min|h)?\s*", str(text))
    if not m:
        raise AsmevoError(f"bad duration {text!r}; expected e.g. 90s, 30m, 1.5h")
    return float(m.group(1)) * _UNITS[m.group(2) or ""]


def _flatten(d: dict, prefix: str = "", path: tuple = ()) -> dict:
    """Nested tables flattened: ``{key_with_underscores: (value, path as written)}``."""
    out = {}
    for k, v in d.items():
        key = (prefix + "_" if prefix else "") + k.replace("-", "_")
        if isinstance(v, dict):
            out.update(_flatten(v, key, path + (k,)))
        else:
            out[key] = (v, path + (k,))
    return out


def _dotted(path: tuple) -> str:
    return ".".join(p if re.fullmatch(r"[A-Za-z0-9_-]+", p) else '"' + p + '"' for p in path)


def _key_parts(text: str) -> list[str] | None:
    """The parts of a TOML (dotted) key as written, or None when ``text`` is not a key."""
    parts = []
    for m in re.finditer(r'\s*(?:"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|([A-Za-z0-9_-]+))\s*(\.|$)', text):
        parts.append(next(g for g in m.groups()[:3] if g is not None))
        if m.group(4) == "":
            return parts
    return None


def _locate_key(text: str, path: tuple) -> tuple[int | None, int | None]:
    """Line and column (1-based) where the key ``path`` is set in the TOML ``text``, when a
    plain line scan finds it (table headers and ``key = value`` lines); else (None, None)."""
    table: list[str] = []
    want = list(path)
    for ln, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        m = re.match(r"\[\[?([^\[\]]*)\]\]?", stripped)
        if m and not stripped.startswith("[["):
            table = _key_parts(m.group(1)) or []
            continue
        if m:
            table = ["[["]       # arrays of tables hold no option
            continue
        k, eq, _ = line.partition("=")
        parts = _key_parts(k) if eq else None
        if parts and table + parts == want:
            return ln, len(line) - len(line.lstrip()) + 1
    return None, None


def _toml_position(e: Exception, text: str) -> tuple[str, int | None, int | None]:
    """(message, line, column) of a TOMLDecodeError (attributes from Python 3.14, else the
    ``(at line L, column C)`` / ``(at end of document)`` suffix of its message)."""
    msg = str(getattr(e, "msg", None) or e)
    ln, col = getattr(e, "lineno", None), getattr(e, "colno", None)
    m = re.search(r"\s*\(at (?:line (\d+), column (\d+)|end of document)\)\s*$", msg)
    if m:
        msg = msg[:m.start()]
        if ln is None and m.group(1):
            ln, col = int(m.group(1)), int(m.group(2))
    if ln is None:   # end of document
        lines = text.split("\n")
        ln, col = len(lines), len(lines[-1]) + 1
    return msg, ln, col


def _line_col(data: bytes, offset: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, offset) + 1
    return line, offset - (data.rfind(b"\n", 0, offset) + 1) + 1


#: flag spelling of a config key in messages
def _flag(key: str) -> str:
    return "K.co" if key == "kernel_file" else "--" + key.replace("_", "-")


def load_config(path: str | None, overrides: dict | None = None) -> EvolveConfig:
    """Defaults, then the TOML file at ``path``, then ``overrides`` (flags given on the
    command line; None values mean "not given").

    Every error names where the bad value came from: the file, with ``line:column`` for
    TOML syntax errors and the line of the key for a bad key or value (when found), or the
    flag.

    Raises:
        AsmevoError: unreadable or malformed TOML, unknown key, wrong type, bad value.
    """
    values: dict = {}
    where: dict = {}        # key -> (key as written, line, column) for values of the file
    if path:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise AsmevoError(f"cannot read config: {e.strerror}", file=path) from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            ln, col = _line_col(data, e.start)
            raise AsmevoError(f"config is not UTF-8 text (byte {data[e.start]:#04x}); expected "
                              "a TOML file", file=path, line=ln, column=col) from None
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            msg, ln, col = _toml_position(e, text)
            raise AsmevoError(f"config is not valid TOML: {msg}", file=path, line=ln,
                              column=col) from None
        flat = _flatten({k: v for k, v in doc.items() if k != "evolve"})
        ev = doc.get("evolve")
        if isinstance(ev, dict):
            flat.update(_flatten(ev, "", ("evolve",)))
        elif "evolve" in doc:
            ln, col = _locate_key(text, ("evolve",))
            raise AsmevoError(f"config key 'evolve': wrong type: expected a table of options "
                              f"([evolve]), got {_toml_type(ev)}", file=path, line=ln,
                              column=col)
        if "islands_count" in flat:
            flat["islands"] = flat.pop("islands_count")
        names = {f.name: f for f in fields(EvolveConfig)}
        for k, (v, kpath) in flat.items():
            shown = _dotted(kpath)
            ln, col = _locate_key(text, kpath)
            if k not in names:
                raise AsmevoError(f"unknown config key {shown!r}; known keys: "
                                  f"{', '.join(sorted(names))}", file=path, line=ln,
                                  column=col)
            _check_type(k, shown, v, names[k], path, ln, col)
            values[k] = v
            where[k] = (shown, ln, col)
    flags = set()
    for k, v in (overrides or {}).items():
        if v is not None:
            values[k] = v
            flags.add(k)
            where.pop(k, None)

    def blame(key: str, msg: str) -> AsmevoError:
        if key in where:
            shown, ln, col = where[key]
            return AsmevoError(f"config key {shown!r}: {msg}", file=path, line=ln, column=col)
        if key in flags:
            return AsmevoError(f"{_flag(key)}: {msg}")
        return AsmevoError(f"bad option {key}: {msg}")

    if values.get("time") is not None:
        try:
            values["time"] = parse_duration(values["time"])
        except AsmevoError as e:
            raise blame("time", e.message) from None
    if isinstance(values.get("operators"), str):
        values["operators"] = [o.strip() for o in values["operators"].split(",") if o.strip()]
    try:
        return EvolveConfig(**values).validate()
    except BadOption as e:
        raise blame(e.key, e.detail) from None


def _kind(key: str, f) -> str:
    """What the option ``key`` takes: duration, operators, bool, int, number or string."""
    if key in ("time", "operators"):
        return key
    t = str(f.type)
    for name, kind in (("bool", "bool"), ("int", "int"), ("float", "number"), ("str", "string")):
        if re.search(rf"\b{name}\b", t):
            return kind
    return "string"


_EXPECTED = {"time": "a duration such as \"90s\", \"30m\", \"1.5h\" or a number of seconds",
             "operators": "a list of operator names (or one comma-separated string)",
             "bool": "true or false", "int": "an integer", "number": "a number",
             "string": "a string"}


def _toml_type(v) -> str:
    import datetime
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int):
        return "an integer"
    if isinstance(v, float):
        return "a float"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, dict):
        return "a table"
    if isinstance(v, (datetime.date, datetime.time)):
        return "a date/time"
    return type(v).__name__


def _check_type(key, shown, value, f, path, line=None, column=None):
    kind = _kind(key, f)
    if kind == "time":
        ok = isinstance(value, str) or _is_number(value)
    elif kind == "operators":
        ok = isinstance(value, str) or (isinstance(value, list)
                                        and all(isinstance(x, str) for x in value))
    elif kind == "bool":
        ok = isinstance(value, bool)
    elif kind == "int":
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif kind == "number":
        ok = _is_number(value)
    else:
        ok = isinstance(value, str)
    if not ok:
        got = _toml_type(value)
        if kind == "operators" and isinstance(value, list):
            got = "an array holding " + ", ".join(sorted({_toml_type(x) for x in value
                                                           if not isinstance(x, str)}))
        raise AsmevoError(f"config key {shown!r}: wrong type: expected {_EXPECTED[kind]}, got "
                          f"{got}", file=path, line=line, column=column)

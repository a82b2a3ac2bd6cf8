"""Every option of ``asmevo evolve``, read from a TOML file and overridden by flags.

A config file holds the same keys as the command line (``-`` or ``_`` alike), at top level
or under an ``[evolve]`` table::

    budget = 300
    seed = 0
    operators = ["passes", "mutate", "crossover"]
    [evolve.islands]          # nested tables are flattened: islands_count = 4
    count = 4

Unknown keys and wrong types are bad input (exit 2).
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from dataclasses import dataclass, field, fields

from ..errors import AsmevoError

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
        def bad(msg):
            raise AsmevoError(f"bad option: {msg}")
        if self.require not in ("proved", "tested"):
            bad(f"require must be 'proved' or 'tested', not {self.require!r}")
        if self.executor not in ("local", "ray"):
            bad(f"executor must be 'local' or 'ray', not {self.executor!r}")
        for k in ("budget", "jobs", "batch", "trials", "final_trials", "islands", "island_size",
                  "migration_interval", "stagnation", "max_steps_factor", "ucb_window"):
            v = getattr(self, k)
            if not isinstance(v, int) or isinstance(v, bool) or v < (0 if k == "budget" else 1):
                bad(f"{k} must be a positive integer, not {v!r}")
        dev = str(self.device or "emu").strip().lower()
        m = re.fullmatch(r"(emu|emulator)|hip(?::([0-9]+))?", dev)
        if not isinstance(self.device, str) or not m:
            bad(f"device must be 'emu' or 'hip[:N]', not {self.device!r}")
        self.device = "emu" if m.group(1) else f"hip:{int(m.group(2) or 0)}"
        from ..device.timing import AcceptRule
        ts = self.timing_samples
        if not isinstance(ts, int) or isinstance(ts, bool) or ts < AcceptRule.min_samples:
            bad(f"timing_samples must be an integer >= {AcceptRule.min_samples} (the acceptance "
                f"rule's minimum), not {ts!r}")
        if self.agent_timeout <= 0:
            bad("agent_timeout must be positive")
        ops = list(self.operators)
        known = set(BUILTIN_OPERATORS) | {"agent"}
        for o in ops:
            if o not in known:
                bad(f"unknown operator {o!r}; known: {', '.join(sorted(known))}")
        if self.agent and "agent" not in ops:
            ops.append("agent")
        if "agent" in ops and not self.agent:
            bad("operator 'agent' needs --agent CMD")
        if not ops:
            bad("no operator enabled")
        self.operators = ops
        return self

    def to_json(self) -> dict:
        return dataclasses.asdict(self)

    #: options that define the search (a resumed run must use the same)
    SEARCH_KEYS = ("seed", "batch", "operators", "require", "trials", "islands", "island_size",
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


def _flatten(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        key = (prefix + "_" if prefix else "") + k.replace("-", "_")
        if isinstance(v, dict):
            out.update(_flatten(v, key))
        else:
            out[key] = v
    return out


def load_config(path: str | None, overrides: dict | None = None) -> EvolveConfig:
    """Defaults, then the TOML file at ``path``, then ``overrides`` (flags given on the
    command line; None values mean "not given").

    Raises:
        AsmevoError: unreadable or malformed TOML, unknown key, wrong type, bad value.
    """
    values: dict = {}
    if path:
        try:
            with open(path, "rb") as f:
                doc = tomllib.load(f)
        except OSError as e:
            raise AsmevoError(f"cannot read config: {e.strerror}", file=path) from None
        except tomllib.TOMLDecodeError as e:
            raise AsmevoError(f"config is not valid TOML: {e}", file=path) from None
        if isinstance(doc.get("evolve"), dict):
            rest = {k: v for k, v in doc.items() if k != "evolve"}
            doc = {**rest, **doc["evolve"]}
        values = _flatten(doc)
        if "islands_count" in values:
            values["islands"] = values.pop("islands_count")
        names = {f.name: f for f in fields(EvolveConfig)}
        for k, v in values.items():
            if k not in names:
                raise AsmevoError(f"unknown config key {k!r}; known keys: "
                                  f"{', '.join(sorted(names))}", file=path)
            _check_type(k, v, names[k], path)
    for k, v in (overrides or {}).items():
        if v is not None:
            values[k] = v
    if "time" in values and values["time"] is not None:
        values["time"] = parse_duration(values["time"])
    if isinstance(values.get("operators"), str):
        values["operators"] = [o.strip() for o in values["operators"].split(",") if o.strip()]
    return EvolveConfig(**values).validate()


def _check_type(key, value, f, path):
    d = f.default if f.default is not dataclasses.MISSING else f.default_factory()
    ok = True
    if key == "time":
        ok = isinstance(value, (int, float, str)) and not isinstance(value, bool)
    elif key == "operators":
        ok = isinstance(value, (list, str))
    elif isinstance(d, bool):
        ok = isinstance(value, bool)
    elif isinstance(d, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(d, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif isinstance(d, str) or d is None:
        ok = isinstance(value, (str, int, float)) and not isinstance(value, bool) or value is None
    if not ok:
        raise AsmevoError(f"config key {key!r}: wrong type {type(value).__name__}", file=path)

"""``asmevo evolve``: the correctness-gated optimisation loop (docs/evolve.md).

One concept a module:

* :mod:`.config` -- every option (TOML file + command-line overrides);
* :mod:`.store` -- the lineage store (SQLite, WAL), keyed by the candidate's content hash;
* :mod:`.candidate` -- canonical kernel text, content hash, listings, diffs;
* :mod:`.score` -- the scorer (the timing signal, :mod:`asmevo.perf`), fixed for a run;
* :mod:`.gate` -- build, verify, then time one candidate (runs in a worker);
* :mod:`.executor` -- local process pool and Ray, one interface;
* :mod:`.operators`, :mod:`.mutations`, :mod:`.agent` -- variation operators;
* :mod:`.bandit` -- UCB1 over operators;
* :mod:`.population` -- islands, parent selection, stagnation restarts;
* :mod:`.loop` -- the driver; :mod:`.report` -- final check and the run's outputs;
* :mod:`.progress` -- progress bar and the JSON-lines event log.
"""

from .config import EvolveConfig, load_config

__all__ = ["EvolveConfig", "load_config", "run_evolve"]


def run_evolve(cfg, **kw):
    """See :func:`asmevo.evolve.loop.run_evolve`."""
    from .loop import run_evolve as _run
    return _run(cfg, **kw)

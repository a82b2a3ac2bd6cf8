"""Timing statistics for real devices, and the rule that accepts a faster candidate.

A single minimum is never used (the public AsmEvo workflow: "never select a single minimum
latency").  Timings are taken as *paired, interleaved* samples: parent, candidate, parent,
candidate... after warm-up launches, so that clock drift, thermal state and other tenants
affect both alike.  A candidate is accepted as faster only when

    s_c >= max((1 + max(eps, k * cv)) * s_p, s_floor)

where ``s_p = T(K0) / T(parent)`` and ``s_c = T(K0) / T(candidate)`` come from the medians of
fresh paired samples, ``cv`` is the larger coefficient of variation of the two sample sets,
and the comparison is refused outright when ``cv > max_cv`` (too noisy to tell).  Defaults
(eps 0.002, k 0.85, max_cv 0.03, s_floor 1.0, at least 5 samples) are the AsmEvo skill's,
summarised in ``../shared/research/LOOP_AND_MODEL_ANCHORS.md`` section 1.

Times are in microseconds throughout.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Callable, Sequence


@dataclass(frozen=True)
class Samples:
    """Timed launches of one kernel (microseconds, in the order taken)."""

    times_us: tuple

    def __post_init__(self):
        if not self.times_us:
            raise ValueError("no timing samples")
        for t in self.times_us:
            if not (isinstance(t, (int, float)) and math.isfinite(t) and t > 0):
                raise ValueError(f"bad timing sample {t!r}: expected a positive finite number of us")

    @property
    def n(self) -> int:
        return len(self.times_us)

    @property
    def median(self) -> float:
        return float(statistics.median(self.times_us))

    @property
    def spread(self) -> float:
        """max - min, microseconds."""
        return float(max(self.times_us) - min(self.times_us))

    @property
    def mean(self) -> float:
        return float(statistics.fmean(self.times_us))

    @property
    def cv(self) -> float:
        """Coefficient of variation (sample standard deviation / mean); 0 for one sample."""
        if self.n < 2:
            return 0.0
        return float(statistics.stdev(self.times_us) / self.mean)

    def to_json(self) -> dict:
        return {"n": self.n, "median_us": self.median, "spread_us": self.spread, "cv": self.cv,
                "samples_us": list(self.times_us)}


@dataclass(frozen=True)
class AcceptRule:
    """Thresholds of the acceptance rule (see the module docstring)."""

    eps: float = 0.002
    k: float = 0.85
    max_cv: float = 0.03
    s_floor: float = 1.0
    min_samples: int = 5
    warmup: int = 3


@dataclass
class Decision:
    """Outcome of :func:`accept_faster`: ``accepted``, the speed-ups, the margin demanded and
    why (a sentence for reports and lineage records)."""

    accepted: bool
    reason: str
    s_parent: float = 0.0
    s_candidate: float = 0.0
    required: float = 0.0
    cv: float = 0.0
    details: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"accepted": self.accepted, "reason": self.reason, "s_parent": self.s_parent,
                "s_candidate": self.s_candidate, "required": self.required, "cv": self.cv,
                **self.details}


def accept_faster(k0: Samples, parent: Samples, candidate: Samples,
                  rule: AcceptRule = AcceptRule()) -> Decision:
    """Decide whether ``candidate`` is faster than ``parent`` beyond the noise.

    ``k0``, ``parent`` and ``candidate`` are paired samples from the same interleaved session
    (``k0`` may be ``parent`` when the parent is K0).  Refuses (``accepted=False``) when a set
    has fewer than ``rule.min_samples`` samples or a coefficient of variation above
    ``rule.max_cv``."""
    for name, s in (("K0", k0), ("parent", parent), ("candidate", candidate)):
        if s.n < rule.min_samples:
            return Decision(False, f"too few samples of {name}: {s.n} < {rule.min_samples}")
    cv = max(k0.cv, parent.cv, candidate.cv)
    if cv > rule.max_cv:
        return Decision(False, f"too noisy: coefficient of variation {cv:.4f} > {rule.max_cv}",
                        cv=cv)
    s_p = k0.median / parent.median
    s_c = k0.median / candidate.median
    required = max((1.0 + max(rule.eps, rule.k * cv)) * s_p, rule.s_floor)
    ok = s_c >= required
    why = (f"speed-up {s_c:.4f}x vs K0 {'>=' if ok else '<'} required {required:.4f}x "
           f"(parent {s_p:.4f}x, margin max({rule.eps}, {rule.k}*cv={rule.k * cv:.4f}), "
           f"floor {rule.s_floor})")
    return Decision(ok, why, s_p, s_c, required, cv)


def paired_samples(launchers: Sequence[Callable[[], float]], n: int, warmup: int = 3
                   ) -> list[Samples]:
    """Time each launcher (a callable returning one launch's time in microseconds) ``warmup``
    times untimed, then ``n`` rounds interleaved (A, B, C, A, B, C...).  One :class:`Samples`
    per launcher, in the order given."""
    if n < 1:
        raise ValueError("n must be at least 1")
    for _ in range(warmup):
        for f in launchers:
            f()
    times: list[list[float]] = [[] for _ in launchers]
    for _ in range(n):
        for i, f in enumerate(launchers):
            times[i].append(float(f()))
    return [Samples(tuple(t)) for t in times]

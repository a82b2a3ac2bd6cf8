"""The scorer: the run's fixed timing signal (AVO's ``f``; no operator or agent can change it).

``Scorer.score(module) -> Score(cycles, profile_hash, windows, bottleneck)`` calls
:func:`asmevo.perf.estimate` on the harness's launch (fixed inputs, seed 0) and reads the
kernel's estimated cycles and hot windows from the :class:`asmevo.perf.profile.Profile`.
The scorer's identity (model name and version) is stored in the run's meta table; a resumed
run with a different model is refused.

With ``--device hip[:N]`` the score is measured instead (the gate's paired timed launches,
:meth:`asmevo.evolve.gate.GateContext.measure`); the identity is then
:func:`device_identity` and :func:`timing_label` says where every figure comes from.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Score:
    cycles: float
    profile_hash: str
    windows: list = field(default_factory=list)   #: hot windows (dicts: start, end, ...)
    bottleneck: str = ""


class Scorer:
    """Estimated cycles of one kernel under one harness (inputs drawn with seed 0)."""

    def __init__(self, kernel: str, harness: dict | None):
        self.kernel = kernel
        self.harness = harness

    def profile(self, module):
        from ..perf import estimate
        return estimate(module, self.kernel, harness=self.harness)

    def identity(self, module) -> dict:
        """The model's name and version, as the profile of ``module`` states them."""
        return dict(self.profile(module).model)

    def score(self, module) -> Score:
        prof = self.profile(module)
        kp = prof.kernel(self.kernel)
        wins = []
        for w in kp.windows:
            d = w if isinstance(w, dict) else w.__dict__
            wins.append({k: d.get(k) for k in ("start", "end", "start_pc", "end_pc", "cycles",
                                               "share", "bottleneck", "block")})
        return Score(float(kp.cycles), prof.digest(), wins, getattr(kp, "bottleneck", ""))


def device_identity(device: str, samples: int) -> dict:
    """The scorer identity of a run timed on a real device."""
    return {"name": "hip-events", "device": device, "samples": int(samples)}


def timing_label(scorer: dict) -> str:
    """Where a run's figures come from, for reports: ``measured on hip:0 (HIP events; median
    of 10 paired samples)`` or ``estimated by the timing model asmevo-cu 1``."""
    if scorer.get("name") == "hip-events":
        return (f"measured on {scorer.get('device')} (HIP events; median of "
                f"{scorer.get('samples')} paired samples)")
    return f"estimated by the timing model {scorer.get('name')} {scorer.get('version')}"

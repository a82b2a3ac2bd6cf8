"""UCB1 over the operators, on a sliding window of their recent pulls (GEAK's anti-fixation).

``score(op) = mean reward of op's last W pulls + c * sqrt(2 ln N / n_op)``; an operator never
pulled goes first (in configuration order), so none starves; the window lets an operator
that stopped paying off fall back, so none dominates.  Rewards: 1 for a child faster than
its parent, 0.25 for an accepted neutral child, 0 otherwise.  Deterministic: ties go to the
configuration order.
"""

from __future__ import annotations

import math
from collections import deque


class UCB1:
    def __init__(self, arms: list[str], c: float = 1.0, window: int = 200):
        self.arms = list(arms)
        self.c = c
        self.hist = {a: deque(maxlen=window) for a in self.arms}
        self.total = 0

    def select(self, pending: dict[str, int] | None = None) -> str:
        """The arm to pull next; ``pending`` counts pulls proposed this round and not yet
        rewarded (they count as pulls, so a round spreads over the arms)."""
        pending = pending or {}
        n_total = self.total + sum(pending.values())
        best, best_v = None, -1.0
        for a in self.arms:
            n = len(self.hist[a]) + pending.get(a, 0)
            if n == 0:
                return a
            mean = sum(self.hist[a]) / max(1, len(self.hist[a])) if self.hist[a] else 0.0
            v = mean + self.c * math.sqrt(2 * math.log(max(n_total, 1)) / n)
            if v > best_v + 1e-12:
                best, best_v = a, v
        return best

    def update(self, arm: str, reward: float) -> None:
        if arm in self.hist:
            self.hist[arm].append(float(reward))
            self.total += 1

    def stats(self) -> dict:
        return {a: {"pulls_recent": len(h), "mean_recent": (sum(h) / len(h)) if h else None}
                for a, h in self.hist.items()}

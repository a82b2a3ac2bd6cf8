"""Selection: an island model (FunSearch/OpenEvolve style), said in docs/evolve.md.

* ``islands`` islands of at most ``island_size`` members each; step ``s`` works on island
  ``s % islands`` (round robin: every island advances, and a child lands on its parent's
  island -- the OpenEvolve #391/#289/#222 bugs cannot happen);
* a parent is drawn by fitness rank (weight ``0.5**rank``) divided by ``1 + times chosen``
  (novelty: members that produced few children are preferred);
* a child enters its island when it passed the gate and is not slower than its parent
  (neutral moves are kept: they open later moves); a full island drops its worst member;
* every ``migration_interval`` rounds each island's best is copied into the next island;
* an island whose best has not improved for ``stagnation`` of its steps restarts from
  another island's elite (the best of the island after it) plus the global best.

Order is total and deterministic: ``(cycles, instructions, step, hash)``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Member:
    hash: str
    cycles: float
    size: int
    step: int
    chosen: int = 0

    def key(self):
        return (self.cycles, self.size, self.step, self.hash)


class Population:
    def __init__(self, n_islands: int, island_size: int, stagnation: int, blocks_loader):
        self.n = n_islands
        self.size = island_size
        self.stagnation = stagnation
        self.islands: list[list[Member]] = [[] for _ in range(n_islands)]
        self.since_improve = [0] * n_islands
        self.island_best = [float("inf")] * n_islands
        self.restarts = 0
        self._load = blocks_loader
        self._blocks: dict[str, list] = {}
        self.best: Member | None = None

    def blocks_of(self, h: str):
        if h not in self._blocks:
            if len(self._blocks) > 256:
                keep = {m.hash for isl in self.islands for m in isl}
                self._blocks = {k: v for k, v in self._blocks.items() if k in keep}
            self._blocks[h] = self._load(h)
        return self._blocks[h]

    def all_members(self) -> list[Member]:
        seen, out = set(), []
        for isl in self.islands:
            for m in sorted(isl, key=Member.key):
                if m.hash not in seen:
                    seen.add(m.hash)
                    out.append(m)
        return sorted(out, key=Member.key)

    def seed(self, m: Member) -> None:
        for i in range(self.n):
            self.islands[i] = [Member(m.hash, m.cycles, m.size, m.step)]
            self.island_best[i] = m.cycles
        self.best = m

    def select_parent(self, island: int, rng) -> Member:
        isl = sorted(self.islands[island], key=Member.key)
        w = [0.5 ** r / (1 + m.chosen) for r, m in enumerate(isl)]
        x = rng.random() * sum(w)
        for m, wi in zip(isl, w):
            x -= wi
            if x <= 0:
                return m
        return isl[-1]

    def note_chosen(self, island: int, h: str) -> None:
        for m in self.islands[island]:
            if m.hash == h:
                m.chosen += 1

    def offer(self, island: int, m: Member) -> bool:
        """Insert ``m`` into ``island``; True when it entered."""
        isl = self.islands[island]
        if any(x.hash == m.hash for x in isl):
            return False
        if len(isl) >= self.size:
            worst = max(isl, key=Member.key)
            if m.key() >= worst.key():
                return False
            isl.remove(worst)
        isl.append(m)
        if self.best is None or m.key() < self.best.key():
            self.best = m
        return True

    def step_done(self, island: int) -> bool:
        """Count a step of ``island``; restart it when it stagnated. True on a restart."""
        b = min(x.cycles for x in self.islands[island])
        if b < self.island_best[island]:
            self.island_best[island] = b
            self.since_improve[island] = 0
            return False
        self.since_improve[island] += 1
        if self.since_improve[island] < self.stagnation or self.n < 2:
            return False
        donor = min(self.islands[(island + 1) % self.n], key=Member.key)
        new = [Member(donor.hash, donor.cycles, donor.size, donor.step)]
        if self.best and self.best.hash != donor.hash:
            new.append(Member(self.best.hash, self.best.cycles, self.best.size, self.best.step))
        self.islands[island] = new
        self.island_best[island] = min(x.cycles for x in new)
        self.since_improve[island] = 0
        self.restarts += 1
        return True

    def migrate(self) -> None:
        bests = [min(isl, key=Member.key) for isl in self.islands]
        for i, b in enumerate(bests):
            self.offer((i + 1) % self.n, Member(b.hash, b.cycles, b.size, b.step))

"""Variation operators: small registered classes, one ``propose`` each.

An operator gets the parent (:class:`Parent`: its hash, kernel blocks, hot windows,
cycles), a ``random.Random`` derived from (seed, step) and the :class:`ProposeContext`
(K0, the kernel name, the population, the lineage for the agent), and returns a
:class:`Proposal` (new blocks, parameters, the edit, a hypothesis) or raises
:class:`NoCandidate` (nothing legal found) / :class:`OperatorFailure` (the agent timed out,
crashed or answered nonsense).  Operators never evaluate anything: the gate does.

Register one with::

    @register_operator
    class MyOp(Operator):
        name = "my-op"
        def propose(self, parent, rng, ctx) -> Proposal: ...
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import ClassVar

from .candidate import clone_kernel_blocks, graft

OPERATORS: dict[str, type] = {}


def register_operator(cls):
    OPERATORS[cls.name] = cls
    return cls


class NoCandidate(Exception):
    """The operator found no legal change this time."""


class OperatorFailure(Exception):
    """The operator failed (agent timeout, crash, malformed answer); recorded, loop goes on."""


@dataclass
class Parent:
    hash: str
    blocks: list                 #: list[BasicBlock]
    windows: list                #: hot windows (dicts with start, end inclusive)
    cycles: float
    island: int = 0


@dataclass
class Proposal:
    blocks: list
    params: dict = field(default_factory=dict)
    edit: dict = field(default_factory=dict)
    hypothesis: str = ""
    extra_parents: list = field(default_factory=list)


@dataclass
class ProposeContext:
    k0: object                   #: K0 Module (never modified)
    kernel: str
    population: object = None    #: asmevo.evolve.population.Population
    store: object = None         #: the lineage store (read-only for operators)
    config: object = None
    state: dict = field(default_factory=dict)   #: loop facts for the agent task


class Operator:
    name: ClassVar[str] = ""
    #: whether the round ends after this operator's step (its next call must see the result)
    synchronous: ClassVar[bool] = False

    def __init__(self, config=None):
        self.config = config

    def propose(self, parent: Parent, rng: random.Random, ctx: ProposeContext) -> Proposal:
        raise NotImplementedError


def hot_indices(parent: Parent, n_insts: int) -> set[int]:
    """Instruction indices inside the parent's hot windows (every index when it has none)."""
    s = set()
    for w in parent.windows or []:
        s.update(range(max(0, int(w["start"])), min(n_insts, int(w["end"]) + 1)))
    return s or set(range(n_insts))


# -- passes ------------------------------------------------------------------------

#: pass -> parameter choices (None: no parameter)
PASS_SPACE = {
    "copy-prop": None, "dce": None, "peephole": None, "waitcnt-relax": None, "nop-trim": None,
    "sched": {"window": [4, 8, 16, 32, 64], "max-stall": [0, 2, 4, 8, 16, 32]},
    "regalloc-compact": {"always": [False, True]},
    "redundant-move": None, "scratch-promote": None, "sgpr-spill-promote": None,
    "loop-pipeline": None,
}

#: how often the passes operator starts its pipeline with ``loop-pipeline`` when the parent
#: still has a self-loop it can pipeline (a hot loop bound by one memory round trip per
#: iteration gains most from it, and no local move can do it)
LOOP_FIRST = 0.5


def _pipelinable(ctx, blocks) -> bool:
    """Whether ``loop-pipeline`` changes the kernel with ``blocks``: it has a self-loop
    :mod:`asmevo.ir.unroll` applies to and the pass can pipeline it."""
    from ..ir.module import Kernel
    from ..ir.unroll import self_loops
    try:
        if not self_loops(Kernel(ctx.kernel, blocks)):
            return False
        return len(run_on_blocks(ctx, blocks, "kernel(loop-pipeline)")) != len(blocks)
    except Exception:  # noqa: BLE001 - a kernel the pass cannot read: no
        return False


#: passes that only apply to kernels with a uniform self-loop (:mod:`asmevo.ir.unroll`):
#: sampled only for such parents, so that the other kernels' pipelines stay as they were
LOOP_PASSES = frozenset({"loop-pipeline"})


def sample_pipeline(rng: random.Random, loops: bool = False) -> str:
    """A random pipeline over :data:`PASS_SPACE` (``loops``: the parent has a self-loop, so
    :data:`LOOP_PASSES` may be drawn too)."""
    if rng.random() < 0.12:
        return "default"
    names = sorted(n for n in PASS_SPACE if loops or n not in LOOP_PASSES)
    k = rng.randint(1, 4)
    parts = []
    for _ in range(k):
        n = rng.choice(names)
        space = PASS_SPACE[n]
        if space:
            ps = []
            for key in sorted(space):
                v = rng.choice(space[key])
                ps.append(key if v is True else (f"no-{key}" if v is False else f"{key}={v}"))
            n = f"{n}<{';'.join(ps)}>"
        parts.append(n)
    return f"kernel({','.join(parts)})"


def run_on_blocks(ctx: ProposeContext, blocks, pipeline: str):
    """Run ``pipeline`` on a copy of K0 holding ``blocks``; the new blocks."""
    from ..passes import run_pipeline
    from .gate import fresh_copy
    m = fresh_copy(ctx.k0, ctx.kernel, blocks)
    run_pipeline(m, pipeline, kernels=[ctx.kernel])
    return m.kernel(ctx.kernel).blocks


@register_operator
class PassesOperator(Operator):
    """A pipeline of registered passes with sampled parameters."""

    name = "passes"

    def __init__(self, config=None):
        super().__init__(config)
        self.memo: dict = {}     # (parent hash, pipeline) -> blocks (passes are deterministic)
        self.loops: dict = {}    # parent hash -> loop-pipeline applies (deterministic too)

    def propose(self, parent, rng, ctx):
        from ..errors import AsmevoError
        loops = self.loops.get(parent.hash)
        if loops is None:
            loops = self.loops[parent.hash] = _pipelinable(ctx, parent.blocks)
            if len(self.loops) > 4096:
                self.loops.clear()
        text = sample_pipeline(rng, loops)
        if rng.random() < LOOP_FIRST and loops:
            # early on a loop kernel: pipeline the loop, then whatever was sampled
            inner = text[len("kernel("):-1] if text.startswith("kernel(") else text
            text = f"kernel(loop-pipeline,{inner})" if inner != "default" else \
                "kernel(loop-pipeline),default"
        key = (parent.hash, text)
        if key not in self.memo:
            if len(self.memo) > 512:
                self.memo.clear()
            try:
                self.memo[key] = run_on_blocks(ctx, parent.blocks, text)
            except AsmevoError as e:
                self.memo[key] = e
        blocks = self.memo[key]
        if isinstance(blocks, Exception):
            raise NoCandidate(f"pipeline {text}: {blocks}")
        return Proposal(blocks, {"pipeline": text}, {"kind": "pipeline", "pipeline": text},
                        f"pipeline {text} removes or reorders work the timing model charges")


# -- STOKE-style moves --------------------------------------------------------------

@register_operator
class MutateOperator(Operator):
    """One local move inside the parent's hot windows (:mod:`asmevo.evolve.mutations`),
    kept only when it adds no static violation."""

    name = "mutate"
    tries = 12

    def __init__(self, config=None):
        super().__init__(config)
        self._env = None         # MoveEnv of (K0, kernel): liveness, register budget, ABI

    def env(self, ctx):
        from .mutations_rename import MoveEnv
        if self._env is None or self._env.k0 is not ctx.k0 or self._env.kernel_name != ctx.kernel:
            self._env = MoveEnv(ctx.k0, ctx.kernel)
        return self._env

    def propose(self, parent, rng, ctx):
        from .mutations import MOVES, call_move
        n = sum(len(b.instructions) for b in parent.blocks)
        hot = hot_indices(parent, n)
        base = _violations(ctx, parent.blocks)
        names = sorted(MOVES)
        env = self.env(ctx)
        for _ in range(self.tries):
            mv = rng.choice(names)
            out = call_move(mv, parent.blocks, hot, rng, env)
            if out is None:
                continue
            blocks, desc = out
            if not set(_violations(ctx, blocks)) <= set(base):
                continue
            from .describe import move_sentence
            return Proposal(blocks, {"move": mv}, {"kind": "moves", "moves": [desc]},
                            move_sentence(desc))
        raise NoCandidate("no legal move in the hot windows")


_VIOL_CACHE: dict = {}


def _violations(ctx, blocks) -> list[str]:
    """Static violations (waitcnt, hazards, register bounds) of the kernel with ``blocks``."""
    from ..passes import AnalysisManager
    from ..passes.checks import static_violations
    from .candidate import content_hash
    m = graft(ctx.k0, ctx.kernel, blocks)
    k = m.kernel(ctx.kernel)
    key = content_hash(k)
    if key not in _VIOL_CACHE:
        if len(_VIOL_CACHE) > 512:
            _VIOL_CACHE.clear()
        try:
            _VIOL_CACHE[key] = static_violations(k, AnalysisManager(m))
        except Exception as e:  # an analysis failing on a move: not a legal move
            _VIOL_CACHE[key] = [f"analysis failed: {e}"]
    return _VIOL_CACHE[key]


# -- crossover ----------------------------------------------------------------------

@register_operator
class CrossoverOperator(Operator):
    """Combine the accepted edits of two lineages on disjoint blocks: blocks the other
    parent changed (against K0) and this one did not are taken from the other."""

    name = "crossover"

    def propose(self, parent, rng, ctx):
        from .candidate import changed_blocks
        k0k = ctx.k0.kernel(ctx.kernel)
        pop = ctx.population
        others = [m for m in (pop.all_members() if pop else []) if m.hash != parent.hash]
        if not others:
            raise NoCandidate("no second accepted lineage")
        rng.shuffle(others)
        pk = _kernel_of(ctx, parent.blocks)
        mine = set(changed_blocks(k0k, pk))
        for other in others[:6]:
            ob = ctx.population.blocks_of(other.hash)
            ok = _kernel_of(ctx, ob)
            if len(ok.blocks) != len(k0k.blocks) or len(pk.blocks) != len(k0k.blocks):
                continue
            theirs = set(changed_blocks(k0k, ok)) - mine
            if not theirs:
                continue
            take = sorted(theirs)
            new = clone_kernel_blocks(pk)
            for i in take:
                new[i] = type(ob[i])(new[i].label, list(ob[i].instructions), list(new[i].directives))
            return Proposal(new, {"other": other.hash, "blocks": take},
                            {"kind": "crossover", "other": other.hash,
                             "blocks": [f"bb{i}" for i in take]},
                            "the two lineages improved disjoint blocks; together they may add up",
                            extra_parents=[other.hash])
        raise NoCandidate("no other lineage changed a block this one left alone")


def _kernel_of(ctx, blocks):
    from ..ir.module import Kernel
    return Kernel(ctx.kernel, blocks)


def make_operators(config) -> dict[str, Operator]:
    from . import agent  # noqa: F401  (registers the agent operator)
    return {n: OPERATORS[n](config) for n in config.operators}

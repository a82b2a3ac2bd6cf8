"""Executors: where candidates are evaluated.  One interface:

    ex = make_executor(config, spec)     # spec: what GateContext needs (paths, kernel, options)
    for result in ex.map(tasks):         # results in task order, as they become available
        ...
    ex.close()

* :class:`InlineExecutor` (``--jobs 1``): the gate runs in the driver process;
* :class:`PoolExecutor` (``--jobs N``): N spawned worker processes, each with its own
  :class:`~asmevo.evolve.gate.GateContext`;
* :class:`RayExecutor` (``--executor ray [--ray-address A]``): one Ray actor per job.

Tasks and results are plain dicts (``{"hash", "blocks", "seed"}`` -> gate result); the
lineage store stays on the driver.  The result of a task does not depend on the executor,
so the same seed gives the same run.
"""

from __future__ import annotations

from ..errors import AsmevoError


class Executor:
    def map(self, tasks: list[dict]):
        raise NotImplementedError

    def close(self) -> None:
        pass


class InlineExecutor(Executor):
    def __init__(self, spec: dict):
        from .gate import GateContext
        self.ctx = GateContext(spec)

    def map(self, tasks):
        for t in tasks:
            yield self.ctx.evaluate(t)

    def close(self):
        self.ctx.close()


class PoolExecutor(Executor):
    def __init__(self, spec: dict, jobs: int):
        import multiprocessing as mp
        from .gate import init_worker
        self.pool = mp.get_context("spawn").Pool(jobs, initializer=init_worker, initargs=(spec,))

    def map(self, tasks):
        from .gate import evaluate_in_worker
        yield from self.pool.imap(evaluate_in_worker, tasks)

    def close(self):
        self.pool.terminate()
        self.pool.join()


class RayExecutor(Executor):
    def __init__(self, spec: dict, jobs: int, address: str | None):
        try:
            import ray
        except ImportError:
            raise AsmevoError("--executor ray needs Ray: pip install 'asmevo[ray]' "
                              "(or pip install ray)") from None
        self.ray = ray
        if not ray.is_initialized():
            kw = {"address": address} if address else {"num_cpus": max(1, jobs)}
            ray.init(ignore_reinit_error=True, log_to_driver=False, include_dashboard=False, **kw)

        @ray.remote(num_cpus=1)
        class GateActor:
            def __init__(self, spec):
                from asmevo.evolve.gate import GateContext
                self.ctx = GateContext(spec)

            def evaluate(self, task):
                return self.ctx.evaluate(task)

        self.actors = [GateActor.remote(spec) for _ in range(max(1, jobs))]
        from ray.util import ActorPool
        self.pool = ActorPool(self.actors)

    def map(self, tasks):
        yield from self.pool.map(lambda a, t: a.evaluate.remote(t), tasks)

    def close(self):
        for a in self.actors:
            try:
                self.ray.kill(a)
            except Exception:
                pass


def make_executor(config, spec: dict) -> Executor:
    if config.executor == "ray":
        return RayExecutor(spec, config.jobs, config.ray_address)
    if config.jobs <= 1:
        return InlineExecutor(spec)
    return PoolExecutor(spec, config.jobs)

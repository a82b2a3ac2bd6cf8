"""The driver of ``asmevo evolve``: rounds of proposals, the gate, selection, the store.

Determinism (what makes ``--resume`` after SIGKILL end like an uninterrupted run):

* all randomness of step ``s`` comes from ``Random(sha256(seed, s))``; the differential
  seed of round ``b`` from ``sha256(seed, "round", b)``;
* a round of ``batch`` steps is proposed from the state at its start (so the workers can
  evaluate it in parallel, and the result does not depend on ``--jobs`` or the executor);
  an operator marked ``synchronous`` (the agent) ends its round;
* the state (population, bandit, counters) changes only at the end of a round, from the
  round's steps in step order, and the round is then committed in the store;
* ``--resume`` replays the committed rounds from the store, then proposes the killed round
  again: its candidates already stored (same hash, first proposed by the same step) are
  read back, never evaluated again.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shlex
import sys
import time
from dataclasses import dataclass, field

from ..errors import AsmevoError
from .bandit import UCB1
from .candidate import canonical_lines, content_hash, kernel_blocks
from .operators import NoCandidate, OperatorFailure, Parent, ProposeContext, make_operators
from .population import Member, Population
from .store import SCHEMA_VERSION, open_store


def derive(seed: int, *parts) -> int:
    h = hashlib.sha256(json.dumps([seed, *parts]).encode()).digest()
    return int.from_bytes(h[:8], "little")


def file_sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


@dataclass
class RunResult:
    exit_status: int
    run_dir: str
    stop_reason: str = ""
    evaluated: int = 0
    best_hash: str | None = None
    speedup: float | None = None
    report: dict = field(default_factory=dict)


# -- inputs --------------------------------------------------------------------------

#: the files ``asmevo evolve`` writes in its run directory
RUN_FILES = ("lineage.sqlite", "lineage.sqlite-wal", "lineage.sqlite-shm", "events.jsonl",
             "best.co", "best.s", "best.diff", "report.md", "report.json", "trajectory.png")


def check_inputs(cfg):
    """Load K0 and the harness, pick the kernel and check that the harness matches it.

    Returns (k0 module, harness dict, kernel name).  Raises AsmevoError (exit 2).
    """
    from ..emu.harness import checked_entry, compare, make_inputs, make_launch, reference
    from ..emu.launch import run_kernel
    from ..frontend.loader import load
    if not cfg.kernel_file:
        raise AsmevoError("no kernel code object given")
    if not cfg.harness:
        raise AsmevoError("--harness H.json is required (the loop gates every candidate by "
                          "differential testing)")
    if cfg.out:
        from ..fileio import check_not_input
        for f in RUN_FILES:   # never over K0, the harness or the config
            check_not_input(os.path.join(cfg.out, f),
                            (cfg.kernel_file, cfg.harness, getattr(cfg, "config", None)))
    if not cfg.out:
        raise AsmevoError("--out RUN_DIR is required")
    k0 = load(cfg.kernel_file)
    if k0.code_object is None:
        raise AsmevoError("K0 must be a code object (.co/.hsaco): best.co is patched from it",
                          file=cfg.kernel_file)
    # --entry / --kernel, the launch against K0's metadata and the reference (it loads, runs
    # and names the entry's buffers), named as every command names them (run, verify,
    # profile, asmevo-opt); the K0 run below then checks the rest
    h = checked_entry(cfg.harness, cfg.entry, cfg.kernel_file, module=k0, kernel=cfg.kernel,
                      fits=True, reference=True)
    names = [k.name for k in k0.kernels if k.is_kernel]
    kernel = cfg.kernel or h.get("kernel")
    if kernel is None:
        if len(names) != 1:
            raise AsmevoError(f"K0 holds {len(names)} kernels ({', '.join(names)}); name one "
                              "with --kernel", file=cfg.kernel_file)
        kernel = names[0]
    if kernel not in names:
        raise AsmevoError(f"no kernel {kernel!r} in K0 (kernels: {', '.join(names) or 'none'})",
                          file=cfg.kernel_file)
    if h.get("kernel") and h["kernel"] != kernel:
        raise AsmevoError(f"the harness entry {h.get('name')!r} is for kernel {h['kernel']!r}, "
                          f"not {kernel!r}", file=cfg.harness)
    inputs = make_inputs(h, 0)
    try:
        res = run_kernel(k0, kernel, make_launch(h, inputs))
    except AsmevoError as e:
        raise AsmevoError(f"the harness does not match kernel {kernel}: {e.message if hasattr(e, 'message') else e}",
                          file=cfg.harness) from None
    except Exception as e:
        raise AsmevoError(f"the harness does not match kernel {kernel}: K0 does not run on it "
                          f"({type(e).__name__}: {e})", file=cfg.harness) from None
    if h.get("reference"):
        errs = compare(h, res.outputs, reference(h, inputs))
        if errs:
            raise AsmevoError(f"the harness does not match kernel {kernel}: K0's outputs differ "
                              f"from the harness's reference ({errs[0]})", file=cfg.harness)
    return k0, h, kernel


# -- the run -------------------------------------------------------------------------

class Run:
    def __init__(self, cfg, k0, harness, kernel):
        self.cfg = cfg
        self.k0 = k0
        self.harness = harness
        self.kernel = kernel
        self.dir = cfg.out
        self.t0 = time.time()

    # setup ------------------------------------------------------------------------
    def open(self, *, resume_may_start: bool = False):
        """Open or create the run directory's store.  ``resume_may_start``: ``--resume`` on a
        directory without a run starts one (the MCP session's create-or-continue) instead of
        being refused."""
        cfg = self.cfg
        db = os.path.join(self.dir, "lineage.sqlite")
        exists = os.path.exists(db)
        if exists and not cfg.resume:
            raise AsmevoError(f"run directory {self.dir} already holds a run; add --resume to "
                              "continue it, or choose another --out")
        if os.path.exists(self.dir) and not os.path.isdir(self.dir):
            raise AsmevoError(f"--out {self.dir} is not a directory")
        if cfg.resume and not exists and not resume_may_start:
            raise AsmevoError(f"--resume: {self.dir} holds no run to resume (no lineage.sqlite); "
                              "drop --resume to start one")
        if not exists and os.path.isdir(self.dir) and os.listdir(self.dir):
            # a run writes report.md, best.co...: never over files it did not make
            raise AsmevoError(f"--out {self.dir} is a directory that holds other files, not an "
                              "asmevo run; choose a new or empty directory")
        os.makedirs(self.dir, exist_ok=True)
        from .score import Scorer, device_identity
        self.measured = cfg.device != "emu"
        self.scorer_id = (device_identity(cfg.device, cfg.timing_samples) if self.measured
                          else Scorer(self.kernel, self.harness).identity(self.k0))
        self.k0_sha = file_sha256(cfg.kernel_file)
        from ..emu.harness import harness_sha256
        self.h_sha = harness_sha256(self.harness)   # the entry and its reference file
        search = {k: getattr(cfg, k) for k in cfg.SEARCH_KEYS}
        search["kernel"] = self.kernel
        self.store = open_store(self.dir)
        meta = self.store.meta()
        if meta:
            self._check_same_run(meta, search)
        else:
            self.store.set_meta(schema=str(SCHEMA_VERSION), k0_sha256=self.k0_sha,
                                kernel=self.kernel, harness_sha256=self.h_sha, config=search,
                                scorer=self.scorer_id, device=cfg.device,
                                created=str(time.time()),
                                k0_path=os.path.abspath(cfg.kernel_file),
                                harness_path=os.path.abspath(cfg.harness),
                                entry=cfg.entry or "")
        from .progress import EventLog, timing_fields
        self.events = EventLog(self.dir, timing_fields(self.scorer_id))

    def _check_same_run(self, meta, search):
        if meta.get("k0_sha256") != self.k0_sha or meta.get("kernel") != self.kernel:
            raise AsmevoError(f"run directory {self.dir} belongs to another kernel "
                              f"({meta.get('kernel')}, K0 sha256 {meta.get('k0_sha256', '?')[:12]}); "
                              "choose another --out")
        if meta.get("harness_sha256") != self.h_sha:
            raise AsmevoError(f"run directory {self.dir} was made with another harness (its "
                              "entry or its reference file differ)")
        was = meta.get("device") or "emu"     # runs made before --device existed: emu
        if was != self.cfg.device:
            how = ("measured on " + was) if was != "emu" else "scored by the timing model (--device emu)"
            raise AsmevoError(f"run directory {self.dir} was {how}; it cannot be resumed with "
                              f"--device {self.cfg.device}: its timings would not compare. "
                              f"Resume with --device {was}, or choose another --out")
        old = json.loads(meta.get("config", "{}"))
        diff = [k for k in search if k in old and old[k] != search[k]]
        if diff:
            def opt(k, v):    # as the user gave it: the flag and its value
                if isinstance(v, bool):
                    return "--" + ("" if v else "no-") + k.replace("_", "-")
                return f"--{k.replace('_', '-')} {','.join(map(str, v)) if isinstance(v, list) else v}"
            raise AsmevoError(f"run directory {self.dir} was made with other search options "
                              f"({', '.join(opt(k, old[k]) for k in diff)}; now "
                              f"{', '.join(opt(k, search[k]) for k in diff)}); a resumed run "
                              "must use the same ones")
        if json.loads(meta.get("scorer", "{}")) != self.scorer_id:
            raise AsmevoError(f"run directory {self.dir} was scored by another scorer "
                              f"({meta.get('scorer')}, now {json.dumps(self.scorer_id)}); "
                              "scores would not compare")

    def spec(self) -> dict:
        c = self.cfg
        return {"k0": os.path.abspath(c.kernel_file), "harness": os.path.abspath(c.harness),
                "entry": c.entry, "kernel": self.kernel, "require": c.require,
                "trials": c.trials, "z3_timeout_ms": c.z3_timeout_ms,
                "device": c.device, "timing_samples": c.timing_samples,
                "device_lock": os.path.abspath(os.path.join(c.out, ".device.lock"))
                if c.device != "emu" else None}

    # state --------------------------------------------------------------------------
    def init_state(self):
        cfg = self.cfg
        self.ops = make_operators(cfg)
        self.bandit = UCB1(list(self.ops), cfg.ucb_c, cfg.ucb_window)
        self.pop = Population(cfg.islands, cfg.island_size, cfg.stagnation, self._load_blocks)
        self.failures: list[dict] = []      # last failed candidates (for the agent)
        self.next_step = 0
        self.next_batch = 0
        self.op_stats = {n: _new_stats() for n in self.ops}
        self.last_step_of: dict[str, dict] = {}   # operator -> its latest step (the agent's view)
        self.repeats_of: dict[str, int] = {}      # operator -> duplicates in a row

    def chain_fields(self, parent: str) -> dict:
        """Task fields that let the gate prove a child of ``parent`` by a chain of proofs
        (:meth:`asmevo.evolve.gate.GateContext._chained`): ``parent`` and its blocks when it
        was proved equivalent to K0 and ``chain_proofs`` is on, else nothing (the gate then
        verifies against K0 only).  Used by the loop and by agent sessions (MCP)."""
        if self.cfg.chain_proofs and self._proved(parent):
            return {"parent": parent, "chain_parent_blocks": self.pop.blocks_of(parent)}
        return {}

    def _proved(self, h: str) -> bool:
        """True when candidate ``h`` is not K0 and its stored verdict is ``accepted``: the
        verifier *proved* it equivalent to K0 (directly or by a chain of proofs), never only
        tested (``--require tested`` lets ``unknown-unproved`` candidates into the
        population: those never start a chain); and that verdict was given by this version
        of the verifier (:data:`asmevo.verify.VERIFIER_VERSION`).  The gate checks that the
        parent's code hashes to ``h``."""
        from ..verify import VERIFIER_VERSION
        if h is None or h == self.k0_hash:
            return False
        r = self.store.db.execute("SELECT status, accepted, verdict FROM candidates WHERE hash=?",
                                  (h,)).fetchone()
        if r is None or r[0] != "accepted" or r[1] != 1:
            return False
        try:   # given by this verifier (a run resumed after a soundness fix starts afresh)
            return json.loads(r[2]).get("verifier") == VERIFIER_VERSION
        except (TypeError, ValueError, AttributeError):
            return False

    def _load_blocks(self, h):
        from .candidate import load_blocks
        r = self.store.db.execute("SELECT blocks FROM candidates WHERE hash=?", (h,)).fetchone()
        try:
            return load_blocks(r[0])
        except Exception as e:  # a crafted or damaged store: never unpickled freely
            raise AsmevoError(f"candidate {h[:12]}: its stored code is unreadable ({e})",
                              file=self.store.path) from None

    def root(self, executor):
        k = self.k0.kernel(self.kernel)
        h = content_hash(k)
        self.k0_hash = h
        rec = self.store.candidate(h, blocks=False)
        if rec is None:
            res = next(iter(executor.map([{"hash": h, "blocks": kernel_blocks(k),
                                           "seed": derive(self.cfg.seed, "k0"),
                                           "parent": None, "is_k0": True}])))
            if not res.get("passed"):
                raise AsmevoError(f"K0 does not pass its own gate against itself "
                                  f"({res.get('status')}: {res.get('verdict', {}).get('message')})",
                                  file=self.cfg.kernel_file)
            self.store.add_candidate({
                "hash": h, "parent": None, "step": -1, "island": -1, "operator": "original",
                "params": {}, "edit": {}, "hypothesis": "K0", "listing": "\n".join(canonical_lines(k)),
                "blocks": kernel_blocks(k), "status": res["status"], "outcome": res["outcome"],
                "accepted": 1, "cycles": res["cycles"],
                "verdict": dict(res["verdict"], measured=True,
                                timing=dict(res["timing"], measured=True))
                if res.get("measured") else res["verdict"],
                "profile_hash": res["profile_hash"], "windows": res["windows"], "times": res["times"]})
            rec = self.store.candidate(h, blocks=False)
        self.k0_cycles = rec["cycles"]
        self.pop.seed(Member(h, rec["cycles"], k.num_instructions(), -1))

    # one step's effect on the state (used live and on replay) -----------------------
    def apply_step(self, s: dict, cand: dict | None):
        op = s["operator"]
        st = self.op_stats.setdefault(op, _new_stats())
        st["proposed"] += 1
        if s["outcome"] == "duplicate":
            st["duplicates"] += 1
            if s.get("hash") is not None and s["hash"] == s["parent"]:
                st["no_ops"] += 1
            self.repeats_of[op] = self.repeats_of.get(op, 0) + 1
        else:
            self.repeats_of[op] = 0
        self.last_step_of[op] = {k: s.get(k) for k in ("step", "parent", "hash", "outcome",
                                                       "message")}
        island = s["island"]
        self.pop.note_chosen(island, s["parent"])
        reward = 0.0
        if s["outcome"] == "evaluated" and cand is not None:
            st["evaluated"] += 1
            parent_cycles = self._cycles_of(s["parent"])
            if cand.get("cycles") is not None:
                st["passed_gate"] += 1
            if cand["accepted"]:
                st["accepted"] += 1
                improved = cand["cycles"] < parent_cycles
                if improved:
                    st["improved"] += 1
                reward = 1.0 if improved else 0.25
                self.pop.offer(island, Member(cand["hash"], cand["cycles"],
                                              cand.get("_size") or self._size(cand["hash"]),
                                              s["step"]))
            else:
                self.failures.append({k: cand.get(k) for k in ("hash", "operator", "status",
                                                               "hypothesis", "step")}
                                     | {"verdict": _short_verdict(cand.get("verdict"))})
                self.failures = self.failures[-8:]
        elif s["outcome"] in ("agent-failure", "operator-error"):
            st["failed"] += 1
            self.failures.append({"hash": None, "operator": op, "status": s["outcome"],
                                  "step": s["step"], "verdict": {"message": s.get("message")}})
            self.failures = self.failures[-8:]
        self.bandit.update(op, reward)
        self.pop.step_done(island)

    def _cycles_of(self, h):
        r = self.store.db.execute("SELECT cycles FROM candidates WHERE hash=?", (h,)).fetchone()
        return r[0] if r and r[0] is not None else float("inf")

    def _size(self, h):
        return sum(len(b.instructions) for b in self.pop.blocks_of(h))

    def replay(self):
        batches = self.store.committed_batches()
        steps = {s["step"]: s for s in self.store.steps()}
        for b in batches:
            for n in range(b["first_step"], b["first_step"] + b["n_steps"]):
                s = steps[n]
                cand = self.store.candidate(s["hash"], blocks=False) if s.get("hash") else None
                self.apply_step(s, cand)
            self._end_round(b["batch"])
            self.next_step = b["first_step"] + b["n_steps"]
            self.next_batch = b["batch"] + 1
        self.store.drop_uncommitted_steps(self.next_step)
        return len(batches)

    def _end_round(self, batch):
        if (batch + 1) % self.cfg.migration_interval == 0:
            self.pop.migrate()

    # the agent's view -----------------------------------------------------------------
    def lineage_summary(self) -> dict:
        best = self.pop.all_members()[:5]
        rows = []
        for m in best:
            c = self.store.candidate(m.hash, blocks=False)
            rows.append({"hash": m.hash, "cycles": m.cycles,
                         "speedup_vs_k0": self.k0_cycles / m.cycles if m.cycles else None,
                         "operator": c["operator"], "hypothesis": c["hypothesis"],
                         "edit": c["edit"]})
        return {"evaluated": self.store.count(), "accepted": sum(
                    v["accepted"] for v in self.op_stats.values()),
                "best": rows, "last_failures": list(reversed(self.failures)),
                "operators": {n: {k: v[k] for k in ("proposed", "evaluated", "accepted",
                                                    "improved", "duplicates", "no_ops", "failed")}
                              for n, v in self.op_stats.items()}}

    def last_answer(self, op: str) -> dict | None:
        """What the latest step of operator ``op`` came to (the agent's next task shows it):
        ``outcome`` is the step's (``evaluated``, ``duplicate``, ``agent-failure``...), or
        ``no-op`` for a duplicate identical to its parent; ``candidate`` is the stored
        candidate it produced -- for a duplicate the earlier one with the same code, for a
        no-op the parent -- with its verdict and cycles; ``repeats`` counts duplicates in a
        row up to this one."""
        s = self.last_step_of.get(op)
        if s is None:
            return None
        out = {"step": s["step"], "outcome": s["outcome"], "hash": s.get("hash"),
               "message": s.get("message") or "", "repeats": self.repeats_of.get(op, 0)}
        if s["outcome"] == "duplicate" and s.get("hash") == s["parent"]:
            out["outcome"] = "no-op"
        c = self.store.candidate(s["hash"], blocks=False) if s.get("hash") else None
        if c is not None:
            out["candidate"] = _candidate_brief(c, self.k0_cycles)
        return out

    def profile_rows(self, h):
        try:
            from .gate import fresh_copy
            from .score import Scorer
            m = fresh_copy(self.k0, self.kernel, self.pop.blocks_of(h))
            prof = Scorer(self.kernel, self.harness).profile(m)
            rows = prof.kernel(self.kernel).instructions
            return [r if isinstance(r, dict) else dict(r.__dict__) for r in rows]
        except Exception:
            return []

    # one round ------------------------------------------------------------------------
    def propose_round(self, budget_left: int):
        cfg = self.cfg
        b, first = self.next_batch, self.next_step
        pending: dict[str, int] = {}
        steps, tasks, seen = [], [], {}     # seen: hash -> step of this round
        used = 0
        ctx = ProposeContext(self.k0, self.kernel, self.pop, self.store, cfg, {
            "k0_hash": self.k0_hash, "k0_cycles": self.k0_cycles, "scorer": self.scorer_id,
            "lineage_summary": self.lineage_summary, "profile_rows_of": self.profile_rows,
            "last_answer_of": self.last_answer})
        for i in range(cfg.batch):
            step = first + i
            rng = random.Random(derive(cfg.seed, step))
            island = step % cfg.islands
            opname = self.bandit.select(pending)
            pending[opname] = pending.get(opname, 0) + 1
            pm = self.pop.select_parent(island, rng)
            parent = Parent(pm.hash, self.pop.blocks_of(pm.hash), self._windows(pm.hash),
                            pm.cycles, island)
            ctx.state["step"] = step
            s = {"step": step, "batch": b, "island": island, "operator": opname,
                 "parent": pm.hash, "hash": None, "outcome": None, "message": "", "seconds": 0.0}
            t = time.perf_counter()
            prop = None
            try:
                prop = self.ops[opname].propose(parent, rng, ctx)
            except NoCandidate as e:
                s["outcome"], s["message"] = "no-candidate", str(e)[:500]
            except OperatorFailure as e:
                s["outcome"], s["message"] = "agent-failure" if opname == "agent" else \
                    "operator-error", str(e)[:2000]
            except Exception as e:  # an operator bug: recorded, the loop goes on
                s["outcome"], s["message"] = "operator-error", f"{type(e).__name__}: {e}"[:2000]
            s["seconds"] = time.perf_counter() - t
            if prop is not None:
                from ..ir.module import Kernel
                kk = Kernel(self.kernel, prop.blocks)
                h = content_hash(kk)
                s["hash"] = h
                old = self.store.candidate(h, blocks=False)
                if h in seen or (old is not None and old["step"] != step):
                    s["outcome"] = "duplicate"
                    s["message"] = self._duplicate_message(h, pm.hash, old, seen.get(h))
                elif used >= budget_left:
                    s["outcome"], s["hash"] = "over-budget", None
                elif old is not None:          # stored by this very step before a kill
                    s["outcome"] = "evaluated"
                    used += 1
                else:
                    s["outcome"] = "evaluated"
                    used += 1
                    rec = {"hash": h, "parent": pm.hash, "step": step, "island": island,
                           "operator": opname, "params": prop.params, "edit": prop.edit,
                           "hypothesis": prop.hypothesis, "listing": "\n".join(canonical_lines(kk)),
                           "blocks": kernel_blocks(kk)}
                    tasks.append((s, rec))
                seen.setdefault(h, step)
            steps.append(s)
            if self.ops[opname].synchronous:
                break
        return b, first, steps, tasks

    def _duplicate_message(self, h, parent, old, same_round_step) -> str:
        if h == parent:
            return f"no-op: the candidate is identical to its parent {h[:12]}"
        if same_round_step is not None:     # (also when it was stored before a kill)
            return (f"duplicate of candidate {h[:12]}, proposed by step {same_round_step} of "
                    "the same round: not evaluated again")
        if old is not None and old["step"] >= 0:
            cyc = old.get("cycles")
            return (f"duplicate of candidate {h[:12]} (first proposed by step {old['step']}, "
                    f"{old.get('operator')}; {old.get('status')}"
                    + (f", {cyc:.0f} {self._cycles_word()} cycles" if cyc is not None else "")
                    + "): not evaluated again")
        return f"duplicate of K0 {h[:12]}: not evaluated again"

    def _cycles_word(self) -> str:
        return "measured" if getattr(self, "measured", False) else "estimated"

    def _windows(self, h):
        r = self.store.db.execute("SELECT windows FROM candidates WHERE hash=?", (h,)).fetchone()
        return json.loads(r[0]) if r and r[0] else []

    def settle(self, rec: dict, res: dict) -> None:
        """Fill the candidate record ``rec`` from its gate result ``res``: the verdict is its
        receipt; it is accepted when it passed the gate and is not slower than its parent
        (on a real device: when the noise-aware timing rule says faster), else
        ``rejected-slower`` with the reason.  Used by the loop and by agent sessions (MCP)."""
        parent_cycles = self._cycles_of(rec["parent"])
        rec.update(status=res["status"], outcome=res["outcome"], verdict=res["verdict"],
                   times=res["times"], cycles=res.get("cycles"),
                   profile_hash=res.get("profile_hash"), windows=res.get("windows"))
        acc = bool(res.get("passed")) and res.get("cycles") is not None
        timing = res.get("timing") if res.get("measured") else None
        if acc and timing is not None:
            # measured on hardware: the noise-aware rule decides, not the cycle figures
            rec["verdict"] = dict(res["verdict"], measured=True,
                                 timing=dict(timing, measured=True))
            if not timing.get("accepted"):
                acc = False
                rec["status"], rec["outcome"] = "rejected-slower", "rejected"
                rec["verdict"]["timing"]["message"] = (
                    f"not faster than its parent beyond the noise on {timing.get('device')}: "
                    f"{timing.get('reason')}")
        elif acc and res["cycles"] > parent_cycles:
            acc = False
            rec["status"], rec["outcome"] = "rejected-slower", "rejected"
            rec["verdict"] = dict(res["verdict"], timing={
                "cycles": res["cycles"], "parent_cycles": parent_cycles,
                "message": f"slower than its parent: {res['cycles']:.0f} > "
                           f"{parent_cycles:.0f} estimated cycles"})
        rec["accepted"] = int(acc)

    def run_round(self, executor, budget_left, on_candidate):
        b, first, steps, tasks = self.propose_round(budget_left)
        seed = derive(self.cfg.seed, "round", b)
        work = []
        for _, rec in tasks:
            w = {"hash": rec["hash"], "blocks": rec["blocks"], "seed": seed}
            w.update(self.chain_fields(rec["parent"]))
            if self.measured:       # the device times the parent beside the candidate
                w.update(parent=rec["parent"], k0_hash=self.k0_hash)
                if rec["parent"] != self.k0_hash:
                    w["parent_blocks"] = self.pop.blocks_of(rec["parent"])
            work.append(w)
        for (s, rec), res in zip(tasks, executor.map(work)):
            self.settle(rec, res)
            self.store.add_candidate(rec)   # kept as soon as it is evaluated
            on_candidate(s, rec)
        for s in steps:
            self.store.add_step(s)
            if s["outcome"] != "evaluated":
                self.events.emit("step", step=s["step"], operator=s["operator"],
                                 outcome=("no-op" if s["outcome"] == "duplicate"
                                          and s.get("hash") == s["parent"] else s["outcome"]),
                                 hash=s.get("hash"), parent=s["parent"], message=s["message"])
        for s in steps:
            cand = self.store.candidate(s["hash"], blocks=False) if s["outcome"] == "evaluated" else None
            self.apply_step(s, cand)
        self._end_round(b)
        self.store.commit_batch(b, first, len(steps))
        self.next_step = first + len(steps)
        self.next_batch = b + 1
        return steps


def _new_stats() -> dict:
    """Per-operator counters (report.json ``operators``; the task's ``lineage.operators``):
    ``duplicates`` counts steps whose candidate was already stored, ``no_ops`` those of them
    identical to their parent."""
    return {"proposed": 0, "evaluated": 0, "passed_gate": 0, "accepted": 0, "improved": 0,
            "failed": 0, "duplicates": 0, "no_ops": 0}


def _candidate_brief(c: dict, k0_cycles) -> dict:
    """A stored candidate as the agent's task shows it: hash, first step, operator, status,
    accepted, cycles, speed-up, and the verdict's message (or the timing rule's)."""
    v = c.get("verdict") if isinstance(c.get("verdict"), dict) else {}
    msg = ((v.get("timing") or {}).get("message") if c.get("status") == "rejected-slower"
           else None) or v.get("message")
    cyc = c.get("cycles")
    return {"hash": c["hash"], "step": c["step"], "operator": c.get("operator"),
            "status": c.get("status"), "accepted": bool(c.get("accepted")), "cycles": cyc,
            "speedup_vs_k0": (k0_cycles / cyc) if cyc and k0_cycles else None,
            "message": msg}


def _short_verdict(v):
    if not isinstance(v, dict):
        return v
    out = {k: v.get(k) for k in ("status", "message", "layers") if k in v}
    ev = []
    for e in (v.get("evidence") or [])[:3]:
        ev.append({k: e.get(k) for k in ("layer", "kind", "message")} |
                  {"data": _trim(e.get("data"))})
    out["evidence"] = ev
    if "timing" in v:
        out["timing"] = v["timing"]
    return out


def _trim(x, n=1500):
    """``x``, or its JSON text cut to ``n`` characters when longer."""
    s = json.dumps(x, default=str)
    return x if len(s) <= n else s[:n] + "..."


def run_evolve(cfg, *, install_sigint: bool = True) -> RunResult:
    """Run (or resume) the loop described by ``cfg``; writes the run directory.

    ``install_sigint``: handle Ctrl-C with :class:`asmevo.interrupt.Interrupts` (every press
    stops the run, wherever it lands: in a z3 query, a finaliser or z3's own code; exit
    status 130, everything evaluated kept, the run resumable).

    Raises:
        AsmevoError: bad input (exit 2).
    """
    from ..interrupt import Interrupts
    with Interrupts(install_sigint) as ints:
        return _run_evolve(cfg, ints)


def _run_evolve(cfg, ints) -> RunResult:
    from .executor import make_executor
    from .progress import Progress
    from .report import finalize
    run = prog = executor = None
    stop = "budget"
    try:
        ints.check()        # (a press while the handler was being installed)
        if cfg.agent:
            from .agent import check_agent_command
            check_agent_command(cfg.agent)
        k0, h, kernel = check_inputs(cfg)
        run = Run(cfg, k0, h, kernel)
        executor = make_executor(cfg, run.spec())      # before the run directory is touched
        run.open()
        run.init_state()
        ints.check()
        run.root(executor)
        replayed = run.replay()
        run.events.emit("resume" if replayed else "start", kernel=kernel, seed=cfg.seed,
                        budget=cfg.budget, replayed_rounds=replayed, operators=cfg.operators,
                        k0_cycles=run.k0_cycles)
        prog = Progress(cfg.budget, cfg.quiet, measured=str(cfg.device) != "emu")
        t_start = time.time()
        n_start = run.store.count()

        def on_candidate(s, rec):
            ints.check()
            run.events.emit("candidate", step=s["step"], hash=rec["hash"], operator=rec["operator"],
                            status=rec["status"], cycles=rec.get("cycles"),
                            accepted=rec["accepted"], seconds=rec.get("times"))
            n = run.store.count()
            rate = (n - n_start) / max(1e-9, (time.time() - t_start) / 60)
            best = min(run.pop.best.cycles, rec["cycles"] if rec["accepted"] else float("inf"))
            # accepted so far, this round's earlier candidates included (op_stats is updated
            # when the round ends: the bar undercounted by a round -- newcomer test)
            acc = run.store.db.execute("SELECT COUNT(*) FROM candidates WHERE accepted=1 "
                                       "AND step >= 0").fetchone()[0]
            prog.update(n, acc, run.k0_cycles / best if best else 1.0, rate)

        while True:
            ints.check()
            n = run.store.count_before(run.next_step)
            if n >= cfg.budget:
                stop = "budget"
                break
            if cfg.time is not None and time.time() - run.t0 >= cfg.time:
                stop = "time"
                break
            if run.next_step >= cfg.budget * cfg.max_steps_factor:
                stop = "steps"
                break
            if cfg.target_speedup and run.k0_cycles / run.pop.best.cycles >= cfg.target_speedup:
                stop = "target"
                break
            best_before = run.pop.best.hash
            run.run_round(executor, cfg.budget - n, on_candidate)
            if run.pop.best.hash != best_before:
                run.events.emit("best", hash=run.pop.best.hash, cycles=run.pop.best.cycles,
                                speedup=run.k0_cycles / run.pop.best.cycles)
        run.events.emit("stop", reason=stop, evaluated=run.store.count())
        if prog:
            prog.close()
        report = finalize(run, elapsed=time.time() - run.t0, stop_reason=stop,
                          rate=(run.store.count() - n_start) / max(1e-9, (time.time() - t_start) / 60))
        ints.check()        # a press held back during the final check: not lost either
        return RunResult(0, cfg.out, stop, run.store.count(), report.get("winner", {}).get("hash"),
                         report.get("speedup"), report)
    except KeyboardInterrupt:
        if prog:
            prog.close()
        return _interrupted(cfg, run)
    finally:
        if prog:
            prog.close()
        if executor is not None:
            executor.close()
        if getattr(run, "events", None) is not None:
            run.events.close()
        if getattr(run, "store", None) is not None:
            run.store.close()


def _interrupted(cfg, run) -> RunResult:
    """Ctrl-C: the event, and on stderr what was kept and how to go on (exit status 130)."""
    argv = [shlex.quote(a) for a in sys.argv[1:]] if sys.argv else []
    db = os.path.join(cfg.out, "lineage.sqlite") if cfg.out else None
    store = getattr(run, "store", None)
    if store is None and not (db and os.path.exists(db)):    # nothing to resume
        argv = [a for a in argv if a != "--resume"]
        print(f"\ninterrupted before the run started: nothing kept\n"
              f"run again with: asmevo {' '.join(argv)}", file=sys.stderr)
        return RunResult(130, cfg.out, "interrupted", 0)
    n = store.count() if store is not None else 0
    if getattr(run, "events", None) is not None:
        run.events.emit("interrupted", evaluated=n)
    if "--resume" not in argv:
        argv.append("--resume")
    kept = f"{n} candidates kept in {db}" if store is not None else f"{db} kept"
    print(f"\ninterrupted: {kept}\nresume with: asmevo {' '.join(argv)}", file=sys.stderr)
    return RunResult(130, cfg.out, "interrupted", n)

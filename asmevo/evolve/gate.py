"""The gate: one candidate through build, verification and timing, cheapest first.

1. **build**: the candidate kernel is grafted into a copy of K0 and written as a code object
   (:func:`asmevo.backend.rebuild.write_code_object`: in-place patch when every change fits,
   else an ABI-preserving rebuild with llvm-mc + ld.lld), then loaded back: every later
   stage judges the bytes the hardware would run;
2. **verify**: :func:`asmevo.verify.verify` at level ``all`` -- static checks and ABI, z3
   window proofs (and the relational proof), differential testing on the round's fresh
   seed plus the verifier's edge values.  A child of a parent that was itself *proved*
   equivalent to K0 is first tried by a **chain of proofs** (:meth:`GateContext._chained`):
   z3 proves the child equivalent to its parent (windows only: a child differs from its
   parent by one local edit, where against K0 its windows may be undecided one by one and
   need the seconds-long relational proof), and the static checks, ABI and differential
   testing still run against K0 itself.  Equivalence is transitive, so the chain is a proof
   against K0; when the chain is not proved the full check against K0 runs as before.  The
   final check (:mod:`asmevo.evolve.report`) always proves the winner against K0 directly;
3. **time**: only a candidate that passed (``proved``; or ``tested`` with
   ``--require tested``) is scored: by the timing model (``--device emu``), or, on a real
   device (``--device hip[:N]``), by paired, interleaved timed launches of K0, the parent and
   the candidate (:func:`asmevo.device.timing.paired_samples`) judged by the noise-aware rule
   :func:`asmevo.device.timing.accept_faster`.  On a real device differential testing runs
   there too.

Runs in a worker: :class:`GateContext` is built once per worker process and
:meth:`GateContext.evaluate` is called per candidate.  Nothing here touches the store.
"""

from __future__ import annotations

import copy
import os
import shutil
import tempfile
import time
import traceback

from .candidate import graft


class GateContext:
    """What a worker needs: K0, the harness, the kernel, the gate options and the scorer."""

    def __init__(self, spec: dict):
        from ..emu.harness import load_harness
        from ..frontend.loader import load
        from .score import Scorer
        self.spec = spec
        self.k0 = load(spec["k0"])
        self.harness = load_harness(spec["harness"], spec.get("entry"))
        self.kernel = spec["kernel"]
        self.require = spec.get("require", "proved")
        self.trials = int(spec.get("trials", 4))
        self.timeout_ms = int(spec.get("z3_timeout_ms", 3000))
        self.scorer = Scorer(self.kernel, self.harness)
        self.tmp = tempfile.mkdtemp(prefix="asmevo-evolve-")
        self.diff_cache: dict = {}
        self._n = 0
        self.device = None
        self.samples = int(spec.get("timing_samples", 10))
        self._loaded: dict = {}         # hash -> code object loaded on the device (K0, parents)
        self._parents: dict = {}        # hash -> proved parent as built (the chain of proofs)
        dev = spec.get("device") or "emu"
        if dev != "emu":
            from ..device import get_device
            from ..perf.machine import load_machine
            self.device = get_device(dev)
            self.clock_mhz = float(load_machine().clock_mhz)

    @property
    def measured(self) -> bool:
        """True when candidates are timed on a real device."""
        return self.device is not None and getattr(self.device, "hardware", False)

    def close(self) -> None:
        for ld in self._loaded.values():
            try:
                ld.close()
            except Exception:
                pass
        self._loaded.clear()
        if self.device is not None:
            self.device.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def build(self, blocks) -> tuple[object, str]:
        """(loaded candidate module, "patched" | "assembled").  Raises AsmevoError."""
        m, how, _ = self.build_image(blocks)
        return m, how

    def build_image(self, blocks) -> tuple[object, str, bytes]:
        """(loaded candidate module, "patched" | "assembled", the code object's bytes)."""
        from ..backend.rebuild import write_code_object
        from ..frontend.loader import load
        m = fresh_copy(self.k0, self.kernel, blocks)
        readdress(m.kernel(self.kernel))
        self._n += 1
        path = os.path.join(self.tmp, f"c{self._n}.co")
        how = write_code_object(m, path, inputs=(self.spec["k0"],))
        try:
            with open(path, "rb") as f:
                image = f.read()
            return load(path), how, image
        finally:
            try:
                os.unlink(path)
            except OSError:
                pass

    def evaluate(self, task: dict) -> dict:
        """``task``: ``{"hash", "blocks", "seed"}`` -> result dict (never raises)."""
        t = {}
        res = {"hash": task["hash"], "times": t}
        try:
            return self._evaluate(task, res, t)
        except Exception as e:  # a bug in a stage is a failed candidate, never an acceptance
            res.update(status="internal-error", outcome="unknown", passed=False,
                       verdict={"status": "internal-error", "message": f"{type(e).__name__}: {e}",
                                "trace": traceback.format_exc()[-2000:]})
            return res

    def _evaluate(self, task, res, t) -> dict:
        from ..errors import AsmevoError
        from ..verify import verify
        t0 = time.perf_counter()
        try:
            cand, how, image = self.build_image(task["blocks"])
        except AsmevoError as e:
            t["build"] = time.perf_counter() - t0
            res.update(status="build-failed", outcome="rejected", passed=False,
                       verdict={"status": "build-failed", "outcome": "rejected",
                                "message": str(e)[:2000], "layers": {"build": "fail"}})
            return res
        t["build"] = time.perf_counter() - t0
        res["build"] = how
        t1 = time.perf_counter()
        v = None
        if task.get("chain_parent_blocks") is not None:
            v = self._chained(task, cand)
        if v is None:
            v = verify(self.k0, cand, harness=self.harness, level="all", entry=self.kernel,
                       trials=self.trials, seed=int(task["seed"]), timeout_ms=self.timeout_ms,
                       diff_cache=self.diff_cache, device=self.device if self.measured else None)
        t["verify"] = time.perf_counter() - t1
        passed = passes_gate(v, self.require)
        from ..verify import VERIFIER_VERSION
        res.update(status=v.status.value, outcome=v.outcome, passed=passed,
                   verdict=dict(v.to_json(), verifier=VERIFIER_VERSION),
                   gate=("proved" if v.accepted else "tested") if passed else None)
        if len(self.diff_cache) > 64:
            self.diff_cache.clear()
        if not passed:
            return res
        t2 = time.perf_counter()
        s = self.scorer.score(cand)
        t["score"] = time.perf_counter() - t2
        res.update(cycles=s.cycles, profile_hash=s.profile_hash, windows=s.windows,
                   bottleneck=s.bottleneck)
        if self.measured:
            # the model's figures stay only as hot windows for the operators; the score is
            # the measurement
            t3 = time.perf_counter()
            res.update(self.measure(task, cand, image))
            t["measure"] = time.perf_counter() - t3
        return res

    # -- the chain of proofs --------------------------------------------------------------
    def _chained(self, task: dict, cand):
        """The candidate's verdict by a chain of proofs, or None when the chain does not
        decide (then the full check against K0 runs).

        ``task["parent"]`` was *proved* equivalent to K0 (the loop sends
        ``chain_parent_blocks`` only for such a parent: its stored verdict is ``accepted``,
        never ``tested``).  Then, against the parent built from those blocks exactly as it
        was built when it was verified: static checks, ABI and z3 (windows only, no
        relational proof: it is the expensive fallback below); and against K0 itself:
        static checks, ABI and differential testing (:func:`asmevo.verify.verify` at level
        ``diff``).  Accepted only when the proof against the parent is ``accepted`` and
        testing against K0 found no difference and left nothing undecided.  A difference
        from K0 is returned as it is (rejected), whatever the proof said.

        Why it is sound: K0 = parent (proved) and parent = child (proved) give K0 = child --
        equivalence under identical launches is transitive, and so is read coverage (each
        dword the child loads lies in a load of the parent, each of those in a load of K0:
        :func:`asmevo.verify.equiv.read_coverage`).  Resource limits are checked against K0
        directly by the static and ABI layers of the ``diff`` call."""
        from ..verify import verify
        from ..verify.verdict import Evidence, Status, Verdict
        from ..ir.module import Kernel
        from .candidate import content_hash
        ph = task["parent"]
        parent = self._parents.get(ph)
        if parent is None:
            blocks = task["chain_parent_blocks"]
            # the code must be what the parent's key says (the store is not trusted)
            if content_hash(Kernel(self.kernel, blocks)) != ph:
                return None
            try:
                parent, _, _ = self.build_image(blocks)
            except Exception:
                return None
            if len(self._parents) >= 8:
                self._parents.pop(next(iter(self._parents)))
            self._parents[ph] = parent
        vz = verify(parent, cand, level="z3", entry=self.kernel, timeout_ms=self.timeout_ms,
                    relational=False)
        if not vz.accepted:
            return None
        vd = verify(self.k0, cand, harness=self.harness, level="diff", entry=self.kernel,
                    trials=self.trials, seed=int(task["seed"]), diff_cache=self.diff_cache,
                    device=self.device if self.measured else None)
        if vd.outcome == "rejected":
            vd.notes.append(f"z3 had proved it equivalent to its parent {ph[:12]}, which was "
                            "proved equivalent to K0: the chain of proofs is contradicted")
            return vd
        if not vd.accepted:
            return None
        trials = next((e.message for e in vd.evidence if e.kind == "trials"), "")
        chain = Evidence("z3", "chain", f"proved equivalent to its parent {ph[:12]}, which was "
                         "proved equivalent to K0 (equivalence is transitive)",
                         {"parent": ph, "proof": vz.to_json()})
        layers = dict(vd.layers)
        layers["z3"] = "pass"
        return Verdict(Status.ACCEPTED,
                       f"proved by a chain: equivalent to its parent {ph[:12]} (z3: "
                       f"{vz.message}), itself proved equivalent to K0; tested against K0"
                       + (f": {trials}" if trials else ""),
                       [chain] + [e for e in vd.evidence], layers, vd.kernels,
                       vz.notes + vd.notes)

    # -- timing on a real device -----------------------------------------------------------
    def _load_k0(self):
        key = "k0"
        if key not in self._loaded:
            with open(self.spec["k0"], "rb") as f:
                image = f.read()
            self._loaded[key] = self.device.load(self.k0, image=image)
        return self._loaded[key]

    def _load_parent(self, h: str, blocks):
        if h not in self._loaded:
            if len(self._loaded) > 16:           # K0 stays; the oldest parents go
                for k in [k for k in self._loaded if k != "k0"][:8]:
                    self._loaded.pop(k).close()
            m, _, image = self.build_image(blocks)
            self._loaded[h] = self.device.load(m, image=image)
        return self._loaded[h]

    def measure(self, task: dict, cand, image: bytes) -> dict:
        """Paired, interleaved timed launches of K0, the parent and the candidate on the
        device, then the acceptance rule.  K0's own evaluation (no parent) is measured only.
        Returns ``cycles`` (candidate median us x the machine clock), ``measured`` and
        ``timing`` (the decision and the three sample sets)."""
        from ..device.timing import AcceptRule, accept_faster, paired_samples
        from ..emu.harness import make_inputs, make_launch
        rule = AcceptRule()
        launch = make_launch(self.harness, make_inputs(self.harness, 0))
        k0 = self._load_k0()
        parent_hash = task.get("parent")
        root = parent_hash is None or task.get("is_k0")
        with _device_lock(self.spec.get("device_lock")):
            if root:
                (sk0,) = paired_samples([lambda: k0.time_launch(self.kernel, launch)],
                                        self.samples, rule.warmup)
                timing = {"accepted": True, "reason": "K0: measured, not compared",
                          "k0": sk0.to_json(), "candidate": sk0.to_json()}
                return {"cycles": sk0.median * self.clock_mhz, "measured": True,
                        "timing": timing}
            ld = self.device.load(cand, image=image)
            try:
                fk0 = lambda: k0.time_launch(self.kernel, launch)          # noqa: E731
                fc = lambda: ld.time_launch(self.kernel, launch)           # noqa: E731
                if parent_hash == task.get("k0_hash"):
                    sk0, sc = paired_samples([fk0, fc], self.samples, rule.warmup)
                    sp = sk0
                else:
                    pl = self._load_parent(parent_hash, task["parent_blocks"])
                    fp = lambda: pl.time_launch(self.kernel, launch)       # noqa: E731
                    sk0, sp, sc = paired_samples([fk0, fp, fc], self.samples, rule.warmup)
            finally:
                ld.close()
        d = accept_faster(sk0, sp, sc, rule)
        timing = d.to_json() | {"k0": sk0.to_json(), "parent": sp.to_json(),
                                "candidate": sc.to_json(), "device": self.device.name,
                                "clock_mhz": self.clock_mhz}
        return {"cycles": sc.median * self.clock_mhz, "measured": True, "timing": timing}


#: what differential testing cannot see: an ``unknown-unproved`` verdict whose undecided
#: windows involve these is never accepted as "tested" (caches and MODE are not emulated;
#: cross-wave orders are one schedule), whatever the verifier's status says
_UNTESTABLE = ("cache", "hwreg", "setreg", "getreg", "mode", "barrier", "cross-wave",
               "sc0", "sc1", "nt", "glc", "slc")


def passes_gate(v, require: str) -> bool:
    """``accepted`` always; ``unknown-unproved`` only with ``require == "tested"`` and when
    none of its evidence concerns something differential testing cannot observe."""
    if v.accepted:
        return True
    if require != "tested" or v.status.value != "unknown-unproved":
        return False
    import re
    words = re.compile(r"\b(" + "|".join(_UNTESTABLE) + r")\b", re.I)
    text = " ".join(f"{e.kind} {e.message}" for e in v.evidence) + " " + v.message
    return not words.search(text)


def fresh_copy(k0, kernel: str, blocks):
    """A deep copy of K0 whose kernel ``kernel`` has ``blocks``; K0 is never modified
    (the backend's ``prepare`` edits descriptors and metadata in place)."""
    m = graft(k0, kernel, blocks)
    new_k = m.kernel(kernel)
    memo = {id(new_k.blocks): new_k.blocks}
    return copy.deepcopy(m, memo)


#: never given a new address with their old bytes: their meaning depends on where they are
_PC_BOUND = ("s_getpc_b64", "s_setpc_b64", "s_swappc_b64", "s_call_b64")


def readdress(kernel) -> int:
    """Give instructions that only moved (same bytes, position changed) their new address, so
    the backend can still patch K0 in place instead of rebuilding.  Stops at the first
    instruction whose size is not known from its bytes; leaves PC-dependent instructions
    and those with symbolic operands alone (the backend then rebuilds).  The loaded result
    is what the verifier judges either way.  Returns the number of instructions re-addressed."""
    from ..ir.instruction import Instruction
    from ..ir.operands import Expr, Label
    insts = [i for b in kernel.blocks for i in b.instructions]
    starts = [i.address for i in insts if i.address is not None]
    if not starts or kernel.address is None:
        return 0
    pc, n = kernel.address, 0
    for b in kernel.blocks:
        for j, i in enumerate(b.instructions):
            if i.encoding is None:
                return n
            if i.address is not None and i.address != pc:
                if i.opcode in _PC_BOUND or i.raw or i.info is None or i.info.branch \
                        or any(isinstance(o, (Label, Expr)) for o in i.operands):
                    return n
                b.instructions[j] = Instruction(i.opcode, i.operands, i.modifiers,
                                                encoding=i.encoding, address=pc, raw=i.raw,
                                                line=i.line)
                n += 1
            pc += len(i.encoding)
    return n


class _device_lock:
    """An exclusive file lock around one timing session, so that workers of one run
    (``--jobs N``) never time launches on the device at the same time."""

    def __init__(self, path):
        self.path = path
        self.f = None

    def __enter__(self):
        if self.path:
            import fcntl
            self.f = open(self.path, "a+")
            fcntl.flock(self.f, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        if self.f is not None:
            import fcntl
            fcntl.flock(self.f, fcntl.LOCK_UN)
            self.f.close()
            self.f = None


# -- process-global context for pool workers --------------------------------------------
_CTX: GateContext | None = None


def init_worker(spec: dict) -> None:
    """Set up a pool worker (``--jobs N``).  Ctrl-C goes to the whole process group: the
    driver stops the run and terminates the pool, so a worker ignores SIGINT (and z3 in it
    does not catch it), rather than dying with a traceback on the terminal."""
    import signal

    import z3
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    z3.set_param("ctrl_c", False)
    global _CTX
    _CTX = GateContext(spec)


def evaluate_in_worker(task: dict) -> dict:
    return _CTX.evaluate(task)

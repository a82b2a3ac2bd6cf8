"""The gate: one candidate through build, verification and timing, cheapest first.

1. **build**: the candidate kernel is grafted into a copy of K0 and written as a code object
   (:func:`asmevo.backend.rebuild.write_code_object`: in-place patch when every change fits,
   else an ABI-preserving rebuild with llvm-mc + ld.lld), then loaded back: every later
   stage judges the bytes the hardware would run;
2. **verify**: :func:`asmevo.verify.verify` at level ``all`` -- static checks and ABI, z3
   window proofs (and the relational proof), differential testing on the round's fresh
   seed plus the verifier's edge values;
3. **time**: only a candidate that passed (``proved``; or ``tested`` with
   ``--require tested``) is scored.

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

    def close(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def build(self, blocks) -> tuple[object, str]:
        """(loaded candidate module, "patched" | "assembled").  Raises AsmevoError."""
        from ..backend.rebuild import write_code_object
        from ..frontend.loader import load
        m = fresh_copy(self.k0, self.kernel, blocks)
        readdress(m.kernel(self.kernel))
        self._n += 1
        path = os.path.join(self.tmp, f"c{self._n}.co")
        how = write_code_object(m, path, inputs=(self.spec["k0"],))
        try:
            return load(path), how
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
            cand, how = self.build(task["blocks"])
        except AsmevoError as e:
            t["build"] = time.perf_counter() - t0
            res.update(status="build-failed", outcome="rejected", passed=False,
                       verdict={"status": "build-failed", "outcome": "rejected",
                                "message": str(e)[:2000], "layers": {"build": "fail"}})
            return res
        t["build"] = time.perf_counter() - t0
        res["build"] = how
        t1 = time.perf_counter()
        v = verify(self.k0, cand, harness=self.harness, level="all", entry=self.kernel,
                   trials=self.trials, seed=int(task["seed"]), timeout_ms=self.timeout_ms,
                   diff_cache=self.diff_cache)
        t["verify"] = time.perf_counter() - t1
        passed = passes_gate(v, self.require)
        res.update(status=v.status.value, outcome=v.outcome, passed=passed, verdict=v.to_json(),
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
        return res


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


# -- process-global context for pool workers --------------------------------------------
_CTX: GateContext | None = None


def init_worker(spec: dict) -> None:
    global _CTX
    _CTX = GateContext(spec)


def evaluate_in_worker(task: dict) -> dict:
    return _CTX.evaluate(task)

"""The agent operator: an external program as one more variation operator (AVO).

Per step the loop runs ``--agent CMD`` once, writes one JSON task on its stdin and reads one
JSON answer from its stdout (schemas ``asmevo.evolve.task/2`` and
``asmevo.evolve.answer/1``, docs/evolve.md).  Answer kinds:

* ``window-edit``: ``"edit"`` in the ``window-edit`` format (docs/passes.md), indices into
  the task's listing;
* ``asm``: ``"asm"``, a whole edited assembly file (or just the kernel's code);
* ``pipeline``: ``"pipeline"``, a pass pipeline (``opt -passes=`` syntax);
* ``pass-plugin``: ``"plugin"`` (Python source using the ``--load-pass-plugin`` API) and
  ``"pipeline"``; only with ``--allow-agent-passes``, run by ``asmevo-opt`` in a separate
  process with CPU-time and memory limits.

Every answer may carry a ``"hypothesis"``.  A timeout, a crash (non-zero exit), empty or
malformed output, or an edit that does not apply is an :class:`OperatorFailure`: recorded
as a failed attempt, and the loop goes on.  An answer whose candidate was already evaluated
(a duplicate) or is identical to its parent (a no-op) is not evaluated again; the next task
says so in ``last_answer`` (which candidate, its verdict and cycles).  The agent cannot reach the scorer or the store:
it sees what the task tells it.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

from ..errors import AsmevoError
from .candidate import listing
from .operators import Operator, OperatorFailure, Proposal, register_operator

#: version 2 added ``last_answer`` and ``lineage.operators``
TASK_SCHEMA = "asmevo.evolve.task/2"
ANSWER_SCHEMA = "asmevo.evolve.answer/1"
MAX_ANSWER_BYTES = 4 << 20

KNOWLEDGE = [
    "gfx942 (MI300X) wave64; VMEM loads return in order: s_waitcnt vmcnt(N) waits until at most "
    "N vector memory operations are outstanding, so a load issued earlier needs vmcnt+1 at "
    "the waits it crosses.",
    "SMEM (s_load_*) results may return out of order: lgkmcnt must reach 0 before using any "
    "of them when several are outstanding.",
    "Hide memory latency: issue independent loads early, move independent ALU work between a "
    "load and its s_waitcnt, wait as late as the first use.",
    "s_nop N gives N+1 wait states; only hazards need them (VALU writes SGPR -> VMEM reads it, "
    "v_readlane after VALU write, MFMA results...). Extra nops only cost issue cycles.",
    "_e32 encodings are 4 bytes shorter than _e64 where operands allow (src1 a VGPR, VCC as "
    "the implicit carry/compare destination).",
    "Interleave independent accumulators to break dependence chains of v_fma/v_add; do not "
    "reassociate floating point (the verifier compares bit for bit unless the harness sets "
    "a tolerance).",
    "Fewer instructions in a loop body multiply by the trip count; loop-invariant scalar work "
    "can be hoisted out of the loop.",
    "Wider loads (global_load_dwordx2/x4) need provable alignment of the address.",
]


def _task(parent, ctx, step: int) -> dict:
    from ..ir.module import Kernel
    kern = Kernel(ctx.kernel, parent.blocks)
    rows = listing(kern)
    st = ctx.state
    k0c = st.get("k0_cycles")
    hot = []
    prof_rows = st.get("profile_rows_of", lambda h: None)(parent.hash) or []
    for w in parent.windows or []:
        hw = dict(w)
        hw["rows"] = [r for r in prof_rows if w["start"] <= r.get("index", -1) <= w["end"]]
        hot.append(hw)
    return {
        "schema": TASK_SCHEMA,
        "step": step,
        "target": "gfx942",
        "kernel": ctx.kernel,
        "k0": {"hash": st.get("k0_hash"), "cycles": k0c},
        "parent": {"hash": parent.hash, "cycles": parent.cycles,
                   "speedup_vs_k0": (k0c / parent.cycles) if k0c and parent.cycles else None,
                   "listing": rows, "hot_windows": hot},
        "last_answer": st.get("last_answer_of", lambda op: None)(AgentOperator.name),
        "lineage": st.get("lineage_summary", lambda: {})(),
        "knowledge": KNOWLEDGE,
        "scorer": st.get("scorer", {}),
        "limits": {
            "answer_schema": ANSWER_SCHEMA,
            "answer_kinds": ["window-edit", "asm", "pipeline"] + (
                ["pass-plugin"] if getattr(ctx.config, "allow_agent_passes", False) else []),
            "window_edit": "docs/passes.md format; 'from'/'to' are indices of parent.listing "
                           "(the parent's code), 'expect' is checked; a window lies in one block",
            "timeout_seconds": getattr(ctx.config, "agent_timeout", 60),
            "max_answer_bytes": MAX_ANSWER_BYTES,
            "require": getattr(ctx.config, "require", "proved"),
        },
    }


def run_agent(cmd: str, task: dict, timeout: float) -> dict:
    """Run the agent once; the parsed answer.  Raises OperatorFailure."""
    argv = shlex.split(cmd)
    try:
        p = subprocess.run(argv, input=json.dumps(task).encode(), capture_output=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        raise OperatorFailure(f"agent timeout: no answer within {timeout:g} s") from None
    except OSError as e:
        raise OperatorFailure(f"agent crashed: cannot run {argv[0]}: {e.strerror}") from None
    if p.returncode != 0:
        err = p.stderr.decode(errors="replace").strip().splitlines()[-3:]
        raise OperatorFailure(f"agent crashed: exit status {p.returncode}: {' | '.join(err)}")
    out = p.stdout[:MAX_ANSWER_BYTES + 1]
    if len(out) > MAX_ANSWER_BYTES:
        raise OperatorFailure("malformed answer: more than 4 MiB")
    try:
        ans = json.loads(out.decode(errors="replace"))
    except ValueError as e:
        raise OperatorFailure(f"malformed answer: not JSON ({e})") from None
    except RecursionError:
        raise OperatorFailure("malformed answer: JSON nested too deeply") from None
    if not isinstance(ans, dict):
        raise OperatorFailure("malformed answer: not a JSON object")
    if ans.get("schema", ANSWER_SCHEMA) != ANSWER_SCHEMA:
        raise OperatorFailure(f"malformed answer: schema {ans.get('schema')!r}, expected {ANSWER_SCHEMA}")
    if ans.get("kind") not in ("window-edit", "asm", "pipeline", "pass-plugin"):
        raise OperatorFailure(f"malformed answer: unknown kind {ans.get('kind')!r}")
    return ans


def check_agent_command(cmd: str) -> None:
    """Bad input (exit 2) when the agent command cannot be found."""
    try:
        argv = shlex.split(cmd)
    except ValueError as e:
        raise AsmevoError(f"--agent: cannot parse the command: {e}") from None
    if not argv:
        raise AsmevoError("--agent: empty command")
    exe = argv[0]
    found = shutil.which(exe) if os.sep not in exe else (exe if os.access(exe, os.X_OK) else None)
    if not found:
        raise AsmevoError(f"--agent: command not found: {exe}")


@register_operator
class AgentOperator(Operator):
    name = "agent"
    synchronous = True   # the next task must show this answer's verdict

    def propose(self, parent, rng, ctx):
        cfg = ctx.config
        task = _task(parent, ctx, ctx.state.get("step", -1))
        ans = run_agent(cfg.agent, task, cfg.agent_timeout)
        hyp = str(ans.get("hypothesis", ""))[:2000]
        kind = ans["kind"]
        try:
            blocks, edit = self._apply(kind, ans, parent, ctx)
        except (AsmevoError, KeyError, TypeError, ValueError) as e:
            raise OperatorFailure(f"answer does not apply ({kind}): {e}") from None
        return Proposal(blocks, {"kind": kind}, edit, hyp)

    def _apply(self, kind, ans, parent, ctx):
        from .operators import run_on_blocks
        if kind == "pipeline":
            p = ans["pipeline"]
            if not isinstance(p, str):
                raise ValueError("'pipeline' must be a string")
            return run_on_blocks(ctx, parent.blocks, p), {"kind": "pipeline", "pipeline": p}
        if kind == "window-edit":
            ed = ans["edit"]
            if not isinstance(ed, dict):
                raise ValueError("'edit' must be an object")
            ed = dict(ed)
            ed.setdefault("kernel", ctx.kernel)
            with tempfile.TemporaryDirectory(prefix="asmevo-agent-") as d:
                path = os.path.join(d, "edit.json")
                with open(path, "w") as f:
                    json.dump(ed, f)
                blocks = run_on_blocks(ctx, parent.blocks, f'window-edit<file="{path}">')
            return blocks, {"kind": "window-edit", "edit": ed}
        if kind == "asm":
            text = ans["asm"]
            if not isinstance(text, str):
                raise ValueError("'asm' must be a string")
            return _kernel_from_text(text, ctx), {"kind": "asm", "asm": text[:200000]}
        if kind == "pass-plugin":
            if not getattr(ctx.config, "allow_agent_passes", False):
                raise ValueError("pass plugins from the agent need --allow-agent-passes")
            return _run_plugin(ans, parent, ctx), {"kind": "pass-plugin",
                                                   "pipeline": ans.get("pipeline"),
                                                   "plugin": str(ans.get("plugin"))[:100000]}
        raise ValueError(kind)


def _kernel_from_text(text: str, ctx):
    from ..frontend.asm_parser import parse_asm
    m = parse_asm(text, "<agent answer>")
    try:
        k = m.kernel(ctx.kernel)
    except KeyError:
        ks = m.kernels
        if len(ks) != 1:
            raise ValueError(f"the assembly has no kernel {ctx.kernel}") from None
        k = ks[0]
    return k.blocks


def _run_plugin(ans, parent, ctx, cpu_seconds: int = 60, mem_bytes: int = 2 << 30):
    """Run an agent's pass plugin with asmevo-opt in a child process (CPU and memory
    limits); the resulting kernel blocks."""
    import resource
    from ..ir.printer import print_module
    from .gate import fresh_copy
    src, pipe = ans.get("plugin"), ans.get("pipeline")
    if not isinstance(src, str) or not isinstance(pipe, str):
        raise ValueError("'plugin' and 'pipeline' must be strings")

    def limits():
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))
        resource.setrlimit(resource.RLIMIT_AS, (mem_bytes, mem_bytes))

    with tempfile.TemporaryDirectory(prefix="asmevo-plugin-") as d:
        m = fresh_copy(ctx.k0, ctx.kernel, parent.blocks)
        inp, out, plug = (os.path.join(d, n) for n in ("in.s", "out.s", "plugin.py"))
        with open(inp, "w") as f:
            f.write(print_module(m))
        with open(plug, "w") as f:
            f.write(src)
        argv = [sys.executable, "-c", "import sys; from asmevo.tools.opt import main; "
                "sys.exit(main())", f"--load-pass-plugin={plug}", f"--passes={pipe}",
                "--kernel", ctx.kernel, inp, "-o", out]
        try:
            p = subprocess.run(argv, capture_output=True, timeout=cpu_seconds * 2,
                               preexec_fn=limits, cwd=d)
        except subprocess.TimeoutExpired:
            raise ValueError("the pass plugin ran out of time") from None
        if p.returncode != 0:
            raise ValueError("the pass plugin failed: " + p.stderr.decode(errors="replace")[-500:])
        with open(out) as f:
            return _kernel_from_text(f.read(), ctx)

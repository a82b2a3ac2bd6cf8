"""Run a parsed pipeline over a module: analysis caching, instrumentation, statistics.

* :class:`AnalysisManager` caches analyses per kernel and drops those a pass
  does not preserve (LLVM ``PreservedAnalyses``).  Analyses are computed by
  ``asmevo.analysis`` when present (see :data:`ANALYSES`).
* :class:`PassManager` walks the tree from :func:`asmevo.passes.pipeline.parse_pipeline`:
  ``kernel(...)`` runs its passes on every selected kernel, module passes run
  once, ``repeat<N>(...)`` loops.
* :class:`Instrumentation` implements ``--print-before/after``, ``--time-passes``,
  ``--stats`` and ``--verify-each`` (static checks after every pass that
  changed code: a pass may not add a violation that was not there before it),
  ``--print-changed`` (a kernel's IR after each pass that changed it),
  ``--print-on-crash`` (the IR after a pass that raised or failed ``--verify-each``),
  ``--debug-pass-manager`` (which pass ran on which kernel, or was skipped and why)
  and the JSON record of ``--json`` (:meth:`Instrumentation.to_json`).

Statistics are measured by the manager from the code itself (so a pass cannot
misreport them): instructions removed / added / modified in place / moved,
``s_nop`` wait states removed and added (an ``s_nop N`` gives N+1, CDNA3 ISA guide
"Manually inserted wait states"), and ``s_waitcnt`` instructions removed, added or changed.
"""

from __future__ import annotations

import bisect
import difflib
import io
import sys
import time
from collections import Counter, defaultdict
from typing import Any, Iterable

from ..errors import AsmevoError, unknown_kernel_error
from ..ir import Instruction, Kernel, Module
from ..analysis import AnalysisManager as _BaseAM
from ..analysis import _resolve
from ..ir.printer import print_kernel, print_module
from .base import PassResult
from .pipeline import Node, PassNode


class PassFailedError(AsmevoError):
    """A pass crashed or produced code that fails ``--verify-each``."""


# -- analyses ----------------------------------------------------------------

class AnalysisManager(_BaseAM):
    """The analysis helper's cache (:class:`asmevo.analysis.AnalysisManager`) plus
    what the pass manager needs.

    ``get(name_or_class, kernel)`` computes an analysis once per kernel (names
    from :data:`asmevo.analysis.ANALYSES`: ``cfg``, ``liveness``, ``waitcnt``,
    ``regbudget``, ``hazards``; or names added with :meth:`register`);
    :meth:`invalidate` takes analysis names or classes, or ``"all"``.

    Attributes:
        module: the module being optimised.
        kernel_names: names selected by ``--kernel`` (``None``: all).
    """

    def __init__(self, module: Module | None = None, kernel_names: Iterable[str] | None = None):
        super().__init__(module)
        self.kernel_names = set(kernel_names) if kernel_names is not None else None
        self._named: dict[str, type] = {}

    def selected(self, kernel: Kernel) -> bool:
        """Whether ``kernel`` is among those selected with ``--kernel``."""
        return self.kernel_names is None or kernel.name in self.kernel_names

    def register(self, name: str, cls: type) -> None:
        """Make ``get(name, kernel)`` build ``cls(kernel, manager)``."""
        self._named[name] = cls

    def _cls(self, x) -> type | None:
        if not isinstance(x, str):
            return x
        if x in self._named:
            return self._named[x]
        try:
            return _resolve(x)
        except (KeyError, ImportError, AttributeError):
            return None

    def get(self, cls, kernel):
        """The analysis ``cls`` (class or name) of ``kernel``, computed on first request.

        Raises:
            KeyError: unknown analysis name.
        """
        c = self._cls(cls)
        if c is None:
            raise KeyError(f"unknown analysis {cls!r}")
        return super().get(c, kernel)

    def invalidate(self, kernel=None, preserved=frozenset()) -> None:
        """Drop cached analyses of ``kernel`` (all if ``None``) except those in
        ``preserved`` (names or classes; ``"all"`` keeps everything)."""
        if preserved == "all":
            return
        keep = {c for c in (self._cls(p) for p in preserved) if c is not None}
        super().invalidate(kernel, frozenset(keep))


# -- statistics --------------------------------------------------------------
def nop_wait_states(insts: Iterable[Instruction]) -> int:
    """Wait states provided by ``s_nop`` instructions (``s_nop N`` gives N+1)."""
    total = 0
    for i in insts:
        if i.opcode == "s_nop":
            v = getattr(i.operands[0], "value", 0) if i.operands else 0
            total += int(v) + 1
    return total


def _lis_length(seq: list[int]) -> int:
    tails: list[int] = []
    for x in seq:
        k = bisect.bisect_left(tails, x)
        if k == len(tails):
            tails.append(x)
        else:
            tails[k] = x
    return len(tails)


def diff_stats(before: list[Instruction], after: list[Instruction]) -> Counter:
    """Compare two instruction lists (identity = untouched instruction).

    Returns counters ``removed``, ``added``, ``modified`` (an instruction replaced
    in place by a changed copy), ``moved`` (untouched instructions whose order
    changed: kept count minus the longest in-order subsequence),
    ``nop-wait-states-removed`` / ``nop-wait-states-added``, ``waitcnt-removed`` /
    ``waitcnt-added`` and ``waitcnt-changed`` (s_waitcnt rewritten with other counts).
    Every counter is >= 0: each changed stretch of code counts what it removed and what it
    added apart (``removed - added`` is the net change), so a pass that adds waits shows
    them added, not as a negative removal.
    """
    bpos = {id(x): n for n, x in enumerate(before)}
    aids = {id(x) for x in after}
    kept_positions = [bpos[id(x)] for x in after if id(x) in bpos]
    moved = len(kept_positions) - _lis_length(kept_positions)
    ta = [id(x) if id(x) in aids else ("r", n) for n, x in enumerate(before)]
    tb = [id(x) if id(x) in bpos else ("a", n) for n, x in enumerate(after)]
    removed = added = modified = wc_changed = 0
    wc_removed = wc_added = ws_removed = ws_added = 0
    sm = difflib.SequenceMatcher(None, ta, tb, autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            continue
        left = [before[i] for i in range(i1, i2) if isinstance(ta[i], tuple)]
        right = [after[j] for j in range(j1, j2) if isinstance(tb[j], tuple)]
        m = min(len(left), len(right))
        modified += m
        removed += len(left) - m
        added += len(right) - m
        wl = [x for x in left if x.opcode == "s_waitcnt"]
        wr = [y for y in right if y.opcode == "s_waitcnt"]
        wc_changed += sum(1 for x, y in zip(wl, wr) if x.key() != y.key())
        wc_removed += max(0, len(wl) - len(wr))
        wc_added += max(0, len(wr) - len(wl))
        net = nop_wait_states(left) - nop_wait_states(right)
        ws_removed += max(0, net)
        ws_added += max(0, -net)
    c = Counter()
    c["removed"] = removed
    c["added"] = added
    c["modified"] = modified
    c["moved"] = moved
    c["nop-wait-states-removed"] = ws_removed
    c["nop-wait-states-added"] = ws_added
    c["waitcnt-removed"] = wc_removed
    c["waitcnt-added"] = wc_added
    c["waitcnt-changed"] = wc_changed
    c["instructions-before"] = len(before)
    c["instructions-after"] = len(after)
    return c


#: the counters :func:`diff_stats` measures, in ``--stats`` column order
STAT_COLUMNS = ("removed", "added", "modified", "moved", "nop-wait-states-removed",
                "nop-wait-states-added", "waitcnt-removed", "waitcnt-added", "waitcnt-changed")


def _changed(before: list[Instruction], after: list[Instruction]) -> bool:
    return len(before) != len(after) or any(x is not y for x, y in zip(before, after))


# -- static checks for --verify-each -------------------------------------------
def static_violations(kernel: Kernel, am: AnalysisManager) -> list[str]:
    """Static problems of ``kernel`` as sorted message strings.

    Uses ``asmevo.verify.static`` when available; otherwise the waitcnt and
    hazard analyses' violation lists and register bounds
    (:mod:`asmevo.passes.checks`).
    """
    from . import checks
    return checks.static_violations(kernel, am)


# -- instrumentation ---------------------------------------------------------
class Instrumentation:
    """Observers around each pass run (``--print-*``, ``--time-passes``, ``--stats``,
    ``--verify-each``).  Output goes to ``out`` (stderr by default)."""

    def __init__(self, *, print_before: Iterable[str] = (), print_after: Iterable[str] = (),
                 print_before_all: bool = False, print_after_all: bool = False,
                 verify_each: bool = False, out: Any = None, print_changed: bool = False,
                 print_on_crash: bool = False, crash_out: Any = None,
                 debug_pass_manager: bool = False):
        self.print_before = set(print_before)
        self.print_after = set(print_after)
        self.print_before_all = print_before_all
        self.print_after_all = print_after_all
        self.verify_each = verify_each
        self.out = out
        self.stats: dict[str, Counter] = defaultdict(Counter)
        self.times: dict[str, float] = defaultdict(float)
        self.runs: Counter = Counter()
        self.order: list[str] = []
        self.log: list[tuple[str, str, bool]] = []  # (pass, unit name, changed)
        self.runs_log: list[dict] = []  # one record per pass run (the --json "runs")
        self.print_changed = print_changed
        self.print_on_crash = print_on_crash
        self.crash_out = crash_out
        self.debug_pass_manager = debug_pass_manager
        self.verify_log: list[dict] = []  # --verify-each results per (pass, kernel)
        self.remarks: dict[str, list[str]] = defaultdict(list)  # pass -> PassResult.remarks

    def _w(self, s: str) -> None:
        (self.out or sys.stderr).write(s)

    def dump(self, when: str, name: str, unit: Kernel | Module, header: str | None = None) -> None:
        """Write an IR dump with an MLIR-style header."""
        what = f"kernel {unit.name}" if isinstance(unit, Kernel) else "module"
        buf = io.StringIO()
        if isinstance(unit, Kernel):
            print_kernel(unit, buf)
        else:
            buf.write(print_module(unit))
        self._w(f"{header or f'; *** IR Dump {when} {name} ({what}) ***'}\n{buf.getvalue()}")

    def debug(self, msg: str) -> None:
        """A ``--debug-pass-manager`` line (as opt's ``Running pass: ...``)."""
        if self.debug_pass_manager:
            self._w(msg + "\n")

    def start(self, module: Module, selected: list[Kernel]) -> None:
        """Called once before the first pass (``--print-changed``: the IR at start;
        ``--debug-pass-manager``: the kernels that are skipped and why)."""
        chosen = {id(k) for k in selected}
        for k in module.kernels:
            if id(k) not in chosen:
                self.debug(f"Skipping kernel {k.name}: not selected by --kernel")
        if self.print_changed:
            for k in selected:
                self.dump("At Start:", "", k, header=f"; *** IR Dump At Start (kernel {k.name}) ***")

    def changed_kernel(self, name: str, kernel: Kernel) -> None:
        """Called for every kernel a run of pass ``name`` changed (``--print-changed``)."""
        if self.print_changed:
            self.dump("After", name, kernel)

    def failed(self, name: str, units: list) -> None:
        """Called when pass ``name`` raised or failed ``--verify-each`` on ``units``:
        ``--print-on-crash`` writes their IR as the pass left it (to ``crash_out``, a path,
        or stderr)."""
        self.debug(f"Pass {name} failed")
        if not self.print_on_crash:
            return
        buf = io.StringIO()
        for u in units:
            what = f"kernel {u.name}" if isinstance(u, Kernel) else "module"
            body = io.StringIO()
            if isinstance(u, Kernel):
                print_kernel(u, body)
            else:
                body.write(print_module(u))
            buf.write(f"; *** IR Dump After {name} Failed ({what}) ***\n{body.getvalue()}")
        if isinstance(self.crash_out, str):
            from ..fileio import write_output
            write_output(self.crash_out, buf.getvalue())
            self._w(f"; IR after the failing pass {name} written to {self.crash_out}\n")
        else:
            self._w(buf.getvalue())

    def before(self, name: str, unit: Any) -> None:
        """Called before a pass runs on ``unit``."""
        if self.print_before_all or name in self.print_before:
            self.dump("Before", name, unit)

    def after(self, name: str, unit: Any, changed: bool) -> None:
        """Called after a pass ran on ``unit``."""
        if self.print_after_all or name in self.print_after:
            self.dump("After", name, unit)

    def record(self, name: str, stats: Counter, seconds: float) -> None:
        """Accumulate statistics and time for pass ``name``."""
        if name not in self.stats:
            self.order.append(name)
        self.stats[name].update(stats)
        self.times[name] += seconds
        self.runs[name] += 1

    def remark(self, name: str, text: str) -> None:
        """Keep a remark of pass ``name`` (once: a ``repeat<N>`` says it once)."""
        if text not in self.remarks[name]:
            self.remarks[name].append(text)

    def stats_report(self) -> str:
        """The ``--stats`` table, one line per pass (in first-run order), plus totals."""
        cols = STAT_COLUMNS
        heads = [c.replace("nop-wait-states-", "nop-ws-") for c in cols]
        widths = [max(9, len(h) + 2) for h in heads]
        lines = ["===--- asmevo-opt statistics (instructions; s_nop wait states) ---===",
                 f"{'pass':<18}" + "".join(f"{h:>{w}}" for h, w in zip(heads, widths))]
        tot = Counter()
        for name in self.order:
            s = self.stats[name]
            tot.update({k: s[k] for k in cols})
            lines.append(f"{name:<18}" + "".join(f"{s[c]:>{w}}" for c, w in zip(cols, widths)))
            extra = {k: v for k, v in s.items() if k not in cols
                     and not k.startswith("instructions-") and v}
            for k in sorted(extra):
                lines.append(f"    {name}.{k} = {extra[k]}")
            for r in self.remarks.get(name, ()):
                lines.append(f"    {name}: {r}")
        lines.append(f"{'total':<18}" + "".join(f"{tot[c]:>{w}}" for c, w in zip(cols, widths)))
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict:
        """Statistics, timing and the run log as JSON-ready data (``asmevo-opt --json``)."""
        cols = STAT_COLUMNS
        passes = []
        for name in self.order:
            st = self.stats[name]
            passes.append({"name": name, "runs": self.runs[name],
                           "seconds": round(self.times[name], 6),
                           "stats": {**{c: st[c] for c in cols},
                                     **{k: v for k, v in sorted(st.items()) if k not in cols
                                        and not k.startswith("instructions-") and v}},
                           "remarks": list(self.remarks.get(name, ()))})
        return {"passes": passes, "total_seconds": round(sum(self.times.values()), 6),
                "runs": list(self.runs_log), "verify_each": list(self.verify_log)}

    def time_report(self) -> str:
        """The ``--time-passes`` report: wall-clock seconds per pass, largest first."""
        total = sum(self.times.values()) or 1e-9
        lines = ["===--- asmevo-opt pass execution timing report ---===",
                 f"  Total Execution Time: {total:.4f} seconds",
                 f"  {'Wall Time':>18}  {'runs':>5}  Name"]
        for name in sorted(self.times, key=lambda n: -self.times[n]):
            t = self.times[name]
            lines.append(f"  {t:9.4f} ({100 * t / total:5.1f}%)  {self.runs[name]:>5}  {name}")
        return "\n".join(lines) + "\n"


# -- the pass manager --------------------------------------------------------
class PassManager:
    """Runs a pipeline (the nodes from :func:`parse_pipeline`) over a module.

    Args:
        nodes: top-level pipeline nodes.
        kernels: names of kernels to optimise (``None``: all).
        instrumentation: observers; a fresh silent one by default.
    """

    def __init__(self, nodes: list[Node], *, kernels: Iterable[str] | None = None,
                 instrumentation: Instrumentation | None = None):
        self.nodes = nodes
        self.kernels = list(kernels) if kernels is not None else None
        self.inst = instrumentation or Instrumentation()
        self._viol: dict[int, list[str]] = {}

    def _violations(self, k: Kernel, am: AnalysisManager) -> list[str]:
        if id(k) not in self._viol:
            self._viol[id(k)] = static_violations(k, am)
        return self._viol[id(k)]

    def run(self, module: Module, am: AnalysisManager | None = None) -> AnalysisManager:
        """Run every pass; returns the analysis manager (for callers that want results).

        Raises:
            AsmevoError: ``--kernel`` names a kernel that does not exist, a pass
                rejects its options, a pass crashes (:class:`PassFailedError`),
                or ``--verify-each`` finds a new static violation.
        """
        names = [k.name for k in module.kernels]
        for k in self.kernels or ():
            if k not in names:
                raise unknown_kernel_error(k, names, module.source)
        am = am or AnalysisManager(module, self.kernels)
        if am.module is None:
            am.module = module
        self.inst.start(module, self._selected(module))
        for node in self.nodes:
            self._run_module_node(node, module, am)
        return am

    def _selected(self, module: Module) -> list[Kernel]:
        return [k for k in module.kernels if self.kernels is None or k.name in self.kernels]

    def _run_module_node(self, node: Node, module: Module, am: AnalysisManager) -> None:
        if isinstance(node, PassNode):
            if node.scope == "kernel":
                for k in self._selected(module):
                    self._run_pass(node, k, module, am)
            else:
                self._run_pass(node, module, module, am)
            return
        if node.kind == "kernel":
            for k in self._selected(module):
                for child in node.children:
                    self._run_kernel_node(child, k, module, am)
        elif node.kind == "module":
            for child in node.children:
                self._run_module_node(child, module, am)
        else:  # repeat
            for it in range(node.count):
                self.inst.debug(f"Running repeat<{node.count}> iteration {it + 1} on module")
                for child in node.children:
                    self._run_module_node(child, module, am)

    def _run_kernel_node(self, node: Node, kernel: Kernel, module: Module,
                         am: AnalysisManager) -> None:
        if isinstance(node, PassNode):
            self._run_pass(node, kernel, module, am)
        elif node.kind == "repeat":
            for it in range(node.count):
                self.inst.debug(f"Running repeat<{node.count}> iteration {it + 1} on kernel "
                                f"{kernel.name}")
                for child in node.children:
                    self._run_kernel_node(child, kernel, module, am)
        else:  # nested kernel(...) inside kernel(...)
            for child in node.children:
                self._run_kernel_node(child, kernel, module, am)

    def _run_pass(self, node: PassNode, unit: Kernel | Module, module: Module,
                  am: AnalysisManager) -> None:
        p = node.instance
        name = node.info.name
        kernels = [unit] if isinstance(unit, Kernel) else self._selected(module)
        before = {id(k): list(k.instructions()) for k in module.kernels}
        viol_before = ({k.name: self._violations(k, am) for k in kernels}
                       if self.inst.verify_each else {})
        where = f"kernel {unit.name}" if isinstance(unit, Kernel) else "module"
        self.inst.debug(f"Running pass: {name} on {where}")
        self.inst.before(name, unit)
        t0 = time.perf_counter()
        try:
            res = p.run(unit, am)
        except AsmevoError:
            self.inst.failed(name, [unit])
            raise
        except Exception as e:
            self.inst.failed(name, [unit])
            where = f"kernel {unit.name}" if isinstance(unit, Kernel) else "the module"
            raise PassFailedError(f"pass {name!r} failed on {where}: "
                                  f"{type(e).__name__}: {e}") from e
        dt = time.perf_counter() - t0
        if isinstance(res, dict):
            res = PassResult(stats=Counter(res))
        elif res is not None and not isinstance(res, PassResult):
            raise PassFailedError(f"pass {name!r} returned {type(res).__name__}; expected a "
                                  "PassResult, a dict of counters or None (docs/passes.md)")
        res = res or PassResult()
        stats = Counter()
        changed = False
        changed_kernels = []
        for k in module.kernels:
            old = before.get(id(k), [])
            new = list(k.instructions())
            if _changed(old, new) or id(k) not in before:
                changed = True
                changed_kernels.append(k)
                stats.update(diff_stats(old, new))
                am.invalidate(k, res.preserved if res.preserved is not None
                              else type(p).preserves)
        if res.changed:
            changed = True
            if isinstance(unit, Module):
                am.invalidate(None, res.preserved if res.preserved is not None
                              else type(p).preserves)
        stats.update(res.stats)
        self.inst.record(name, stats, dt)
        for r in res.remarks or ():
            self.inst.remark(name, r)
        self.inst.log.append((name, unit.name if isinstance(unit, Kernel) else "module",
                              changed))
        unit_name = unit.name if isinstance(unit, Kernel) else "module"
        self.inst.runs_log.append({"pass": name, "unit": unit_name, "changed": changed,
                                   "kernels_changed": [k.name for k in changed_kernels],
                                   "seconds": round(dt, 6),
                                   "stats": {k: v for k, v in sorted(stats.items()) if v},
                                   "remarks": list(res.remarks or ())})
        if changed:
            self.inst.debug(f"  {name} changed " + ", ".join(f"kernel {k.name}"
                                                           for k in changed_kernels)
                            if changed_kernels else f"  {name} changed the module")
        else:
            self.inst.debug(f"  {name} made no change on {where}")
        self.inst.after(name, unit, changed)
        for k in changed_kernels:
            self.inst.changed_kernel(name, k)
        if self.inst.verify_each and not changed:
            self.inst.debug(f"  --verify-each skipped after {name}: no change")
        if self.inst.verify_each and changed:
            for k in kernels:
                self._viol.pop(id(k), None)
                after_v = self._violations(k, am)
                new_v = Counter(after_v) - Counter(viol_before.get(k.name, []))
                self.inst.verify_log.append({"pass": name, "kernel": k.name,
                                             "new_violations": sorted(new_v.elements())})
                self.inst.debug(f"  --verify-each after {name} on kernel {k.name}: "
                                + (f"{sum(new_v.values())} new violation(s)" if new_v else "ok"))
                if new_v:
                    self.inst.failed(name, [k])
                    shown = "; ".join(sorted(new_v)[:5])
                    more = f" (+{sum(new_v.values()) - 5} more)" if sum(new_v.values()) > 5 \
                        else ""
                    raise PassFailedError(f"--verify-each: pass {name!r} introduced "
                                          f"{sum(new_v.values())} static violation(s) in "
                                          f"kernel {k.name}: {shown}{more}")

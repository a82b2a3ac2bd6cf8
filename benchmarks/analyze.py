"""Time of every analysis on the largest corpus kernel (target: all analyses < 5 s).

Usage: python benchmarks/analyze.py [FILE] [--runs N]

The default input is the code object under ../shared/corpus (AITer included)
whose largest kernel has the most instructions.  It is loaded once (loading is
timed separately: it runs llvm-objdump); then each run builds a fresh
:class:`asmevo.analysis.AnalysisManager` and computes CFG, liveness, waitcnt
(including ``required()`` for every ``s_waitcnt``), register budget and hazards.
The median over ``--runs`` (default 3) runs is printed per analysis, in seconds
of CPU time (``time.process_time``) and wall-clock time; the target is checked
against the slowest run (the first one, which also fills the per-instruction
facts cache).
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from asmevo.analysis import AnalysisManager  # noqa: E402
from asmevo.analysis.cfg import CFG  # noqa: E402
from asmevo.analysis.hazards import HazardAnalysis  # noqa: E402
from asmevo.analysis.liveness import Liveness  # noqa: E402
from asmevo.analysis.regbudget import RegisterBudget  # noqa: E402
from asmevo.analysis.waitcnt import WaitcntAnalysis  # noqa: E402
from asmevo.frontend.loader import load  # noqa: E402

TARGET_SECONDS = 5.0


def _largest() -> pathlib.Path:
    corpus = ROOT.parent / "shared" / "corpus"
    files = sorted(corpus.rglob("*.co")) + sorted(corpus.rglob("*.hsaco"))
    if not files:
        sys.exit("no corpus: pass a file")
    # the biggest file holds the biggest kernel in this corpus; checked after loading
    return max(files, key=lambda p: p.stat().st_size)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?", help="code object or assembly (default: largest)")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    path = pathlib.Path(args.file) if args.file else _largest()
    t0 = time.perf_counter()
    module = load(str(path))
    load_s = time.perf_counter() - t0
    kernel = max(module.kernels, key=lambda k: k.num_instructions())
    print(f"{path.name}: kernel {kernel.name}, {kernel.num_instructions()} instructions, "
          f"{len(kernel.blocks)} blocks (load {load_s:.2f} s)")
    stages = [("cfg", CFG), ("liveness", Liveness), ("waitcnt", WaitcntAnalysis),
              ("waitcnt.required", None), ("regbudget", RegisterBudget),
              ("hazards", HazardAnalysis)]
    cpu = {n: [] for n, _ in stages}
    wall = {n: [] for n, _ in stages}
    totals = []
    for _ in range(args.runs):
        am = AnalysisManager(module)
        tot = 0.0
        for name, cls in stages:
            c0, w0 = time.process_time(), time.perf_counter()
            if cls is None:
                w = am.get(WaitcntAnalysis, kernel)
                for x in w.waitcnts:
                    w.required(x)
            else:
                am.get(cls, kernel)
            c, wl = time.process_time() - c0, time.perf_counter() - w0
            cpu[name].append(c)
            wall[name].append(wl)
            tot += c
        totals.append(tot)
    for name, _ in stages:
        print(f"  {name:18s} cpu {statistics.median(cpu[name]):6.2f} s   "
              f"wall {statistics.median(wall[name]):6.2f} s")
    total = max(totals)  # the first run also fills the per-instruction facts cache
    print(f"  {'all analyses':18s} cpu {statistics.median(totals):6.2f} s median, "
          f"{total:.2f} s slowest (cold) run; target < {TARGET_SECONDS:.0f} s: "
          f"{'met' if total < TARGET_SECONDS else 'NOT met'}")
    return 0 if total < TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())

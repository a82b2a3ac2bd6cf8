"""Emulator throughput: lane-instructions per second on the largest corpus kernels.

Usage: python benchmarks/emulate.py [--top N] [--repeat R] [--corpus DIR]

"Largest" = most wave-instructions executed on the manifest launch (all corpus
entries are run once to rank them; the top N are then timed R times in each
mode, alternating, and the median time is reported).  Modes: one wave at a
time ("1-wave", asmevo.emu.launch.LOCKSTEP = False) and lockstep waves
("lockstep", the default).  A lane-instruction is one wave64 instruction issue
x 64 lanes.  The machine may be shared: compare the two columns of one run.
Kernel loading (disassembly) and closure compilation are excluded from the
timing; the numbers include launch setup (kernarg, wave initialisation).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time
import warnings

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import statistics  # noqa: E402

from asmevo.emu import harness as H  # noqa: E402
from asmevo.emu import launch as L  # noqa: E402
from asmevo.emu import run_kernel  # noqa: E402
from asmevo.emu.executor import Program  # noqa: E402
from asmevo.frontend.loader import load  # noqa: E402


def entries(corpus: pathlib.Path):
    for sub in ("", "triton"):
        p = corpus / sub / "manifest.json"
        if p.is_file():
            for e in json.load(open(p)):
                yield str(p), e["name"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--corpus", default=os.environ.get("ASMEVO_CORPUS", str(ROOT.parent / "shared" / "corpus")))
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    corpus = pathlib.Path(args.corpus)
    if not (corpus / "manifest.json").is_file():
        print(f"no corpus at {corpus}", file=sys.stderr)
        return 2
    ranked = []
    for manifest, name in entries(corpus):
        h = H.load_harness(manifest, name)
        m = load(os.path.join(h["_dir"], h["code_object"]))
        inputs = H.make_inputs(h, 0)
        r = run_kernel(m, h["kernel"], H.make_launch(h, inputs))
        ranked.append((r.instructions, name, h, m, inputs))
    ranked.sort(key=lambda t: -t[0])
    print(f"{'kernel':22s} {'waves':>6s} {'wave-inst':>10s} {'1-wave s':>9s} {'M l-i/s':>8s} "
          f"{'lockstep s':>10s} {'M l-i/s':>8s} {'speedup':>7s}")
    tot = {False: 0.0, True: 0.0}
    total_li = 0
    for n, name, h, m, inputs in ranked[:args.top]:
        times = {False: [], True: []}
        for _ in range(args.repeat):
            for mode in (False, True):
                L.LOCKSTEP = mode
                launch = H.make_launch(h, inputs)
                t0 = time.perf_counter()
                r = run_kernel(m, h["kernel"], launch)
                times[mode].append(time.perf_counter() - t0)
        L.LOCKSTEP = True
        med = {k: statistics.median(v) for k, v in times.items()}
        li = r.lane_instructions
        total_li += li
        for k in tot:
            tot[k] += med[k]
        print(f"{name:22s} {r.waves:6d} {r.instructions:10d} {med[False]:9.3f} "
              f"{li / med[False] / 1e6:8.2f} {med[True]:10.3f} {li / med[True] / 1e6:8.2f} "
              f"{med[False] / med[True]:7.2f}")
    print(f"{'(top ' + str(args.top) + ' combined)':22s} {'':6s} {'':10s} {tot[False]:9.3f} "
          f"{total_li / tot[False] / 1e6:8.2f} {tot[True]:10.3f} {total_li / tot[True] / 1e6:8.2f} "
          f"{tot[False] / tot[True]:7.2f}")
    _ = Program
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Emulator throughput: lane-instructions per second on the largest corpus kernels.

Usage: python benchmarks/emulate.py [--top N] [--repeat R] [--corpus DIR]

"Largest" = most wave-instructions executed on the manifest launch (all corpus
entries are run once to rank them; the top N are then timed R times, best
time reported).  A lane-instruction is one wave64 instruction issue x 64 lanes.
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

from asmevo.emu import harness as H  # noqa: E402
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
    ap.add_argument("--repeat", type=int, default=3)
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
    print(f"{'kernel':22s} {'waves':>6s} {'wave-inst':>10s} {'seconds':>8s} {'M lane-inst/s':>14s}")
    total_li, total_t = 0, 0.0
    for n, name, h, m, inputs in ranked[:args.top]:
        best = None
        for _ in range(args.repeat):
            launch = H.make_launch(h, inputs)
            t0 = time.perf_counter()
            r = run_kernel(m, h["kernel"], launch)
            dt = time.perf_counter() - t0
            best = dt if best is None else min(best, dt)
        total_li += r.lane_instructions
        total_t += best
        print(f"{name:22s} {r.waves:6d} {r.instructions:10d} {best:8.3f} "
              f"{r.lane_instructions / best / 1e6:14.2f}")
    print(f"{'(top ' + str(args.top) + ' combined)':22s} {'':6s} {'':10s} {total_t:8.3f} "
          f"{total_li / total_t / 1e6:14.2f}")
    _ = Program
    return 0


if __name__ == "__main__":
    sys.exit(main())

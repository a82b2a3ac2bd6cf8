"""Time to verify one corpus kernel pair at each level (static, z3, diff, all).

Usage: python benchmarks/verify.py [NAME] [--runs N] [--trials T]

NAME is a corpus manifest entry (default ``softmax_row``).  The original is the
entry's code object (``K.co``, loaded and disassembled); the candidate is the
same module with the first semantics-preserving edit (a proved peephole or a
reordering of independent instructions) that :mod:`asmevo.verify.mutate`
finds -- so the z3 layer has a real window to prove and the diff layer real
runs to compare.

For each level the median wall time of ``--runs`` runs (default 3) is printed
with the verdict, plus the time spent loading the code object.  The
differential layer uses ``--trials`` trials (default 8).
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from asmevo.frontend.loader import load  # noqa: E402
from asmevo.verify import verify  # noqa: E402
from asmevo.verify.diff import load_harness  # noqa: E402
from asmevo.verify.mutate import generate  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"


def candidate(orig):
    """The original with one preserving edit applied (see module docstring)."""
    muts = [m for m in generate(orig, changing=False) if m.kind in ("peephole", "reorder-independent")]
    if not muts:
        raise SystemExit("no semantics-preserving edit found in this kernel")
    return muts[0].module, [m.describe() for m in muts[:1]]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("name", nargs="?", default="softmax_row")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--trials", type=int, default=8)
    args = ap.parse_args()
    h = load_harness(str(CORPUS / "manifest.json"), args.name)
    t = time.perf_counter()
    orig = load(str(CORPUS / h["code_object"]))
    t_load = time.perf_counter() - t
    cand, edits = candidate(orig)
    print(f"kernel {h['kernel']} ({sum(k.num_instructions() for k in orig.kernels)} instructions); "
          f"load {t_load:.2f} s; edit: {edits[0]}")
    print(f"{'level':8s} {'median s':>9s}  verdict")
    for level in ("static", "z3", "diff", "all"):
        times, v = [], None
        for _ in range(args.runs):
            t = time.perf_counter()
            v = verify(orig, cand, harness=h if level in ("diff", "all") else None, level=level,
                       trials=args.trials)
            times.append(time.perf_counter() - t)
        print(f"{level:8s} {statistics.median(times):9.3f}  {v.status.value} "
              f"({', '.join(f'{k}={x}' for k, x in v.layers.items())})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

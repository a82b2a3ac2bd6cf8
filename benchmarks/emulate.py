"""Emulator throughput: lane- and wave-instructions per second, against a reference build.

Usage: python benchmarks/emulate.py [--kernels A,B,...] [--repeat R] [--ref DIR] [--modes]
                                    [--corpus DIR]

A *lane-instruction* is one executed instruction times the lanes active when it issued
(popcount(EXEC), scalar instructions included); a *wave-instruction* is one instruction
issued by one wave.  Both counts come from this checkout's emulator (the reference may
count lanes differently): the same work is divided by each build's time.

``--ref DIR`` (default ``$ASMEVO_REF``): the root of another copy of asmevo (e.g. the
previous commit: ``mkdir /tmp/asmevo_ref && git archive HEAD~1 asmevo isa_specs | tar -x -C
/tmp/asmevo_ref``).  Each build runs in its own worker process; runs alternate between the
two after a warm-up, and each figure is the median of R runs, so both columns of a row
see the same machine load.  ``--modes`` adds one-wave-at-a-time mode (``LOCKSTEP =
False``) of this checkout as a third column.

Kernels: corpus entries (their manifest launch and inputs, seed 0; Triton ones by name too)
and :data:`VARIANTS`
(corpus kernels on larger launches: 65,536-element vadd in 256-item workgroups, a
1,024-element-per-workgroup LDS-tree reduction, a 256-step dependent FMA loop).  The
default set covers the kinds of work of issue 16: an elementwise kernel (vadd_f32), LDS-tree
reductions with barriers (row_sum, row_max, softmax_row, layernorm, scan_inclusive_i32),
LDS tiles with ds_read2 (sgemm_tiled -O3), a long dependent FMA loop (sgemm_tiled_O0),
cross-lane (wave_reduce_dpp), atomics (histogram_atomic).  Timing covers ``run_kernel``
(launch set-up included) in CPU time of the worker process (time.process_time: steadier
than wall time on a shared machine); loading and closure compilation happen in the warm-up.

Not measured here: tinygrad's Python AMD emulator (issue 16's peer).  Its current form
(``test/mockgpu/amd/emu.py`` of the tinygrad repository) compiles instructions through
tinygrad's own UOp pipeline and needs the repository checkout and its generated ISA
tables, not just the wheel; a ``--ref`` build of asmevo is the same-run reference.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
#: corpus kernels on larger launches (issue 16's kernel kinds): base entry, grid, and the
#: arguments' new ``count`` (buffers) or ``value`` (scalars)
VARIANTS = {
    # elementwise over 65,536 floats in 256-work-item workgroups
    "vadd_64k": ("vadd_f32", [256, 1, 1], {"a": 65536, "b": 65536, "c": 65536, "n": 65536}),
    # a 1,024-element reduction per workgroup with an LDS tree and barriers
    "row_sum_1k": ("row_sum", [8, 1, 1], {"x": 8 * 1024, "cols": 1024}),
    # a 256-step dependent FMA loop per work item
    "sgemm_naive_k256": ("sgemm_naive", [1, 4, 1], {"A": 32 * 256, "B": 256 * 32, "K": 256}),
}
DEFAULT = ("vadd_64k,row_sum_1k,sgemm_naive_k256,vadd_f32,row_sum,row_max,softmax_row,layernorm,"
           "scan_inclusive_i32,transpose_lds,sgemm_tiled,sgemm_tiled_O0,wave_reduce_dpp,"
           "histogram_atomic,conv2d_3x3,matvec")


def harness(man, name):
    """The harness of corpus entry ``name`` or of a :data:`VARIANTS` entry."""
    from asmevo.emu import harness as H
    if name not in VARIANTS:
        return H.load_harness(man, name)
    base, grid, over = VARIANTS[name]
    h = H.load_harness(man, base)
    h["grid"] = list(grid)
    for a in h["args"]:
        if a["name"] in over:
            a["count" if a["kind"] == "buffer" else "value"] = over[a["name"]]
    return h


def worker(root: str, corpus: str) -> None:
    """Serve ``run NAME LOCKSTEP`` lines: print ``seconds instructions lanes`` (lanes -1
    when this build does not count them honestly)."""
    sys.path.insert(0, root)
    import time
    import warnings
    warnings.simplefilter("ignore")
    from asmevo.emu import harness as H
    from asmevo.emu import launch as L
    from asmevo.emu import run_kernel
    from asmevo.frontend.loader import load
    cache = {}
    man = os.path.join(corpus, "manifest.json")
    tri = os.path.join(corpus, "triton", "manifest.json")
    tri_names = {e["name"] for e in json.load(open(tri))} if os.path.isfile(tri) else set()
    honest = "popcount" in (L.RunResult.__doc__ or "")
    for line in sys.stdin:
        _, name, ls = line.split()
        if name not in cache:
            h = harness(tri if name in tri_names else man, name)
            m = load(os.path.join(h["_dir"], h["code_object"]))
            cache[name] = (h, m, H.make_inputs(h, 0))
        h, m, inputs = cache[name]
        L.LOCKSTEP = ls == "1"
        launch = H.make_launch(h, inputs)
        t0 = time.process_time()
        r = run_kernel(m, h["kernel"], launch)
        dt = time.process_time() - t0
        L.LOCKSTEP = True
        print(dt, r.instructions, r.lane_instructions if honest else -1, flush=True)


class Worker:
    def __init__(self, root, corpus):
        self.p = subprocess.Popen([sys.executable, __file__, "--worker", str(root), "--corpus",
                                   str(corpus)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True)

    def run(self, name, lockstep=True):
        self.p.stdin.write(f"run {name} {int(lockstep)}\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError(f"worker failed on {name}")
        t, n, ln = line.split()
        return float(t), int(n), int(ln)

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", default=DEFAULT)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--ref", default=os.environ.get("ASMEVO_REF"))
    ap.add_argument("--modes", action="store_true")
    ap.add_argument("--corpus", default=os.environ.get("ASMEVO_CORPUS",
                                                       str(ROOT.parent / "shared" / "corpus")))
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, args.corpus)
        return 0
    corpus = pathlib.Path(args.corpus)
    if not (corpus / "manifest.json").is_file():
        print(f"no corpus at {corpus}", file=sys.stderr)
        return 2
    names = [n for n in args.kernels.split(",") if n]
    known = {e["name"] for e in json.load(open(corpus / "manifest.json"))} | set(VARIANTS)
    if (corpus / "triton" / "manifest.json").is_file():
        known |= {e["name"] for e in json.load(open(corpus / "triton" / "manifest.json"))}
    names = [n for n in names if n in known]
    cols = [("new", Worker(ROOT, corpus), True)]
    if args.ref:
        cols.append(("ref", Worker(args.ref, corpus), True))
    if args.modes:
        cols.append(("1-wave", cols[0][1], False))
    head = f"{'kernel':20s} {'wave-inst':>9s} {'lane-inst':>10s} {'lanes/inst':>10s}"
    for c, _, _ in cols:
        head += f" | {c + ' ms':>9s} {'M lane/s':>8s} {'M wave/s':>8s}"
    if len(cols) > 1:
        head += " | " + " ".join(f"{'new/' + c:>9s}" for c, _, _ in cols[1:])
    print(head)
    tot = {c: 0.0 for c, _, _ in cols}
    tot_ln = tot_n = 0
    for name in names:
        times = {c: [] for c, _, _ in cols}
        n = ln = None
        for rep in range(args.repeat + 1):          # the first round is the warm-up
            order = cols if rep % 2 == 0 else cols[::-1]
            for c, w, ls in order:
                t, n_, ln_ = w.run(name, ls)
                if c == "new":
                    n, ln = n_, ln_
                if rep:
                    times[c].append(t)
        med = {c: statistics.median(v) for c, v in times.items()}
        tot_ln += ln
        tot_n += n
        row = f"{name:20s} {n:9d} {ln:10d} {ln / n:10.1f}"
        for c, _, _ in cols:
            tot[c] += med[c]
            row += f" | {med[c] * 1e3:9.2f} {ln / med[c] / 1e6:8.2f} {n / med[c] / 1e6:8.3f}"
        if len(cols) > 1:
            row += " | " + " ".join(f"{med[c] / med['new']:9.2f}" for c, _, _ in cols[1:])
        print(row, flush=True)
    row = f"{'(all, summed)':20s} {tot_n:9d} {tot_ln:10d} {tot_ln / tot_n:10.1f}"
    for c, _, _ in cols:
        row += f" | {tot[c] * 1e3:9.2f} {tot_ln / tot[c] / 1e6:8.2f} {tot_n / tot[c] / 1e6:8.3f}"
    if len(cols) > 1:
        row += " | " + " ".join(f"{tot[c] / tot['new']:9.2f}" for c, _, _ in cols[1:])
    print(row)
    for _, w, _ in cols:
        if w.p.poll() is None:
            w.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``asmevo evolve`` on the corpus: estimated speed-up per kernel, the geomean, and throughput.

Usage: python benchmarks/evolve.py [NAME ...] [--budget 300] [--seed 0] [--jobs 1]
                                   [--out DIR] [--time-per-kernel 30m]

Runs the loop with the built-in operators only (no agent) on every -O3 clang kernel of
``../shared/corpus/manifest.json`` and every Triton kernel of
``../shared/corpus/triton/manifest.json`` (or only the NAMEs given), each with
``--budget 300 --seed 0``.  Prints per kernel the estimated speed-up of the winner (which
passed the final check; the timing model's estimate, not a measurement), candidates
evaluated, wall time and candidates per minute, then the geometric mean of the speed-ups
(target >= 1.15x) and the rate on softmax_row (target >= 60/min).  Any kernel that ends
slower than K0 is flagged (it cannot: K0 is the fallback winner).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from asmevo.evolve.config import load_config  # noqa: E402
from asmevo.evolve.loop import run_evolve  # noqa: E402


def _cpu() -> float:
    """CPU seconds of this process and its reaped children (the worker pool)."""
    import resource
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def corpus() -> pathlib.Path:
    c = os.environ.get("ASMEVO_CORPUS")
    return pathlib.Path(c) if c else ROOT.parent / "shared" / "corpus"


def entries(root: pathlib.Path) -> list[tuple[pathlib.Path, dict]]:
    out = []
    man = root / "manifest.json"
    for e in json.loads(man.read_text()):
        if e.get("opt") == "-O3":
            out.append((man, e))
    tman = root / "triton" / "manifest.json"
    if tman.exists():
        out += [(tman, e) for e in json.loads(tman.read_text())]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--budget", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", help="keep the run directories here (default: a temporary directory)")
    ap.add_argument("--time-per-kernel", default=None, help="wall-clock limit per kernel (e.g. 10m)")
    ap.add_argument("--json", help="also write the results as JSON to this file")
    a = ap.parse_args()
    root = corpus()
    if not (root / "manifest.json").exists():
        print(f"corpus not found at {root} (set ASMEVO_CORPUS)", file=sys.stderr)
        return 2
    todo = [(m, e) for m, e in entries(root) if not a.names or e["name"] in a.names]
    base = pathlib.Path(a.out or tempfile.mkdtemp(prefix="asmevo-bench-evolve-"))
    rows = []
    print("cycles and speed-ups: estimates of asmevo's timing model (asmevo-cu), not "
          "measurements; s and /min: wall time of this machine", flush=True)
    print(f"{'kernel':24s} {'K0 cyc':>9s} {'best cyc':>9s} {'speed-up':>9s} {'cands':>6s} "
          f"{'s':>6s} {'/min':>6s}  final check", flush=True)
    for man, e in todo:
        run_dir = base / e["name"]
        cfg = load_config(None, {
            "kernel_file": str(man.parent / e["code_object"]), "harness": str(man),
            "entry": e["name"], "out": str(run_dir), "budget": a.budget, "seed": a.seed,
            "jobs": a.jobs, "quiet": True, "time": a.time_per_kernel,
            "resume": run_dir.exists()})
        t = time.time()
        cpu0 = _cpu()
        try:
            res = run_evolve(cfg)
        except Exception as ex:  # one kernel's failure is a row, not the end of the benchmark
            print(f"{e['name']:24s} FAILED: {type(ex).__name__}: {ex}", flush=True)
            rows.append({"kernel": e["name"], "error": str(ex)})
            continue
        rep = res.report
        dt = time.time() - t
        cpu = _cpu() - cpu0
        r = {"kernel": e["name"], "k0_cycles": rep["k0_cycles"], "best_cycles": rep["best_cycles"],
             "speedup": rep["speedup_estimated"], "evaluated": rep["evaluated"], "seconds": dt,
             "per_minute": rep["candidates_per_minute"],
             "final": rep["final_check"]["verdict"]["status"], "cpu_seconds": cpu,
             "cpu_per_candidate": cpu / max(1, rep["evaluated"])}
        rows.append(r)
        flag = "  SLOWER THAN K0" if r["speedup"] < 1.0 else ""
        print(f"{r['kernel']:24s} {r['k0_cycles']:9.0f} {r['best_cycles']:9.0f} "
              f"{r['speedup']:8.3f}x {r['evaluated']:6d} {dt:6.0f} {r['per_minute']:6.1f}  "
              f"{r['final']}  cpu {r['cpu_per_candidate']:.2f} s/cand{flag}", flush=True)
    ok = [r for r in rows if "speedup" in r]
    if ok:
        g = math.exp(sum(math.log(r["speedup"]) for r in ok) / len(ok))
        print(f"\ngeomean estimated speed-up over {len(ok)} kernels: {g:.3f}x (target >= 1.15x)")
        sm = [r for r in ok if r["kernel"] == "softmax_row"]
        if sm:
            cpm = 60.0 / sm[0]["cpu_per_candidate"] * min(a.jobs, os.cpu_count() or 1)
            print(f"softmax_row: {sm[0]['per_minute']:.1f} candidates/min measured (target >= 60/min, "
                  f"--jobs {a.jobs}, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores); "
                  f"{sm[0]['cpu_per_candidate']:.2f} CPU s per candidate = {cpm:.0f}/min on "
                  f"{min(a.jobs, os.cpu_count() or 1)} idle core(s)")
        failed = [r["kernel"] for r in rows if "error" in r]
        if failed:
            print(f"failed: {', '.join(failed)}")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(rows, indent=1))
    return 0 if ok and len(ok) == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())

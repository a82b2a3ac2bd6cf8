"""Speed of ``asmevo profile`` (issue 10): medians over several runs.

Usage: python benchmarks/profile.py [--runs N] [--entry NAME] [--static-file FILE]

1. **Dynamic profile vs plain run** (target: ratio <= 3): the corpus kernel with a harness
   whose code is largest (clang and Triton manifests; or ``--entry``), loaded once; then
   ``--runs`` times each, in this process: the plain emulator run
   (``asmevo.emu.run_kernel``, what ``asmevo run`` does after loading) and the profile
   (``asmevo.perf.estimate`` with the same launch: traced run + CU model + windows).
   Prints both medians and the ratio.
2. **Static profile** (target: <= 3 s): the largest AITer kernel (about 33,000
   instructions), loaded once (loading, which runs llvm-objdump, is printed apart);
   the first estimate (cold: fills the per-instruction facts cache, computes the CFG and
   register budget) and the median of the next runs, each with a fresh analysis manager.
   Also the end-to-end ``asmevo profile --static --json`` command (a new process: Python
   start-up, load and estimate), median wall-clock.

Seconds of CPU time (``time.process_time``; for the end-to-end command, the child's user +
system time) and of wall-clock time (``time.perf_counter``) are both printed; the targets are
checked on CPU time, because this machine's 2 cores are shared by other jobs and wall-clock
time there measures the load as much as the code.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from asmevo.frontend.loader import load  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"
DYNAMIC_TARGET = 3.0
STATIC_TARGET = 3.0


def _entries() -> list[tuple[pathlib.Path, dict]]:
    out = []
    for man in (CORPUS / "manifest.json", CORPUS / "triton" / "manifest.json"):
        if man.is_file():
            for e in json.loads(man.read_text()):
                out.append((man, e))
    return out


def largest_entry(name: str | None = None):
    """``(manifest path, entry, module)`` of the largest kernel with a harness."""
    best = None
    for man, e in _entries():
        if name is not None and e["name"] != name:
            continue
        m = load(str(man.parent / e["code_object"]))
        n = m.kernel(e["kernel"]).num_instructions()
        if best is None or n > best[0]:
            best = (n, man, e, m)
    if best is None:
        raise SystemExit(f"no manifest entry {name!r}")
    return best[1], best[2], best[3]


def largest_aiter() -> pathlib.Path:
    """The AITer code object with the largest kernel (by size of the file's code)."""
    files = sorted((CORPUS / "aiter").rglob("*.co"))
    return max(files, key=lambda p: p.stat().st_size)


def _times(fn, runs: int) -> tuple[list[float], list[float]]:
    """(CPU seconds, wall seconds) of ``runs`` calls of ``fn``."""
    cpu, wall = [], []
    for _ in range(runs):
        c, w = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    return cpu, wall


def _med(x) -> float:
    return statistics.median(x)


def bench_dynamic(runs: int, entry: str | None) -> float:
    from asmevo.emu import harness as H
    from asmevo.emu import run_kernel
    from asmevo.perf import estimate
    man, e, m = largest_entry(entry)
    h = H.load_harness(str(man), e["name"])
    name = e["kernel"]

    def plain():
        run_kernel(m, name, H.make_launch(h, H.make_inputs(h, 0)))

    def prof():
        estimate(m, name, H.make_launch(h, H.make_inputs(h, 0)))

    plain()  # warm the facts/semantics caches for both
    cp, wp = _times(plain, runs)
    cq, wq = _times(prof, runs)
    ratio = _med(cq) / _med(cp) if _med(cp) > 0 else float("inf")
    k = m.kernel(name)
    print(f"dynamic: {e['name']} ({k.num_instructions()} instructions, grid {e['grid']} x "
          f"block {e['block']}): asmevo run {_med(cp):.3f} s CPU ({_med(wp):.3f} s wall), "
          f"profile {_med(cq):.3f} s CPU ({_med(wq):.3f} s wall), medians of {runs}; "
          f"ratio {ratio:.2f} CPU, {_med(wq) / max(_med(wp), 1e-9):.2f} wall "
          f"(target <= {DYNAMIC_TARGET})")
    return ratio


def bench_static(runs: int, path: pathlib.Path | None) -> float:
    from asmevo.analysis import AnalysisManager
    from asmevo.perf.static import estimate_static
    path = path or largest_aiter()
    t = time.perf_counter()
    m = load(str(path))
    t_load = time.perf_counter() - t
    k = max((k for k in m.kernels if k.is_kernel), key=lambda k: k.num_instructions())
    (cold_c,), (cold_w,) = _times(lambda: estimate_static(m, k, manager=AnalysisManager(m),
                                                          top=10), 1)
    wc, ww = _times(lambda: estimate_static(m, k, manager=AnalysisManager(m), top=10),
                    max(1, runs))
    import resource
    cmd = [sys.executable, "-m", "asmevo.cli", "profile", str(path), "--static", "--json"]
    ec, ew = [], []
    for _ in range(max(1, runs)):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=str(ROOT))
        ew.append(time.perf_counter() - t)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        ec.append((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime))
    print(f"static: {path.name} ({k.num_instructions()} instructions): load {t_load:.2f} s wall; "
          f"estimate cold {cold_c:.2f} s CPU ({cold_w:.2f} s wall), warm {_med(wc):.2f} s CPU "
          f"({_med(ww):.2f} s wall, median of {len(wc)}) (target <= {STATIC_TARGET} s); "
          f"end to end `asmevo profile --static --json` {_med(ec):.2f} s CPU "
          f"({_med(ew):.2f} s wall, median of {len(ec)}; Python start-up, load with "
          f"llvm-objdump, estimate, JSON)")
    return cold_c


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--entry", help="manifest entry for the dynamic benchmark (default: largest)")
    ap.add_argument("--static-file", help="code object for the static benchmark")
    ap.add_argument("--skip-dynamic", action="store_true")
    a = ap.parse_args(argv)
    ok = True
    if not a.skip_dynamic:
        try:
            ok &= bench_dynamic(a.runs, a.entry) <= DYNAMIC_TARGET
        except ImportError as e:
            print(f"dynamic: the trace-driven model is not available ({e})")
    ok &= bench_static(a.runs, pathlib.Path(a.static_file) if a.static_file else None) <= STATIC_TARGET
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""Calibration of the CU timing model against the published MI300X figures.

Usage: python benchmarks/timing_calibration.py [--quick] [--machine FILE] [--json]

Runs the microbenchmark kernels of :mod:`asmevo.perf.calibration` (gfx942 assembly
generated as text, run by the emulator with a trace and replayed on one modelled CU) and
prints, for each figure, the model's value, the published value of
``../shared/research/TIMING_FACTS.md`` and their ratio (the tests hold it within 15%),
then the memory-bound loop at 1..8 waves per SIMD (bytes/clk of one CU with all 304 CUs
busy).  Every model figure is an ESTIMATE OF THE MODEL, not a measurement: there is no
AMD GPU here.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
import warnings

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from asmevo.perf.calibration import occupancy_scaling, run_all  # noqa: E402
from asmevo.perf.machine import load_machine  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (same figures)")
    ap.add_argument("--machine", help="machine description TOML (default: built-in MI300X)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    m = load_machine(args.machine)
    t0 = time.perf_counter()
    figs = run_all(m, quick=args.quick)
    scal = occupancy_scaling(m)
    dt = time.perf_counter() - t0
    hbm = float(m["bw.hbm_bytes_per_clk"]) / int(m["cus"])
    if args.json:
        print(json.dumps({"machine": m.name, "estimated": True, "seconds": dt,
                          "figures": [dict(name=f.name, model=f.value, published=f.published,
                                           unit=f.unit, ratio=f.ratio, source=f.source,
                                           checked=f.check) for f in figs],
                          "occupancy_scaling": [dict(waves_per_simd=w, bytes_per_clk=b)
                                                for w, b in scal],
                          "hbm_share_bytes_per_clk": hbm}, indent=1))
        return 0
    print(f"CU model calibration on {m.name} -- model ESTIMATES vs published figures "
          f"(TIMING_FACTS.md)")
    print(f"{'figure':48s} {'model':>10s} {'published':>10s} {'ratio':>7s}  unit")
    bad = 0
    for f in figs:
        r = f.ratio
        flag = "" if r is None or not f.check or abs(r - 1) <= 0.15 else "  <-- outside 15%"
        bad += bool(flag)
        pub = f"{f.published:10.1f}" if f.published is not None else f"{'n/a':>10s}"
        print(f"{f.name:48s} {f.value:10.1f} {pub} {(f'{r:7.3f}' if r else '    n/a')}  {f.unit}{flag}")
    print()
    print(f"memory-bound loop (one 512-B load per iteration per wave, waited for), all CUs busy:")
    print(f"{'waves/SIMD':>10s} {'B/clk/CU':>9s} {'x 1 wave':>8s}")
    for w, b in scal:
        print(f"{w:10d} {b:9.2f} {b / scal[0][1]:8.2f}")
    top = scal[-1][1]
    print(f"{'HBM share per CU (5.3 TB/s / 304 / 2.1 GHz)':48s} {top:10.2f} {hbm:10.2f} "
          f"{top / hbm:7.3f}  B/clk/CU")
    print(f"\n{len(figs)} figures, {bad} outside 15%; {dt:.1f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

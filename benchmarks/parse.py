"""Parser throughput on the largest corpus kernel, compared with llvm-mc on the same text.

Usage: python benchmarks/parse.py [CODE_OBJECT] [--runs N]

The default input is the largest code object under ../shared/corpus/aiter/gfx942.
Its ``llvm-objdump -d --mcpu=gfx942`` listing is turned into assembly source
(function and label headers become labels, the ``// addr: bytes`` comments are
dropped), then:

* asmevo: ``parse_asm`` of that text into typed IR, with the per-line memo
  cache cleared before every run (the Lark parser itself is built once per
  process and cached on disk; its build time is printed separately);
* llvm-mc: ``llvm-mc -triple=amdgcn-amd-amdhsa -mcpu=gfx942 -filetype=obj`` of
  the same text, written to /dev/null.

Each is run ``--runs`` times (default 5); the medians are printed in
instructions/second together with the ratio, both for wall-clock time and for
CPU time (``time.process_time`` for asmevo, ``RUSAGE_CHILDREN`` user+system time
for llvm-mc), since wall-clock numbers on a shared 2-core machine swing with load.
"""

from __future__ import annotations

import argparse
import pathlib
import re
import resource
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from asmevo.frontend import asm_parser  # noqa: E402
from asmevo.llvm import MCPU, TRIPLE, find_tool  # noqa: E402

_HEADER = re.compile(r"^[0-9a-fA-F]+ <(.+)>:$")
_ADDR_COMMENT = re.compile(r"\s*//\s*[0-9a-fA-F]+:.*$")


def default_input() -> pathlib.Path:
    """The largest ``*.co`` in the AITer part of the shared corpus."""
    base = ROOT.parent / "shared" / "corpus" / "aiter" / "gfx942"
    cos = sorted(base.rglob("*.co"), key=lambda p: p.stat().st_size)
    if not cos:
        raise SystemExit(f"no code objects under {base}")
    return cos[-1]


def listing_to_source(listing: str) -> tuple[str, int]:
    """Turn an llvm-objdump listing into assembly source; return (text, instruction count)."""
    out = ["\t.text"]
    first = True
    n = 0
    for line in listing.splitlines():
        m = _HEADER.match(line)
        if m:
            name = m.group(1)
            if first:
                out += [f"\t.globl\t{name}", "\t.p2align\t8", f"\t.type\t{name},@function"]
                first = False
            out.append(f"{name}:")
        elif line.startswith("\t"):
            out.append(_ADDR_COMMENT.sub("", line))
            n += 1
    return "\n".join(out) + "\n", n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("code_object", nargs="?", type=pathlib.Path)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    co = args.code_object or default_input()
    listing = subprocess.run([find_tool("llvm-objdump"), "-d", f"--mcpu={MCPU}", str(co)],
                             capture_output=True, text=True, check=True).stdout
    text, n_listed = listing_to_source(listing)

    t0 = time.perf_counter()
    asm_parser._parser()
    t_build = time.perf_counter() - t0

    times, cpu = [], []
    n_inst = 0
    for _ in range(args.runs):
        asm_parser._LINE_CACHE.clear()
        t0, c0 = time.perf_counter(), time.process_time()
        m = asm_parser.parse_asm(text, str(co))
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        n_inst = sum(k.num_instructions() for k in m.kernels)
    assert n_inst == n_listed, (n_inst, n_listed)
    t_parse, c_parse = statistics.median(times), statistics.median(cpu)

    mc = find_tool("llvm-mc")
    mc_times, mc_cpu = [], []
    for _ in range(args.runs):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([mc, f"-triple={TRIPLE}", f"-mcpu={MCPU}", "-filetype=obj", "-o",
                        "/dev/null"], input=text.encode(), check=True)
        mc_times.append(time.perf_counter() - t0)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        mc_cpu.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    t_mc, c_mc = statistics.median(mc_times), statistics.median(mc_cpu)

    lines = sorted({l for l in text.splitlines() if l.startswith("\t")})
    distinct = len(lines)
    asm_parser._LINE_CACHE.clear()
    t0 = time.perf_counter()
    for line in lines:
        asm_parser.parse_line(line)
    t_lark = time.perf_counter() - t0
    print(f"input: {co} ({n_inst} instructions, {distinct} distinct instruction lines)")
    print(f"lark parser build (once per process, disk-cached): {t_build * 1e3:.1f} ms")
    print(f"asmevo parse_asm (cold line cache), median of {args.runs}: {t_parse * 1e3:.1f} ms "
          f"= {n_inst / t_parse:,.0f} instructions/s")
    print(f"  of which Lark on the distinct lines: {t_lark * 1e3:.1f} ms "
          f"= {distinct / t_lark:,.0f} lines/s without memoisation")
    print(f"llvm-mc -filetype=obj, median of {args.runs}: {t_mc * 1e3:.1f} ms "
          f"= {n_inst / t_mc:,.0f} instructions/s")
    print(f"ratio asmevo/llvm-mc wall time: {t_parse / t_mc:.2f}")
    print(f"CPU time: asmevo {c_parse * 1e3:.1f} ms = {n_inst / c_parse:,.0f} instructions/s; "
          f"llvm-mc {c_mc * 1e3:.1f} ms = {n_inst / c_mc:,.0f} instructions/s; "
          f"ratio {c_parse / c_mc:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

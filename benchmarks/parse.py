"""Parser throughput on the largest corpus kernel, compared with llvm-mc on the same text.

Usage: python benchmarks/parse.py [CODE_OBJECT] [--runs N]

The default input is the largest code object under ../shared/corpus/aiter/gfx942.
Its ``llvm-objdump -d --mcpu=gfx942`` listing is turned into assembly source
(function and label headers become labels, the ``// addr: bytes`` comments are
dropped), then:

* asmevo: ``parse_asm`` of that text into typed IR, with the per-line memo
  cache cleared before every run (instruction lines go through the parser's fast
  path; the Lark parser, for labels and directives, is built once per process and
  cached on disk; its import and build time is printed separately);
* llvm-mc: ``llvm-mc -triple=amdgcn-amd-amdhsa -mcpu=gfx942 -filetype=obj`` of
  the same text, written to /dev/null.

Each is run ``--runs`` times (default 5); the medians are printed in
instructions/second together with the ratio, both for wall-clock time and for
CPU time (``time.process_time`` for asmevo, ``RUSAGE_CHILDREN`` user+system time
for llvm-mc), since wall-clock numbers on a shared 2-core machine swing with load.

End to end (issue 16), the same code object, runs alternating, medians of ``--runs``:

* ``python -m asmevo dis CO -o K.s`` and ``python -m asmevo asm K.s -o K.co`` as commands, as a
  user runs them (a new Python process each, LLVM tools included: the llvm-objdump listing,
  the llvm-mc re-assembly check of the disassembly, llvm-mc + ld.lld), against
  ``llvm-objdump -d --mcpu=gfx942 CO`` and
  ``llvm-mc -filetype=obj K.s`` + ``ld.lld -shared`` (the LLVM tools' own time for the same
  work).  CPU time is user+system of the process and all its children (``RUSAGE_CHILDREN``).
  The commands run with Python's bytecode cache in a temporary directory
  (``PYTHONPYCACHEPREFIX``; ``PYTHONDONTWRITEBYTECODE`` dropped), as an installed package has
  its ``.pyc`` files; without them every start re-compiles asmevo's modules.
* in process (the optimisation loop's view, no interpreter start): ``disassemble`` +
  ``print_module`` with a cold line cache, and ``assemble_bytes`` of the text;
* ``python -c pass`` in the same environment: the interpreter's start-up (site and its
  ``.pth`` files included), which each of the two commands pays before any asmevo code.

The ratio (dis + asm) / (llvm-objdump + llvm-mc + ld.lld) is printed against the target of
issue 16 (at most 2x), with dis / llvm-objdump and asm / (llvm-mc + ld.lld) beside it and the
load average before and after (the machine is shared: nice the run, read CPU and wall).  ``--ref DIR`` (another copy of asmevo, e.g. ``git archive HEAD~3
asmevo isa_specs | tar -x -C DIR``) adds its ``dis``/``asm`` commands to the same
alternating runs (a before/after in one run).
"""

from __future__ import annotations

import argparse
import pathlib
import re
import resource
import statistics
import os
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from asmevo.frontend import asm_parser  # noqa: E402
from asmevo.llvm import MCPU, TRIPLE, find_tool  # noqa: E402

_HEADER = re.compile(r"^[0-9a-fA-F]+ <(.+)>:$")
_ADDR_COMMENT = re.compile(r"\s*//\s*[0-9a-fA-F]+:.*$")


def default_input() -> pathlib.Path:
    """The largest ``*.co`` in the AITer part of the shared corpus (``$ASMEVO_CORPUS`` or
    ``../shared/corpus``)."""
    import os
    corpus = os.environ.get("ASMEVO_CORPUS")
    base = (pathlib.Path(corpus) if corpus else ROOT.parent / "shared" / "corpus") / "aiter" / "gfx942"
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
    sys.path.insert(0, str(ROOT))
    from asmevo.tools.run import positive_int
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0] + "  Then, end to end (issue 16): the asmevo dis "
        "and asmevo asm commands against llvm-objdump and llvm-mc + ld.lld on that code object.",
        epilog="Times are medians of --runs alternating runs, in ms of CPU time (user+system, "
               "tools included) and of wall time; a ratio is asmevo's time over LLVM's (below "
               "1: asmevo faster).  The issue 16 target: (asmevo dis + asmevo asm) / "
               "(llvm-objdump + llvm-mc + ld.lld) <= 2.00x; it is printed for the commands and "
               "for the in-process API, in CPU and in wall time.  The module docstring "
               "(benchmarks/parse.py) has the details.")
    ap.add_argument("code_object", nargs="?", type=pathlib.Path,
                    help="the code object to measure (default: the largest .co under "
                         "$ASMEVO_CORPUS/aiter/gfx942, else ../shared/corpus/aiter/gfx942)")
    ap.add_argument("--runs", type=positive_int, default=5,
                    help="runs of each measurement; medians are printed (default 5)")
    only = ap.add_mutually_exclusive_group()
    only.add_argument("--no-e2e", action="store_true", help="only the parser figures")
    only.add_argument("--e2e-only", action="store_true", help="only the end-to-end figures")
    ap.add_argument("--ref", help="another asmevo checkout whose dis/asm join the end-to-end runs")
    args = ap.parse_args(argv)
    if args.ref and not (pathlib.Path(args.ref) / "asmevo" / "__init__.py").is_file():
        # (else 'python -m asmevo' finds the installed asmevo and 'ref' times this one)
        ap.error(f"--ref {args.ref}: no asmevo package there (asmevo/__init__.py); expected the "
                 "root of another copy of asmevo")
    if args.code_object is not None and not args.code_object.is_file():
        ap.error(f"{args.code_object}: no such file")
    if args.code_object is not None and args.code_object.read_bytes()[:4] != b"\x7fELF":
        ap.error(f"{args.code_object}: not a code object (ELF)")
    if not args.e2e_only:
        parser_figures(args)
    if not args.no_e2e:
        end_to_end(args.code_object or default_input(), args.runs, args.ref)
    return 0


def _instruction_lines(text: str) -> int:
    """Instructions in ``asmevo dis`` text: tab-indented lines that are not directives (the
    ``.amdhsa_kernel`` block's fields are indented by two tabs) nor comments."""
    n = 0
    for ln in text.splitlines():
        if ln.startswith("\t"):
            body = ln.lstrip()
            if body and not body.startswith((".", ";", "//")):
                n += 1
    return n


def _child_cpu(argv, **kw) -> tuple[float, float]:
    """Run ``argv``; return (wall seconds, user+system CPU seconds of it and its children)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, **kw)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime


def _self_cpu(fn) -> tuple[float, float]:
    """Call ``fn()`` in this process; (wall, CPU of this process and of the tools it ran)."""
    s0 = resource.getrusage(resource.RUSAGE_SELF)
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    fn()
    wall = time.perf_counter() - t0
    s1 = resource.getrusage(resource.RUSAGE_SELF)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (s1.ru_utime - s0.ru_utime + s1.ru_stime - s0.ru_stime
                  + r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)


def end_to_end(co: pathlib.Path, runs: int, ref: str | None = None) -> None:
    """``asmevo dis`` / ``asmevo asm`` against llvm-objdump / llvm-mc + ld.lld (see the
    module docstring); prints medians and the ratio against issue 16's 2x target."""
    from asmevo.backend.assemble import find_linker

    objdump, mc, lld = find_tool("llvm-objdump"), find_tool("llvm-mc"), find_linker()
    tmp = tempfile.mkdtemp(prefix="asmevo-bench-")
    try:
        _end_to_end(co, runs, ref, tmp, objdump, mc, lld)
    finally:
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)


def _end_to_end(co, runs, ref, tmp, objdump, mc, lld) -> None:
    from asmevo.backend.assemble import assemble_bytes, mc_args
    from asmevo.frontend.disasm import disassemble
    from asmevo.ir.printer import print_module

    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = os.path.join(tmp, "pyc")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    s_path, co_path = os.path.join(tmp, "k.s"), os.path.join(tmp, "k.co")
    obj, linked = os.path.join(tmp, "mc.o"), os.path.join(tmp, "mc.co")
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    py = [sys.executable, "-m", "asmevo"]
    # cwd: the temporary directory, so that ``-m`` finds asmevo through PYTHONPATH only
    subprocess.run(py + ["dis", str(co), "-o", s_path], env=env, check=True, cwd=tmp,
                   **quiet)  # warm-up
    text = open(s_path).read()
    n_inst = _instruction_lines(text)

    def cli_dis():
        return _child_cpu(py + ["dis", str(co), "-o", s_path], env=env, cwd=tmp, **quiet)

    def cli_asm():
        return _child_cpu(py + ["asm", s_path, "-o", co_path], env=env, cwd=tmp, **quiet)

    def llvm_dis():
        return _child_cpu([objdump, "-d", f"--mcpu={MCPU}", str(co)], **quiet)

    def llvm_asm():
        a = _child_cpu([mc, *mc_args(text), "-filetype=obj", s_path, "-o", obj], **quiet)
        b = _child_cpu([lld, "--no-undefined", "-shared", obj, "-o", linked], **quiet)
        return a[0] + b[0], a[1] + b[1]

    def api_dis():
        from asmevo.frontend import typecheck
        asm_parser._LINE_CACHE.clear()
        typecheck._SELECTED.clear()
        return _self_cpu(lambda: print_module(disassemble(str(co))))

    def api_asm():
        return _self_cpu(lambda: assemble_bytes(text))

    def py_start():
        return _child_cpu([sys.executable, "-c", "pass"], env=env, cwd=tmp, **quiet)

    jobs = [("asmevo dis", cli_dis), ("asmevo asm", cli_asm), ("llvm-objdump -d", llvm_dis),
            ("llvm-mc + ld.lld", llvm_asm), ("disassemble+print (API)", api_dis),
            ("assemble_bytes (API)", api_asm), ("python -c pass (start-up)", py_start)]
    if ref:
        ref_env = dict(env)
        ref_env["PYTHONPATH"] = str(pathlib.Path(ref).resolve()) + os.pathsep + os.environ.get(
            "PYTHONPATH", "")
        ref_env["PYTHONPYCACHEPREFIX"] = os.path.join(tmp, "pyc-ref")
        ref_s = os.path.join(tmp, "ref.s")
        subprocess.run(py + ["dis", str(co), "-o", ref_s], env=ref_env, check=True, cwd=tmp,
                       **quiet)
        jobs += [("ref: asmevo dis", lambda: _child_cpu(py + ["dis", str(co), "-o", ref_s],
                                                        env=ref_env, cwd=tmp, **quiet)),
                 ("ref: asmevo asm", lambda: _child_cpu(py + ["asm", ref_s, "-o", co_path + ".ref"],
                                                        env=ref_env, cwd=tmp, **quiet))]
    load0 = os.getloadavg()
    res = {name: [] for name, _ in jobs}
    for r in range(runs):
        for name, fn in (jobs if r % 2 == 0 else jobs[::-1]):
            res[name].append(fn())
    med = {name: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
           for name, v in res.items()}
    print(f"\nend to end: {co} ({n_inst} instructions), medians of {runs} alternating runs; "
          f"load average {load0[0]:.2f} before, {os.getloadavg()[0]:.2f} after")
    print(f"{'':28s} {'CPU ms':>9s} {'wall ms':>9s}")
    for name, _ in jobs:
        print(f"{name:28s} {med[name][1] * 1e3:9.1f} {med[name][0] * 1e3:9.1f}")
    for k, what in ((1, "CPU"), (0, "wall")):
        print(f"  {what}: dis / llvm-objdump = "
              f"{med['asmevo dis'][k] / med['llvm-objdump -d'][k]:.2f}x, asm / (llvm-mc + ld.lld) = "
              f"{med['asmevo asm'][k] / med['llvm-mc + ld.lld'][k]:.2f}x (commands); API: "
              f"{med['disassemble+print (API)'][k] / med['llvm-objdump -d'][k]:.2f}x, "
              f"{med['assemble_bytes (API)'][k] / med['llvm-mc + ld.lld'][k]:.2f}x")
    pairs = [("commands", ("asmevo dis", "asmevo asm")),
             ("API", ("disassemble+print (API)", "assemble_bytes (API)"))]
    if ref:
        pairs.append(("ref commands", ("ref: asmevo dis", "ref: asmevo asm")))
    for label, (d, a) in pairs:
        for k, what in ((1, "CPU"), (0, "wall")):
            ours = med[d][k] + med[a][k]
            ref = med["llvm-objdump -d"][k] + med["llvm-mc + ld.lld"][k]
            print(f"ratio ({label}, {what}): asmevo dis+asm {ours * 1e3:.0f} ms / LLVM "
                  f"{ref * 1e3:.0f} ms = {ours / ref:.2f}x (target <= 2.00x: "
                  f"{'met' if ours / ref <= 2 else 'not met'})")


def parser_figures(args) -> None:
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
    print(f"lark import + parser build (once per process, disk-cached; only lines the fast path "
          f"declines use it): {t_build * 1e3:.1f} ms")
    print(f"asmevo parse_asm (cold line cache), median of {args.runs}: {t_parse * 1e3:.1f} ms "
          f"= {n_inst / t_parse:,.0f} instructions/s")
    print(f"  of which parse_line (fast path, Lark for the rest) on the distinct lines: "
          f"{t_lark * 1e3:.1f} ms "
          f"= {distinct / t_lark:,.0f} lines/s without memoisation")
    print(f"llvm-mc -filetype=obj, median of {args.runs}: {t_mc * 1e3:.1f} ms "
          f"= {n_inst / t_mc:,.0f} instructions/s")
    print(f"ratio asmevo/llvm-mc wall time: {t_parse / t_mc:.2f}")
    print(f"CPU time: asmevo {c_parse * 1e3:.1f} ms = {n_inst / c_parse:,.0f} instructions/s; "
          f"llvm-mc {c_mc * 1e3:.1f} ms = {n_inst / c_mc:,.0f} instructions/s; "
          f"ratio {c_parse / c_mc:.2f}")


if __name__ == "__main__":
    sys.exit(main())

"""``asmevo profile K.co [--harness H.json] [--entry N] [--kernel NAME] [--top N] [--annotate]
[--static] [--machine FILE] [--json] [--att stats.csv]``: where a kernel's time goes, as a
model estimates it (or as a real thread trace measured it, with ``--att``).

With a harness (and without ``--static``) the launch is replayed by the trace-driven
compute-unit model (``asmevo.perf.estimate``); without one, or with ``--static``, the
static per-wave estimate (:mod:`asmevo.perf.static`) is used, scaled to the harness's
launch when one is given.  Prints the estimated cycles and microseconds at the machine's
clock, occupancy and its limiting resource, the bottleneck class and the hot windows;
``--annotate`` adds the listing with every instruction's share and stall cause (as
``perf annotate`` shows it).  ``--att`` reads rocprofv3 thread-trace ``stats_*.csv`` files
(:mod:`asmevo.perf.rocprof`) instead: the same report, labelled as measured.  Every figure is labelled an estimate of the named model
(unless it came from hardware).  ``--json`` prints the profile
(``asmevo/perf/profile.schema.json``).  Exit 0, or 2 for bad input.
"""

from __future__ import annotations

import json
import sys

from ..errors import AsmevoError


def add_arguments(p) -> None:
    """Arguments: input, ``--harness``, ``--entry``, ``--kernel``, ``--top``, ``--annotate``,
    ``--static``, ``--machine``, ``--json``, ``--seed``."""
    p.add_argument("input", help="code object (.co/.hsaco) or assembly (.s/.amdgcn)")
    p.add_argument("--harness", help="harness JSON (one manifest entry or a manifest list); "
                   "without it the static estimate is used")
    p.add_argument("--entry", help="entry name when the harness holds several")
    p.add_argument("--kernel", help="kernel symbol (default: the entry's kernel, else every kernel)")
    p.add_argument("--top", type=int, default=10, help="hot windows shown (10)")
    p.add_argument("--annotate", action="store_true",
                   help="the listing with each instruction's share and stall cause")
    p.add_argument("--static", action="store_true",
                   help="static per-wave estimate even when a harness is given")
    p.add_argument("--machine", help="machine description TOML (default: built-in MI300X)")
    p.add_argument("--json", action="store_true", help="print the profile as JSON")
    p.add_argument("--seed", type=int, default=0, help="seed of the harness inputs (0)")
    p.add_argument("--att", action="append", metavar="CSV",
                   help="a rocprofv3 --att stats_*.csv of a real run (repeatable): show the "
                   "measured profile instead of a model estimate")


def _pick_kernels(module, name, path) -> list:
    ks = [k for k in module.kernels if k.is_kernel] or list(module.kernels)
    if name is None:
        if not ks:
            raise AsmevoError("no kernel code found", file=path)
        return ks
    for k in module.kernels:
        if k.name == name:
            return [k]
    raise AsmevoError(f"no kernel {name!r}; kernels: "
                      f"{', '.join(k.name for k in module.kernels) or '(none)'}", file=path)


def build_profile(args):
    """The :class:`~asmevo.perf.profile.Profile` the arguments ask for, and a note on the
    timing source (for the header)."""
    from ..frontend.loader import load
    from ..perf.machine import load_machine
    from ..perf.profile import Profile
    from ..perf.static import estimate_static
    if args.top is not None and args.top < 0:
        raise AsmevoError(f"--top must be >= 0, got {args.top}")
    machine = load_machine(args.machine)
    h = None
    if args.harness:
        from ..emu import harness as H
        h = H.load_harness(args.harness, args.entry)
    elif args.entry:
        raise AsmevoError("--entry needs --harness")
    module = load(args.input)
    name = args.kernel or (h.get("kernel") if h else None)
    kernels = _pick_kernels(module, name, args.input)
    if getattr(args, "att", None):
        from ..perf.rocprof import read_att_stats
        prof = read_att_stats(args.att, module, clock_mhz=machine.clock_mhz, top=args.top)
        if name is not None:
            prof.kernels = {k: v for k, v in prof.kernels.items() if k == name}
            if not prof.kernels:
                raise AsmevoError(f"the trace has no row of kernel {name!r}", file=args.att[0])
        return prof, "rocprofv3 thread trace"
    launch = None
    if h is not None:
        from ..emu import harness as H
        from .run import _check_arg_count
        _check_arg_count(module, kernels[0].name, h, args.harness)
        launch = H.make_launch(h, H.make_inputs(h, args.seed))
    dynamic = None
    note = ""
    if h is not None and not args.static:
        try:
            from ..perf import estimate as dynamic  # the trace-driven CU model
        except ImportError:
            dynamic = None
            note = "the trace-driven model is not available here; static estimate"
    top = args.top
    if dynamic is not None:
        try:
            prof = dynamic(module, kernels[0].name, launch, machine=machine)
        except AsmevoError as e:
            if e.file is None:
                e.file = args.harness
            raise
        except ImportError:  # the trace-driven model is not installed in this checkout
            prof = None
            note = "the trace-driven model is not available here; static estimate"
        if prof is not None:
            for kp in prof.kernels.values():
                if top is not None:
                    kp.windows = kp.windows[:top]
            return prof, "trace-driven model of the harness's launch"
    from ..analysis import AnalysisManager
    am = AnalysisManager(module)
    prof = None
    for k in kernels:
        p = estimate_static(module, k, launch, machine=machine, manager=am, top=top)
        if prof is None:
            prof = p
        else:
            prof.kernels.update(p.kernels)
    assert isinstance(prof, Profile)
    if not note:
        note = ("static estimate, scaled to the harness's launch" if h is not None
                else "static estimate (no harness)")
    return prof, note


def run(args) -> int:
    """Profile the kernel(s); 0 on success."""
    from ..perf.machine import load_machine
    prof, note = build_profile(args)
    if args.json:
        d = prof.to_json()
        d["note"] = note
        m = load_machine(args.machine)
        d["clock_mhz"] = m.clock_mhz
        # compact: json's C encoder (indent would select the pure-Python one, 5x slower on
        # a 33,000-instruction kernel)
        json.dump(d, sys.stdout, default=_json_default)
        sys.stdout.write("\n")
        return 0
    clock = load_machine(args.machine).clock_mhz
    if sys.stdout.isatty():
        _print_rich(prof, note, clock, args)
    else:
        _print_text(prof, note, clock, args)
    return 0


def _json_default(o):
    if isinstance(o, (set, frozenset, tuple)):
        return list(o)
    return str(o)


def _label(prof) -> str:
    m = prof.model
    if not prof.estimated:
        return f"measured ({m.get('name')} {m.get('version')})"
    return f"estimate of model {m.get('name')} {m.get('version')}"


def _dominant(causes: dict) -> str:
    stalls = {k: v for k, v in causes.items() if k != "issue" and v > 0}
    if not stalls:
        return ""
    return max(sorted(stalls), key=lambda k: stalls[k])


def _header_lines(prof, note, clock) -> list[str]:
    est = _label(prof)
    return [f"# {est} ({prof.source}; {note}); machine {prof.machine} at {clock:g} MHz",
            "# every figure below is an estimate of that model, not a measurement"
            if prof.estimated else "# figures measured on hardware"]


def _kernel_lines(kp, prof, clock) -> list[str]:
    tag = "estimated" if prof.estimated else "measured"
    out = [f"kernel {kp.kernel}",
           f"  cycles ({tag}): {kp.cycles:,.0f} clk = {kp.microseconds:,.3f} us at {clock:g} MHz",
           f"  occupancy: {kp.occupancy} waves/SIMD (limited by {kp.occupancy_limit})",
           f"  bottleneck ({tag}): {kp.bottleneck}"]
    ex = kp.extra or {}
    if "wave_latency" in ex:
        out.append(f"  one wave ({tag}): {ex['wave_latency']:,.0f} clk; "
                   f"{ex.get('inv_throughput', 0):,.0f} clk per wave per SIMD at "
                   f"parallelism {ex.get('parallelism', 0):.2f}; basis: {ex.get('basis', '')}")
    return out


def _window_rows(kp):
    for n, w in enumerate(kp.windows, 1):
        first = ""
        for r in kp.instructions:
            if r.index == w.start:
                first = r.text
                break
        yield (str(n), f"{100 * w.share:5.1f}%", f"{w.cycles:,.0f}", f"{w.start}-{w.end}",
               f"0x{w.start_pc:x}-0x{w.end_pc:x}", w.block, w.bottleneck, first)


_WIN_HEAD = ("#", "share", "clk", "index", "pc", "block", "bottleneck", "first instruction")


def _annotate_rows(kp):
    total = sum(r.latency for r in kp.instructions) or 1.0
    for r in kp.instructions:
        share = 100.0 * r.latency / total
        hits = f"{r.hits:g}" if isinstance(r.hits, float) else str(r.hits)
        yield (f"{share:6.2f}", hits, f"{r.latency:,.0f}", f"{r.stall:,.0f}",
               _dominant(r.causes) or ("stall" if r.stall else ""), f"0x{r.pc:04x}", r.text)


_ANN_HEAD = ("share%", "hits", "clk", "stall", "cause", "pc", "instruction")


def _print_text(prof, note, clock, args) -> None:
    w = sys.stdout.write
    for line in _header_lines(prof, note, clock):
        w(line + "\n")
    tag = "estimated" if prof.estimated else "measured"
    for kp in prof.kernels.values():
        w("\n" + "\n".join(_kernel_lines(kp, prof, clock)) + "\n")
        if kp.windows:
            w(f"  hot windows ({tag} share of attributed clk):\n")
            rows = [_WIN_HEAD] + list(_window_rows(kp))
            w(_fmt_table(rows, indent="    "))
        else:
            w("  no hot window (no clk attributed)\n")
        if args.annotate:
            w(f"  listing ({tag} share, clk summed over hits, dominant stall cause):\n")
            for r in _annotate_rows(kp):
                w(f"  {r[0]} |{r[1]:>7} {r[2]:>9} {r[3]:>9} {r[4]:<10} {r[5]}: {r[6]}\n")


def _fmt_table(rows, indent="") -> str:
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    out = []
    for r in rows:
        cells = [str(c).ljust(widths[i]) if i in (5, 6, 7) else str(c).rjust(widths[i])
                 for i, c in enumerate(r)]
        out.append(indent + "  ".join(cells).rstrip())
    return "\n".join(out) + "\n"


def _print_rich(prof, note, clock, args) -> None:
    from rich.console import Console
    from rich.table import Table
    con = Console()
    for line in _header_lines(prof, note, clock):
        con.print(line, markup=False, highlight=False)
    tag = "estimated" if prof.estimated else "measured"
    for kp in prof.kernels.values():
        con.print()
        for line in _kernel_lines(kp, prof, clock):
            con.print(line, markup=False, highlight=False)
        if kp.windows:
            t = Table(title=f"hot windows ({tag} share of attributed clk)")
            for hname in _WIN_HEAD:
                t.add_column(hname, justify="right" if hname in ("#", "share", "clk") else "left")
            for r in _window_rows(kp):
                t.add_row(*r)
            con.print(t)
        if args.annotate:
            t = Table(title=f"listing ({tag}; clk summed over hits)", show_lines=False)
            for hname in _ANN_HEAD:
                t.add_column(hname, justify="right" if hname in ("share%", "hits", "clk", "stall")
                             else "left", no_wrap=hname == "instruction")
            for r in _annotate_rows(kp):
                t.add_row(*r)
            con.print(t)

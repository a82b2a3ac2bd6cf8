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

from ..errors import AsmevoError, unknown_kernel_error


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
    p.add_argument("--pc-sampling", metavar="CSV",
                   help="a rocprofv3 PC-sampling CSV (*_pc_sampling_stochastic.csv or "
                   "*_host_trap.csv) of a real run: show the sampled profile")
    p.add_argument("--kernel-trace", metavar="CSV",
                   help="rocprofv3's *_kernel_trace.csv, to keep only the samples of --kernel")
    p.add_argument("--pc-interval", type=float, default=1.0, metavar="CLK",
                   help="--pc-sampling-interval of the run in cycles (default 1: count samples)")
    p.add_argument("--compare-model", action="store_true",
                   help="with --att or --pc-sampling: the model's estimate beside the real "
                   "profile, window by window (where the model is wrong)")
    p.add_argument("--samples", type=int, default=10,
                   help="with --device hip: timed launches after 3 warm-up launches (10)")
    from ..device import add_device_argument
    add_device_argument(p)


def _pick_kernels(module, name, path) -> list:
    ks = [k for k in module.kernels if k.is_kernel] or list(module.kernels)
    if name is None:
        if not ks:
            raise AsmevoError("no kernel code found", file=path)
        return ks
    for k in module.kernels:
        if k.name == name:
            return [k]
    raise unknown_kernel_error(name, [k.name for k in module.kernels], path)


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
    if args.harness:     # the entry, its kernel and its launch: checked before any work
        from ..emu import harness as H
        h = H.checked_entry(args.harness, args.entry, args.input, kernel=args.kernel, fits=True)
    elif args.entry:
        raise AsmevoError("--entry needs --harness")
    module = load(args.input)
    name = args.kernel or (h.get("kernel") if h else None)
    kernels = _pick_kernels(module, name, args.input)
    if getattr(args, "att", None) and getattr(args, "pc_sampling", None):
        raise AsmevoError("give --att or --pc-sampling, not both")
    if getattr(args, "att", None):
        from ..perf.rocprof import read_att_stats
        prof = read_att_stats(args.att, module, clock_mhz=machine.clock_mhz, top=args.top)
        if name is not None:
            prof.kernels = {k: v for k, v in prof.kernels.items() if k == name}
            if not prof.kernels:
                raise AsmevoError(f"the trace has no row of kernel {name!r}", file=args.att[0])
        return prof, "rocprofv3 thread trace"
    if getattr(args, "pc_sampling", None):
        from ..perf.pcsampling import read_pc_sampling
        if args.pc_interval <= 0:
            raise AsmevoError("--pc-interval must be positive")
        prof = read_pc_sampling(args.pc_sampling, module, kernel=name or (
            kernels[0].name if len(kernels) == 1 else None), kernel_trace=args.kernel_trace,
            interval=args.pc_interval, clock_mhz=machine.clock_mhz, top=args.top)
        return prof, "rocprofv3 PC sampling"
    if getattr(args, "compare_model", False):
        raise AsmevoError("--compare-model needs a real profile: --att or --pc-sampling")
    launch = None
    if h is not None:
        from ..emu import harness as H
        if name is None:     # the entry names no kernel: its launch against the one profiled
            H.checked_entry(args.harness, args.entry, args.input, module=module,
                            kernel=kernels[0].name, fits=True)
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


def _model_beside(args, prof) -> dict:
    """--compare-model: the model's estimate of the same kernels, window by window against
    the real profile (the real profile's windows; the model's share of the same range)."""
    import copy
    margs = copy.copy(args)
    margs.att, margs.pc_sampling, margs.compare_model = None, None, False
    model, mnote = build_profile(margs)
    out = {}
    for kname, real in prof.kernels.items():
        mk = model.kernels.get(kname)
        if mk is None:
            continue
        mrows = {r.index: r for r in mk.instructions}
        mtotal = sum(r.latency for r in mk.instructions) or 1.0
        rtotal = sum(r.latency for r in real.instructions) or 1.0
        rows = []
        for w in real.windows:
            ms = sum(mrows[i].latency for i in range(w.start, w.end + 1) if i in mrows) / mtotal
            rs = sum(r.latency for r in real.instructions if w.start <= r.index <= w.end) / rtotal
            rows.append({"start": w.start, "end": w.end, "start_pc": w.start_pc,
                         "real_share": rs, "model_share": ms, "real_bottleneck": w.bottleneck,
                         "error": ms - rs})
        out[kname] = {"model": dict(model.model), "model_note": mnote,
                      "model_cycles": mk.cycles, "model_bottleneck": mk.bottleneck,
                      "real_bottleneck": real.bottleneck, "windows": rows}
    return out


def _measure(args, prof) -> dict:
    """--device hip: timed launches on the GPU (median, spread, coefficient of variation)."""
    from ..device import get_device
    from ..device.timing import paired_samples
    from ..emu import harness as H
    from ..frontend.loader import load
    dev = get_device(args.device)
    if not dev.hardware:
        return {}
    if not args.harness:
        raise AsmevoError("--device hip needs --harness (the launch to time)")
    if args.samples < 1:
        raise AsmevoError("--samples must be at least 1")
    h = H.load_harness(args.harness, args.entry)
    module = load(args.input)
    name = args.kernel or h.get("kernel") or next(iter(prof.kernels))
    launch = H.make_launch(h, H.make_inputs(h, args.seed))
    with dev.load(module) as loaded:
        (s,) = paired_samples([lambda: loaded.time_launch(name, launch)], n=args.samples, warmup=3)
    return {name: {"device": dev.name, "measured": True, **s.to_json()}}


def run(args) -> int:
    """Profile the kernel(s); 0 on success."""
    from ..perf.machine import load_machine
    from ..device import get_device
    if get_device(getattr(args, "device", None)).hardware and not args.harness:
        raise AsmevoError("--device hip needs --harness (the launch to time)")
    prof, note = build_profile(args)
    beside = _model_beside(args, prof) if getattr(args, "compare_model", False) else None
    measured = _measure(args, prof) if getattr(args, "device", "emu") != "emu" else {}
    if args.json:
        d = prof.to_json()
        if beside is not None:
            d["model_comparison"] = beside
        if measured:
            d["measured"] = measured
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
    for kname, m in measured.items():
        print(f"{kname}: measured on {m['device']}: median {m['median_us']:.2f} us, spread "
              f"{m['spread_us']:.2f} us, cv {m['cv']:.4f} over {m['n']} launches (HIP events)")
    if beside:
        for kname, b in beside.items():
            print(f"\n{kname}: the real profile ({note}) beside the model's estimate "
                  f"({b['model'].get('name')} {b['model'].get('version')}: "
                  f"{b['model_cycles']:.0f} estimated clk, bottleneck {b['model_bottleneck']}; "
                  f"real bottleneck {b['real_bottleneck']})")
            print(f"  {'window':>13}  {'pc':>8}  {'real':>7}  {'model':>7}  {'model-real':>10}")
            for w in b["windows"]:
                print(f"  {w['start']:>5}..{w['end']:<6}  {w['start_pc']:>#8x}  "
                      f"{100 * w['real_share']:>6.1f}%  {100 * w['model_share']:>6.1f}%  "
                      f"{100 * w['error']:>+9.1f}%")
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
    where = (f"machine {prof.machine} at {clock:g} MHz" if prof.estimated
             else f"microseconds at an assumed {clock:g} MHz clock")
    return [f"# {est} ({prof.source}; {note}); {where}",
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


def _win_clk(prof) -> str:
    """What a window's clk adds up (it is not the kernel's elapsed cycles)."""
    if prof.source == "model-static":
        return "clk of one wave's instructions"
    return "clk summed over every wave's instructions, not elapsed like the cycles above"


def _annotate_rows(kp):
    total = sum(r.latency for r in kp.instructions) or 1.0
    for r in kp.instructions:
        share = 100.0 * r.latency / total
        hits = f"{r.hits:g}" if isinstance(r.hits, float) else str(r.hits)
        yield (f"{share:6.2f}", hits, f"{r.latency:,.0f}", f"{r.stall:,.0f}",
               _dominant(r.causes) or ("stall" if r.stall else ""), f"0x{r.pc:04x}", r.text)


_ANN_HEAD = ("share%", "hits", "clk", "stall", "cause", "pc", "instruction")


def _annotate_legend(prof) -> list[str]:
    """What each column of the ``--annotate`` listing is, with its unit, and whether its
    times are the model's estimates or measured."""
    m = prof.model
    if prof.source == "model-static":
        hits = "expected executions per wave (count)"
    elif m.get("name") == "rocprofv3-pc-sampling":
        hits = "PC samples that landed on it (count)"
    else:
        hits = "wave-instructions executed over the launch (count)"
    times = (f"estimates of the timing model {m.get('name')} {m.get('version')}, not measurements"
             if prof.estimated else f"measured on hardware ({m.get('name')})")
    return [f"share%: its part of the kernel's clk (percent); hits: {hits}",
            "clk: clock cycles summed over its hits; stall: the part of clk spent waiting "
            "(clock cycles); cause: the dominant stall cause",
            f"pc: byte offset from the kernel's first instruction; times (clk, stall) are {times}"]


def _annotate_line(r) -> str:
    """One row of the text listing (the column header is one too)."""
    return f"  {r[0]:>6} |{r[1]:>7} {r[2]:>9} {r[3]:>9} {r[4]:<10} {r[5]}: {r[6]}\n"


def _print_text(prof, note, clock, args) -> None:
    w = sys.stdout.write
    for line in _header_lines(prof, note, clock):
        w(line + "\n")
    tag = "estimated" if prof.estimated else "measured"
    for kp in prof.kernels.values():
        w("\n" + "\n".join(_kernel_lines(kp, prof, clock)) + "\n")
        if kp.windows:
            w(f"  hot windows ({tag} share of attributed clk; {_win_clk(prof)}):\n")
            rows = [_WIN_HEAD] + list(_window_rows(kp))
            w(_fmt_table(rows, indent="    "))
        else:
            w("  no hot window (no clk attributed)\n")
        if args.annotate:
            rows = list(_annotate_rows(kp))
            w(f"  listing ({tag} share, clk summed over hits, dominant stall cause):\n")
            for line in _annotate_legend(prof):
                w(f"    {line}\n")
            pcw = max([len(r[5]) for r in rows] + [2])
            w(_annotate_line(_ANN_HEAD[:5] + (_ANN_HEAD[5].ljust(pcw), _ANN_HEAD[6])))
            for r in rows:
                w(_annotate_line(r))


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
            t = Table(title=f"hot windows ({tag} share of attributed clk; {_win_clk(prof)})")
            for hname in _WIN_HEAD:
                t.add_column(hname, justify="right" if hname in ("#", "share", "clk") else "left")
            for r in _window_rows(kp):
                t.add_row(*r)
            con.print(t)
        if args.annotate:
            t = Table(title=f"listing ({tag}; clk summed over hits)", show_lines=False,
                      caption="\n".join(_annotate_legend(prof)))
            for hname in _ANN_HEAD:
                t.add_column(hname, justify="right" if hname in ("share%", "hits", "clk", "stall")
                             else "left", no_wrap=hname == "instruction")
            for r in _annotate_rows(kp):
                t.add_row(*r)
            con.print(t)

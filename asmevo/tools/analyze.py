"""``asmevo analyze K.co|K.s``: CFG, liveness, waitcnt, register budget and hazard reports.

With no analysis flag every analysis is reported.  ``--json`` prints the same
content as JSON.  ``--cfg dot`` prints (or writes with ``-o``) Graphviz text.
Exit status: 0 no violation, 1 some violation (waitcnt, hazard or register
budget), 2 bad input.
"""

from __future__ import annotations

import json
import sys

from ..errors import AsmevoError
from ..fileio import write_output

_SECTIONS = ("cfg", "liveness", "waitcnt", "regs", "hazards")


def add_arguments(p) -> None:
    """Arguments: input file, ``--kernel``, one flag per analysis, ``--json``, ``-o``."""
    p.add_argument("input", help="code object (.co/.hsaco) or assembly (.s/.amdgcn)")
    p.add_argument("--kernel", action="append", metavar="NAME",
                   help="analyse only this kernel (repeatable; default: all)")
    p.add_argument("--cfg", nargs="?", const="text", choices=("text", "dot"),
                   help="control-flow graph; 'dot' prints Graphviz text only")
    p.add_argument("--liveness", action="store_true", help="live-in/out and register pressure")
    p.add_argument("--waitcnt", action="store_true",
                   help="s_waitcnt violations and the weakest safe count of every wait")
    p.add_argument("--regs", action="store_true",
                   help="registers and LDS used vs granted, occupancy")
    p.add_argument("--hazards", action="store_true", help="wait-state hazards (gfx940 table)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("-o", "--output", help="write the report here (default: stdout)")


def run(args) -> int:
    """Analyse ``args.input``; returns 0, or 1 when any violation is found."""
    from ..analysis import AnalysisManager
    from ..frontend.loader import load
    module = load(args.input)
    kernels = module.kernels
    if args.kernel:
        names = {k.name for k in kernels}
        missing = [n for n in args.kernel if n not in names]
        if missing:
            raise AsmevoError(f"no kernel {', '.join(missing)}; kernels: "
                              f"{', '.join(sorted(names)) or '(none)'}", file=args.input)
        kernels = [k for k in kernels if k.name in args.kernel]
    if not kernels:
        raise AsmevoError("no kernel code found", file=args.input)
    chosen = [s for s in _SECTIONS if getattr(args, s)]
    detail = set(chosen)  # sections asked for by name are printed in full
    if not chosen:
        chosen = list(_SECTIONS)
    am = AnalysisManager(module)
    if args.cfg == "dot" and chosen == ["cfg"]:
        from ..analysis.cfg import CFG
        text = "".join(am.get(CFG, k).to_dot() for k in kernels)
        _emit(args, text)
        return 0
    reports = [analyze_kernel(k, am, chosen) for k in kernels]
    bad = any(r["violations"] for r in reports)
    if args.json:
        text = json.dumps({"input": args.input, "kernels": reports}, indent=1, default=str) + "\n"
    else:
        text = "".join(format_report(r, detail) for r in reports)
    _emit(args, text)
    return 1 if bad else 0


def _emit(args, text: str) -> None:
    if args.output:
        write_output(args.output, text, inputs=(args.input,))
    else:
        sys.stdout.write(text)


def analyze_kernel(kernel, am, sections) -> dict:
    """Run the requested analyses on ``kernel``; returns the JSON-ready report dict
    (``violations`` counts waitcnt + hazard + register-budget problems)."""
    from ..analysis.cfg import CFG
    from ..analysis.hazards import HazardAnalysis
    from ..analysis.liveness import Liveness
    from ..analysis.regbudget import RegisterBudget
    from ..analysis.waitcnt import WaitcntAnalysis
    rep: dict = {"kernel": kernel.name, "instructions": kernel.num_instructions(),
                 "blocks": len(kernel.blocks)}
    nviol = 0
    if "cfg" in sections:
        rep["cfg"] = am.get(CFG, kernel).to_json()
    if "liveness" in sections:
        rep["liveness"] = am.get(Liveness, kernel).to_json()
    if "waitcnt" in sections:
        w = am.get(WaitcntAnalysis, kernel)
        rep["waitcnt"] = w.to_json()
        nviol += len(w.violations)
    if "regs" in sections:
        r = am.get(RegisterBudget, kernel)
        rep["regs"] = r.to_json()
        nviol += len(r.problems)
    if "hazards" in sections:
        h = am.get(HazardAnalysis, kernel)
        rep["hazards"] = {"violations": [v.to_json() for v in h.violations]}
        nviol += len(h.violations)
    rep["violations"] = nviol
    return rep


def format_report(rep: dict, detail: set | frozenset = frozenset(_SECTIONS)) -> str:
    """Readable text for one kernel report (same content as the JSON).  Per-block CFG and
    liveness listings are printed only for sections in ``detail`` (asked for by flag)."""
    out = [f"kernel {rep['kernel']}: {rep['instructions']} instructions, {rep['blocks']} blocks, "
           f"{rep['violations']} violation(s)"]
    if "cfg" in rep:
        c = rep["cfg"]
        out.append(f"  cfg: {len(c['edges'])} edges, {len(c['loops'])} loop(s)"
                   + (f", unreachable: {', '.join(c['unreachable'])}" if c["unreachable"] else ""))
        for b in (c["blocks"] if "cfg" in detail else ()):
            succ = [e["to"] + ("" if e["kind"] in ("taken", "exit") else f" ({e['kind']})")
                    for e in c["edges"] if e["from"] == b["name"]]
            out.append(f"    {b['name']}: {b['instructions']} inst, depth {b['loop_depth']}, "
                       f"idom {c['idom'].get(b['name'], '-')} -> {', '.join(succ)}")
        for lp in (c["loops"] if "cfg" in detail else ()):
            out.append(f"    loop header {lp['header']}: {', '.join(lp['blocks'])} "
                       f"(latches {', '.join(lp['latches'])})")
    if "liveness" in rep:
        lv = rep["liveness"]
        mp = lv["max_pressure"]
        out.append(f"  liveness: max live v={mp['v']} a={mp['a']} s={mp['s']}")
        for f, w in lv["max_pressure_at"].items():
            if w and mp[f]:
                out.append(f"    max {f} at {w['block']}:{w['index']}  {w['instruction']}")
        if lv["undefined_at_entry"]:
            out.append(f"    read before any write (not set by the ABI): "
                       f"{' '.join(lv['undefined_at_entry'])}")
        for b in (lv["blocks"] if "liveness" in detail else ()):
            out.append(f"    {b['name']}: in [{' '.join(b['live_in'])}] out [{' '.join(b['live_out'])}]")
    if "waitcnt" in rep:
        w = rep["waitcnt"]
        slack = [x for x in w["waitcnts"]
                 if any(x["required"][c] > x["current"][c] for c in x["current"])]
        out.append(f"  waitcnt: {len(w['violations'])} violation(s), {len(w['waitcnts'])} "
                   f"s_waitcnt, {len(slack)} stronger than needed")
        for v in w["violations"]:
            what = ("LDS written by LDS-DMA (no address information)" if v["kind"] == "lds"
                    else v["register"])
            out.append(f"    VIOLATION {v['block']}:{v['index']}  {v['instruction']}: {what} "
                       f"needs {v['counter']}({v['needed']})  [producer: {v['producer']}]")
        for x in slack:
            out.append(f"    slack {x['block']}:{x['index']}  {x['instruction']} -> "
                       + ("removable" if x["removable"] else x["weakest"]))
    if "regs" in rep:
        r = rep["regs"]
        g = r["granted"]
        out.append(f"  regs: used v{r['used']['v']} a{r['used']['a']} s{r['used']['s']} "
                   f"(unified {r['needed_vgprs']}, sgprs with reserved {r['needed_sgprs']}); "
                   f"granted vgprs {g['vgprs']} sgprs {g['sgprs']} accum_offset "
                   f"{g['accum_offset']} lds {g['lds_bytes']} [{g['source']}]")
        lim = ", ".join(f"{k} {v}" for k, v in r["occupancy_limits"].items())
        out.append(f"    occupancy {r['occupancy']} waves/SIMD ({lim})")
        for p in r["problems"]:
            out.append(f"    VIOLATION {p['what']}: {p['message']}")
        for n in r.get("notes", ()):
            out.append(f"    note: {n}")
    if "hazards" in rep:
        hz = rep["hazards"]["violations"]
        out.append(f"  hazards: {len(hz)} violation(s)")
        for v in hz:
            reg = f" {v['register']}" if v["register"] else ""
            out.append(f"    VIOLATION {v['block']}:{v['index']}  {v['instruction']}: rule "
                       f"{v['rule']}{reg} needs {v['required']} wait state(s), has "
                       f"{v['available']}  [producer: {v['producer']}]")
    return "\n".join(out) + "\n"

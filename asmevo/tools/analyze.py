"""``asmevo analyze K.co|K.s``: CFG, liveness, waitcnt, register budget and hazard reports.

With no analysis flag every analysis is reported.  ``--json`` prints the same
content as JSON.  ``--cfg dot`` prints (or writes with ``-o``) Graphviz text.
Exit status: 0 no violation, 1 some violation (waitcnt, hazard or register
budget), 2 bad input.

Assembly text is checked (parse and type check, errors at file:line:column), then
assembled and linked (llvm-mc + ld.lld), and the analyses run on the disassembled
bytes, as ``asmevo verify`` does (:func:`asmevo.frontend.loader.load_bytes`):
instructions written as data words (``.long 0xd3e18000, ...`` for an MFMA), ``.if``
blocks and macros are seen as the hardware runs them.  Each instruction that matches
a source line keeps that line number, so reports say ``file:line``; instructions that
no instruction line spells (data words) are marked as such.
"""

from __future__ import annotations

import json
import sys

from ..errors import AsmevoError, unknown_kernel_error
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
    from ..errors import NotModelledError
    from ..frontend.loader import load, load_bytes
    _DATA_WORD.clear()
    source = None
    try:
        module = load(args.input)  # bad text fails here, at file:line:column
    except NotModelledError:
        # text the IR does not model (.rept, .if...): the assembled bytes, without source lines
        module = load_bytes(args.input)
    if module.code_object is None:
        module = assembled_text_module(args.input, module)
        source = args.input
    kernels = module.kernels
    if args.kernel:
        names = [k.name for k in kernels]
        missing = [n for n in args.kernel if n not in names]
        if missing:     # the first one: one message, as every command says it
            raise unknown_kernel_error(missing[0], names, args.input)
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
    if source is not None:
        for r in reports:
            r["source"] = source
    bad = any(r["violations"] for r in reports)
    if args.json:
        text = json.dumps({"input": args.input, "kernels": reports}, indent=1, default=str) + "\n"
    else:
        text = "".join(format_report(r, detail) for r in reports)
    _emit(args, text)
    return 1 if bad else 0


_DATA_DIRECTIVES = frozenset({".long", ".word", ".int", ".4byte", ".short", ".hword", ".2byte",
                              ".byte", ".quad", ".8byte", ".inst"})
#: id(instruction) -> line of the data directive that spells it (or None), for instructions
#: of an assembled text module that match no instruction line
_DATA_WORD: dict[int, int | None] = {}


def _match_key(inst) -> str:
    info = inst.info
    return info.name if info is not None else inst.opcode


def assembled_text_module(path: str, text_module):
    """The module of the bytes llvm-mc and ld.lld make of the assembly file ``path``
    (already checked as ``text_module``), with source line numbers carried over.

    Kernels are matched by name, instructions by their ISA record in order
    (``difflib``); an assembled instruction that matches no instruction line (one
    written as ``.long`` words, say) keeps ``line = None``.  Kernels whose label the
    object file keeps under another name are paired in order.  A kernel of the text that
    the code object does not hold as a function is analysed as parsed, with a note on
    stderr."""
    import difflib

    from ..frontend.loader import load_bytes
    module = load_bytes(path)
    texts = {k.name: k for k in text_module.kernels}
    # a label that the object file does not keep as a function symbol comes back under a
    # made-up name: pair such kernels in order
    odd = [k for k in module.kernels if k.name not in texts]
    gone = [k for k in text_module.kernels if k.name not in {x.name for x in module.kernels}]
    if odd and len(odd) == len(gone):
        for k, tk in zip(odd, gone):
            k.name = tk.name
    have = {k.name for k in module.kernels}
    for k in module.kernels:
        tk = texts.get(k.name)
        if tk is None:
            continue
        a = list(k.instructions())
        # words written as .long in the text are raw instructions of the parse: spelled as data
        words = [i for i in tk.instructions() if i.raw and i.encoding is not None]
        b = [i for i in tk.instructions() if not (i.raw and i.encoding is not None)]
        sm = difflib.SequenceMatcher(None, [_match_key(i) for i in a],
                                     [_match_key(i) for i in b], autojunk=False)
        for blk in sm.get_matching_blocks():
            for j in range(blk.size):
                a[blk.a + j].line = b[blk.b + j].line
        _carry_labels(k, tk)
        # the rest was spelled as data: point at the data directive between the
        # neighbouring instruction lines
        data = sorted(d.line for bb in tk.blocks for d in getattr(bb, "directives", ())
                      if d.name in _DATA_DIRECTIVES and d.line is not None)
        data = sorted(set(data) | {i.line for i in words if i.line is not None})
        prev = 0
        for n, inst in enumerate(a):
            if inst.line is not None:
                prev = inst.line
                continue
            nxt = next((x.line for x in a[n + 1:] if x.line is not None), None)
            cand = [d for d in data if d > prev and (nxt is None or d < nxt)]
            _DATA_WORD[id(inst)] = cand[0] if cand else None
    missing = [k for k in text_module.kernels if k.name not in have]
    for k in missing:
        sys.stderr.write(f"asmevo analyze: note: {path}: {k.name} is not a function symbol of "
                         f"the assembled code object; analysing it as parsed text\n")
        module.items.append(k)
    return module


def _carry_labels(k, tk) -> None:
    """Give the assembled kernel ``k`` the block labels of the text kernel ``tk`` (a block
    whose first instruction carries the source line that starts a labelled text block),
    in block names and branch targets."""
    from ..ir.operands import Label
    by_line = {b.instructions[0].line: b.label for b in tk.blocks
               if b.label and b.instructions and b.instructions[0].line is not None}
    rename = {}
    for b in k.blocks:
        if b.label and b.instructions and b.instructions[0].line in by_line:
            new = by_line[b.instructions[0].line]
            if new != b.label:
                rename[b.label] = new
                b.label = new
    if not rename:
        return
    for b in k.blocks:
        for inst in b.instructions:
            if any(isinstance(o, Label) and o.name in rename for o in inst.operands):
                inst.operands = [Label(rename[o.name], o.addend)
                                 if isinstance(o, Label) and o.name in rename else o
                                 for o in inst.operands]


def _annotate(kernel, am, items) -> None:
    """Add the source ``line`` (or ``data_word``) of each violation's instruction."""
    from ..analysis.cfg import CFG
    blocks = am.get(CFG, kernel).blocks
    names = {getattr(b, "name", None): b for b in blocks}
    for v in items:
        b = v.get("block")
        blk = blocks[b] if isinstance(b, int) and 0 <= b < len(blocks) else names.get(b)
        i = v.get("index")
        if blk is None or not isinstance(i, int) or not 0 <= i < len(blk.instructions):
            continue
        inst = blk.instructions[i]
        if id(inst) in _DATA_WORD:  # in the bytes, spelled by no instruction line
            v["data_word"] = True
            if _DATA_WORD[id(inst)] is not None:
                v["line"] = _DATA_WORD[id(inst)]
        elif inst.line is not None:
            v["line"] = inst.line


def _where(rep: dict, v: dict) -> str:
    src = rep.get("source")
    if v.get("data_word"):
        at = f"{src}:{v['line']}, " if src and v.get("line") is not None else ""
        return f" ({at}an instruction written as data words)"
    if v.get("line") is not None and src:
        return f" ({src}:{v['line']})"
    return ""


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
        _annotate(kernel, am, rep["waitcnt"].get("violations", ()))
        nviol += len(w.violations)
    if "regs" in sections:
        r = am.get(RegisterBudget, kernel)
        rep["regs"] = r.to_json()
        nviol += len(r.problems)
    if "hazards" in sections:
        h = am.get(HazardAnalysis, kernel)
        rep["hazards"] = {"violations": [v.to_json() for v in h.violations]}
        _annotate(kernel, am, rep["hazards"]["violations"])
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
            out.append(f"    VIOLATION {v['block']}:{v['index']}{_where(rep, v)}  "
                       f"{v['instruction']}: {what} "
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
            out.append(f"    VIOLATION {v['block']}:{v['index']}{_where(rep, v)}  "
                       f"{v['instruction']}: rule "
                       f"{v['rule']}{reg} needs {v['required']} wait state(s), has "
                       f"{v['available']}  [producer: {v['producer']}]")
    return "\n".join(out) + "\n"

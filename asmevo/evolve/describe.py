"""One readable sentence per edit, from its structured record (what ``report.md`` prints and
what the ``mutate`` operator records as its hypothesis).

An edit's record is the ``edit`` column of the lineage: ``{"kind": "moves", "moves": [desc]}``
(one dict per move, as :mod:`asmevo.evolve.mutations` returns it), ``{"kind": "pipeline",
"pipeline": text}``, ``{"kind": "crossover", "other": hash, "blocks": [...]}`` or an agent's
``window-edit`` / ``asm`` / ``pass-plugin``.  :func:`edit_sentence` says which operator did
what, to which instructions, in which window; a record it does not know (a move added later,
a plugin operator) is still said as ``name: key value, ...``, never as raw Python.
"""

from __future__ import annotations


def _code(text) -> str:
    """``text`` as inline code (backticks in it doubled out of the way)."""
    return f"`{str(text).replace('`', chr(39))}`"


def _n(k: int, what: str) -> str:
    return f"{k} {what}" + ("" if k == 1 else "s")


def _updown(by) -> str:
    try:
        by = int(by)
    except (TypeError, ValueError):
        return f"by {by}"
    return f"{_n(abs(by), 'instruction')} {'later' if by > 0 else 'earlier'}"


def move_sentence(d: dict) -> str:
    """One sentence for one move's record (``{"move": name, "index": g, ...}``)."""
    mv = d.get("move", "?")
    g = d.get("index")
    at = f" (instruction {g} of the kernel)" if isinstance(g, int) else ""
    if mv == "swap":
        return f"swap: {_code(d.get('b'))} and {_code(d.get('a'))} trade places{at}"
    if mv == "move":
        return f"move: {_code(d.get('inst'))} moves {_updown(d.get('by'))}{at}"
    if mv == "hoist-load":
        return (f"hoist-load: the load {_code(d.get('inst'))} is issued {_updown(d.get('by'))}"
                f"{at}; each vmcnt wait it crosses counts one more outstanding load")
    if mv == "sink-wait":
        return f"sink-wait: {_code(d.get('inst'))} waits {_updown(d.get('by'))}{at}"
    if mv in ("wait-weaken", "wait-strengthen"):
        if d.get("new") is None:
            return f"{mv}: {_code(d.get('old'))} is removed (it waited for nothing){at}"
        how = "relaxed" if mv == "wait-weaken" else "tightened"
        return f"{mv}: {_code(d.get('old'))} is {how} to {_code(d.get('new'))}{at}"
    if mv == "wait-merge":
        return (f"wait-merge: the s_waitcnt{at} is merged into the next one, "
                f"{_n(int(d.get('into', 0) or 0), 'instruction')} later (the smaller counts of both)")
    if mv == "nop-remove":
        return f"nop-remove: {_code(d.get('inst'))} is removed{at}"
    if mv == "nop-shorten":
        return (f"nop-shorten: `s_nop {d.get('from')}` is shortened to `s_nop {d.get('to')}` "
                f"(one wait state fewer){at}")
    if mv == "e32":
        return f"e32: {_code(d.get('old'))} is re-encoded as the 32-bit {_code(d.get('new'))}{at}"
    if mv == "rename":
        uses = d.get("uses")
        return (f"rename: the value {_code(d.get('inst'))} writes moves from {d.get('old')} to "
                f"{d.get('new')}" + (f", {_n(int(uses), 'use')} rewritten" if
                                     isinstance(uses, int) else "") + at)
    if mv == "interleave":
        return (f"interleave: a chain of {d.get('links')} dependent {d.get('op')} into "
                f"{d.get('acc')} is split over {d.get('acc')} and {d.get('t')} (two chains of "
                f"half the length){at}")
    if mv == "widen":
        return (f"widen: {_code(d.get('a'))} and {_code(d.get('b'))} become one "
                f"{_code(d.get('new'))}{at}")
    rest = ", ".join(f"{k} {v}" for k, v in d.items() if k not in ("move", "index"))
    return f"{mv}: {rest}{at}" if rest else f"{mv}{at}"


def _pass_phrase(name: str) -> str:
    """The first sentence of pass ``name``'s documentation, lower-cased, without its
    parenthesised references and reST markup ('' for a pass not registered here)."""
    import re

    from ..passes import registry
    info = registry.lookup(name)
    if info is None:
        return ""
    try:
        doc = info.doc
    except Exception:  # noqa: BLE001 - a plugin that no longer loads: just its name
        return ""
    doc = re.sub(r"\s*\([^()]*\)", "", doc)      # asides and references
    doc = re.sub(r":\w+:`~?([^`]*)`", r"\1", doc).replace("``", "`")
    first = re.split(r"(?<=[.;])\s", doc, maxsplit=1)[0].rstrip(".;")
    return first[:1].lower() + first[1:]


#: pipelines of at most this many passes say what each pass does; longer ones list the
#: passes only
MAX_EXPLAINED = 4


def pipeline_passes(text: str) -> list[str]:
    """The passes of pipeline ``text`` in order as it spells them (``sched<window=8>``: only
    the options it gives), scopes (``kernel(...)``, ``module(...)``, ``repeat<N>(...)``)
    opened; ``default`` stays one element."""
    out: list[str] = []
    tok, depth_angle, i = "", 0, 0
    while i < len(text):
        c = text[i]
        if c == '"':                       # a quoted option value runs to the next quote
            j = text.find('"', i + 1)
            j = len(text) - 1 if j < 0 else j
            tok += text[i:j + 1]
            i = j + 1
            continue
        if c == "<":
            depth_angle += 1
        elif c == ">":
            depth_angle -= 1
        if depth_angle == 0 and c in "(),":
            if c != "(" and tok.strip():
                out.append(tok.strip())
            tok = ""                       # (a scope's name is dropped at its "(")
        else:
            tok += c
        i += 1
    if tok.strip():
        out.append(tok.strip())
    return out


def pipeline_sentence(text: str) -> str:
    """``ran `a` (what a does), then `b` (...)``: the passes of pipeline ``text`` in order,
    each with what it does (only for short pipelines, :data:`MAX_EXPLAINED`)."""
    passes = pipeline_passes(text)
    if not passes:
        return f"ran the pipeline {_code(text)} (no pass)"
    explain = len(passes) <= MAX_EXPLAINED
    steps, seen = [], set()
    for p in passes:
        name = p.split("<", 1)[0].strip()
        if name == "default":
            from ..passes.registry import DEFAULT_PIPELINE
            steps.append("the default pipeline (" + ", ".join(
                x.split("<", 1)[0] for x in pipeline_passes(DEFAULT_PIPELINE)) + ")")
            continue
        phrase = _pass_phrase(name) if explain and name not in seen else ""
        seen.add(name)
        steps.append(f"{_code(p)} ({phrase})" if phrase else _code(p))
    return "ran " + ", then ".join(steps)


def _windows(windows) -> str:
    ws = [f"{w['block']}[{w['start']}:{w['end']}]" for w in windows or ()
          if isinstance(w, dict) and {"block", "start", "end"} <= set(w)]
    if not ws:
        return ""
    return (" in window " if len(ws) == 1 else " in windows ") + ", ".join(ws)


def edit_sentence(operator: str, edit, windows=None) -> str:
    """What an accepted edit did, in words: the operator, what moved or changed, and the
    window(s) of the kernel it changed (``windows``: ``[{"block", "start", "end"}]``, as
    :func:`asmevo.evolve.candidate.changed_windows` gives them)."""
    edit = edit if isinstance(edit, dict) else {}
    head = f"{operator}{_windows(windows)}"
    kind = edit.get("kind")
    if kind == "moves" and edit.get("moves"):
        moves = [move_sentence(m) if isinstance(m, dict) else str(m) for m in edit["moves"]]
        return f"{head}, move " + "; move ".join(moves) + "."
    if kind == "pipeline" and isinstance(edit.get("pipeline"), str):
        return f"{head}: {pipeline_sentence(edit['pipeline'])}."
    if kind == "crossover":
        taken = [str(b) for b in edit.get("blocks") or ()]
        other = str(edit.get("other", ""))[:12]
        them = "it" if len(taken) == 1 else "them"
        return (f"{head}: took {', '.join(taken) or 'no block'} from the lineage of `{other}`, "
                f"which had changed {them} while this lineage had left {them} as in K0.")
    if kind == "window-edit":
        ed = edit.get("edit") if isinstance(edit.get("edit"), dict) else {}
        n = len(ed["edits"]) if isinstance(ed.get("edits"), list) else 0
        return f"{head}: a window edit, {_n(n, 'window')} replaced with new assembly."
    if kind == "asm":
        return f"{head}: the kernel's assembly rewritten."
    if kind == "pass-plugin":
        p = edit.get("pipeline")
        return f"{head}: a pass plugin" + (f" ran {_code(p)}" if p else "") + "."
    if edit:
        return f"{head}: " + ", ".join(f"{k} {v}" for k, v in edit.items()) + "."
    return f"{head}."

"""Compare two profiles of the same kernel: the speedup and where it came from.

:func:`compare` is what the optimisation loop asks after every candidate: ``a`` is the
parent (or the original), ``b`` the candidate.  ``speedup = a.cycles / b.cycles`` (> 1
means ``b`` is faster).  Per-window deltas say which of ``a``'s hot windows gained or lost
clk, and which windows of ``b`` are new.

Matching windows across a rewrite: a candidate's instruction indices shift (an
instruction removed, a nop inserted, registers renamed), so instructions are aligned
first (:func:`align`): by longest matching blocks (:class:`difflib.SequenceMatcher`) of
the two kernels' instruction texts, then, between those, of their *opcodes* (register
renames keep the alignment); a window
``[start, end]`` of ``a`` maps to ``b``'s range between the first and last aligned
instructions inside it, and its ``b`` clk is the sum of ``b``'s rows over that range.
When no instruction of a window aligns, its ``b`` side is empty (``b_start`` None).
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass, field

from .profile import Profile


@dataclass
class WindowDelta:
    """One hot window of ``a`` and the matching range of ``b``.

    Attributes:
        a_start, a_end: the window in ``a`` (instruction indices, inclusive).
        b_start, b_end: the aligned range in ``b`` (None when nothing aligns; for a
            window new in ``b`` the ``a`` side is None instead).
        a_cycles, b_cycles: attributed clk of each side (summed over hits).
        delta: ``b_cycles - a_cycles`` (negative: ``b`` spends fewer clk there).
        a_bottleneck, b_bottleneck: each side's bottleneck class.
        a_text, b_text: the first instruction of each side, for reports.
    """

    a_start: int | None
    a_end: int | None
    b_start: int | None
    b_end: int | None
    a_cycles: float
    b_cycles: float
    delta: float
    a_bottleneck: str = ""
    b_bottleneck: str = ""
    a_text: str = ""
    b_text: str = ""


@dataclass
class Comparison:
    """Result of :func:`compare`.

    Attributes:
        kernel: the kernel compared (comma-separated when several).
        a_cycles, b_cycles: clk of each profile (summed over the compared kernels).
        speedup: ``a_cycles / b_cycles`` (> 1: ``b`` is faster; inf when ``b`` is 0 clk).
        estimated: True when either side is a model estimate (not hardware).
        both_estimated: True when both sides are model estimates.
        same_model: both sides come from the same model name and version (a speedup
            across different models or sources is not meaningful: see ``note``).
        windows: :class:`WindowDelta` list, ``a``'s hot windows first (hottest first), then
            windows of ``b`` that match none of ``a``'s.
        note: a warning for the reader (different models, different kernels).
    """

    kernel: str
    a_cycles: float
    b_cycles: float
    speedup: float
    estimated: bool
    both_estimated: bool
    same_model: bool
    windows: list = field(default_factory=list)
    note: str = ""

    @property
    def faster(self) -> bool:
        """``b`` is strictly faster than ``a``."""
        return self.b_cycles < self.a_cycles

    def to_json(self) -> dict:
        """A JSON-ready dict."""
        d = asdict(self)
        if d["speedup"] == float("inf"):
            d["speedup"] = None
        return d


def align(a_texts: list[str], b_texts: list[str]) -> dict[int, int]:
    """Index map ``a -> b`` of aligned instructions (see module docstring).

    Two stages, fast on 30,000-instruction kernels: the full texts first (common prefix
    and suffix, then :class:`difflib.SequenceMatcher` with its popular-element heuristic,
    whose matches extend over repeated instructions), then, inside each gap between
    matched runs, the opcodes alone, so that renamed registers still align."""
    n, m = len(a_texts), len(b_texts)
    out: dict[int, int] = {}
    p = 0
    while p < n and p < m and a_texts[p] == b_texts[p]:
        out[p] = p
        p += 1
    q = 0
    while q < n - p and q < m - p and a_texts[n - 1 - q] == b_texts[m - 1 - q]:
        out[n - 1 - q] = m - 1 - q
        q += 1
    a_lo, a_hi, b_lo, b_hi = p, n - q, p, m - q
    if a_lo >= a_hi or b_lo >= b_hi:
        return out
    sm = difflib.SequenceMatcher(None, a_texts[a_lo:a_hi], b_texts[b_lo:b_hi], autojunk=True)
    ia, ib = a_lo, b_lo
    for blk in sm.get_matching_blocks():  # ends with a (len, len, 0) sentinel
        ga, gb = a_lo + blk.a, b_lo + blk.b
        _align_gap(a_texts, b_texts, ia, ga, ib, gb, out)
        for k in range(blk.size):
            out[ga + k] = gb + k
        ia, ib = ga + blk.size, gb + blk.size
    return out


#: largest gap (instructions of a x of b) aligned by opcode; larger gaps stay unaligned
MAX_GAP = 4_000_000


def _align_gap(a_texts, b_texts, a0: int, a1: int, b0: int, b1: int, out: dict) -> None:
    """Align ``a[a0:a1]`` with ``b[b0:b1]`` by opcode (register renames keep alignment)."""
    if a1 <= a0 or b1 <= b0 or (a1 - a0) * (b1 - b0) > MAX_GAP:
        return
    ao = [t.split(None, 1)[0] if t else "" for t in a_texts[a0:a1]]
    bo = [t.split(None, 1)[0] if t else "" for t in b_texts[b0:b1]]
    sm = difflib.SequenceMatcher(None, ao, bo, autojunk=False)
    for blk in sm.get_matching_blocks():
        for k in range(blk.size):
            out[a0 + blk.a + k] = b0 + blk.b + k


def _kernel_names(a: Profile, b: Profile, kernel) -> list[str]:
    if kernel is not None:
        for p, side in ((a, "a"), (b, "b")):
            if kernel not in p.kernels:
                raise KeyError(f"profile {side} has no kernel {kernel!r} "
                               f"(has {', '.join(p.kernels) or 'none'})")
        return [kernel]
    if len(a.kernels) == 1 and len(b.kernels) == 1:
        return [next(iter(a.kernels))]  # the only kernel (a candidate may be renamed)
    common = [k for k in a.kernels if k in b.kernels]
    if not common:
        raise KeyError("the profiles share no kernel")
    return common


def compare(a: Profile, b: Profile, kernel: str | None = None) -> Comparison:
    """Compare profile ``b`` (candidate) with ``a`` (parent) for ``kernel`` (default: the
    only kernel of each, else every kernel both hold).

    Raises:
        KeyError: ``kernel`` is missing from a profile, or the profiles share no kernel.
    """
    names = _kernel_names(a, b, kernel)
    a_cyc = b_cyc = 0.0
    deltas: list[WindowDelta] = []
    for name in names:
        ka = a.kernel(name) if name in a.kernels else a.kernel()
        kb = b.kernel(name) if name in b.kernels else b.kernel()
        a_cyc += float(ka.cycles)
        b_cyc += float(kb.cycles)
        deltas.extend(_window_deltas(ka, kb))
    speedup = (a_cyc / b_cyc) if b_cyc > 0 else (1.0 if a_cyc <= 0 else float("inf"))
    same = (a.model.get("name"), a.model.get("version"), a.source) == (
        b.model.get("name"), b.model.get("version"), b.source)
    note = "" if same else (
        f"different timing sources: {a.model.get('name')} {a.model.get('version')} ({a.source}) "
        f"vs {b.model.get('name')} {b.model.get('version')} ({b.source}); the speedup mixes them")
    return Comparison(kernel=",".join(names), a_cycles=a_cyc, b_cycles=b_cyc, speedup=speedup,
                      estimated=bool(a.estimated or b.estimated),
                      both_estimated=bool(a.estimated and b.estimated), same_model=same,
                      windows=deltas, note=note)


def _window_deltas(ka, kb) -> list[WindowDelta]:
    ra = sorted(ka.instructions, key=lambda r: r.index)
    rb = sorted(kb.instructions, key=lambda r: r.index)
    na = (max((r.index for r in ra), default=-1) + 1)
    nb = (max((r.index for r in rb), default=-1) + 1)
    ta = [""] * na
    tb = [""] * nb
    ca = [0.0] * na
    cb = [0.0] * nb
    for r in ra:
        ta[r.index] = r.text
        ca[r.index] += float(r.latency or 0.0)
    for r in rb:
        tb[r.index] = r.text
        cb[r.index] += float(r.latency or 0.0)
    amap = align(ta, tb)
    out = []
    covered_b: set[int] = set()
    for w in ka.windows:
        mapped = [amap[i] for i in range(w.start, w.end + 1) if i in amap]
        if mapped:
            bs, be = min(mapped), max(mapped)
            bc = sum(cb[bs:be + 1])
            covered_b.update(range(bs, be + 1))
            bw = _best_overlap(kb.windows, bs, be)
            out.append(WindowDelta(w.start, w.end, bs, be, float(w.cycles), bc, bc - w.cycles,
                                   w.bottleneck, bw.bottleneck if bw else "",
                                   ta[w.start] if w.start < na else "", tb[bs]))
        else:
            out.append(WindowDelta(w.start, w.end, None, None, float(w.cycles), 0.0,
                                   -float(w.cycles), w.bottleneck, "",
                                   ta[w.start] if w.start < na else "", ""))
    for w in kb.windows:  # windows of b that none of a's windows covers
        if any(i in covered_b for i in range(w.start, w.end + 1)):
            continue
        out.append(WindowDelta(None, None, w.start, w.end, 0.0, float(w.cycles), float(w.cycles),
                               "", w.bottleneck, "", tb[w.start] if w.start < nb else ""))
    return out


def _best_overlap(windows, s: int, e: int):
    best, ov = None, 0
    for w in windows:
        o = min(e, w.end) - max(s, w.start) + 1
        if o > ov:
            best, ov = w, o
    return best

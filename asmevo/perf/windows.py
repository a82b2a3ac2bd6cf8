"""Hot windows: the contiguous instruction ranges where a profile's cycles go.

:func:`hot_windows` reads one kernel's per-instruction rows (any timing source: the
trace-driven CU model, the static estimate, a real rocprofv3 thread trace) and returns
:class:`~asmevo.perf.profile.Window` objects, hottest first.

How windows are cut (deterministic, one code path for every source):

1. a window never crosses a basic-block boundary, except that windows of consecutive
   blocks of the same innermost loop body are merged while the result stays at most
   ``max_len`` instructions (so a small loop body is one window);
2. a block longer than ``max_len`` instructions is cut around its hottest ``max_len``-long
   run (largest sum of attributed clk, prefix sums), then the parts left and right of it
   are cut the same way;
3. instructions with no attributed clk are trimmed from both ends of every window;
4. windows are ranked by attributed clk (``row.latency``, summed over hits), ties by
   start index; ``share`` is a window's clk over the kernel's total.

A window's **bottleneck class** (one of :data:`~asmevo.perf.profile.BOTTLENECKS`) comes
from the causes its rows' clk were attributed to, and, for issue/dependency/pipe clk,
from the category of the instructions that carry them:

=====================  =============================================================
dominant cause         class
=====================  =============================================================
``vmcnt``              ``memory-bandwidth`` when the kernel is bandwidth bound,
                       else ``memory-latency``
``lgkmcnt``            ``lds`` when the window holds DS instructions, else ``scalar``
``barrier``            ``barrier``
``hazard``             ``hazard-nops``
``idle``               ``occupancy``
issue/dependency/pipe  by instruction category: MFMA -> ``mfma``, other VALU ->
                       ``valu``, SALU/SMEM/branch -> ``scalar``, DS -> ``lds``,
                       VMEM/FLAT -> ``memory-bandwidth``, ``s_nop`` -> ``hazard-nops``
=====================  =============================================================

Hardware rows (rocprofv3 ``stats_*.csv``) carry no causes; they are derived from
``stall``/``idle`` and the instruction (:func:`row_causes`).
"""

from __future__ import annotations

from ..analysis._isa import facts
from .profile import BOTTLENECKS, CAUSES, Window

#: longest window, in instructions (an edit window an agent or a z3 proof can handle)
MAX_LEN = 32


def kernel_pcs(kernel) -> list[int]:
    """Byte offset of every instruction from the kernel's first one (``Kernel.instructions()``
    order): cumulative encoded sizes (the original encoding, else the ISA table's size, else
    4 bytes), so an edited candidate's offsets are what its rebuilt code would have."""
    out = []
    pc = 0
    for inst in kernel.instructions():
        out.append(pc)
        try:
            size = inst.size
        except Exception:  # an instruction the ISA table does not size
            size = None
        pc += size if size else 4
    return out


def category(inst) -> str:
    """Issue category of an instruction for bottleneck classes: ``mfma``, ``valu``, ``salu``,
    ``smem``, ``branch``, ``vmem`` (MUBUF/global/scratch/FLAT), ``ds``, ``waitcnt``, ``nop``,
    ``barrier`` or ``other``."""
    op = inst.opcode
    if op.startswith("s_waitcnt"):
        return "waitcnt"
    if op == "s_nop":
        return "nop"
    if op == "s_barrier":
        return "barrier"
    f = facts(inst)
    if f.mfma:
        return "mfma"
    if f.valu:
        return "valu"
    if f.ds:
        return "ds"
    if f.vmem or f.flat:
        return "vmem"
    if f.smem:
        return "smem"
    if f.branch or op.startswith("s_endpgm"):
        return "branch"
    if f.salu:
        return "salu"
    return "other"


_CAT_CLASS = {"mfma": "mfma", "valu": "valu", "salu": "scalar", "smem": "scalar",
              "branch": "scalar", "ds": "lds", "vmem": "memory-bandwidth", "nop": "hazard-nops",
              "waitcnt": "scalar", "barrier": "barrier", "other": "scalar"}


def row_causes(row, inst) -> dict:
    """``row.causes`` when the source filled it; otherwise causes derived from a hardware
    row's ``stall``/``idle`` clk and the instruction: idle -> ``idle``; stall of an
    ``s_waitcnt`` -> the first counter it names (``vmcnt``/``lgkmcnt``), of ``s_barrier``
    -> ``barrier``, of ``s_nop`` -> ``hazard``, else ``dependency``; the rest -> ``issue``."""
    if row.causes:
        return row.causes
    out = {}
    idle = max(0.0, float(row.idle or 0.0))
    stall = max(0.0, float(row.stall or 0.0))
    rest = max(0.0, float(row.latency or 0.0) - idle - stall)
    if idle:
        out["idle"] = idle
    if stall:
        op = inst.opcode if inst is not None else ""
        if op.startswith("s_waitcnt"):
            t = inst.text()
            i_vm, i_lg = t.find("vmcnt"), t.find("lgkmcnt")
            key = "vmcnt" if i_vm >= 0 and (i_lg < 0 or i_vm < i_lg) else "lgkmcnt"
        elif op == "s_barrier":
            key = "barrier"
        elif op == "s_nop":
            key = "hazard"
        else:
            key = "dependency"
        out[key] = out.get(key, 0.0) + stall
    if rest:
        out["issue"] = rest
    return out


def classify(insts, rows, kernel_bottleneck: str | None = None) -> str:
    """Bottleneck class of the instructions ``insts`` with their rows (same length; a row
    may be None): see the module docstring."""
    by_cause = dict.fromkeys(CAUSES, 0.0)
    by_cat: dict[str, float] = {}
    has_ds = False
    for inst, row in zip(insts, rows):
        cat = category(inst)
        has_ds = has_ds or cat == "ds"
        if row is None:
            continue
        for c, v in row_causes(row, inst).items():
            if c not in by_cause or not v:
                continue
            by_cause[c] += v
            if c in ("issue", "dependency", "pipe"):
                by_cat[cat] = by_cat.get(cat, 0.0) + v
    if not any(by_cause.values()):
        return kernel_bottleneck if kernel_bottleneck in BOTTLENECKS else "valu"
    cause = max(CAUSES, key=lambda c: (by_cause[c], -CAUSES.index(c)))
    if cause == "vmcnt":
        return "memory-bandwidth" if kernel_bottleneck == "memory-bandwidth" else "memory-latency"
    if cause == "lgkmcnt":
        return "lds" if has_ds else "scalar"
    if cause == "barrier":
        return "barrier"
    if cause == "hazard":
        return "hazard-nops"
    if cause == "idle":
        return "occupancy"
    if not by_cat:
        return "valu"
    cat = max(sorted(by_cat), key=lambda k: by_cat[k])
    cls = _CAT_CLASS.get(cat, "scalar")
    if cls == "memory-bandwidth" and kernel_bottleneck != "memory-bandwidth":
        cls = "memory-latency" if kernel_bottleneck == "memory-latency" else cls
    return cls


def _cut(cyc: list, s: int, e: int, max_len: int, out: list) -> None:
    """Windows of ``cyc[s:e]`` (half-open) into ``out`` (rules 2 and 3)."""
    while s < e and cyc[s] <= 0:
        s += 1
    while e > s and cyc[e - 1] <= 0:
        e -= 1
    if e <= s:
        return
    if e - s <= max_len:
        out.append((s, e))
        return
    best, bs, acc = -1.0, s, sum(cyc[s:s + max_len])
    best, bs = acc, s
    for i in range(s + 1, e - max_len + 1):
        acc += cyc[i + max_len - 1] - cyc[i - 1]
        if acc > best + 1e-12:
            best, bs = acc, i
    _cut(cyc, s, bs, max_len, out)
    ws, we = bs, bs + max_len
    while ws < we and cyc[ws] <= 0:
        ws += 1
    while we > ws and cyc[we - 1] <= 0:
        we -= 1
    if we > ws:
        out.append((ws, we))
    _cut(cyc, bs + max_len, e, max_len, out)


def hot_windows(kernel, rows, top: int | None = None, *, max_len: int = MAX_LEN,
                kernel_bottleneck: str | None = None, cfg=None) -> list[Window]:
    """The hot windows of ``kernel`` from its per-instruction ``rows`` (rows of a
    :class:`~asmevo.perf.profile.KernelProfile`; ``row.index`` indexes
    ``Kernel.instructions()``; missing rows count 0 clk), hottest first, at most ``top``.

    Args:
        max_len: longest window in instructions (:data:`MAX_LEN`).
        kernel_bottleneck: the kernel's class, which tells memory-bandwidth from
            memory-latency windows.
        cfg: the kernel's :class:`~asmevo.analysis.cfg.CFG` when the caller has it.
    """
    insts = list(kernel.instructions())
    n = len(insts)
    cyc = [0.0] * n
    by_index: list = [None] * n
    for r in rows:
        if 0 <= r.index < n:
            by_index[r.index] = r
            cyc[r.index] += max(0.0, float(r.latency or 0.0))
    total = sum(cyc)
    if total <= 0 or n == 0:
        return []
    pcs = [r.pc if r is not None else None for r in by_index]
    if any(p is None for p in pcs):
        kp = kernel_pcs(kernel)
        pcs = [kp[i] if p is None else p for i, p in enumerate(pcs)]
    # block ranges and innermost loop of each block
    if cfg is None:
        from ..analysis.cfg import CFG
        cfg = CFG(kernel)
    innermost: dict[int, int] = {}
    for li, lp in enumerate(cfg.loops):  # outermost first: later (smaller) loops win
        for b in lp.blocks:
            innermost[b] = li
    ranges = []
    s = 0
    for bi, b in enumerate(kernel.blocks):
        e = s + len(b.instructions)
        ranges.append((bi, s, e))
        s = e
    cuts: list[tuple[int, int, int]] = []  # (start, end half-open, block index)
    for bi, s, e in ranges:
        part: list = []
        _cut(cyc, s, e, max_len, part)
        cuts.extend((ws, we, bi) for ws, we in part)
    # rule 1: merge windows of consecutive blocks of one loop body
    merged: list[list] = []
    for ws, we, bi in cuts:
        if merged:
            ms, me, mb, mlast = merged[-1]
            if (bi != mlast and bi - 1 == mlast and innermost.get(bi) is not None
                    and innermost.get(bi) == innermost.get(mlast)
                    and _block_end(ranges, mlast) == me and _block_start(ranges, bi) == ws
                    and we - ms <= max_len):
                merged[-1] = [ms, we, mb, bi]
                continue
        merged.append([ws, we, bi, bi])
    scored = sorted(((sum(cyc[ws:we]), ws, we, bi) for ws, we, bi, _ in merged),
                    key=lambda x: (-x[0], x[1]))
    if top is not None:
        scored = scored[:top]
    out = []
    for c, ws, we, bi in scored:
        out.append(Window(start=ws, end=we - 1, start_pc=pcs[ws], end_pc=pcs[we - 1], cycles=c,
                          share=c / total,
                          bottleneck=classify(insts[ws:we], by_index[ws:we], kernel_bottleneck),
                          block=cfg.block_name(bi)))
    return out


def _block_end(ranges, bi: int) -> int:
    return ranges[bi][2]


def _block_start(ranges, bi: int) -> int:
    return ranges[bi][1]

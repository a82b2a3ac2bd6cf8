"""A second opinion on the static timing model: llvm-mca on straight-line ALU blocks.

Usage: python benchmarks/timing_mca.py [FILES...] [--min-size N] [--show N] [--vs-trace]

For every basic block of the corpus code objects (clang, Triton, AITer; or FILES) whose
instructions, without a final branch, are all VALU, SALU or MFMA (no memory access, no
``s_waitcnt``, ``s_nop``, barrier or branch), at least ``--min-size`` (2) of them, with
duplicates (same text) counted once:

* the model's figure: :func:`asmevo.perf.static.straight_line_cycles` (clk for one wave to
  issue the block from an idle state and drain its results; estimate of model
  asmevo-static, MI300X machine table);
* llvm-mca's: ``llvm-mca -mtriple=amdgcn-amd-amdhsa -mcpu=gfx942 -iterations=1``
  ``Total Cycles`` (LLVM's SIDPGFX940FullSpeedModel; one unit is one issue slot = 4 clk).

It prints the Spearman rank correlation of the two (target >= 0.9; scipy when installed,
else numpy ranks with average ties) and the blocks where they disagree most.  Differences
by design (docs/perf.md "llvm-mca"): mca issues an MFMA's VALU reader ``passes`` units
after it where gfx942 needs ``passes + 3`` wait states; mca gives transcendentals a
latency of 4 units but not quarter-rate occupancy; mca treats ``s_waitcnt`` as a 1-unit
SALU op (waits are excluded here).

``--vs-trace`` adds a third opinion at kernel level: for every corpus kernel with a
harness (clang and Triton manifests), the static estimate scaled to the harness's launch
against the trace-driven model (``asmevo.perf.estimate`` with the launch), Spearman over
the kernels' cycles and the share of kernels whose bottleneck classes agree.
"""

from __future__ import annotations

import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from asmevo.analysis._isa import facts  # noqa: E402
from asmevo.frontend.loader import load  # noqa: E402
from asmevo.perf.machine import load_machine  # noqa: E402
from asmevo.perf.static import straight_line_cycles  # noqa: E402

TARGET = 0.9
MCA_ARGS = ["-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-iterations=1",
            "-resource-pressure=0", "-instruction-info=0"]
_INTERNAL = re.compile(r"^s_(nop|waitcnt|barrier|setprio|sleep|endpgm|sethalt|icache_inv|trap|"
                       r"ttracedata|incperflevel|decperflevel|code_end|wakeup|sendmsg|setreg|getreg|"
                       r"set_gpr_idx|branch|cbranch|setpc|swappc|call|rfe|getpc)")


def corpus_files() -> list[pathlib.Path]:
    """Every code object of ../shared/corpus (clang, Triton, AITer)."""
    c = ROOT.parent / "shared" / "corpus"
    return sorted(c.glob("*.co")) + sorted((c / "triton").glob("*.hsaco")) + \
        sorted((c / "aiter").rglob("*.co"))


def alu_only(insts) -> bool:
    """Every instruction is VALU, SALU or MFMA (no memory, waits, nops, barriers, branches)."""
    for i in insts:
        f = facts(i)
        if f.mem or f.lds_dma or f.branch or _INTERNAL.match(i.opcode):
            return False
        if not (f.valu or f.salu):
            return False
    return True


def blocks_of(path, min_size: int = 2) -> list[tuple[str, list]]:
    """``(name, instructions)`` of every ALU-only straight-line block of one code object."""
    m = load(str(path))
    out = []
    for k in m.kernels:
        for bi, b in enumerate(k.blocks):
            insts = list(b.instructions)
            while insts and (facts(insts[-1]).branch or insts[-1].opcode.startswith("s_endpgm")):
                insts.pop()
            if len(insts) >= min_size and alu_only(insts):
                out.append((f"{pathlib.Path(path).name}:{k.name}:{b.label or f'bb{bi}'}", insts))
    return out


def mca_cycles(blocks: list[list], mca: str) -> list[int | None]:
    """llvm-mca ``Total Cycles`` of each instruction list (None where mca rejects it): one
    run with a code region per block; a failing batch is retried block by block."""
    import subprocess
    text = []
    for n, insts in enumerate(blocks):
        text.append(f"# LLVM-MCA-BEGIN r{n}")
        text.extend(i.text() for i in insts)
        text.append(f"# LLVM-MCA-END r{n}")
    p = subprocess.run([mca, *MCA_ARGS], input="\n".join(text) + "\n", capture_output=True,
                       text=True, timeout=600)
    if p.returncode == 0:
        res: list[int | None] = [None] * len(blocks)
        cur = None
        for line in p.stdout.splitlines():
            mo = re.match(r"\[\d+\] Code Region - r(\d+)", line)
            if mo:
                cur = int(mo.group(1))
                continue
            mo = re.match(r"Total Cycles:\s+(\d+)", line)
            if mo and cur is not None:
                res[cur] = int(mo.group(1))
                cur = None
        return res
    if len(blocks) == 1:
        return [None]
    half = len(blocks) // 2
    return mca_cycles(blocks[:half], mca) + mca_cycles(blocks[half:], mca)


def spearman(x, y) -> float:
    """Spearman's rank correlation (scipy when installed; else Pearson on average ranks)."""
    try:
        from scipy.stats import spearmanr
        return float(spearmanr(x, y).statistic)
    except ImportError:
        import numpy as np

        def ranks(a):
            a = np.asarray(a, dtype=float)
            order = a.argsort(kind="mergesort")
            r = np.empty(len(a))
            r[order] = np.arange(len(a), dtype=float)
            for v in np.unique(a):  # average ties
                idx = a == v
                r[idx] = r[idx].mean()
            return r
        rx, ry = ranks(x), ranks(y)
        return float(np.corrcoef(rx, ry)[0, 1])


def collect(files, min_size: int = 2, mca: str | None = None):
    """``[(name, n instructions, model clk, mca cycles)]`` over the distinct ALU-only blocks."""
    if mca is None:
        from asmevo.llvm import find_tool
        mca = find_tool("llvm-mca")
    machine = load_machine()
    seen = set()
    names, lists = [], []
    for f in files:
        for name, insts in blocks_of(f, min_size):
            key = tuple(i.text() for i in insts)
            if key in seen:
                continue
            seen.add(key)
            names.append(name)
            lists.append(insts)
    mc = mca_cycles(lists, mca) if lists else []
    out = []
    for name, insts, c in zip(names, lists, mc):
        if c is None:
            continue
        out.append((name, len(insts), straight_line_cycles(insts, machine), c))
    return out


def vs_trace() -> tuple[float, float, int]:
    """(Spearman, bottleneck agreement, kernels): static estimate at each harness's launch
    against the trace-driven model, over the corpus kernels with a harness."""
    import json
    from asmevo.emu import harness as H
    from asmevo.perf import estimate
    from asmevo.perf.static import estimate_static
    c = ROOT.parent / "shared" / "corpus"
    st, dy, same = [], [], 0
    for man in (c / "manifest.json", c / "triton" / "manifest.json"):
        for e in json.loads(man.read_text()):
            h = H.load_harness(str(man), e["name"])
            m = load(str(man.parent / e["code_object"]))
            launch = H.make_launch(h, H.make_inputs(h, 0))
            d = estimate(m, e["kernel"], launch).kernel(e["kernel"])
            s = estimate_static(m, e["kernel"], launch).kernel(e["kernel"])
            st.append(s.cycles)
            dy.append(d.cycles)
            same += s.bottleneck == d.bottleneck
    return spearman(st, dy), same / max(1, len(st)), len(st)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", help="code objects (default: the whole corpus)")
    ap.add_argument("--min-size", type=int, default=2)
    ap.add_argument("--show", type=int, default=8, help="largest disagreements shown")
    ap.add_argument("--vs-trace", action="store_true",
                    help="also rank the static estimate against the trace-driven model")
    a = ap.parse_args(argv)
    files = [pathlib.Path(f) for f in a.files] or corpus_files()
    rows = collect(files, a.min_size)
    if len(rows) < 3:
        print(f"only {len(rows)} ALU-only blocks found; nothing to rank")
        return 1
    model = [r[2] for r in rows]
    mca = [r[3] for r in rows]
    rho = spearman(model, mca)
    print(f"{len(rows)} distinct straight-line VALU/SALU/MFMA blocks from {len(files)} code objects")
    print(f"Spearman rank correlation, static model (asmevo-static estimate, clk) vs "
          f"llvm-mca gfx942 (cycles, -iterations=1): {rho:.4f} (target >= {TARGET})")
    # beyond one issue slot per instruction (model: 4 clk each; mca: 1 unit each plus 1 for
    # its pipeline), which blocks does each model slow down?
    slot = load_machine()["issue.wave_slot_clk"]
    xs = [r[2] / slot - r[1] for r in rows]
    ys = [r[3] - r[1] - 1 for r in rows]
    same = sum(1 for a_, b_ in zip(xs, ys) if a_ == 0 and b_ == 0)
    print(f"blocks that both models run at one issue slot per instruction: {same} of {len(rows)}; "
          f"model slower: {sum(1 for a_ in xs if a_ > 0)}, mca slower: {sum(1 for b_ in ys if b_ > 0)}")
    # largest disagreements: model clk per mca unit far from the median
    import statistics
    ratio = [m / max(c, 1) for m, c in zip(model, mca)]
    med = statistics.median(ratio)
    worst = sorted(range(len(rows)), key=lambda i: -abs(ratio[i] / med - 1))[:a.show]
    print(f"median model clk per mca cycle: {med:.2f} (4 = one 4-clk issue slot per mca unit)")
    for i in worst:
        n, k, mdl, c = rows[i]
        print(f"  {n}: {k} instructions, model {mdl:.0f} clk, mca {c} cycles "
              f"(ratio {ratio[i]:.2f})")
    if a.vs_trace:
        r2, agree, n = vs_trace()
        print(f"static estimate (at each harness's launch) vs trace-driven model asmevo-cu, "
              f"{n} corpus kernels: Spearman {r2:.4f}, same bottleneck class {100 * agree:.0f}%")
    return 0 if rho >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())

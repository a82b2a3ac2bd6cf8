"""Liveness against an independent per-register backward search on the corpus.

For every register unit, walk backwards from each instruction that reads it, through
predecessor instructions and blocks, until an instruction that writes it: every point passed
has the unit live.  The per-instruction use/def sets are the analysis' own (the classification
is tested elsewhere); this checks the block-level fixpoint, loops and the per-point sets."""

from asmevo.analysis import AnalysisManager
from asmevo.analysis.cfg import EXIT
from asmevo.analysis.liveness import Liveness
from asmevo.frontend.asm_parser import parse_asm


def _oracle(lv):
    cfg = lv.cfg
    blocks = cfg.blocks
    live_after: dict = {}  # (b, i) -> set of unit indices live after instruction i
    nunits = len(lv.units)
    for u in range(nunits):
        bit = 1 << u
        seen = set()
        stack = []
        for b, rows in enumerate(lv._ud):
            for i, (use, _d) in enumerate(rows):
                if use & bit:
                    stack.append((b, i - 1))  # live after the instruction before the reader
        while stack:
            b, i = stack.pop()
            if i < 0:
                for p in cfg.graph.predecessors(b):
                    if p != EXIT:
                        stack.append((p, len(blocks[p].instructions) - 1))
                continue
            if (b, i) in seen:
                continue
            seen.add((b, i))
            live_after.setdefault((b, i), set()).add(u)
            use, d = lv._ud[b][i]
            if d & bit and not use & bit:
                continue  # written here: not live before it
            if use & bit:
                continue  # the reader itself starts its own search
            stack.append((b, i - 1))
    return live_after


def test_liveness_matches_backward_search(corpus_dir):
    files = sorted(corpus_dir.glob("*.s")) + sorted((corpus_dir / "triton").glob("*.amdgcn"))
    checked = 0
    for p in files:
        m = parse_asm(p.read_text(), str(p))
        for k in m.kernels:
            lv = AnalysisManager(m).get(Liveness, k)
            want = _oracle(lv)
            for b in range(len(lv.cfg.blocks)):
                sets = lv._block_sets(b)
                for i in range(len(lv.cfg.blocks[b].instructions)):
                    got = {u for u in range(len(lv.units)) if sets[i + 1] >> u & 1}
                    assert got == want.get((b, i), set()), (p.name, b, i)
                    checked += 1
    assert checked > 3000

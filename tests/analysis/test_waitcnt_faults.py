"""Seeded faults: every s_waitcnt of the clang/Triton corpus removed, or one count weakened by
one, must be reported exactly when a use depended on it (checked by an explicit-path oracle)."""

import pathlib
import sys

from asmevo.analysis import AnalysisManager
from asmevo.analysis.waitcnt import MAX, NAMES, WaitcntAnalysis, format_waitcnt, parse_waitcnt
from asmevo.frontend.asm_parser import parse_asm, parse_instruction

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from waitcnt_oracle import TooManyPaths, has_dependence  # noqa: E402


def _mutants(w):
    """(description, replacement list) for one s_waitcnt: removal, weaker by one, stronger by one."""
    cur = parse_waitcnt(w)
    yield "remove", [], True
    for c in range(3):
        if cur[c] < MAX[c]:
            new = list(cur)
            new[c] += 1
            yield f"{NAMES[c]}+1", [parse_instruction("s_waitcnt " + format_waitcnt(new))], True
        if 0 < cur[c] < MAX[c]:
            new = list(cur)
            new[c] -= 1
            yield f"{NAMES[c]}-1", [parse_instruction("s_waitcnt " + format_waitcnt(new))], False


def test_seeded_waitcnt_faults(corpus_dir, capsys):
    files = sorted(corpus_dir.glob("*.s")) + sorted((corpus_dir / "triton").glob("*.amdgcn"))
    total = killed = agree = skipped = 0
    for p in files:
        m = parse_asm(p.read_text(), str(p))
        for k in m.kernels:
            am = AnalysisManager(m)
            base = am.get(WaitcntAnalysis, k)
            assert base.violations == [], p
            for w in list(base.waitcnts):
                for desc, repl, weaker in _mutants(w):
                    b, i = k.locate(w)
                    b.instructions[i:i + 1] = repl
                    try:
                        am2 = AnalysisManager(m)
                        reported = bool(am2.get(WaitcntAnalysis, k).violations)
                        try:
                            real = has_dependence(k, am2)
                        except TooManyPaths:
                            real = None
                    finally:
                        b.instructions[i:i + len(repl)] = [w]
                    if not weaker:
                        # a stronger wait can never introduce a violation
                        assert not reported, (p.name, w.text(), desc)
                        continue
                    total += 1
                    killed += reported
                    if real is None:
                        skipped += 1
                        continue
                    assert reported == real, (p.name, k.name, w.text(), desc, reported, real)
                    agree += 1
    with capsys.disabled():
        print(f"\nwaitcnt seeded faults: {total} mutants, {killed} reported "
              f"(kill rate {killed / max(total, 1):.1%}), oracle agreed on {agree}, "
              f"{skipped} too many paths for the oracle")
    assert total > 200 and agree > 0.8 * total

"""WaitcntAnalysis.required(): replacing a wait by its weakest counts keeps every dependence
covered, and one count weaker than that breaks one (checked by the explicit-state oracle), on
the corpus and on random straight-line and looping programs."""

import pathlib
import random
import sys

from asmevo.analysis import AnalysisManager
from asmevo.analysis.waitcnt import MAX, NAMES, WaitcntAnalysis, format_waitcnt
from asmevo.frontend.asm_parser import parse_asm, parse_instruction

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from waitcnt_oracle import has_dependence  # noqa: E402


def _replace(k, w, counts):
    new = [parse_instruction("s_waitcnt " + format_waitcnt(counts))]
    b, i = k.locate(w)
    b.instructions[i:i + 1] = new
    return b, i, new


def _check_kernel(m, k, stats):
    am = AnalysisManager(m)
    wa = am.get(WaitcntAnalysis, k)
    wa.memory_order = False  # register dependencies only: what the oracle checks
    assert wa.violations == []
    for w in list(wa.waitcnts):
        req = wa.required(w)
        counts = tuple(req[n] for n in NAMES)
        b, i, new = _replace(k, w, counts)
        try:
            am2 = AnalysisManager(m)
            assert am2.get(WaitcntAnalysis, k).violations == [], (w.text(), counts)
            assert not has_dependence(k, am2), (w.text(), counts)
            stats["relaxed"] += 1
        finally:
            b.instructions[i:i + 1] = [w]
        for c in range(3):
            if counts[c] >= MAX[c]:
                continue
            weaker = list(counts)
            weaker[c] += 1
            b, i, new = _replace(k, w, weaker)
            try:
                am3 = AnalysisManager(m)
                assert am3.get(WaitcntAnalysis, k).violations, (w.text(), weaker)
                assert has_dependence(k, am3), (w.text(), weaker)
                stats["tight"] += 1
            finally:
                b.instructions[i:i + 1] = [w]


def test_required_on_corpus(corpus_dir):
    stats = {"relaxed": 0, "tight": 0}
    files = sorted(corpus_dir.glob("*.s")) + sorted((corpus_dir / "triton").glob("*.amdgcn"))
    for p in files:
        m = parse_asm(p.read_text(), str(p))
        for k in m.kernels:
            _check_kernel(m, k, stats)
    assert stats["relaxed"] > 300 and stats["tight"] > 300


_LOADS = ["global_load_dword v{d}, v[40:41], off", "ds_read_b32 v{d}, v42",
          "s_load_dword s{s}, s[0:1], 0x0", "flat_load_dword v{d}, v[40:41]",
          "buffer_load_dword v{d}, v42, s[4:7], 0 offen", "global_store_dword v[40:41], v{d}, off",
          "ds_write_b32 v42, v{d}"]


def _random_program(rng: random.Random) -> str:
    lines = ["k:"]
    loop = rng.random() < 0.4
    body = []
    for _ in range(rng.randint(3, 14)):
        r = rng.random()
        if r < 0.45:
            body.append(rng.choice(_LOADS).format(d=rng.randint(1, 6), s=rng.randint(8, 11)))
        elif r < 0.75:
            body.append(f"v_add_f32_e32 v{rng.randint(10, 12)}, v{rng.randint(1, 6)}, v20")
        elif r < 0.85:
            body.append(f"s_add_u32 s20, s{rng.randint(8, 11)}, 1")
        else:
            body.append("s_waitcnt " + format_waitcnt((rng.randint(0, 3), rng.randint(0, 3), 7)))
    if loop:
        lines.append("  s_mov_b32 s30, 0")
        lines.append(".Lloop:")
        lines += ["  " + x for x in body]
        lines += ["  s_add_u32 s30, s30, 1", "  s_cmp_lg_u32 s30, 4", "  s_cbranch_scc1 .Lloop"]
    else:
        lines += ["  " + x for x in body]
    lines.append("  s_endpgm")
    return "\n".join(lines) + "\n"


def test_required_on_random_programs():
    """Random programs (loads of every kind, stores, waits, uses, sometimes in a loop): the
    analysis and the oracle agree on whether a dependence is uncovered; then each program is
    repaired with full waits before the reported uses and every wait is checked as above."""
    rng = random.Random(942)
    stats = {"relaxed": 0, "tight": 0}
    for _ in range(200):
        m = parse_asm(_random_program(rng), "<random>")
        k = m.kernels[0]
        for _round in range(8):
            am = AnalysisManager(m)
            viol = am.get(WaitcntAnalysis, k).violations
            assert bool(viol) == has_dependence(k, am)
            if not viol:
                break
            k.insert_before(viol[0].inst, parse_instruction("s_waitcnt vmcnt(0) lgkmcnt(0)"))
        else:
            continue
        _check_kernel(m, k, stats)
    assert stats["relaxed"] > 200 and stats["tight"] > 100, stats

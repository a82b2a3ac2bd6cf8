"""Seeded faults: every s_nop that LLVM put into the clang/Triton corpus, removed or shortened
by one wait state, must be reported by the hazard analysis.

LLVM's hazard recognizer inserts the minimum number of wait states, so each mutant really lacks
a needed wait state, with one explained exception: at -O0, SGPR spills are written with pairs of
``v_writelane_b32`` whose MIR carries an ``implicit-def`` of the whole SGPR pair (visible with
``llc -O0 -stop-after=post-RA-hazard-rec``: ``V_WRITELANE_B32 killed $sgpr0, 0, $vgpr0,
implicit-def $sgpr0_sgpr1``).  LLVM therefore sees "VALU writes s1, VALU reads s1" (rule 13)
and pads with ``s_nop 1``; the machine instruction writes no SGPR, so no hazard exists there.
"""

from asmevo.analysis import AnalysisManager
from asmevo.analysis.hazards import HazardAnalysis
from asmevo.frontend.asm_parser import parse_asm, parse_instruction


def _spill_artifact(block, i) -> bool:
    prev = [x for x in block.instructions[:i] if x.opcode != "s_nop"]
    nxt = block.instructions[i + 1] if i + 1 < len(block.instructions) else None
    return bool(prev) and prev[-1].opcode == "v_writelane_b32" and nxt is not None and \
        nxt.opcode == "v_writelane_b32"


def test_seeded_nop_faults(corpus_dir, capsys):
    files = sorted(corpus_dir.glob("*.s")) + sorted((corpus_dir / "triton").glob("*.amdgcn"))
    total = killed = artifacts = 0
    for p in files:
        m = parse_asm(p.read_text(), str(p))
        for k in m.kernels:
            assert AnalysisManager(m).get(HazardAnalysis, k).violations == [], p
            for nop in [i for i in k.instructions() if i.opcode == "s_nop"]:
                n = nop.operands[0].value
                mutants = [[]] + ([[parse_instruction(f"s_nop {n - 1}")]] if n > 0 else [])
                for repl in mutants:
                    b, i = k.locate(nop)
                    b.instructions[i:i + 1] = repl
                    try:
                        reported = bool(AnalysisManager(m).get(HazardAnalysis, k).violations)
                    finally:
                        b.instructions[i:i + len(repl)] = [nop]
                    total += 1
                    killed += reported
                    if not reported:
                        assert "_O0" in p.name and _spill_artifact(b, i), (p.name, nop.text(), i)
                        artifacts += 1
    with capsys.disabled():
        print(f"\nhazard seeded faults: {total} mutants, {killed} reported "
              f"(kill rate {killed / max(total, 1):.1%}); {artifacts} survivors, all -O0 "
              f"v_writelane spill padding")
    assert total > 200 and killed + artifacts == total and killed > 100


def test_required_nops_equals_llvm_padding(corpus_dir):
    """LLVM pads with the minimum: before every consumer, required_nops equals the wait states of
    the s_nop run LLVM emitted (except the -O0 spill artifact, where it is smaller)."""
    from asmevo.analysis._isa import is_nop
    files = sorted(corpus_dir.glob("*.s")) + sorted((corpus_dir / "triton").glob("*.amdgcn"))
    exact = artifacts = 0
    for p in files:
        m = parse_asm(p.read_text(), str(p))
        for k in m.kernels:
            h = AnalysisManager(m).get(HazardAnalysis, k)
            for b in k.blocks:
                run = 0
                for i, x in enumerate(b.instructions):
                    if x.opcode == "s_nop":
                        run += is_nop(x)
                        continue
                    if run:
                        r = h.required_nops(x)
                        if r == run:
                            exact += 1
                        else:
                            assert r < run and "_O0" in p.name and _spill_artifact(b, i - 1), \
                                (p.name, i, x.text(), run, r)
                            artifacts += 1
                    run = 0
    assert exact >= 80 and exact + artifacts > 130

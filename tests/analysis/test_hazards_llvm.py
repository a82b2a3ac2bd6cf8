"""Hazards against LLVM itself: compile kernels that need s_nop padding with clang 19 and check
that required_nops() asks for exactly the wait states LLVM's GCNHazardRecognizer inserted
before every padded instruction, and that one wait state less is reported."""

import pathlib
import subprocess

import pytest

from asmevo.analysis import AnalysisManager
from asmevo.analysis._isa import is_nop
from asmevo.analysis.hazards import HazardAnalysis
from asmevo.errors import ToolNotFoundError
from asmevo.frontend.asm_parser import parse_asm, parse_instruction
from asmevo.llvm import find_tool

SRC = pathlib.Path(__file__).parent / "data" / "hazard_kernels.cl"


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    try:
        clang = find_tool("clang")
    except ToolNotFoundError as e:
        pytest.skip(str(e))
    out = tmp_path_factory.mktemp("hz") / "k.s"
    subprocess.run([clang, "-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa",
                    "-mcpu=gfx942", "-O3", "-nogpulib", "-S", "-o", str(out), str(SRC)],
                   check=True, capture_output=True)
    return parse_asm(out.read_text(), str(out))


def _runs(k):
    """(block, index of the padded instruction, wait states of the s_nop run before it)."""
    for b in k.blocks:
        run = 0
        for i, x in enumerate(b.instructions):
            if x.opcode == "s_nop":
                run += is_nop(x)
                continue
            if run:
                yield b, i, run
            run = 0


def test_required_nops_match_llvm(compiled):
    m = compiled
    total = 0
    rules = set()
    for k in m.kernels:
        h = AnalysisManager(m).get(HazardAnalysis, k)
        assert h.violations == [], [v.to_json() for v in h.violations]
        for b, i, run in _runs(k):
            assert h.required_nops(b.instructions[i]) == run, (k.name, b.instructions[i].text())
            total += 1
        # one wait state less before each padded instruction must be reported
        for b, i, run in list(_runs(k)):
            j = i - 1  # the last s_nop of the run
            nop = b.instructions[j]
            n = nop.operands[0].value
            b.instructions[j:j + 1] = [parse_instruction(f"s_nop {n - 1}")] if n else []
            try:
                hz = AnalysisManager(m).get(HazardAnalysis, k).violations
                assert hz, (k.name, b.instructions[i - (0 if n else 1)].text())
                rules |= {v.rule for v in hz}
            finally:
                b.instructions[j:j + (1 if n else 0)] = [nop]
    assert total >= 20
    # setreg, lane select, DPP, wide store, SGPR forwarding, VALU->MFMA, MFMA->MFMA SrcA/B,
    # MFMA->VALU/memory, DOT, soft clause: all exercised against LLVM's own padding
    assert {3, 6, 7, 10, 13, 17, 22, 23, 26, 28} <= rules, rules

"""Waitcnt against LLVM itself: clang-compiled kernels with FLAT (vmcnt and lgkmcnt), SMEM and
LDS mixes and calls (the callee returns with every counter at zero) have no violation, every
wait LLVM inserted is exactly as strong as required() says, and removing one is reported."""

import pathlib
import subprocess

import pytest

from asmevo.analysis import AnalysisManager
from asmevo.analysis.waitcnt import NAMES, WaitcntAnalysis, parse_waitcnt
from asmevo.errors import ToolNotFoundError
from asmevo.frontend.asm_parser import parse_asm
from asmevo.llvm import find_tool

SRC = pathlib.Path(__file__).parent / "data" / "waitcnt_kernels.cl"


def test_llvm_waits_are_exact(tmp_path):
    try:
        clang = find_tool("clang")
    except ToolNotFoundError as e:
        pytest.skip(str(e))
    out = tmp_path / "w.s"
    subprocess.run([clang, "-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa",
                    "-mcpu=gfx942", "-O3", "-nogpulib", "-S", "-o", str(out), str(SRC)],
                   check=True, capture_output=True)
    m = parse_asm(out.read_text(), str(out))
    waits = 0
    for k in m.kernels:
        assert any(i.opcode == "s_swappc_b64" for i in k.instructions())
        w = AnalysisManager(m).get(WaitcntAnalysis, k)
        assert w.violations == []
        for x in w.waitcnts:
            req = w.required(x)
            assert tuple(req[n] for n in NAMES) == parse_waitcnt(x), x.text()
            b, i = k.locate(x)
            del b.instructions[i]
            try:
                assert AnalysisManager(m).get(WaitcntAnalysis, k).violations
            finally:
                b.instructions.insert(i, x)
            waits += 1
    assert waits >= 4

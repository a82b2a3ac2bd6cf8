"""The ``s_nop 1`` LLVM puts between two ``v_writelane_b32`` of an SGPR-pair spill at -O0
(issue 14, open question): no gfx942 hazard rule needs it.

LLVM's SGPR spill (``SIRegisterInfo::spillSGPR``) gives the first lane write of a
multi-register spill an ``implicit-def`` of the whole SGPR tuple ("We may be spilling a
super-register which is only partially defined, and need to ensure later spills think the
value is defined").  ``GCNHazardRecognizer::checkVALUHazards`` (``hasVDecCoExecHazard``,
gfx940+) then sees a VALU that "writes" ``s1`` followed by a VALU that reads ``s1`` and asks
for ``VALUWriteSGPRVALUReadWaitstates`` = 2 wait states (``s_nop 1``).  The hardware
instruction writes one lane of a VGPR and no SGPR, so asmevo's rule 13 (VALU writes SGPR ->
VALU reads it) does not apply and the nop may go.  A real VALU write of the SGPR still
needs the 2 wait states.
"""

from __future__ import annotations

import pathlib
import re
import shutil
import subprocess

import pytest

from asmevo.analysis import AnalysisManager
from asmevo.analysis.hazards import HazardAnalysis
from asmevo.frontend.asm_parser import parse_asm

O0 = ["vadd_f32_O0", "softmax_row_O0", "sgemm_tiled_O0", "scan_inclusive_i32_O0"]
PAIR = re.compile(r"\tv_writelane_b32 (v\d+), (s\d+), (\d+)\n\ts_nop 1\n"
                  r"\tv_writelane_b32 \1, (s\d+), (\d+)\n")


@pytest.mark.corpus
@pytest.mark.parametrize("name", O0)
def test_writelane_pair_nops_of_O0_spills_are_not_needed(corpus_dir, name):
    text = (corpus_dir / f"{name}.s").read_text()
    n = len(PAIR.findall(text))
    assert n, f"{name}: no writelane pair with s_nop 1"
    stripped = PAIR.sub(lambda m: f"\tv_writelane_b32 {m[1]}, {m[2]}, {m[3]}\n"
                        f"\tv_writelane_b32 {m[1]}, {m[4]}, {m[5]}\n", text)
    for t in (text, stripped):
        m = parse_asm(t, f"{name}.s")
        k = m.kernels[0]
        h = HazardAnalysis(k, AnalysisManager(m))
        assert h.violations == [], [v.to_json() for v in h.violations]
    # the second write of each pair needs no wait state once the nop is gone (other nops,
    # after a v_readlane that really writes the SGPR, stay needed: rule 13)
    insts = list(k.instructions())
    seconds = [b for a, b in zip(insts, insts[1:])
               if a.opcode == b.opcode == "v_writelane_b32" and a.operands[0] == b.operands[0]]
    assert len(seconds) >= n
    for inst in seconds:
        assert h.required_nops(inst) == 0, inst.text()


def test_a_real_valu_sgpr_write_before_writelane_needs_two(kern):
    """Rule 13 (VALU writes SGPR -> VALU reads it, 2 wait states) for the data operand of
    ``v_writelane``; rule 6 (lane select, 4) for its SGPR lane select."""
    k, am = kern("k:\nv_cmp_lt_i32_e64 s[0:1], v1, v2\nv_writelane_b32 v0, s1, 1\ns_endpgm\n")
    h = am.get(HazardAnalysis, k)
    assert {(v.rule, v.required) for v in h.violations} == {(13, 2)}
    k, am = kern("k:\nv_cmp_lt_i32_e64 s[0:1], v1, v2\nv_writelane_b32 v0, s4, s1\ns_endpgm\n")
    h = am.get(HazardAnalysis, k)
    assert (6, 4) in {(v.rule, v.required) for v in h.violations}


def test_spill_pair_without_valu_sgpr_write_needs_nothing(kern):
    k, am = kern("k:\ns_mov_b64 s[0:1], exec\nv_writelane_b32 v0, s0, 0\n"
                 "v_writelane_b32 v0, s1, 1\ns_endpgm\n")
    assert am.get(HazardAnalysis, k).violations == []


_MIR = """---
name: f
tracksRegLiveness: true
body: |
  bb.0:
    liveins: $sgpr0, $sgpr1, $vgpr0
    $sgpr0_sgpr1 = S_MOV_B64 $exec
    $vgpr0 = V_WRITELANE_B32 $sgpr0, 0, $vgpr0{extra}
    $vgpr0 = V_WRITELANE_B32 $sgpr1, 1, $vgpr0
    S_ENDPGM 0
...
"""


def _llc():
    for d in ("/usr/lib/llvm-19/bin", "/usr/lib/llvm-20/bin", "/opt/rocm/llvm/bin"):
        p = pathlib.Path(d) / "llc"
        if p.exists():
            return str(p)
    return shutil.which("llc")


def test_llvm_pads_only_because_of_the_spill_implicit_def(tmp_path):
    """LLVM's own hazard recognizer as the oracle: the nop appears with the spill's
    ``implicit-def $sgpr0_sgpr1`` on the first write and disappears without it."""
    llc = _llc()
    if llc is None:
        pytest.skip("llc not installed")
    out = {}
    for tag, extra in (("plain", ""), ("spill", ", implicit-def $sgpr0_sgpr1")):
        p = tmp_path / f"{tag}.mir"
        p.write_text(_MIR.format(extra=extra))
        r = subprocess.run([llc, "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx942",
                            "-run-pass=post-RA-hazard-rec", "-o", "-", str(p)],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        out[tag] = "S_NOP" in r.stdout
    assert out == {"plain": False, "spill": True}

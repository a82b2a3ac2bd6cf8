"""rocprofv3 PC-sampling CSV import, on small files in the documented layout with the
instructions of a real code object."""

from __future__ import annotations

import csv
import pathlib

import pytest

from asmevo.errors import AsmevoError
from asmevo.frontend.loader import load
from asmevo.perf.pcsampling import read_pc_sampling

EX = pathlib.Path(__file__).resolve().parents[2] / "examples"
HDR = ["Sample_Timestamp", "Exec_Mask", "Dispatch_Id", "Instruction", "Instruction_Comment",
       "Correlation_Id", "Wave_Issued_Instruction", "Instruction_Type", "Stall_Reason",
       "Wave_Count"]
R = "ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_"


def _write(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, quoting=csv.QUOTE_ALL)
        w.writerow(HDR)
        for i, (inst, issued, reason, disp) in enumerate(rows):
            w.writerow([1000 + i, "18446744073709551615", disp, inst, "", 1, issued,
                        "VALU", reason, 4])


def test_samples_mapped_to_instructions(tmp_path):
    m = load(str(EX / "vadd_f32.co"))
    rows = ([("s_waitcnt vmcnt(0)", "0", R + "WAITCNT", 1)] * 6
            + [("v_add_f32_e32 v2, v6, v7", "1", "", 1)] * 2
            + [("s_waitcnt lgkmcnt(0)", "0", R + "WAITCNT", 1)] * 2      # two such waits
            + [("global_load_dword v6, v[4:5], off", "0", R + "ARBITER_NOT_WIN", 1)]
            + [("v_bogus", "1", "", 1)]
            + [("s_endpgm", "1", "", 2)])
    p = tmp_path / "x_pc_sampling_stochastic.csv"
    _write(p, rows)
    kt = tmp_path / "x_kernel_trace.csv"
    kt.write_text("Dispatch_Id,Kernel_Id,Kernel_Name\n1,7,vadd_f32\n2,8,other_kernel\n")
    prof = read_pc_sampling(str(p), m, kernel_trace=str(kt), interval=64)
    assert prof.estimated is False and prof.source == "hardware"
    kp = prof.kernel("vadd_f32")
    by = {r.index: r for r in kp.instructions}
    texts = {r.text: r for r in kp.instructions}
    w = texts["s_waitcnt vmcnt(0)"]
    assert w.hits == 6 and w.stall == 6 * 64 and w.causes == {"vmcnt": 6 * 64}
    assert texts["v_add_f32_e32 v2, v6, v7"].causes == {"issue": 128}
    # an instruction text that occurs twice shares its samples
    lg = [r for r in kp.instructions if r.text == "s_waitcnt lgkmcnt(0)"]
    assert len(lg) == 2 and all(r.hits == 1 and r.causes == {"lgkmcnt": 64} for r in lg)
    assert texts["global_load_dword v6, v[4:5], off"].causes == {"pipe": 64}
    assert kp.extra["unmatched"] == 1 and kp.extra["other_kernels"] == 1
    assert kp.extra["ambiguous_samples"] == 2
    assert "s_endpgm" not in texts
    assert kp.cycles == pytest.approx(11 * 64)    # 11 matched samples of this kernel x interval
    # the hottest window holds the vmcnt wait that has most samples
    wi = w.index
    assert kp.windows and kp.windows[0].start <= wi <= kp.windows[0].end


def test_bad_files(tmp_path):
    m = load(str(EX / "vadd_f32.co"))
    p = tmp_path / "bad.csv"
    p.write_text("a,b\n1,2\n")
    with pytest.raises(AsmevoError, match="no Instruction column"):
        read_pc_sampling(str(p), m)
    _write(p, [("v_bogus", "1", "", 1)])
    with pytest.raises(AsmevoError, match="no sample of kernel vadd_f32"):
        read_pc_sampling(str(p), m)
    with pytest.raises(AsmevoError, match="cannot read"):
        read_pc_sampling(str(tmp_path / "missing.csv"), m)

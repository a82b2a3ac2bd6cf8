"""asmevo profile with real profiles (--pc-sampling), the model beside them (--compare-model),
and --device hip without a GPU."""

from __future__ import annotations

import csv
import json
import pathlib

from asmevo.cli import main

EX = pathlib.Path(__file__).resolve().parents[2] / "examples"
R = "ROCPROFILER_PC_SAMPLING_INSTRUCTION_NOT_ISSUED_REASON_"


def _pcs(path):
    rows = ([("s_waitcnt vmcnt(0)", "0", R + "WAITCNT")] * 20
            + [("v_add_f32_e32 v2, v6, v7", "1", "")] * 3)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["Sample_Timestamp", "Exec_Mask", "Dispatch_Id", "Instruction",
                    "Instruction_Comment", "Correlation_Id", "Wave_Issued_Instruction",
                    "Instruction_Type", "Stall_Reason", "Wave_Count"])
        for i, (a, b, c) in enumerate(rows):
            w.writerow([i, 1, 1, a, "", 1, b, "VALU", c, 1])


def test_pc_sampling_with_model_beside(tmp_path, capsys):
    p = tmp_path / "x_pc_sampling_stochastic.csv"
    _pcs(p)
    rc = main(["profile", str(EX / "vadd_f32.co"), "--harness", str(EX / "vadd_f32.json"),
               "--pc-sampling", str(p), "--pc-interval", "64", "--compare-model", "--json"])
    out = capsys.readouterr().out
    assert rc == 0
    d = json.loads(out)
    assert d["estimated"] is False and d["source"] == "hardware"
    k = d["kernels"]["vadd_f32"]
    assert k["cycles"] == 23 * 64
    cmp = d["model_comparison"]["vadd_f32"]
    assert cmp["model"]["name"] and cmp["model_cycles"] > 0
    w = cmp["windows"][0]
    assert 0 < w["model_share"] <= 1 and w["real_share"] > 0.8
    assert abs(w["error"] - (w["model_share"] - w["real_share"])) < 1e-9


def test_compare_model_needs_a_real_profile(capsys):
    rc = main(["profile", str(EX / "vadd_f32.co"), "--compare-model"])
    assert rc == 2 and "--att or --pc-sampling" in capsys.readouterr().err


def test_device_hip_without_gpu(capsys):
    rc = main(["profile", str(EX / "vadd_f32.co"), "--harness", str(EX / "vadd_f32.json"),
               "--device", "hip"])
    err = capsys.readouterr().err
    assert rc == 2 and "hip" in err and "Traceback" not in err

"""A winner that fails the final check is dropped and the next best is checked."""

import json

from evolve_helpers import VADD_JSON


def test_failing_winner_is_dropped(tmp_path, vadd_nops, monkeypatch):
    from asmevo.evolve import report
    from asmevo.evolve.config import load_config
    from asmevo.evolve.loop import run_evolve
    real = report.final_check
    calls = []

    def flaky(run, rec, path):
        ok, receipt, how, cand = real(run, rec, path)
        calls.append(rec["hash"])
        if len(calls) == 1:   # pretend the best-looking candidate failed its final check
            receipt = dict(receipt, verdict=dict(receipt["verdict"], status="rejected-output-mismatch"))
            return False, receipt, how, cand
        return ok, receipt, how, cand

    monkeypatch.setattr(report, "final_check", flaky)
    cfg = load_config(None, {"kernel_file": str(vadd_nops), "harness": str(VADD_JSON),
                             "out": str(tmp_path / "run"), "budget": 3, "quiet": True,
                             "final_trials": 4, "operators": "passes,mutate"})
    res = run_evolve(cfg)
    rep = json.loads((tmp_path / "run" / "report.json").read_text())
    assert res.exit_status == 0 and len(calls) >= 2
    assert [d["hash"] for d in rep["dropped"]] == [calls[0]]
    assert rep["winner"]["hash"] == calls[1] != calls[0]
    assert rep["final_check"]["verdict"]["status"] == "accepted"

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


def test_a_build_that_does_not_hold_the_winner_is_dropped(tmp_path, vadd_nops, monkeypatch):
    """best.s and best.diff are printed from the winner's blocks; best.co is built from them.
    A builder that writes other code (as the in-place patcher did for moved instructions: it
    kept K0's bytes) must not pass: the final check compares the built code with the
    winner's, instruction by instruction, and drops it as ``build-mismatch``."""
    import shutil
    from asmevo.backend import rebuild
    from asmevo.evolve.config import load_config
    from asmevo.evolve.loop import run_evolve

    def k0_instead(module, path, inputs=()):
        shutil.copyfile(str(vadd_nops), path)
        return "patch"

    monkeypatch.setattr(rebuild, "write_code_object", k0_instead)
    from evolve_helpers import SCRIPTED
    cfg = load_config(None, {"kernel_file": str(vadd_nops), "harness": str(VADD_JSON),
                             "out": str(tmp_path / "run"), "budget": 1, "quiet": True,
                             "final_trials": 4, "operators": "agent",
                             "agent": f"python {SCRIPTED} --state {tmp_path / 'agent'} "
                                      "--plan good"})
    run_evolve(cfg)
    rep = json.loads((tmp_path / "run" / "report.json").read_text())
    dropped = {d["hash"]: d for d in rep["dropped"]}
    assert dropped, (rep["winner"], rep.get("k0_cycles"), rep["best_cycles"])
    assert all(d["receipt"]["verdict"]["status"] == "build-mismatch" for d in dropped.values()), dropped
    assert rep["winner"]["is_k0"], rep["winner"]

"""A run on the bundled example kernel ends with a winner that passes the final check."""

import json

from evolve_helpers import VADD_CO, VADD_JSON, evolve_cli, sha


def test_vadd_example_run(tmp_path):
    before = sha(VADD_CO)
    run = tmp_path / "run"
    p = evolve_cli(VADD_CO, "--harness", VADD_JSON, "--out", run, "--budget", 8, "--seed", 0,
                   "--quiet")
    assert p.returncode == 0, p.stderr
    assert "estimated speed-up" in p.stdout
    rep = json.loads((run / "report.json").read_text())
    assert rep["final_check"]["verdict"]["status"] == "accepted"
    assert rep["final_check"]["reference"]["match"] is True
    assert rep["speedup_estimated"] >= 1.0 and rep["estimated"] is True
    assert rep["evaluated"] == 8
    assert sum(s["proposed"] for s in rep["operators"].values()) == rep["steps"]
    # best.co is a loadable code object the verifier accepts against K0
    from asmevo.verify import verify
    v = verify(str(VADD_CO), str(run / "best.co"), harness=str(VADD_JSON), level="all")
    assert v.accepted, v.text()
    assert (run / "trajectory.png").read_bytes()[:4] == b"\x89PNG"
    md = (run / "report.md").read_text()
    assert "# asmevo evolve: vadd_f32" in md
    # the reference comparison in words, not a Python bool ("reference: True")
    assert "reference: 1 output buffer (c) matches the numpy reference" in md
    assert "reference: True" not in md
    events = [json.loads(l) for l in (run / "events.jsonl").read_text().splitlines()]
    assert events[0]["event"] == "start" and any(e["event"] == "final" for e in events)
    assert sha(VADD_CO) == before

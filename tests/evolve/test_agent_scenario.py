"""The scripted agent: good edit, wrong edit, malformed JSON, timeout, slower edit."""

import json
import sqlite3

import pytest

from evolve_helpers import SCRIPTED, VADD_JSON, evolve_cli, sha


def test_scripted_agent(tmp_path, vadd_nops):
    before = sha(vadd_nops)
    run, state = tmp_path / "run", tmp_path / "agent"
    p = evolve_cli(vadd_nops, "--harness", VADD_JSON, "--out", run, "--budget", 3,
                   "--operators", "agent", "--agent", f"python {SCRIPTED} --state {state}",
                   "--agent-timeout", 3, "--quiet", "--json")
    assert p.returncode == 0, p.stderr
    assert sha(vadd_nops) == before                      # K0 never modified
    db = sqlite3.connect(run / "lineage.sqlite")
    steps = db.execute("SELECT step, operator, outcome, hash, message FROM steps ORDER BY step").fetchall()
    assert [s[2] for s in steps] == ["evaluated", "evaluated", "agent-failure", "agent-failure",
                                     "evaluated"]
    assert "malformed" in steps[2][4] and "timeout" in steps[3][4]
    status = {h: (st, acc) for h, st, acc in db.execute("SELECT hash, status, accepted FROM candidates")}
    good, bad, slow = steps[0][3], steps[1][3], steps[4][3]
    assert status[good] == ("accepted", 1)
    assert status[bad][0].startswith("rejected-") and status[bad][1] == 0
    assert status[slow] == ("rejected-slower", 0)
    rep = json.loads((run / "report.json").read_text())
    assert rep["winner"]["hash"] == good                 # the good edit is the best
    assert rep["speedup_estimated"] > 1.0
    assert rep["final_check"]["verdict"]["status"] == "accepted"
    assert rep["final_check"]["reference"]["match"] is True
    # the wrong edit's counterexample is in the next task the agent saw
    t3 = json.loads((state / "task_3.json").read_text())
    fails = t3["lineage"]["last_failures"]
    assert fails and fails[0]["hash"] == bad
    ev = json.dumps(fails[0]["verdict"])
    assert "counterexample" in ev or "mismatch" in ev
    assert t3["schema"] == "asmevo.evolve.task/2" and t3["parent"]["listing"]
    for f in ("best.co", "best.s", "best.diff", "report.md", "trajectory.png", "events.jsonl"):
        assert (run / f).exists(), f
    assert "s_nop 7" in (run / "best.diff").read_text()


PLUGIN_AGENT = """
import json, sys
json.load(sys.stdin)
src = open({plugin!r}).read()
print(json.dumps({{"kind": "pass-plugin", "plugin": src, "pipeline": "strip-nops",
                  "hypothesis": "the nops guard nothing"}}))
"""


@pytest.mark.slow
def test_agent_pass_plugin_only_when_allowed(tmp_path, vadd_nops):
    from evolve_helpers import EXAMPLES
    agent = tmp_path / "agent.py"
    agent.write_text(PLUGIN_AGENT.format(plugin=str(EXAMPLES / "plugin_strip_nops.py")))
    base = (vadd_nops, "--harness", VADD_JSON, "--budget", 1, "--operators", "agent",
            "--agent", f"python {agent}", "--quiet", "--final-trials", 4)
    p = evolve_cli(*base, "--out", tmp_path / "no")
    assert p.returncode == 0, p.stderr
    db = sqlite3.connect(tmp_path / "no" / "lineage.sqlite")
    msgs = [m for (m,) in db.execute("SELECT message FROM steps")]
    assert msgs and all("--allow-agent-passes" in m for m in msgs)
    p = evolve_cli(*base, "--allow-agent-passes", "--out", tmp_path / "yes")
    assert p.returncode == 0, p.stderr
    rep = json.loads((tmp_path / "yes" / "report.json").read_text())
    assert rep["speedup_estimated"] > 1.0 and rep["edits"][0]["edit"]["kind"] == "pass-plugin"

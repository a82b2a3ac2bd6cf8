"""An agent that repeats itself hears about it: the next task's ``last_answer`` says that its
answer was a duplicate of an evaluated candidate (which one, its verdict and cycles) or a
no-op (identical to its parent); steps, events.jsonl and the report count duplicates per
operator.  (Before: 36 silent duplicates for an agent that kept sending a no-op edit.)"""

import json
import sqlite3



def test_duplicates_and_noops_are_reported(repeating_agent_run):
    run, state = repeating_agent_run
    db = sqlite3.connect(run / "lineage.sqlite")
    steps = db.execute("SELECT step, outcome, hash, parent, message FROM steps "
                       "ORDER BY step").fetchall()
    assert [s[1] for s in steps] == ["evaluated", "duplicate", "duplicate", "evaluated"]
    wrong, k0 = steps[0][2], steps[0][3]
    assert steps[1][2] == wrong and wrong[:12] in steps[1][4] and "step 0" in steps[1][4]
    assert steps[2][2] == k0 == steps[2][3] and steps[2][4].startswith("no-op")

    tasks = [json.loads((state / f"task_{i}.json").read_text()) for i in range(1, 5)]
    assert all(t["schema"] == "asmevo.evolve.task/2" for t in tasks)
    assert tasks[0]["last_answer"] is None
    la = tasks[1]["last_answer"]                       # after the wrong edit: its verdict
    assert la["outcome"] == "evaluated" and la["hash"] == wrong and la["repeats"] == 0
    assert la["candidate"]["status"].startswith("rejected-") and not la["candidate"]["accepted"]
    la = tasks[2]["last_answer"]                       # the same edit again: a duplicate
    assert la["outcome"] == "duplicate" and la["step"] == 1 and la["repeats"] == 1
    c = la["candidate"]
    assert c["hash"] == wrong and c["step"] == 0 and c["status"].startswith("rejected-")
    assert c["accepted"] is False and c["message"] and "not evaluated again" in la["message"]
    la = tasks[3]["last_answer"]                       # an edit that changes nothing: a no-op
    assert la["outcome"] == "no-op" and la["repeats"] == 2
    assert la["candidate"]["hash"] == k0 and la["candidate"]["cycles"] > 0
    assert la["candidate"]["speedup_vs_k0"] == 1.0
    ops = tasks[3]["lineage"]["operators"]["agent"]
    assert (ops["proposed"], ops["evaluated"], ops["duplicates"], ops["no_ops"]) == (3, 1, 2, 1)

    rep = json.loads((run / "report.json").read_text())
    agent = rep["operators"]["agent"]
    assert (agent["duplicates"], agent["no_ops"], agent["evaluated"]) == (2, 1, 2)
    assert rep["step_outcomes"]["duplicate"] == 2
    assert "duplicates (no-ops)" in (run / "report.md").read_text()
    assert "| agent | 4 | 2 |" in (run / "report.md").read_text()
    ev = [json.loads(x) for x in (run / "events.jsonl").read_text().splitlines()]
    st = [(e["step"], e["outcome"]) for e in ev if e["event"] == "step"]
    assert st == [(1, "duplicate"), (2, "no-op")]

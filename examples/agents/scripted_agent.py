#!/usr/bin/env python3
"""A deterministic scripted agent for ``asmevo evolve --agent`` (used by the tests).

    asmevo evolve K.co --harness H.json --out RUN --operators agent \
        --agent "python examples/agents/scripted_agent.py --state DIR [--plan A,B,...]"

It reads one task (schema ``asmevo.evolve.task/2``) on stdin, saves it as
``DIR/task_N.json`` and answers, on its N-th call, the N-th answer of the plan.  The default
plan is

1. ``good``: a good edit: delete the parent's ``s_nop 7`` instructions (a window edit);
2. ``wrong``: an edit that changes the output: ``v_add_f32`` becomes ``v_sub_f32``;
3. ``malformed``: malformed JSON;
4. ``timeout``: nothing before its timeout (sleeps 30 s);
5. ``slower``: a slower edit: two ``s_nop 7`` before the first ``v_add_f32``;

and from then on ``dce``: the pass pipeline ``kernel(dce)`` (on the example kernels a
no-op: the loop reports it as such in the next task's ``last_answer``).  ``noop`` answers a
window edit that replaces the last instruction with itself.  ``--plan`` gives another
sequence of these names (the last one repeats).
"""

import argparse
import json
import os
import sys
import time

ANSWER = "asmevo.evolve.answer/1"
DEFAULT_PLAN = "good,wrong,malformed,timeout,slower,dce"


def window_edit(rows, start, end, asm, hyp):
    return {"schema": ANSWER, "kind": "window-edit", "hypothesis": hyp,
            "edit": {"edits": [{"from": start, "to": end,
                                "expect": [r["text"] for r in rows[start:end]], "asm": asm}]}}


def dce():
    return {"schema": ANSWER, "kind": "pipeline", "pipeline": "kernel(dce)",
            "hypothesis": "nothing more to try"}


def answer(name: str, rows) -> str:
    if name == "good":
        nops = [r["index"] for r in rows if r["text"] == "s_nop 7"]
        if not nops:
            return json.dumps(dce())
        # consecutive nops: one window
        s, e = nops[0], nops[0] + 1
        while e in nops:
            e += 1
        return json.dumps(window_edit(rows, s, e, [], "the s_nop 7 run guards no hazard; "
                                      "removing it saves issue cycles on the critical path"))
    if name == "wrong":
        i = next(r["index"] for r in rows if r["text"].startswith("v_add_f32"))
        new = rows[i]["text"].replace("v_add_f32", "v_sub_f32")
        return json.dumps(window_edit(rows, i, i + 1, [new], "subtracting is as good as adding"))
    if name == "malformed":
        return '{"schema": "asmevo.evolve.answer/1", "kind": "window-edit", "edit": {'
    if name == "timeout":
        time.sleep(30)
        return "{}"
    if name == "slower":
        i = next(r["index"] for r in rows if r["text"].startswith("v_add_f32"))
        return json.dumps(window_edit(rows, i, i + 1, ["s_nop 7", "s_nop 7", rows[i]["text"]],
                                      "extra wait states before the add (a slower kernel)"))
    if name == "noop":
        i = len(rows) - 1
        return json.dumps(window_edit(rows, i, i + 1, [rows[i]["text"]],
                                      "the same instruction again (changes nothing)"))
    if name == "dce":
        return json.dumps(dce())
    raise SystemExit(f"scripted_agent: unknown plan step {name!r}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--state", required=True, help="directory for the call counter and tasks")
    ap.add_argument("--plan", default=DEFAULT_PLAN,
                    help="comma-separated answers: good, wrong, malformed, timeout, slower, "
                         "noop, dce (the last one repeats)")
    a = ap.parse_args()
    plan = [p.strip() for p in a.plan.split(",") if p.strip()]
    os.makedirs(a.state, exist_ok=True)
    cpath = os.path.join(a.state, "count")
    n = (int(open(cpath).read()) if os.path.exists(cpath) else 0) + 1
    with open(cpath, "w") as f:
        f.write(str(n))
    task = json.load(sys.stdin)
    with open(os.path.join(a.state, f"task_{n}.json"), "w") as f:
        json.dump(task, f, indent=1)
    print(answer(plan[min(n, len(plan)) - 1], task["parent"]["listing"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""A deterministic scripted agent for ``asmevo evolve --agent`` (used by the tests).

    asmevo evolve K.co --harness H.json --out RUN --operators agent \
        --agent "python examples/agents/scripted_agent.py --state DIR"

It reads one task (schema ``asmevo.evolve.task/1``) on stdin, saves it as
``DIR/task_N.json`` and answers, on its N-th call:

1. a good edit: delete the parent's ``s_nop 7`` instructions (a window edit);
2. an edit that changes the output: ``v_add_f32`` becomes ``v_sub_f32``;
3. malformed JSON;
4. nothing before its timeout (sleeps 30 s);
5. a slower edit: two ``s_nop 7`` before the first ``v_add_f32``;

and from then on a pass pipeline (``kernel(dce)``).
"""

import argparse
import json
import os
import sys
import time

ANSWER = "asmevo.evolve.answer/1"


def window_edit(rows, start, end, asm, hyp):
    return {"schema": ANSWER, "kind": "window-edit", "hypothesis": hyp,
            "edit": {"edits": [{"from": start, "to": end,
                                "expect": [r["text"] for r in rows[start:end]], "asm": asm}]}}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--state", required=True, help="directory for the call counter and tasks")
    a = ap.parse_args()
    os.makedirs(a.state, exist_ok=True)
    cpath = os.path.join(a.state, "count")
    n = (int(open(cpath).read()) if os.path.exists(cpath) else 0) + 1
    with open(cpath, "w") as f:
        f.write(str(n))
    task = json.load(sys.stdin)
    with open(os.path.join(a.state, f"task_{n}.json"), "w") as f:
        json.dump(task, f, indent=1)
    rows = task["parent"]["listing"]
    if n == 1:
        nops = [r["index"] for r in rows if r["text"] == "s_nop 7"]
        if not nops:
            print(json.dumps({"schema": ANSWER, "kind": "pipeline", "pipeline": "kernel(dce)"}))
            return 0
        # consecutive nops: one window
        s, e = nops[0], nops[0] + 1
        while e in nops:
            e += 1
        print(json.dumps(window_edit(rows, s, e, [], "the s_nop 7 run guards no hazard; "
                                     "removing it saves issue cycles on the critical path")))
    elif n == 2:
        i = next(r["index"] for r in rows if r["text"].startswith("v_add_f32"))
        new = rows[i]["text"].replace("v_add_f32", "v_sub_f32")
        print(json.dumps(window_edit(rows, i, i + 1, [new], "subtracting is as good as adding")))
    elif n == 3:
        print('{"schema": "asmevo.evolve.answer/1", "kind": "window-edit", "edit": {')
    elif n == 4:
        time.sleep(30)
        print("{}")
    elif n == 5:
        i = next(r["index"] for r in rows if r["text"].startswith("v_add_f32"))
        print(json.dumps(window_edit(rows, i, i + 1, ["s_nop 7", "s_nop 7", rows[i]["text"]],
                                     "extra wait states before the add (a slower kernel)")))
    else:
        print(json.dumps({"schema": ANSWER, "kind": "pipeline", "pipeline": "kernel(dce)",
                          "hypothesis": "nothing more to try"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""An ``asmevo evolve --agent`` adapter for any OpenAI-compatible chat endpoint (stdlib only).

    asmevo evolve K.co --harness H.json --out RUN \
        --agent "python examples/agents/openai_chat.py --base-url http://127.0.0.1:8000/v1 --model qwen"

Reads one task (``asmevo.evolve.task/2``) on stdin, asks the model at
``BASE_URL/chat/completions`` for one edit, and prints the answer
(``asmevo.evolve.answer/1``) on stdout.  The API key, if the endpoint needs one, is read from
the environment variable named by ``--api-key-env`` (default ``OPENAI_API_KEY``), never from
the command line.  Any failure (HTTP error, no JSON in the reply) exits non-zero with one line
on stderr; the loop records it as a failed agent attempt and goes on.
"""

import argparse
import json
import os
import re
import sys
import urllib.error
import urllib.request

ANSWER = "asmevo.evolve.answer/1"

SYSTEM = """You optimise AMD gfx942 (MI300X) machine code. You get a JSON task: the parent
kernel's listing (index, pc, block, text), its hot windows with profile rows, the best
candidates so far, the last failures with the verifier's reasons and counterexamples, and a
knowledge base. Propose ONE change that keeps the kernel's outputs bit for bit identical and
makes it faster under the timing model. Reply with one JSON object and nothing else:
{"kind": "window-edit", "hypothesis": "...",
 "edit": {"edits": [{"from": START, "to": END, "expect": [old lines], "asm": [new lines]}]}}
(START/END are listing indices, END exclusive, inside one block), or
{"kind": "pipeline", "pipeline": "kernel(sched<window=16>,waitcnt-relax)", "hypothesis": "..."}.
Never repeat a failed edit. "last_answer" says what your previous answer came to: when it is
"duplicate" (that code was already evaluated: see its status) or "no-op" (your edit changed
nothing), propose something different."""


def brief(task: dict, max_rows: int = 400) -> str:
    """The task, shortened for a prompt: hot windows first, the listing capped."""
    p = task["parent"]
    keep = {
        "kernel": task["kernel"], "target": task.get("target"),
        "last_answer": task.get("last_answer"),
        "parent_cycles": p.get("cycles"), "speedup_vs_k0": p.get("speedup_vs_k0"),
        "hot_windows": [{k: w.get(k) for k in ("start", "end", "cycles", "share", "bottleneck")}
                        for w in p.get("hot_windows", [])][:6],
        "listing": [f'{r["index"]:4d} {r["block"]:>5s}  {r["text"]}' for r in p["listing"][:max_rows]],
        "best": [{k: b.get(k) for k in ("cycles", "operator", "hypothesis")}
                 for b in task.get("lineage", {}).get("best", [])][:3],
        "last_failures": [{k: f.get(k) for k in ("status", "hypothesis", "verdict")}
                          for f in task.get("lineage", {}).get("last_failures", [])][:4],
        "knowledge": task.get("knowledge", []),
        "limits": task.get("limits", {}),
    }
    return json.dumps(keep, indent=1, default=str)[:60000]


def extract_json(text: str) -> dict:
    """The first JSON object in a model's reply (bare, or in a ```json fence)."""
    for cand in [text] + re.findall(r"```(?:json)?\s*(\{.*?\})\s*```", text, re.S):
        try:
            v = json.loads(cand)
            if isinstance(v, dict):
                return v
        except ValueError:
            pass
    i, j = text.find("{"), text.rfind("}")
    if 0 <= i < j:
        v = json.loads(text[i:j + 1])
        if isinstance(v, dict):
            return v
    raise ValueError("no JSON object in the reply")


def chat(base_url: str, model: str, messages: list, key: str | None, timeout: float,
         temperature: float) -> str:
    body = json.dumps({"model": model, "messages": messages, "temperature": temperature}).encode()
    req = urllib.request.Request(base_url.rstrip("/") + "/chat/completions", data=body,
                                 headers={"Content-Type": "application/json"}, method="POST")
    if key:
        req.add_header("Authorization", f"Bearer {key}")
    with urllib.request.urlopen(req, timeout=timeout) as r:
        doc = json.loads(r.read().decode())
    return doc["choices"][0]["message"]["content"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1"))
    ap.add_argument("--model", default=os.environ.get("OPENAI_MODEL", "default"))
    ap.add_argument("--api-key-env", default="OPENAI_API_KEY")
    ap.add_argument("--timeout", type=float, default=50.0)
    ap.add_argument("--temperature", type=float, default=0.2)
    a = ap.parse_args()
    task = json.load(sys.stdin)
    messages = [{"role": "system", "content": SYSTEM},
                {"role": "user", "content": brief(task)}]
    try:
        reply = chat(a.base_url, a.model, messages, os.environ.get(a.api_key_env), a.timeout,
                     a.temperature)
        ans = extract_json(reply)
    except (urllib.error.URLError, OSError, KeyError, IndexError, ValueError) as e:
        print(f"openai_chat: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    ans.setdefault("schema", ANSWER)
    ans.setdefault("hypothesis", "")
    print(json.dumps(ans))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The MCP server through the SDK's in-memory client, a stdio subprocess and HTTP on
127.0.0.1 (skipped when the optional ``mcp`` package is absent)."""

from __future__ import annotations

import json
import os
import pathlib
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

mcp = pytest.importorskip("mcp", reason="the optional MCP SDK (asmevo[mcp]) is not installed")
anyio = pytest.importorskip("anyio")

from asmevo.mcp.server import build_server  # noqa: E402
from asmevo.mcp.session import Session  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
EX = ROOT / "examples"
TOOLS = {"load_kernel", "listing", "analyze", "profile", "propose_edit", "verify", "run", "isa",
         "lineage", "best", "export"}


def _data(r):
    if getattr(r, "structured_content", None) is not None:
        d = r.structured_content
        return d.get("result", d) if isinstance(d, dict) and set(d) == {"result"} else d
    return json.loads(r.content[0].text)


def _text(r):
    return " ".join(getattr(c, "text", "") for c in r.content)


def test_every_tool_in_memory(tmp_path):
    from mcp import Client

    async def main():
        srv = build_server(Session(str(tmp_path / "run")))
        async with Client(srv) as c:
            names = {t.name for t in (await c.list_tools()).tools}
            assert TOOLS <= names
            r = await c.call_tool("load_kernel", {"path": str(EX / "vadd_f32.co"),
                                                  "harness": str(EX / "vadd_f32.json")})
            assert not r.is_error, _text(r)
            kid = _data(r)["kernel_id"]
            rows = _data(await c.call_tool("listing", {"kernel_id": kid, "start": 13, "end": 18}))
            assert [x["index"] for x in rows["rows"]] == [13, 14, 15, 16, 17]
            assert rows["rows"][4]["text"].startswith("v_add_f32")
            an = _data(await c.call_tool("analyze", {"kernel_id": kid}))
            assert an["violations"] == 0 and "waitcnt" in an and "hazards" in an
            pr = _data(await c.call_tool("profile", {"kernel_id": kid, "top": 2}))
            assert pr["estimated"] is True and pr["cycles"] > 0 and pr["windows"]
            isa = _data(await c.call_tool("isa", {"mnemonic": "v_readlane_b32"}))
            assert any("v_readlane" in h["consumer"] for h in isa["hazard_rules"])
            assert isinstance(isa["record"], dict) and isa["record"]["family"]
            # a wrong edit: rejected, with its counterexample
            bad = _data(await c.call_tool("propose_edit", {
                "kernel_id": kid, "hypothesis": "subtract instead",
                "edit": {"edits": [{"from": 17, "to": 18, "asm": ["v_sub_f32_e32 v2, v6, v7"]}]}}))
            assert bad["accepted"] is False and bad["outcome"] == "rejected"
            assert any("counterexample" in json.dumps(e) for e in bad["evidence"])
            # an equivalent edit: verified (receipt), then timed
            good = _data(await c.call_tool("propose_edit", {
                "kernel_id": kid, "hypothesis": "the store address before the loads",
                "edit": {"edits": [{"from": 13, "to": 16, "asm": [
                    "v_lshl_add_u64 v[0:1], s[2:3], 0, v[0:1]",
                    "global_load_dword v6, v[4:5], off", "global_load_dword v7, v[2:3], off"]}]}}))
            assert good["outcome"] == "accepted" or good["status"] == "rejected-slower", good
            assert good["cycles"] and "speedup_vs_k0" in good
            lin = _data(await c.call_tool("lineage", {"kernel_id": kid}))["lineages"][0]
            hashes = {x["hash"] for x in lin["candidates"]}
            assert bad["hash"] in hashes and good["hash"] in hashes
            best = _data(await c.call_tool("best", {"kernel_id": kid}))["best"][0]
            assert best["accepted"] is True
            ver = _data(await c.call_tool("verify", {"a": kid, "b": good["candidate_id"],
                                                     "level": "z3"}))
            assert ver["status"] in ("accepted", "unknown-unproved")
            ran = _data(await c.call_tool("run", {"kernel_id": good["candidate_id"], "seed": 3}))
            assert ran["reference_check"]["ok"] is True
            out = tmp_path / "cand.co"
            ex = _data(await c.call_tool("export", {"candidate_id": good["candidate_id"],
                                                    "path": str(out)}))
            assert out.exists() and ex["hash"] == good["hash"]
            # never over an input
            r = await c.call_tool("export", {"candidate_id": good["candidate_id"],
                                             "path": str(EX / "vadd_f32.co")})
            assert r.is_error
            # resources
            res = await c.read_resource(f"asmevo://kernel/{kid}/asm")
            assert "v_add_f32" in res.contents[0].text
    anyio.run(main)


def test_malformed_arguments_are_tool_errors(tmp_path):
    from mcp import Client

    async def main():
        srv = build_server(Session(str(tmp_path / "run")))
        async with Client(srv) as c:
            calls = [("listing", {"kernel_id": "k9"}),
                     ("load_kernel", {"path": str(tmp_path / "missing.co")}),
                     ("load_kernel", {"path": str(EX / "vadd_f32.json")}),
                     ("isa", {"mnemonic": "v_bogus_b32"}),
                     ("profile", {"kernel_id": "nope", "top": 3}),
                     ("verify", {"a": "k1", "b": "k2"}),
                     ("lineage", {"kernel_id": "zzz"}),
                     ("export", {"candidate_id": "deadbeefdeadbeef", "path": "/tmp/x.co"})]
            for name, args in calls:
                r = await c.call_tool(name, args)
                assert r.is_error, (name, _text(r))
                assert "internal error" not in _text(r), (name, _text(r))
            r = await c.call_tool("load_kernel", {"path": str(EX / "vadd_f32.co"),
                                                  "harness": str(EX / "vadd_f32.json")})
            kid = _data(r)["kernel_id"]
            big = _data(await c.call_tool("listing", {"kernel_id": kid, "start": 0,
                                                      "end": 10**9 + 5000}))
            assert big["end"] == big["total"] == 20        # a huge range is clamped
            for name, args in [("listing", {"kernel_id": kid, "start": 10, "end": 5}),
                               ("listing", {"kernel_id": kid, "start": -5}),
                               ("profile", {"kernel_id": kid, "top": 10**6}),
                               ("run", {"kernel_id": kid, "seed": -1}),
                               ("propose_edit", {"kernel_id": kid, "hypothesis": "x"}),
                               ("propose_edit", {"kernel_id": kid, "hypothesis": "x",
                                                 "edit": {"edits": [{"from": 999, "asm": "s_nop 0"}]}}),
                               ("propose_edit", {"kernel_id": kid, "hypothesis": "x",
                                                 "asm": "this is not assembly"}),
                               ("propose_edit", {"kernel_id": kid, "hypothesis": "x",
                                                 "pipeline": "no-such-pass"}),
                               ("analyze", {"kernel_id": kid, "which": ["bogus"]})]:
                r = await c.call_tool(name, args)
                assert r.is_error, (name, args, _text(r))
                assert "internal error" not in _text(r), (name, _text(r))
            # still serving
            r = await c.call_tool("listing", {"kernel_id": kid, "start": 0, "end": 2})
            assert not r.is_error
    anyio.run(main)


def _rpc_lines(proc, msgs):
    for m in msgs:
        proc.stdin.write((json.dumps(m) + "\n").encode())
    proc.stdin.flush()


def test_stdio_subprocess_lists_tools(tmp_path):
    p = subprocess.Popen([sys.executable, "-m", "asmevo.cli", "mcp", "--run-dir", str(tmp_path)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         cwd=str(ROOT)) if (ROOT / "asmevo" / "__main__.py").exists() is False else \
        subprocess.Popen([sys.executable, "-m", "asmevo", "mcp", "--run-dir", str(tmp_path)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         cwd=str(ROOT))
    try:
        _rpc_lines(p, [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "test", "version": "0"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}])
        names = None
        t0 = time.time()
        while time.time() - t0 < 60:
            line = p.stdout.readline()
            if not line:
                break
            msg = json.loads(line)
            if msg.get("id") == 2:
                names = {t["name"] for t in msg["result"]["tools"]}
                break
        assert names is not None, p.stderr.read().decode()[-2000:]
        assert TOOLS <= names
    finally:
        p.kill()
        p.wait()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_http_binds_loopback_and_calls_a_tool(tmp_path):
    port = _free_port()
    p = subprocess.Popen([sys.executable, "-c", "import sys; from asmevo.cli import main; "
                          "sys.exit(main())", "mcp", "--transport", "http", "--port", str(port),
                          "--run-dir", str(tmp_path)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(ROOT))
    url = f"http://127.0.0.1:{port}/mcp"
    hdr = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

    def post(msg, sid=None):
        h = dict(hdr)
        if sid:
            h["mcp-session-id"] = sid
        req = urllib.request.Request(url, json.dumps(msg).encode(), h)
        with urllib.request.urlopen(req, timeout=60) as r:
            body = r.read().decode()
            sid = r.headers.get("mcp-session-id") or sid
        for line in body.splitlines():      # SSE framing or plain JSON
            line = line[5:].strip() if line.startswith("data:") else line.strip()
            if line.startswith("{"):
                return json.loads(line), sid
        return None, sid
    try:
        t0 = time.time()
        while True:
            try:
                init, sid = post({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                  "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                             "clientInfo": {"name": "t", "version": "0"}}})
                break
            except OSError:
                if time.time() - t0 > 60 or p.poll() is not None:
                    raise AssertionError(p.stderr.read().decode()[-2000:] if p.poll() is not None
                                         else "server did not start")
                time.sleep(0.3)
        assert init["result"]["serverInfo"]["name"] == "asmevo"
        post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
        res, _ = post({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                       "params": {"name": "isa", "arguments": {"mnemonic": "s_nop"}}}, sid)
        assert res["result"].get("isError") in (None, False)
        assert "s_nop" in json.dumps(res["result"])
    finally:
        p.terminate()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()

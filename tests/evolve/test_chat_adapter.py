"""examples/agents/openai_chat.py against a stand-in OpenAI-compatible server on 127.0.0.1."""

import http.server
import json
import sqlite3
import subprocess
import sys
import threading

from evolve_helpers import EXAMPLES, VADD_JSON, evolve_cli

ADAPTER = EXAMPLES / "agents" / "openai_chat.py"
REPLY = 'Here is my change.\n```json\n{"kind": "pipeline", "pipeline": "kernel(nop-trim)", ' \
        '"hypothesis": "the s_nop 7 run guards no hazard"}\n```\n'


class _Handler(http.server.BaseHTTPRequestHandler):
    requests: list = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Handler.requests.append({"path": self.path, "body": body,
                                  "auth": self.headers.get("Authorization")})
        out = json.dumps({"id": "x", "object": "chat.completion", "model": body["model"],
                          "choices": [{"index": 0, "finish_reason": "stop",
                                       "message": {"role": "assistant", "content": REPLY}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *a):
        pass


def _server():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def test_adapter_speaks_the_chat_api():
    srv = _server()
    try:
        task = {"schema": "asmevo.evolve.task/2", "kernel": "k", "parent": {
            "listing": [{"index": 0, "pc": 0, "block": "bb0", "text": "s_endpgm"}]}}
        p = subprocess.run([sys.executable, str(ADAPTER), "--base-url",
                            f"http://127.0.0.1:{srv.server_port}/v1", "--model", "m1"],
                           input=json.dumps(task), capture_output=True, text=True, timeout=30,
                           env={"OPENAI_API_KEY": "sk-test", "PATH": "/usr/bin:/bin"})
        assert p.returncode == 0, p.stderr
        ans = json.loads(p.stdout)
        assert ans["kind"] == "pipeline" and ans["schema"] == "asmevo.evolve.answer/1"
        req = _Handler.requests[-1]
        assert req["path"] == "/v1/chat/completions" and req["body"]["model"] == "m1"
        assert req["auth"] == "Bearer sk-test"
        assert "s_endpgm" in req["body"]["messages"][1]["content"]
    finally:
        srv.shutdown()


def test_adapter_failure_is_a_nonzero_exit():
    p = subprocess.run([sys.executable, str(ADAPTER), "--base-url", "http://127.0.0.1:9/v1",
                        "--timeout", "2"], input="{}", capture_output=True, text=True, timeout=30)
    assert p.returncode != 0 and "openai_chat" in p.stderr


def test_evolve_with_the_adapter(tmp_path, vadd_nops):
    srv = _server()
    try:
        run = tmp_path / "run"
        p = evolve_cli(vadd_nops, "--harness", VADD_JSON, "--out", run, "--budget", 1,
                       "--operators", "agent", "--quiet", "--agent",
                       f"{sys.executable} {ADAPTER} --base-url http://127.0.0.1:{srv.server_port}/v1")
        assert p.returncode == 0, p.stderr
        db = sqlite3.connect(run / "lineage.sqlite")
        (status, acc, hyp), = db.execute("SELECT status, accepted, hypothesis FROM candidates "
                                         "WHERE step >= 0").fetchall()
        assert status == "accepted" and acc == 1 and "s_nop" in hyp
    finally:
        srv.shutdown()

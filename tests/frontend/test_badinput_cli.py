"""asmevo's top level: an unexpected exception prints "asmevo CMD: internal error: TYPE: MSG
(please report ...)" and exits 1 without a traceback (ASMEVO_DEBUG=1 re-raises); a closed
stdout pipe ends quietly."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import asmevo.tools.dis as dis_tool
from asmevo.cli import main as cli_main


def test_internal_error_safety_net(monkeypatch, capsys, tmp_path):
    def boom(args):
        raise ZeroDivisionError("oops")
    monkeypatch.setattr(dis_tool, "run", boom)
    monkeypatch.delenv("ASMEVO_DEBUG", raising=False)
    assert cli_main(["dis", str(tmp_path / "x.co")]) == 1
    out, err = capsys.readouterr()
    assert err.startswith("asmevo dis: internal error: ZeroDivisionError: oops (please report")
    assert "Traceback" not in out + err
    monkeypatch.setenv("ASMEVO_DEBUG", "1")
    with pytest.raises(ZeroDivisionError):
        cli_main(["dis", str(tmp_path / "x.co")])


_FLOOD = """
import sys, asmevo.tools.dis as d, asmevo.cli as c
def run(args):
    for _ in range(200000):
        print("x" * 100)   # 20 MB: far more than a pipe buffer
d.run = run
sys.exit(c.main(["dis", "whatever.co"]))
"""


def test_broken_pipe_is_quiet():
    p = subprocess.Popen([sys.executable, "-c", _FLOOD], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env={**os.environ, "ASMEVO_DEBUG": ""})
    assert p.stdout.readline() == b"x" * 100 + b"\n"
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait() == 0 and err == "", err

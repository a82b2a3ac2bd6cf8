"""Helpers for the asmevo evolve tests."""

from __future__ import annotations

import hashlib
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
VADD_CO = EXAMPLES / "vadd_f32.co"
VADD_JSON = EXAMPLES / "vadd_f32.json"
SCRIPTED = EXAMPLES / "agents" / "scripted_agent.py"


def sha(path) -> str:
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


def make_vadd_nops(dst: pathlib.Path) -> pathlib.Path:
    """examples/vadd_f32 with three ``s_nop 7`` before its store (a kernel with an obvious,
    verifiable speed-up), assembled to ``dst``."""
    from asmevo.backend.assemble import assemble
    s = (EXAMPLES / "vadd_f32.s").read_text()
    store = "\tglobal_store_dword v[0:1], v2, off\n"
    assert store in s
    s = s.replace(store, "\ts_nop 7\n" * 3 + store)
    assemble(s, str(dst))
    return dst


def evolve_cli(*args, env=None, timeout=300) -> subprocess.CompletedProcess:
    """``asmevo evolve ARGS`` in a child process."""
    e = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "asmevo.cli", "evolve", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env=e, cwd=str(ROOT))


def popen_evolve(*args) -> subprocess.Popen:
    e = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-m", "asmevo.cli", "evolve", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e,
                            cwd=str(ROOT))

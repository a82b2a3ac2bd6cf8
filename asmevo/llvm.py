"""Locate and run LLVM's AMDGPU tools (llvm-mc, llvm-objdump, ld.lld).

Search order (first hit wins, per tool):

1. the directory in the ``ASMEVO_LLVM_BIN`` environment variable;
2. ``/opt/rocm/llvm/bin``;
3. ``/usr/lib/llvm-{22,21,20,19,18,17}/bin`` (Debian/Ubuntu packages);
4. ``PATH`` (plain names and ``-NN`` suffixed names, newest first).

LLVM 17 or later is required (it knows gfx942).  When nothing is found a
:class:`~asmevo.errors.ToolNotFoundError` says how to install the tools.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess

from .errors import ToolFailedError, ToolNotFoundError

TRIPLE = "amdgcn-amd-amdhsa"
MCPU = "gfx942"
_VERSIONS = (22, 21, 20, 19, 18, 17)
INSTALL_HINT = ("install LLVM 17 or later with AMDGPU support, e.g. on Debian/Ubuntu: "
                "apt-get install llvm-19 lld-19, or set ASMEVO_LLVM_BIN to a directory "
                "holding llvm-mc, llvm-objdump and ld.lld")


def _candidate_dirs() -> list[str]:
    dirs = []
    env = os.environ.get("ASMEVO_LLVM_BIN")
    if env:
        dirs.append(env)
    dirs.append("/opt/rocm/llvm/bin")
    dirs.extend(f"/usr/lib/llvm-{v}/bin" for v in _VERSIONS)
    return dirs


def _version_ok(path: str) -> bool:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    m = re.search(r"(?:version|LLD) (\d+)\.", out)
    return bool(m) and int(m.group(1)) >= 17


@functools.cache
def find_tool(name: str) -> str:
    """Return the absolute path of LLVM tool ``name`` (e.g. ``"llvm-mc"``).

    Raises:
        ToolNotFoundError: no LLVM >= 17 copy of the tool was found.
    """
    env = os.environ.get("ASMEVO_LLVM_BIN")
    for d in _candidate_dirs():
        p = os.path.join(d, name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            if d == env or _version_ok(p):
                return p
    for cand in [name] + [f"{name}-{v}" for v in _VERSIONS]:
        p = shutil.which(cand)
        if p and _version_ok(p):
            return p
    raise ToolNotFoundError(f"cannot find {name} (LLVM >= 17); {INSTALL_HINT}")


def run_tool(name: str, args: list[str], *, input: bytes | str | None = None,
             what: str | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run LLVM tool ``name`` with ``args``; return the completed process.

    Raises:
        ToolNotFoundError: the tool is missing.
        ToolFailedError: it exited non-zero (message = its stderr, prefixed by ``what``).
    """
    exe = find_tool(name)
    text = isinstance(input, str)
    proc = subprocess.run([exe, *args], input=input, capture_output=True, text=text, timeout=timeout)
    if proc.returncode != 0:
        err = proc.stderr if text else proc.stderr.decode(errors="replace")
        raise ToolFailedError(f"{what or name} failed:\n{err.strip()}")
    return proc

"""``asmevo dis`` ends promptly and cleanly (issue 16): a corrupt code object that makes
llvm-objdump write warnings without end is reported at once (the tool is stopped, its
diagnostics bounded), a full standard output is one clear error, a SIGTERM leaves no
temporary file and no tool running, and standard input is named ``<stdin>``."""

from __future__ import annotations

import os
import pathlib
import signal
import struct
import subprocess
import sys
import time

import pytest

from corpus_paths import require_tool

ROOT = pathlib.Path(__file__).resolve().parents[2]
VADD = ROOT / "examples" / "vadd_f32.co"



def _running(pid: int) -> bool:
    """Whether ``pid`` still runs: a zombie (dead, its exit status not yet collected by the
    process that adopted it, which under pytest-xdist or a container's init can take a while)
    does not."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return False

def _env(**extra) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("ASMEVO_DEBUG", None)
    env.update(extra)
    return env


def _asmevo(*args, timeout=60, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "asmevo", *args], capture_output=True,
                          timeout=timeout, **kw)


def _with_huge_symtab(src: pathlib.Path, dst: pathlib.Path) -> pathlib.Path:
    """``src`` with its .symtab's sh_size set to 2**40: llvm-objdump then warns once per
    would-be symbol, without end (it ran until the 120 s tool time limit)."""
    data = bytearray(src.read_bytes())
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    names = struct.unpack_from("<Q", data, shoff + shentsize * shstrndx + 24)[0]
    for i in range(shnum):
        hdr = shoff + shentsize * i
        name = bytes(data[names + struct.unpack_from("<I", data, hdr)[0]:]).split(b"\0")[0]
        if name == b".symtab":
            struct.pack_into("<Q", data, hdr + 32, 1 << 40)
            dst.write_bytes(bytes(data))
            return dst
    pytest.fail(f"{src} has no .symtab")


def test_corrupt_symtab_reported_at_once(tmp_path):
    require_tool("llvm-objdump")
    bad = _with_huge_symtab(VADD, tmp_path / "bad.co")
    t0 = time.monotonic()
    r = _asmevo("dis", str(bad), "-o", str(tmp_path / "out.s"), env=_env(), timeout=60)
    elapsed = time.monotonic() - t0
    err = r.stderr.decode()
    assert r.returncode == 2, err
    assert elapsed < 20, f"took {elapsed:.1f} s"  # (was: until the 120 s tool time limit)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{bad}: byte offset 0x" in err and "expected" in err, err
    assert not (tmp_path / "out.s").exists()


def test_endless_objdump_diagnostics_are_bounded(tmp_path, monkeypatch):
    """The listing run alone (no ELF reader before it): the tool is stopped once its
    diagnostics pass the bound, and the message quotes only their beginning."""
    require_tool("llvm-objdump")
    from asmevo.errors import ToolFailedError
    from asmevo.frontend import objdump
    bad = _with_huge_symtab(VADD, tmp_path / "bad.co")
    monkeypatch.setattr(objdump, "STDERR_LIMIT", 1 << 16)
    monkeypatch.setenv("ASMEVO_TOOL_TIMEOUT", "60")
    t0 = time.monotonic()
    with pytest.raises(ToolFailedError) as e:
        objdump.run_objdump(str(bad))
    assert time.monotonic() - t0 < 20
    msg = str(e.value)
    assert "more than 65536 bytes of diagnostics" in msg and msg.startswith(str(bad)), msg
    assert len(msg.splitlines()) <= objdump.QUOTED_LINES + 3, msg


def test_close_stops_the_tool_at_once(tmp_path):
    """A listing no longer wanted: close() kills llvm-objdump instead of waiting for it."""
    require_tool("llvm-objdump")
    from asmevo.frontend.objdump import StartedObjdump
    started = StartedObjdump(str(_with_huge_symtab(VADD, tmp_path / "bad.co")))
    time.sleep(0.2)
    t0 = time.monotonic()
    started.close()
    assert time.monotonic() - t0 < 5
    assert started._proc.returncode is not None


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("unbuffered", ["1", ""])
@pytest.mark.parametrize("cmd", [["dis", str(VADD)], ["dis", str(VADD), "-o", "-"]])
def test_dis_to_dev_full(cmd, unbuffered):
    require_tool("llvm-objdump")
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "asmevo", *cmd], stdout=full,
                           stderr=subprocess.PIPE, timeout=60,
                           env=_env(PYTHONUNBUFFERED=unbuffered))
    err = r.stderr.decode()
    assert r.returncode == 2, err
    assert err == "asmevo dis: <stdout>: error: cannot write output: No space left on device\n"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_asm_to_dev_full(tmp_path):
    require_tool("llvm-mc")
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "asmevo", "asm",
                            str(ROOT / "examples" / "vadd_f32.s"), "-o", "-"], stdout=full,
                           stderr=subprocess.PIPE, timeout=60, env=_env())
    err = r.stderr.decode()
    assert r.returncode == 2, err
    assert err == "asmevo asm: <stdout>: error: cannot write output: No space left on device\n"


_SLOW_OBJDUMP = """#!/bin/sh
echo $$ > "{pid}"
exec sleep 60
"""


@pytest.mark.parametrize("signum,status", [
    (signal.SIGTERM, 143),
    # known defect (session 8): after Ctrl-C the stand-in llvm-objdump is sometimes left
    # running; not strict, so a fix shows as XPASS
    pytest.param(signal.SIGINT, 130, marks=pytest.mark.xfail(
        reason="Ctrl-C during asmevo dis can leave llvm-objdump running", strict=False)),
])
def test_sigterm_leaves_nothing_behind(tmp_path, signum, status):
    """SIGTERM (or Ctrl-C's SIGINT) while llvm-objdump runs (a stand-in that never ends),
    reading standard input: exit status 143 (130) at once, the tool killed, no temporary file
    left (standard input's copy included) and no partial output."""
    fake = tmp_path / "bin"
    fake.mkdir()
    pid_file = tmp_path / "objdump.pid"
    tool = fake / "llvm-objdump"
    tool.write_text(_SLOW_OBJDUMP.format(pid=pid_file))
    tool.chmod(0o755)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    with open(VADD, "rb") as stdin:
        p = subprocess.Popen([sys.executable, "-m", "asmevo", "dis", "-", "-o", str(out / "k.s")],
                             stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=_env(TMPDIR=str(tmp), ASMEVO_LLVM_BIN=str(fake)))
    try:
        deadline = time.monotonic() + 30
        while not (pid_file.exists() and pid_file.read_text().strip()):
            assert p.poll() is None, p.communicate()
            assert time.monotonic() < deadline, "the stand-in llvm-objdump never started"
            time.sleep(0.02)
        assert os.listdir(tmp), "standard input's copy is where the test expects it"
        p.send_signal(signum)
        _, err = p.communicate(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    tool_pid = int(pid_file.read_text())
    for _ in range(100):  # (reaped by its parent: gone at once, or soon as an orphan)
        if not _running(tool_pid):
            left_running = False
            break
        time.sleep(0.05)
    else:
        os.kill(tool_pid, signal.SIGKILL)
        left_running = True
    assert p.returncode == status, err
    assert b"Traceback" not in err, err
    assert os.listdir(tmp) == []
    assert os.listdir(out) == []
    assert not left_running, "llvm-objdump was left running"


@pytest.mark.corpus
def test_stdin_warnings_name_stdin(corpus_dir):
    """Warnings about a code object read from standard input name ``<stdin>``, not the
    temporary file it was copied to."""
    require_tool("llvm-objdump")
    co = corpus_dir / "aiter" / "gfx942" / "topksoftmax" / "topksoftmax_4x128x4.co"
    if not co.is_file():
        pytest.skip(f"{co} is absent")
    with open(co, "rb") as stdin:
        r = subprocess.run([sys.executable, "-m", "asmevo", "dis", "-", "-o", os.devnull],
                           stdin=stdin, capture_output=True, timeout=120, env=_env())
    err = r.stderr.decode()
    assert r.returncode == 0, err
    lines = err.splitlines()
    assert lines and all(ln.startswith("asmevo dis: <stdin>: warning: ") for ln in lines), err
    assert "asmevo-stdin" not in err

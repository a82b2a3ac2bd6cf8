"""``asmevo dis`` ends promptly and cleanly (issue 16): a corrupt code object that makes
llvm-objdump write warnings without end is reported at once (the tool is stopped, its
diagnostics bounded), a full standard output is one clear error, a SIGTERM or Ctrl-C
leaves no temporary file and no tool running (``asmevo asm`` too), and standard input is
named ``<stdin>``."""

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


#: a stand-in LLVM tool that never ends: it writes its pid, then (``{signal}`` not empty)
#: signals asmevo itself at once -- while asmevo is still starting it (inside
#: ``subprocess.Popen``, starting the thread that reads its stderr...) -- or leaves that to
#: the test, once it runs
_STAND_IN = """#!/bin/sh
echo $$ > "{pid}"
[ -n "{signal}" ] && kill -{signal} $PPID
exec sleep 60
"""

#: (SIGINT: Ctrl-C; a terminal sends it to asmevo only, since every tool leads its own
#: session) x (sent by the test once the tool runs, or by the tool as asmevo starts it)
_SIGNALS = [pytest.param(sig, status, when, id=f"{sig.name}-{when}")
            for sig, status in ((signal.SIGTERM, 143), (signal.SIGINT, 130))
            for when in ("running", "starting")]


def _stopped_while_tool_runs(tmp_path, tool, cmd, signum, when, stdin=None, real=()):
    """Run ``asmevo CMD`` with ``tool`` replaced by a stand-in that never ends (the tools in
    ``real`` linked beside it) and stop it with ``signum`` (``when``: see :data:`_STAND_IN`).
    Returns (exit status, stderr, temporary directory, whether the stand-in was left
    running)."""
    fake = tmp_path / "bin"
    fake.mkdir()
    for name in real:
        (fake / name).symlink_to(require_tool(name))
    pid_file = tmp_path / "tool.pid"
    stand_in = fake / tool
    stand_in.write_text(_STAND_IN.format(pid=pid_file,
                                         signal=signum.name[3:] if when == "starting" else ""))
    stand_in.chmod(0o755)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    p = subprocess.Popen([sys.executable, "-m", "asmevo", *cmd], stdin=stdin,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=_env(TMPDIR=str(tmp), ASMEVO_LLVM_BIN=str(fake)))
    try:
        if when == "running":
            deadline = time.monotonic() + 30
            while not (pid_file.exists() and pid_file.read_text().strip()):
                assert p.poll() is None, p.communicate()
                assert time.monotonic() < deadline, f"the stand-in {tool} never started"
                time.sleep(0.02)
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
    return p.returncode, err, tmp, left_running


@pytest.mark.parametrize("tool", ["llvm-objdump", "llvm-mc"])
@pytest.mark.parametrize("signum,status,when", _SIGNALS)
def test_sigterm_leaves_nothing_behind(tmp_path, tool, signum, status, when):
    """SIGTERM (or Ctrl-C's SIGINT) while llvm-objdump, or llvm-mc checking the text, runs
    (a stand-in that never ends), reading standard input: exit status 143 (130) at once, the
    tool killed, no temporary file left (standard input's copy included) and no partial
    output.  (Ctrl-C as asmevo started llvm-objdump left it running: the KeyboardInterrupt
    came before asmevo held the process; llvm-mc runs on a thread, which Ctrl-C waited for.)"""
    out = tmp_path / "out"
    out.mkdir()
    with open(VADD, "rb") as stdin:
        code, err, tmp, left_running = _stopped_while_tool_runs(
            tmp_path, tool, ["dis", "-", "-o", str(out / "k.s")], signum, when, stdin=stdin,
            real=[t for t in ("llvm-objdump", "llvm-mc") if t != tool])
    assert code == status, err
    assert b"Traceback" not in err, err
    assert os.listdir(tmp) == []
    assert os.listdir(out) == []
    assert not left_running, f"{tool} was left running"


@pytest.mark.parametrize("tool", ["llvm-mc", "ld.lld"])
@pytest.mark.parametrize("signum,status,when", _SIGNALS)
def test_asm_stopped_leaves_nothing_behind(tmp_path, tool, signum, status, when):
    """The same for ``asmevo asm`` while llvm-mc or ld.lld runs: the tool killed, its
    temporary directory (the object file) removed, no output (a SIGTERM left both the tool
    and the directory; Ctrl-C as asmevo started the tool left it running)."""
    out = tmp_path / "out"
    out.mkdir()
    code, err, tmp, left_running = _stopped_while_tool_runs(
        tmp_path, tool, ["asm", str(ROOT / "examples" / "vadd_f32.s"), "-o", str(out / "k.co")],
        signum, when, real=[t for t in ("llvm-mc",) if t != tool])
    assert code == status, err
    assert b"Traceback" not in err, err
    assert os.listdir(tmp) == []
    assert os.listdir(out) == []
    assert not left_running, f"{tool} was left running"


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

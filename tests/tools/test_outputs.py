"""Outputs (issue 15): a device, a FIFO, ``-`` or a symlink to one is written directly; only
regular files are replaced by temp file + rename (a symlink's target, not the link); an
input is never overwritten."""

from __future__ import annotations

import os
import pathlib
import stat
import threading

import pytest

from asmevo.cli import main as cli_main
from asmevo.fileio import write_output

EX = pathlib.Path(__file__).resolve().parents[2] / "examples"


def test_dev_null_stays_a_device():
    before = os.stat("/dev/null")
    write_output("/dev/null", "text\n")
    write_output("/dev/null", b"\x00bytes")
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev


def test_dis_to_dev_null(capsys):
    rc = cli_main(["dis", str(EX / "vadd_f32.co"), "-o", "/dev/null"])
    assert rc == 0 and stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert not [p for p in os.listdir("/dev") if p.startswith(".asmevo-")]


def test_fifo_is_written_not_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []

    def reader():
        with open(fifo, "rb") as f:
            got.append(f.read())

    t = threading.Thread(target=reader)
    t.start()
    write_output(str(fifo), b"hello fifo")
    t.join(timeout=30)
    assert got == [b"hello fifo"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_dash_is_stdout(capsys):
    write_output("-", "to stdout\n")
    assert capsys.readouterr().out == "to stdout\n"


def test_dis_dash_is_stdout(capsys):
    rc = cli_main(["dis", str(EX / "vadd_f32.co"), "-o", "-"])
    out = capsys.readouterr().out
    assert rc == 0 and "vadd_f32:" in out and not os.path.exists("-")


def test_symlink_to_regular_file_replaces_the_target(tmp_path):
    target = tmp_path / "real.s"
    target.write_text("old\n")
    target.chmod(0o600)
    link = tmp_path / "link.s"
    link.symlink_to(target)
    write_output(str(link), "new\n")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600


def test_symlink_to_dev_null(tmp_path):
    link = tmp_path / "null"
    link.symlink_to("/dev/null")
    write_output(str(link), "x")
    assert link.is_symlink() and stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_symlink_to_input_is_refused(tmp_path, capsys):
    src = tmp_path / "in.co"
    src.write_bytes((EX / "vadd_f32.co").read_bytes())
    link = tmp_path / "out.s"
    link.symlink_to(src)
    rc = cli_main(["dis", str(src), "-o", str(link)])
    assert rc == 2 and "refusing to overwrite the input" in capsys.readouterr().err
    assert src.read_bytes() == (EX / "vadd_f32.co").read_bytes()


def test_regular_file_is_replaced_atomically(tmp_path):
    out = tmp_path / "o.s"
    out.write_text("old")
    write_output(str(out), "new")
    assert out.read_text() == "new" and sorted(os.listdir(tmp_path)) == ["o.s"]


def test_opt_to_dev_null(capsys):
    from asmevo.tools.opt import main as opt_main
    rc = opt_main(["--passes=dce", str(EX / "vadd_f32.s"), "-o", "/dev/null"])
    assert rc == 0, capsys.readouterr().err
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.parametrize("cmd", ["dis", "asm"])
def test_a_command_started_with_stdout_closed_writes_its_file_and_exits_0(tmp_path, cmd):
    """``asmevo dis K.co -o out.s >&-``: the fast exit (cli.exit_now) flushed a None
    sys.stdout and ended in a traceback, exit 1 (newcomer test, 2026-12-01)."""
    import subprocess
    import sys
    ex = pathlib.Path(__file__).resolve().parents[2] / "examples"
    src = ex / ("vadd_f32.co" if cmd == "dis" else "vadd_f32.s")
    out = tmp_path / ("out.s" if cmd == "dis" else "out.co")
    r = subprocess.run([sys.executable, "-m", "asmevo", cmd, str(src), "-o", str(out)],
                       stdout=None, stderr=subprocess.PIPE, text=True,
                       preexec_fn=lambda: __import__("os").close(1))
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert out.stat().st_size > 0

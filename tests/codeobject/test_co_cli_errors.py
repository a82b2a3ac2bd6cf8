"""Every bad input of ``asmevo dis`` / ``asm`` / ``roundtrip`` exits 2 with ``asmevo CMD: LOCATION:
error: ...`` on stderr and never a traceback (HELPER_RULES: AsmevoError with location)."""

from __future__ import annotations

import builtins
import errno

import pytest

from asmevo.cli import main as cli_main

pytestmark = pytest.mark.corpus


def _run(capsys, *argv):
    rc = cli_main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err + out
    return rc, out, err


def _files(tmp_path):
    d = tmp_path / "adir"
    d.mkdir()
    empty = tmp_path / "empty.s"
    empty.write_text("")
    blank = tmp_path / "blank.co"
    blank.write_bytes(b"")
    bad = tmp_path / "bad.s"
    bad.write_text('\t.amdgcn_target "amdgcn-amd-amdhsa--gfx942"\n\t.text\nk:\n\tv_add_f32 v0, v1\n')
    return d, empty, blank, bad


@pytest.mark.parametrize("cmd", ["dis", "roundtrip", "asm"])
def test_bad_inputs_exit_2_with_location(tmp_path, capsys, cmd):
    d, empty, blank, bad = _files(tmp_path)
    extra = ["-o", tmp_path / "out.x"] if cmd == "asm" else []
    cases = {d: "is a directory", str(d) + "/": "is a directory", tmp_path / "missing.co": "no such file",
             empty: "empty file", blank: "empty file"}
    for path, msg in cases.items():
        rc, _, err = _run(capsys, cmd, path, *extra)
        assert rc == 2, (path, err)
        assert err.startswith(f"asmevo {cmd}: {path}"), err
        assert msg in err and "error:" in err, (path, err)
    if cmd == "asm":
        rc, _, err = _run(capsys, cmd, empty, *extra)
        assert f"{empty}:1:1: error: empty file" in err
    rc, _, err = _run(capsys, cmd, bad, *extra)
    assert rc == 2
    if cmd == "asm":  # llvm-mc's error at the source line and column
        assert err.startswith(f"asmevo asm: {bad}:4:2: error: llvm-mc: too few operands"), err
    else:
        assert err.startswith(f"asmevo {cmd}: {bad}") and "expected" in err
    assert not (tmp_path / "out.x").exists()


@pytest.mark.parametrize("cmd", ["dis", "roundtrip", "asm"])
def test_unreadable_input(tmp_path, capsys, monkeypatch, corpus_dir, cmd):
    """A file that exists but cannot be opened (EACCES; simulated, the tests may run as root)."""
    src = corpus_dir / ("vadd_f32.s" if cmd == "asm" else "vadd_f32.co")
    p = tmp_path / src.name
    p.write_bytes(src.read_bytes())
    real_open = builtins.open

    def fake_open(file, *a, **k):
        if str(file) == str(p):
            raise PermissionError(errno.EACCES, "Permission denied", str(file))
        return real_open(file, *a, **k)

    monkeypatch.setattr(builtins, "open", fake_open)
    extra = ["-o", tmp_path / "out.x"] if cmd == "asm" else []
    rc, _, err = _run(capsys, cmd, p, *extra)
    assert rc == 2 and err.startswith(f"asmevo {cmd}: {p}") and "Permission denied" in err, err


def test_bad_output_paths(tmp_path, capsys, corpus_dir):
    d = tmp_path / "adir"
    d.mkdir()
    co, s = corpus_dir / "vadd_f32.co", corpus_dir / "vadd_f32.s"
    for argv, where, msg in [
        (["asm", s, "-o", d], d, "is a directory"),
        (["dis", co, "-o", d], d, "is a directory"),
        (["asm", s, "-o", tmp_path / "no" / "x.co"], tmp_path / "no" / "x.co", "does not exist"),
        (["dis", co, "-o", tmp_path / "no" / "x.s"], tmp_path / "no" / "x.s", "does not exist"),
    ]:
        rc, _, err = _run(capsys, *argv)
        assert rc == 2 and err.startswith(f"asmevo {argv[0]}: {where}") and msg in err, err
    f = tmp_path / "file"
    f.write_text("x")
    rc, _, err = _run(capsys, "roundtrip", co, "--keep", f)
    assert rc == 2 and "--keep: exists and is not a directory" in err
    rc, _, err = _run(capsys, "roundtrip", co, "--keep", f / "sub")
    assert rc == 2 and "--keep: cannot create the directory" in err


def test_good_paths_still_work(tmp_path, capsys, corpus_dir):
    rc, out, _ = _run(capsys, "roundtrip", corpus_dir / "vadd_f32.co", "--keep", tmp_path / "k")
    assert rc == 0 and "identical" in out and (tmp_path / "k" / "vadd_f32.s").is_file()
    rc, _, _ = _run(capsys, "asm", tmp_path / "k" / "vadd_f32.s", "-o", tmp_path / "v.co")
    assert rc == 0 and (tmp_path / "v.co").read_bytes()[:4] == b"\x7fELF"

"""LLVM tools' habits (issue 15): ``--version``; ``-`` for standard input on every command
that reads a code object or assembly (ELF magic decides which); single-dash long options
(``-passes=dce`` is ``--passes=dce``, not ``-p asses=dce``); no prefix guessing
(``--pass=`` is an error); ``python -m asmevo``."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

EX = pathlib.Path(__file__).resolve().parents[2] / "examples"
ROOT = EX.parent
CO, S = EX / "vadd_f32.co", EX / "vadd_f32.s"


def _run(argv, stdin: bytes | None = None, timeout=300):
    r = subprocess.run([sys.executable, "-m", *argv], input=stdin, capture_output=True,
                       cwd=ROOT, timeout=timeout)
    out, err = r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")
    assert "Traceback" not in err and "internal error" not in err
    return r.returncode, out, err


@pytest.mark.parametrize("mod,prog", [("asmevo", "asmevo"), ("asmevo.tools.opt", "asmevo-opt")])
def test_version(mod, prog):
    rc, out, err = _run([mod, "--version"])
    assert rc == 0 and out.startswith(f"{prog} 0.") and "gfx942" in out


def test_python_m_asmevo_dispatches():
    rc, out, err = _run(["asmevo", "dis", str(CO)])
    assert rc == 0 and "vadd_f32:" in out


@pytest.mark.parametrize("argv,data", [
    (["dis", "-"], CO), (["analyze", "-", "--regs"], CO), (["analyze", "-", "--regs"], S),
    (["roundtrip", "-"], CO),
])
def test_stdin_dash(argv, data):
    rc, out, err = _run(["asmevo", *argv], stdin=data.read_bytes())
    assert rc == 0, err
    assert "vadd_f32" in out


def test_stdin_asm_and_opt(tmp_path):
    out_co = tmp_path / "o.co"
    rc, out, err = _run(["asmevo", "asm", "-", "-o", str(out_co)], stdin=S.read_bytes())
    assert rc == 0, err
    assert out_co.read_bytes()[:4] == b"\x7fELF"
    rc, out, err = _run(["asmevo.tools.opt", "-passes=dce", "-"], stdin=CO.read_bytes())
    assert rc == 0 and "vadd_f32:" in out, err


def test_stdin_errors_name_stdin():
    rc, out, err = _run(["asmevo", "dis", "-"], stdin=b"not an elf")
    assert rc == 2 and "<stdin>" in err and "asmevo-stdin-" not in err


def test_stdin_read_once(tmp_path):
    rc, out, err = _run(["asmevo", "verify", "-", "-"], stdin=CO.read_bytes())
    assert rc == 2 and "standard input" in err


def test_single_dash_long_options(tmp_path):
    out = tmp_path / "o.s"
    rc, _, err = _run(["asmevo.tools.opt", "-passes=dce", "-stats", "-print-after-all", str(S),
                       "-o", str(out)])
    assert rc == 0, err
    assert "IR Dump After dce" in err and "statistics" in err and out.exists()
    rc, _, err = _run(["asmevo", "analyze", str(S), "-regs", "-json", "-o", str(tmp_path / "r.json")])
    assert rc == 0, err
    assert (tmp_path / "r.json").read_text().lstrip().startswith("{")


def test_normalize_argv_units():
    import argparse
    from asmevo.cli import normalize_argv
    p = argparse.ArgumentParser(allow_abbrev=False)
    p.add_argument("-o")
    p.add_argument("-p", "--passes")
    p.add_argument("--stats", action="store_true")
    p.add_argument("--seed", type=int)
    p.add_argument("input", nargs="?")
    assert normalize_argv(["-passes=dce", "-stats", "-o", "-stats", "x"], p) == \
        ["--passes=dce", "--stats", "-o", "-stats", "x"]
    assert normalize_argv(["-pdce", "--seed", "-1", "-unknown", "--", "-stats"], p) == \
        ["-pdce", "--seed", "-1", "-unknown", "--", "-stats"]


@pytest.mark.parametrize("mod,argv", [
    ("asmevo.tools.opt", ["--pass=dce", str(S)]),
    ("asmevo.tools.opt", ["--print-pass", str(S)]),
    ("asmevo", ["analyze", str(S), "--wait"]),
    ("asmevo", ["dis", str(CO), "--out=x.s"]),
])
def test_no_abbreviations(mod, argv):
    rc, out, err = _run([mod, *argv])
    assert rc == 2 and "unrecognized arguments" in err


def test_opt_dash_S_writes_assembly_whatever_the_suffix(tmp_path):
    out = tmp_path / "o.co"
    rc, _, err = _run(["asmevo.tools.opt", "-passes=dce", "-S", str(CO), "-o", str(out)])
    assert rc == 0, err
    assert out.read_text().lstrip().startswith(".amdgcn_target")

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


# -- `python -m asmevo opt` is asmevo-opt (newcomer test) ----------------------------------

def test_python_m_asmevo_opt_is_asmevo_opt(tmp_path):
    """``asmevo opt`` takes asmevo-opt's options (single-dash ones too) and gives the same
    output, through the same module; ``asmevo --help`` lists it."""
    want = _run(["asmevo.tools.opt", "-passes=dce", "-stats", str(CO)])
    got = _run(["asmevo", "opt", "-passes=dce", "-stats", str(CO)])
    assert got[0] == want[0] == 0, got[2]
    assert got[1] == want[1] and "vadd_f32:" in got[1]
    assert "statistics" in got[2]
    rc, out, _ = _run(["asmevo", "--help"])
    assert rc == 0 and "opt" in out.split() and "asmevo-opt" in out
    rc, out, _ = _run(["asmevo", "opt", "--help"])
    assert rc == 0 and "--passes" in out and "--verify-each" in out
    rc, out, _ = _run(["asmevo", "opt", "--version"])
    assert rc == 0 and out.startswith("asmevo opt 0.")


def test_python_m_asmevo_opt_errors_and_stdin(tmp_path):
    rc, _, err = _run(["asmevo", "opt", "-passes=bogus", str(CO)])
    assert rc == 2 and err.startswith("asmevo opt: ") and "unknown pass 'bogus'" in err
    out = tmp_path / "o.co"
    rc, _, err = _run(["asmevo", "opt", "-passes=dce", "-", "-o", str(out)], stdin=CO.read_bytes())
    assert rc == 0, err
    assert out.read_bytes()[:4] == b"\x7fELF"


def test_readme_lists_asmevo_opt_subcommand():
    text = (ROOT / "README.md").read_text()
    assert "asmevo opt " in text

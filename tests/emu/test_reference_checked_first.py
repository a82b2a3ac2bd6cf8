"""A harness whose ``reference`` cannot be used is bad input found before any kernel runs
(``asmevo run --check``, ``asmevo evolve``): one line naming the harness file, the entry and
the ``reference`` key, exit 2.  It used to surface only after the kernel had run (for a
large kernel, minutes later), or as a 'not produced' mismatch for a buffer name the entry
does not have."""

from __future__ import annotations

import json
import pathlib

import pytest

from asmevo.cli import main as cli_main

ROOT = pathlib.Path(__file__).resolve().parents[2]
CO = ROOT / "examples" / "vadd_f32.co"
HARNESS = ROOT / "examples" / "vadd_f32.json"

CASES = {
    "unknown buffer": ("ref.py", "def vadd_f32(a, b, n, **_):\n    return {'d': a + b}\n",
                       "returned 'd', which names no buffer of the entry"),
    "wrong shape": ("ref.py", "def vadd_f32(a, b, n, **_):\n    return {'c': (a + b)[:10]}\n",
                    "with shape (10,); expected 1000 elements"),
    "raises": ("ref.py", "def vadd_f32(a, b, n, **_):\n    return {'c': a + undefined}\n",
               "raised NameError"),
    "no such function": ("ref.py", "def other(**_):\n    return {}\n",
                         "reference function vadd_f32 not in"),
    "file does not load": ("ref.py", "def vadd_f32(:\n", "raised SyntaxError"),
    "no file": (None, None, "ref.py not found"),
}


def _harness(tmp_path, case) -> pathlib.Path:
    fname, body, _ = CASES[case]
    e = json.loads(HARNESS.read_text())
    e["reference"] = "ref.py:vadd_f32"
    if fname:
        (tmp_path / fname).write_text(body)
    h = tmp_path / "h.json"
    h.write_text(json.dumps(e))
    return h


@pytest.fixture
def nothing_runs(monkeypatch):
    """Fail the test if the kernel is run (the check must come first).  Loading the code
    object is allowed: the launch check reads its metadata."""
    def refuse(*a, **k):
        raise AssertionError("the kernel ran before the reference was checked")
    import asmevo.emu.launch
    monkeypatch.setattr(asmevo.emu.launch, "run_kernel", refuse)


@pytest.mark.parametrize("case", sorted(CASES))
def test_run_check_refuses_a_bad_reference_before_running(tmp_path, capsys, nothing_runs, case):
    h = _harness(tmp_path, case)
    rc = cli_main(["run", str(CO), "--harness", str(h), "--check"])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"asmevo run: {h}: error: entry 'vadd_f32': key 'reference' "
                          "('ref.py:vadd_f32'): "), err
    assert CASES[case][2] in err, err


def test_run_without_check_does_not_need_the_reference(tmp_path, capsys):
    h = _harness(tmp_path, "unknown buffer")
    assert cli_main(["run", str(CO), "--harness", str(h)]) == 0, capsys.readouterr().err


def test_run_check_without_a_reference(tmp_path, capsys, nothing_runs):
    e = json.loads(HARNESS.read_text())
    e.pop("reference")
    h = tmp_path / "h.json"
    h.write_text(json.dumps(e))
    assert cli_main(["run", str(CO), "--harness", str(h), "--check"]) == 2
    err = capsys.readouterr().err
    assert err == (f"asmevo run: {h}: error: --check: entry 'vadd_f32' has no 'reference' "
                   "(\"FILE.py:FUNCTION\") to compare with\n"), err


def test_a_good_reference_still_checks(capsys):
    assert cli_main(["run", str(CO), "--harness", str(HARNESS), "--check"]) == 0
    assert "the numpy reference" in capsys.readouterr().out


def test_evolve_refuses_a_bad_reference_before_running_k0(tmp_path, capsys, monkeypatch):
    import asmevo.emu.launch

    def refuse(*a, **k):
        raise AssertionError("K0 ran before the reference was checked")
    monkeypatch.setattr(asmevo.emu.launch, "run_kernel", refuse)
    h = _harness(tmp_path, "unknown buffer")
    out = tmp_path / "run"
    rc = cli_main(["evolve", str(CO), "--harness", str(h), "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert f"{h}: error: entry 'vadd_f32': key 'reference'" in err and "'d'" in err, err
    assert "Traceback" not in err

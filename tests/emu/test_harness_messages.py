"""Harness messages a user reads (newcomer findings): a bad ``kind`` names the value and
the valid kinds, an unknown ``init`` lists the valid init forms, and a mismatch with a
float64 reference prints plain numbers, not numpy reprs such as ``np.float64(1.5)``."""

from __future__ import annotations

import copy
import json
import pathlib
import re

import numpy as np
import pytest

from asmevo.cli import main as cli_main
from asmevo.emu import harness as H

EX = pathlib.Path(__file__).resolve().parents[2] / "examples"
BASE = json.loads((EX / "vadd_f32.json").read_text())


def _run(tmp_path, capsys, e, *extra):
    h = tmp_path / "h.json"
    h.write_text(json.dumps(e))
    rc = cli_main(["run", str(EX / "vadd_f32.co"), "--harness", str(h), *extra])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return rc, out, err, h


@pytest.mark.parametrize("kind,words", [
    ("bufer", "argument a: unknown kind 'bufer'; closest: 'buffer'; valid kinds: buffer, scalar"),
    (5, "argument a: kind is the number 5; valid kinds: buffer, scalar"),
    (None, "argument a: kind is null; valid kinds: buffer, scalar"),
])
def test_bad_kind_names_the_value_and_the_valid_kinds(tmp_path, capsys, kind, words):
    e = copy.deepcopy(BASE)
    e["args"][0]["kind"] = kind
    rc, _, err, h = _run(tmp_path, capsys, e)
    assert rc == 2 and err == f"asmevo run: {h}: error: entry 'vadd_f32': {words}\n", err


def test_missing_kind(tmp_path, capsys):
    e = copy.deepcopy(BASE)
    del e["args"][0]["kind"]
    rc, _, err, _ = _run(tmp_path, capsys, e)
    assert rc == 2 and "argument a: missing key 'kind'; valid kinds: buffer, scalar" in err, err


@pytest.mark.parametrize("init,what", [("zerosx", "unknown init 'zerosx'"),
                                       ("normal(0,1)", "unknown init 'normal(0,1)'"),
                                       (7, "init is the number 7")])
def test_unknown_init_lists_the_valid_forms(tmp_path, capsys, init, what):
    e = copy.deepcopy(BASE)
    e["args"][0]["init"] = init
    rc, _, err, _ = _run(tmp_path, capsys, e)
    assert rc == 2 and f"buffer a: {what}; valid inits: zeros, ones, arange" in err, err
    assert "uniform(LO,HI)" in err and "randint(LO,HI)" in err, err


def test_float64_reference_mismatch_prints_plain_numbers(tmp_path, capsys):
    (tmp_path / "ref.py").write_text(
        "import numpy as np\n"
        "def vadd_f32(a, b, n, **_):\n"
        "    c = np.zeros(a.shape[0], np.float64)\n"
        "    c[:n] = a[:n].astype(np.float64) + b[:n] + 1.0\n"
        "    return {'c': c}\n")
    rc, out, _, _ = _run(tmp_path, capsys, copy.deepcopy(BASE), "--check")
    assert rc == 1, out
    line = next(ln for ln in out.splitlines() if ln.startswith("MISMATCH c:"))
    assert "np." not in line and "float64(" not in line, line
    assert re.search(r"first at index 0: got -?\d\.\d+(e-?\d+)?, expected -?\d\.\d+(e-?\d+)?$",
                     line), line


def test_values_that_print_alike_show_their_digits_or_bits():
    h = H.load_harness(str(EX / "vadd_f32.json"))
    got = np.full(1000, 0.1, np.float32)
    errs = H.compare(h, {"c": got}, {"c": np.full(1000, 0.1, np.float64)})
    assert errs == []          # bit-exact after casting to the buffer's dtype
    nan1 = np.array([0x7fc00001] * 1000, np.uint32).view(np.float32)
    (e,) = H.compare(h, {"c": nan1}, {"c": np.full(1000, 2.0, np.float32)})
    assert e.endswith("got nan, expected 2.0"), e
    h["rtol"] = 1e-12
    (e,) = H.compare(h, {"c": got}, {"c": np.full(1000, 0.1, np.float64)})
    assert e.endswith("got 0.10000000149011612, expected 0.1"), e


def test_zero_tolerances_are_bit_exact_signed_zeros_differ():
    """rtol = atol = 0 means bit-exact (the corpus README): -0.0 against +0.0 is a mismatch,
    shown with its sign; with a tolerance the two are equal, as np.allclose says."""
    h = H.load_harness(str(EX / "vadd_f32.json"))
    h["rtol"] = h["atol"] = 0
    got = np.zeros(1000, np.float32)
    got[7] = -0.0
    (e,) = H.compare(h, {"c": got}, {"c": np.zeros(1000, np.float64)})
    assert e.endswith("1 of 1000 elements differ; first at index 7: got -0.0, expected 0.0"), e
    h["atol"] = 1e-30
    assert H.compare(h, {"c": got}, {"c": np.zeros(1000, np.float64)}) == []

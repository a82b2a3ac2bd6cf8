"""Harness JSON with wrong types, shapes or sizes (issue 15): every case is a located
message naming the harness file and exit status 2, never ``internal error`` (exit 1) nor a
traceback.  Uses the bundled example (examples/vadd_f32.*), no corpus needed."""

from __future__ import annotations

import copy
import json
import pathlib

import pytest

from asmevo.cli import main as cli_main

EX = pathlib.Path(__file__).resolve().parents[2] / "examples"
BASE = json.loads((EX / "vadd_f32.json").read_text())


def _set(path, value):
    def f(e):
        t = e
        for k in path[:-1]:
            t = t[k]
        t[path[-1]] = value
    return f


def _raw_replace(old, new):
    def f(text):
        assert old in text
        return text.replace(old, new, 1)
    return f


# (id, mutation of the entry dict, mutation of the JSON text, extra argv, expected words)
CASES = [
    ("args-int", _set(["args"], 5), None, [], "args is the number 5"),
    ("args-item-int", _set(["args"], [5]), None, [], "argument #0"),
    ("reference-int", _set(["reference"], 5), None, ["--check"], "reference is the number 5"),
    ("reference-not-py", _set(["reference"], "ref.txt:vadd_f32"), None, ["--check"], "FILE.py"),
    ("rtol-string", _set(["rtol"], "x"), None, ["--check"], "rtol is the string 'x'"),
    ("atol-list", _set(["atol"], [1]), None, ["--check"], "atol is a list"),
    ("arg-name-list", _set(["args", 0, "name"], [1]), None, [], "argument #0 needs a name"),
    ("arg-name-bool", _set(["args", 0, "name"], True), None, [], "argument #0 needs a name"),
    ("arg-name-nan", None, _raw_replace('"name": "a"', '"name": NaN'), [], "NaN"),
    ("entry-name-list", _set(["name"], [1]), None, [], "name is a list"),
    ("kernel-int", _set(["kernel"], 5), None, [], "kernel is the number 5"),
    ("grid-2^32", _set(["grid"], [2 ** 32, 1, 1]), None, [], "32-bit grid size"),
    ("grid-bool", _set(["grid"], [True, 1, 1]), None, [], "grid must be a list"),
    ("block-too-big", _set(["block"], [2048, 1, 1]), None, [], "at most 1024"),
    ("dtype-str", _set(["args", 0, "dtype"], "str"), None, [], "dtype 'str' is not supported"),
    ("dtype-object", _set(["args", 0, "dtype"], "object"), None, [], "dtype 'object'"),
    ("dtype-complex", _set(["args", 0, "dtype"], "complex64"), None, [], "not supported"),
    ("dup-name", _set(["args", 1, "name"], "a"), None, [], "used twice"),
    ("scalar-string", _set(["args", 3, "value"], "x"), None, [], "does not fit dtype int32"),
    ("scalar-overflow", _set(["args", 3, "value"], 2 ** 40), None, [], "does not fit"),
    ("dynamic-lds-string", _set(["dynamic_lds"], "x"), None, [], "dynamic_lds"),
    ("nesting-5000", None, lambda t: "[" * 5000 + "]" * 5000, [], "nested more than"),
    ("int-5001-digits", None, _raw_replace('"value": 1000', '"value": ' + "9" * 5001), [],
     "5001 digits"),
    ("manifest-of-ints", None, lambda t: "[5, 6]", [], "manifest entry #0"),
]


def _run(capsys, argv):
    rc = cli_main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("mut,raw,extra,words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_harness_is_located_exit_2(tmp_path, capsys, mut, raw, extra, words):
    (tmp_path / "ref.py").write_text((EX / "ref.py").read_text())
    (tmp_path / "ref.txt").write_text("not python\n")
    e = copy.deepcopy(BASE)
    if mut:
        mut(e)
    text = json.dumps(e, indent=1)
    if raw:
        text = raw(text)
    h = tmp_path / "bad.json"
    h.write_text(text)
    rc, out, err = _run(capsys, ["run", str(EX / "vadd_f32.co"), "--harness", str(h), *extra])
    assert rc == 2, err
    assert f"{h}" in err and "error:" in err
    assert words in err
    assert "internal error" not in err and "Traceback" not in out + err


def test_negative_seed_is_a_usage_error(capsys):
    rc = cli_main(["run", str(EX / "vadd_f32.co"), "--harness", str(EX / "vadd_f32.json"),
                   "--seed", "-1"])
    err = capsys.readouterr().err
    assert rc == 2 and "--seed" in err and "non-negative" in err
    assert "internal error" not in err


def test_negative_seed_through_the_api_is_an_asmevo_error():
    from asmevo.emu import harness as H
    from asmevo.errors import AsmevoError
    h = H.load_harness(str(EX / "vadd_f32.json"))
    with pytest.raises(AsmevoError, match="non-negative"):
        H.make_inputs(h, -1)


def test_good_harness_still_runs(capsys):
    rc, out, err = _run(capsys, ["run", str(EX / "vadd_f32.co"), "--harness",
                                 str(EX / "vadd_f32.json"), "--check"])
    assert rc == 0, err
    assert "the numpy reference" in out


def test_huge_integer_tolerance_is_not_an_internal_error(tmp_path, capsys):
    """Found by fuzzing: ``"rtol": 2**64`` made np.isfinite raise TypeError."""
    (tmp_path / "ref.py").write_text((EX / "ref.py").read_text())
    e = copy.deepcopy(BASE)
    e["rtol"] = 2 ** 64
    h = tmp_path / "h.json"
    h.write_text(json.dumps(e))
    rc, out, err = _run(capsys, ["run", str(EX / "vadd_f32.co"), "--harness", str(h), "--check"])
    assert rc == 0 and "internal error" not in err

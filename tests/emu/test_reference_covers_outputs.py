"""A harness ``reference`` must give a value for every buffer the entry marks as output
(role ``out``/``inout``): one that returns ``{}`` or leaves an output out used to pass
vacuously (``asmevo run --check``: "0 output buffer(s) match"; evolve's final check:
``reference: True``).  It is bad input found before any kernel runs, with the other
reference checks: one line naming the harness file, the entry and the ``reference`` key,
exit 2."""

from __future__ import annotations

import json
import pathlib

import pytest

from asmevo.cli import main as cli_main

ROOT = pathlib.Path(__file__).resolve().parents[2]
CO = ROOT / "examples" / "vadd_f32.co"
HARNESS = ROOT / "examples" / "vadd_f32.json"


@pytest.fixture
def nothing_runs(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("the kernel ran before the reference was checked")
    import asmevo.emu.launch
    monkeypatch.setattr(asmevo.emu.launch, "run_kernel", refuse)


def _harness(tmp_path, body: str, **change) -> pathlib.Path:
    e = json.loads(HARNESS.read_text())
    e.update(change)
    (tmp_path / "ref.py").write_text(body)
    h = tmp_path / "h.json"
    h.write_text(json.dumps(e))
    return h


def _refused(capsys, h, argv) -> str:
    rc = cli_main(argv)
    err = capsys.readouterr().err
    assert rc == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"asmevo {argv[0]}: {h}: error: entry 'vadd_f32': key 'reference' "
                          "('ref.py:vadd_f32'): "), err
    return err


@pytest.mark.parametrize("body", ["def vadd_f32(**_):\n    return {}\n",
                                  "def vadd_f32(a, **_):\n    return {'a': a}\n"],
                         ids=["empty dict", "only an input buffer"])
def test_run_check_refuses_a_reference_without_the_output(tmp_path, capsys, nothing_runs, body):
    h = _harness(tmp_path, body)
    err = _refused(capsys, h, ["run", str(CO), "--harness", str(h), "--check"])
    assert "no value for output buffer 'c'" in err and "out or inout: c" in err, err


def test_evolve_refuses_a_reference_without_the_output(tmp_path, capsys, nothing_runs):
    h = _harness(tmp_path, "def vadd_f32(**_):\n    return {}\n")
    err = _refused(capsys, h, ["evolve", str(CO), "--harness", str(h), "--out",
                               str(tmp_path / "run"), "--quiet"])
    assert "no value for output buffer 'c'" in err, err


def test_an_entry_without_output_buffers_has_nothing_to_check(tmp_path, capsys, nothing_runs):
    e = json.loads(HARNESS.read_text())
    for a in e["args"]:
        a["role"] = "in"
    h = _harness(tmp_path, (ROOT / "examples" / "ref.py").read_text(), args=e["args"])
    err = _refused(capsys, h, ["run", str(CO), "--harness", str(h), "--check"])
    assert "marks no buffer as an output" in err, err


def test_run_check_says_which_buffers_matched(capsys):
    assert cli_main(["run", str(CO), "--harness", str(HARNESS), "--check"]) == 0
    out = capsys.readouterr().out
    assert "check: 1 output buffer (c) matches the numpy reference (rtol=0.0, atol=0.0)" in out


def test_compare_reports_an_output_the_reference_left_out():
    """A reference that gives the outputs for seed 0 but not for another seed (evolve's
    final check draws new inputs): a mismatch, not a vacuous pass."""
    import numpy as np
    from asmevo.emu import harness as H
    h = H.load_harness(str(HARNESS))
    errs = H.compare(h, {"c": np.zeros(1000, np.float32)}, {})
    assert errs == ["c: the reference gives no value for this output buffer"]


def test_final_check_sentence_is_words_not_a_bool():
    from asmevo.evolve.report import reference_summary
    assert reference_summary({"match": True, "summary": "1 output buffer (c) matches the numpy "
                              "reference (rtol=0.0, atol=0.0)"}).startswith("1 output buffer (c)")
    # reports written before the summary was stored
    assert reference_summary({"match": True, "seed": 3, "errors": []}) == \
        "the output buffers match the numpy reference"
    assert reference_summary({"match": False, "errors": ["c: 1 of 8 elements differ"]}) == \
        "the outputs differ from the numpy reference: c: 1 of 8 elements differ"
    assert "no reference" in reference_summary({"match": None, "note": "x"})
    assert "not compared" in reference_summary(None)
    for r in ({"match": True}, {"match": False}, {"match": None}, None):
        assert reference_summary(r) not in ("True", "False", "None")

"""`asmevo run` end to end: outputs, --check exit codes, bad input exit 2."""

import json

import numpy as np
import pytest

from asmevo.cli import main

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning")]


def _entry(corpus_dir, name):
    return next(e for e in json.load(open(corpus_dir / "manifest.json")) if e["name"] == name)


def test_run_check_and_out(corpus_dir, tmp_path, capsys):
    rc = main(["run", str(corpus_dir / "vadd_f32.co"), "--harness", str(corpus_dir / "manifest.json"),
               "--entry", "vadd_f32", "--check", "--out", str(tmp_path / "o")])
    out = capsys.readouterr().out
    assert rc == 0 and "16 waves" in out and "the numpy reference" in out
    c = np.load(tmp_path / "o" / "c.npy")
    assert c.dtype == np.float32 and c.shape == (1000,) and np.any(c != 0)


def test_check_mismatch_exits_1(corpus_dir, tmp_path, capsys):
    e = _entry(corpus_dir, "vadd_f32")
    e["reference"] = "bad_ref.py:wrong"
    (tmp_path / "h.json").write_text(json.dumps(e))
    (tmp_path / "bad_ref.py").write_text(
        "import numpy as np\ndef wrong(a, b, **_):\n    return {'c': (a - b).astype(np.float32)}\n")
    rc = main(["run", str(corpus_dir / "vadd_f32.co"), "--harness", str(tmp_path / "h.json"), "--check"])
    out = capsys.readouterr().out
    assert rc == 1
    assert "MISMATCH c:" in out and "first at index" in out and "got" in out and "expected" in out


@pytest.mark.parametrize("mutate,msg", [
    (lambda e: e["args"].pop(), "explicit arguments"),
    (lambda e: e["args"][3].update(dtype="int64"), "8 bytes"),
    (lambda e: e.update(block=[128, 1, 1]), "requires workgroup size"),
])
def test_bad_harness_exits_2(corpus_dir, tmp_path, capsys, mutate, msg):
    e = _entry(corpus_dir, "vadd_f32")
    mutate(e)
    (tmp_path / "h.json").write_text(json.dumps([e]))
    rc = main(["run", str(corpus_dir / "vadd_f32.co"), "--harness", str(tmp_path / "h.json")])
    err = capsys.readouterr().err
    assert rc == 2 and msg in err and "Traceback" not in err


def test_unknown_entry_and_multi_entry(corpus_dir, capsys):
    m = str(corpus_dir / "manifest.json")
    assert main(["run", str(corpus_dir / "vadd_f32.co"), "--harness", m, "--entry", "nope"]) == 2
    assert main(["run", str(corpus_dir / "vadd_f32.co"), "--harness", m]) == 2
    err = capsys.readouterr().err
    assert "--entry 'nope': no entry of that name in the harness; its entries: vadd_f32, " in err


def test_buffer_too_small_faults_with_location(corpus_dir, tmp_path, capsys):
    e = _entry(corpus_dir, "vadd_f32")
    e["args"][2]["count"] = 900          # kernel writes 1000 elements
    (tmp_path / "h.json").write_text(json.dumps(e))
    rc = main(["run", str(corpus_dir / "vadd_f32.co"), "--harness", str(tmp_path / "h.json")])
    err = capsys.readouterr().err
    assert rc == 2 and "global_store_dword" in err and "lane" in err and "vadd_f32" in err


@pytest.mark.corpus
def test_run_names_the_harness_entry_beside_the_kernel(corpus_dir, capsys):
    """--entry softmax_row_O0 runs kernel softmax_row: the line names both (newcomer)."""
    from asmevo.cli import main
    c = corpus_dir
    assert main(["run", str(c / "softmax_row_O0.co"), "--harness", str(c / "manifest.json"),
                 "--entry", "softmax_row_O0"]) == 0
    assert capsys.readouterr().out.startswith("softmax_row (entry softmax_row_O0): ")

"""Bad harness files for ``asmevo run``: one message naming the harness file, exit 2, no
traceback (malformed init, a size beyond the 4 GiB limit checked before allocating, a
reference function that raises, an argument count that does not match the metadata)."""

from __future__ import annotations

import json

import pytest

from asmevo.cli import main as cli_main

pytestmark = pytest.mark.corpus


def _entry(corpus_dir):
    return next(e for e in json.loads((corpus_dir / "manifest.json").read_text())
                if e["name"] == "vadd_f32")


def _run(capsys, corpus_dir, harness, *extra):
    rc = cli_main(["run", str(corpus_dir / "vadd_f32.co"), "--harness", str(harness), *extra])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return rc, err


@pytest.mark.parametrize("init", ["uniform(1,", "uniform(1)", "randint(a,b)", "uniform(2,1)",
                                  "randint(5,5)", "uniform(nan,1)", 7, "zerosx"])
def test_bad_init(corpus_dir, tmp_path, capsys, init):
    e = _entry(corpus_dir)
    e["args"][0]["init"] = init
    h = tmp_path / "h.json"
    h.write_text(json.dumps(e))
    rc, err = _run(capsys, corpus_dir, h)
    assert rc == 2
    assert f"{h}: error: entry 'vadd_f32': buffer {e['args'][0]['name']}: " in err and "init" in err


def test_huge_count_is_refused_before_allocating(corpus_dir, tmp_path, capsys):
    e = _entry(corpus_dir)
    e["args"][0]["count"] = 10 ** 12
    h = tmp_path / "h.json"
    h.write_text(json.dumps(e))
    rc, err = _run(capsys, corpus_dir, h)
    assert rc == 2 and f"{h}: error:" in err and "4 GiB" in err and "MemoryError" not in err


def test_reference_that_raises(corpus_dir, tmp_path, capsys):
    e = _entry(corpus_dir)
    e["reference"] = "boom.py:vadd_f32"
    (tmp_path / "boom.py").write_text("def vadd_f32(**kw):\n    raise ValueError('ref boom')\n")
    (tmp_path / "notdict.py").write_text("def vadd_f32(**kw):\n    return 5\n")
    h = tmp_path / "h.json"
    h.write_text(json.dumps(e))
    rc, err = _run(capsys, corpus_dir, h, "--check")
    assert rc == 2
    assert f"reference {tmp_path / 'boom.py'}:vadd_f32 raised ValueError: ref boom" in err
    assert err.startswith(f"asmevo run: {h}: error:")
    e["reference"] = "notdict.py:vadd_f32"
    h.write_text(json.dumps(e))
    rc, err = _run(capsys, corpus_dir, h, "--check")
    assert rc == 2 and "returned int; expected a dict" in err


def test_missing_argument_names_harness_and_arguments(corpus_dir, tmp_path, capsys):
    e = _entry(corpus_dir)
    names = [a["name"] for a in e["args"]]
    del e["args"][-1]
    h = tmp_path / "h.json"
    h.write_text(json.dumps(e))
    rc, err = _run(capsys, corpus_dir, h)
    assert rc == 2
    assert f"{h}: error: kernel vadd_f32 has {len(names)} explicit arguments" in err
    assert "?, ?" not in err and "kernarg offset 0" in err
    assert f"the harness gives {len(names) - 1} ({', '.join(names[:-1])})" in err


def test_out_not_a_directory_refused_before_running(corpus_dir, tmp_path, capsys):
    h = tmp_path / "h.json"
    h.write_text(json.dumps(_entry(corpus_dir)))
    rc = cli_main(["run", str(corpus_dir / "vadd_f32.co"), "--harness", str(h), "--out", str(h)])
    out, err = capsys.readouterr()
    assert rc == 2 and f"{h}: error: --out must be a directory" in err
    assert "waves" not in out  # the kernel did not run

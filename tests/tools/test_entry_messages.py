"""A wrong ``--entry`` (newcomer test): ``asmevo verify`` read like a crash ("the original
faults on the harness inputs", or an ``unknown-unsupported`` verdict, exit 3).  It is bad
input: one line naming the entry, the file, and the entries or kernels there are; exit 2;
before any work.  The same for ``asmevo-opt --verify``."""

from __future__ import annotations

import json
import pathlib

import pytest

from asmevo.cli import main
from asmevo.tools.opt import main as opt_main

EX = pathlib.Path(__file__).resolve().parents[2] / "examples"
CO = EX / "vadd_f32.co"


@pytest.fixture
def manifest(tmp_path):
    """A manifest list: vadd_f32 (the example's entry) and 'other', whose kernel the example
    code object does not hold."""
    e = json.loads((EX / "vadd_f32.json").read_text())
    other = dict(e, name="other", kernel="other_kernel")
    p = tmp_path / "manifest.json"
    p.write_text(json.dumps([e, other]))
    return p


def _one_line(err: str, prog: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{prog}: "), err
    assert "Traceback" not in err and "faults" not in err and "internal error" not in err
    return lines[0]


def test_entry_not_in_the_manifest(manifest, capsys):
    rc = main(["verify", str(CO), str(CO), "--harness", str(manifest), "--entry", "nope"])
    line = _one_line(capsys.readouterr().err, "asmevo verify")
    assert rc == 2
    assert f"{manifest}: error: --entry 'nope'" in line and "vadd_f32, other" in line, line


def test_entry_whose_kernel_the_code_object_lacks(manifest, capsys):
    rc = main(["verify", str(CO), str(CO), "--harness", str(manifest), "--entry", "other",
               "--level", "static"])
    line = _one_line(capsys.readouterr().err, "asmevo verify")
    assert rc == 2
    assert f"{CO}: error: --entry 'other'" in line and "'other_kernel'" in line
    assert str(manifest) in line and "its kernels: vadd_f32" in line, line


@pytest.mark.parametrize("level", [[], ["--level", "static"]])
def test_entry_without_harness_names_no_kernel(level, capsys):
    rc = main(["verify", str(CO), str(CO), "--entry", "nope", *level])
    out, err = capsys.readouterr()
    line = _one_line(err, "asmevo verify")
    assert rc == 2 and out == ""          # not an unknown-unsupported verdict (exit 3)
    assert f"{CO}: error: --entry 'nope'" in line and "its kernels: vadd_f32" in line, line


def test_a_right_entry_still_verifies(manifest, capsys):
    rc = main(["verify", str(CO), str(CO), "--harness", str(manifest), "--entry", "vadd_f32",
               "--level", "static"])
    assert rc == 0, capsys.readouterr()
    rc = main(["verify", str(CO), str(CO), "--entry", "vadd_f32", "--level", "static"])
    assert rc == 0, capsys.readouterr()


def test_a_harness_entry_file_that_is_not_json_keeps_its_message(tmp_path, capsys):
    bad = tmp_path / "h.json"
    bad.write_text("[{\"name\": ")
    rc = main(["verify", str(CO), str(CO), "--harness", str(bad), "--entry", "x"])
    line = _one_line(capsys.readouterr().err, "asmevo verify")
    assert rc == 2 and str(bad) in line and "--entry" not in line, line


@pytest.mark.parametrize("extra,where,what", [
    (["--verify=static", "--entry", "nope"], "co", "no kernel of that name"),
    (["--verify=diff", "--harness", "M", "--entry", "nope"], "manifest", "no entry of that name"),
    (["--verify=diff", "--harness", "M", "--entry", "other"], "co", "runs kernel 'other_kernel'"),
])
def test_asmevo_opt_verify_entry(manifest, tmp_path, capsys, extra, where, what):
    out = tmp_path / "o.co"
    extra = [str(manifest) if x == "M" else x for x in extra]
    rc = opt_main(["--passes=dce", str(CO), "-o", str(out), *extra])
    line = _one_line(capsys.readouterr().err, "asmevo-opt")
    assert rc == 2 and not out.exists()
    assert f"{CO if where == 'co' else manifest}: error: --entry" in line and what in line, line

"""A run directory's harness hash covers the reference .py file (adversary round 2): a
changed reference is another harness, so resuming a run made with the old one is refused."""

from __future__ import annotations

import pathlib
import shutil

import pytest

from asmevo.emu.harness import harness_sha256, load_harness
from asmevo.errors import AsmevoError
from asmevo.mcp.session import Session

EX = pathlib.Path(__file__).resolve().parents[2] / "examples"


def _copy(tmp_path):
    for f in ("vadd_f32.co", "vadd_f32.json", "ref.py"):
        shutil.copy(EX / f, tmp_path / f)
    return tmp_path / "vadd_f32.json", tmp_path / "ref.py"


def test_hash_covers_the_reference_file(tmp_path):
    hj, ref = _copy(tmp_path)
    a = harness_sha256(load_harness(str(hj)))
    ref.write_text(ref.read_text() + "\n# changed\n")
    assert harness_sha256(load_harness(str(hj))) != a


def test_resume_with_a_changed_reference_is_refused(tmp_path):
    hj, ref = _copy(tmp_path)
    run = tmp_path / "run"
    s = Session(str(run))
    s.load_kernel(str(tmp_path / "vadd_f32.co"), str(hj))
    s.best("k1")          # opens the lineage: K0 gated, the run directory made
    s.close()
    ref.write_text(ref.read_text().replace("return", "return", 1) + "\nX = 1\n")
    s = Session(str(run))
    s.load_kernel(str(tmp_path / "vadd_f32.co"), str(hj))
    with pytest.raises(AsmevoError, match="another harness"):
        s.best("k1")
    s.close()

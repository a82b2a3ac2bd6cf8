"""Ray tier: a real local Ray cluster gives the same run as the local executor (skipped
without Ray; CI installs it)."""

import json
import sqlite3

import pytest

from evolve_helpers import VADD_JSON, evolve_cli

pytest.importorskip("ray")

ARGS = ("--harness", VADD_JSON, "--budget", 8, "--seed", 3, "--quiet")


def _summary(run):
    rep = json.loads((run / "report.json").read_text())
    db = sqlite3.connect(run / "lineage.sqlite")
    return rep["winner"]["hash"], sorted(h for (h,) in db.execute("SELECT hash FROM candidates"))


@pytest.mark.slow
def test_ray_same_as_local(tmp_path, vadd_nops):
    local, ray_run = tmp_path / "local", tmp_path / "ray"
    p = evolve_cli(vadd_nops, "--out", local, *ARGS)
    assert p.returncode == 0, p.stderr
    p = evolve_cli(vadd_nops, "--out", ray_run, "--executor", "ray", "--jobs", 2, *ARGS,
                   timeout=600)
    assert p.returncode == 0, p.stderr
    assert _summary(local) == _summary(ray_run)

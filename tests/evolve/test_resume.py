"""SIGKILL in the middle + --resume ends like an uninterrupted run with the same seed."""

import json
import os
import signal
import sqlite3
import time

from evolve_helpers import VADD_JSON, evolve_cli, popen_evolve

ARGS = ("--harness", VADD_JSON, "--budget", 10, "--seed", 1, "--quiet", "--json")


def _count(db):
    try:
        c = sqlite3.connect(db, timeout=1)
        return c.execute("SELECT COUNT(*) FROM candidates WHERE step >= 0").fetchone()[0]
    except sqlite3.Error:
        return 0


def _summary(run):
    rep = json.loads((run / "report.json").read_text())
    db = sqlite3.connect(run / "lineage.sqlite")
    hashes = sorted(h for (h,) in db.execute("SELECT hash FROM candidates"))
    return rep["winner"]["hash"], rep["evaluated"], hashes


def test_sigkill_then_resume(tmp_path, vadd_nops):
    full, killed = tmp_path / "full", tmp_path / "killed"
    p = evolve_cli(vadd_nops, "--out", full, *ARGS)
    assert p.returncode == 0, p.stderr
    proc = popen_evolve(vadd_nops, "--out", killed, *ARGS)
    db = killed / "lineage.sqlite"
    t0 = time.time()
    while _count(db) < 4 and proc.poll() is None and time.time() - t0 < 120:
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (killed / "report.json").exists()
    p = evolve_cli(vadd_nops, "--out", killed, "--resume", *ARGS)
    assert p.returncode == 0, p.stderr
    a, b = _summary(full), _summary(killed)
    assert a[0] == b[0]                  # same best
    assert a[1] == b[1] == 10            # same number of distinct candidates
    assert a[2] == b[2]                  # the very same candidates


def test_ctrl_c_keeps_everything_and_resumes(tmp_path):
    import subprocess
    import sys
    from evolve_helpers import ROOT, VADD_CO
    run = tmp_path / "run"
    args = ["--harness", str(VADD_JSON), "--out", str(run), "--budget", "6", "--quiet"]
    p = subprocess.Popen([sys.executable, "-m", "asmevo.cli", "evolve", str(VADD_CO), *args],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(ROOT))
    t0 = time.time()
    while _count(run / "lineage.sqlite") < 2 and p.poll() is None and time.time() - t0 < 120:
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130, err
    assert "resume with: asmevo evolve" in err and "--resume" in err
    kept = _count(run / "lineage.sqlite")
    assert kept >= 2
    q = evolve_cli(VADD_CO, *args, "--resume", "--json")
    assert q.returncode == 0, q.stderr
    assert json.loads(q.stdout)["evaluated"] == 6

"""Findings of a newcomer's session (2026-12-01): each test states the documented
behaviour; each failed before its fix (they were strict xfails)."""

from __future__ import annotations

import hashlib
import json
import pathlib
import shutil

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EX = ROOT / "examples"


def _sha(p) -> str:
    return hashlib.sha256(pathlib.Path(p).read_bytes()).hexdigest()


@pytest.fixture
def vadd(tmp_path):
    co = tmp_path / "vadd_f32.co"
    shutil.copy(EX / "vadd_f32.co", co)
    shutil.copy(EX / "ref.py", tmp_path / "ref.py")
    h = tmp_path / "h.json"
    shutil.copy(EX / "vadd_f32.json", h)
    return co, h


def test_opt_output_never_over_the_harness(vadd):
    import subprocess
    import sys
    co, h = vadd
    before = _sha(h)
    r = subprocess.run([sys.executable, "-c", "import sys; from asmevo.tools.opt import main; sys.exit(main())",
                        "--passes=dce", "--verify=diff", "--harness", str(h), str(co), "-o", str(h)],
                       capture_output=True, text=True)
    assert _sha(h) == before, r.stderr
    assert r.returncode == 2


def test_mcp_export_never_over_the_harness(vadd, tmp_path):
    from asmevo.errors import AsmevoError
    from asmevo.mcp.session import Session
    co, h = vadd
    before = _sha(h)
    s = Session(str(tmp_path / "runs"))
    try:
        kid = s.load_kernel(str(co), str(h))["kernel_id"]
        got = s.propose_edit(kid, edit={"edits": [{"from": 11, "to": 13, "asm": [
            "v_lshl_add_u64 v[2:3], s[6:7], 0, v[0:1]",
            "v_lshl_add_u64 v[4:5], s[4:5], 0, v[0:1]"]}]}, hypothesis="swap")
        assert got["accepted"], got
        with pytest.raises(AsmevoError):
            s.export(got["candidate_id"], str(h))
    finally:
        s.close()
    assert _sha(h) == before


def test_evolve_out_never_over_the_harness(tmp_path, capsys):
    from asmevo.cli import main
    d = tmp_path / "run"
    d.mkdir()
    shutil.copy(EX / "vadd_f32.co", d / "k0.co")
    shutil.copy(EX / "ref.py", d / "ref.py")
    shutil.copy(EX / "vadd_f32.json", d / "report.json")
    before = _sha(d / "report.json")
    rc = main(["evolve", str(d / "k0.co"), "--harness", str(d / "report.json"), "--out", str(d),
               "--budget", "1", "--final-trials", "2", "--quiet"])
    err = capsys.readouterr().err
    assert _sha(d / "report.json") == before
    assert rc == 2 and "report.json" in err, err


def test_trace_model_occupancy_limit_is_waves_when_nothing_binds():
    from asmevo.frontend.loader import load
    from asmevo.perf import estimate
    m = load(str(EX / "vadd_f32.co"))
    p = estimate(m, "vadd_f32", harness=str(EX / "vadd_f32.json")).kernel()
    assert p.occupancy == 8
    assert p.occupancy_limit == "waves"


def test_static_model_occupancy_limit_is_waves():
    """Control for the test above: the static model already says 'waves'."""
    from asmevo.frontend.loader import load
    from asmevo.perf import estimate
    p = estimate(load(str(EX / "vadd_f32.co")), "vadd_f32").kernel()
    assert (p.occupancy, p.occupancy_limit) == (8, "waves")


def test_no_hip_message_has_no_bytes_repr(capsys):
    from asmevo.cli import main
    pytest.importorskip("hip", reason="the message comes from hip-python's loader")
    rc = main(["run", str(EX / "vadd_f32.co"), "--harness", str(EX / "vadd_f32.json"),
               "--device", "hip"])
    err = capsys.readouterr().err
    assert rc == 2 and "--device hip" in err
    assert "b'" not in err, err

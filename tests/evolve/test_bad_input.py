"""Bad input: one clear message, exit status 2, K0 untouched."""

from evolve_helpers import EXAMPLES, VADD_CO, VADD_JSON, evolve_cli, sha


def _err(p):
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    return lines


def test_harness_of_another_kernel(tmp_path):
    h = tmp_path / "h.json"
    h.write_text((EXAMPLES / "vadd_f32.json").read_text().replace('"kernel": "vadd_f32"',
                                                                   '"kernel": "softmax_row"'))
    p = evolve_cli(VADD_CO, "--harness", h, "--out", tmp_path / "r", "--quiet")
    assert p.returncode == 2 and len(_err(p)) == 1 and "softmax_row" in p.stderr


def test_harness_that_does_not_match(tmp_path):
    h = tmp_path / "h.json"
    h.write_text((EXAMPLES / "vadd_f32.json").read_text().replace('"count": 1000', '"count": 10'))
    (tmp_path / "ref.py").write_text((EXAMPLES / "ref.py").read_text())  # (its reference)
    p = evolve_cli(VADD_CO, "--harness", h, "--out", tmp_path / "r", "--quiet")
    assert p.returncode == 2 and len(_err(p)) == 1, p.stderr
    assert "does not match" in p.stderr


def test_broken_config(tmp_path):
    c = tmp_path / "c.toml"
    c.write_text("budget = [\n")
    p = evolve_cli(VADD_CO, "--harness", VADD_JSON, "--out", tmp_path / "r", "--config", c)
    assert p.returncode == 2 and len(_err(p)) == 1 and "TOML" in p.stderr


def test_agent_missing(tmp_path):
    p = evolve_cli(VADD_CO, "--harness", VADD_JSON, "--out", tmp_path / "r",
                   "--agent", "no-such-agent-xyz --flag")
    assert p.returncode == 2 and len(_err(p)) == 1 and "no-such-agent-xyz" in p.stderr


def test_run_dir_of_another_kernel(tmp_path, vadd_nops):
    k0 = sha(VADD_CO)
    run = tmp_path / "r"
    p = evolve_cli(VADD_CO, "--harness", VADD_JSON, "--out", run, "--budget", 0, "--quiet",
                   "--final-trials", 4)
    assert p.returncode == 0, p.stderr
    p = evolve_cli(vadd_nops, "--harness", VADD_JSON, "--out", run, "--resume", "--quiet")
    assert p.returncode == 2 and len(_err(p)) == 1 and "another kernel" in p.stderr
    p = evolve_cli(VADD_CO, "--harness", VADD_JSON, "--out", run, "--quiet")
    assert p.returncode == 2 and "--resume" in p.stderr
    assert sha(VADD_CO) == k0


def test_ray_missing_is_bad_input(tmp_path, monkeypatch):
    import sys
    import pytest
    from asmevo.errors import AsmevoError
    from asmevo.evolve.config import load_config
    from asmevo.evolve.loop import run_evolve
    monkeypatch.setitem(sys.modules, "ray", None)        # import ray -> ImportError
    cfg = load_config(None, {"kernel_file": str(VADD_CO), "harness": str(VADD_JSON),
                             "out": str(tmp_path / "r"), "executor": "ray", "quiet": True})
    with pytest.raises(AsmevoError, match=r"asmevo\[ray\]"):
        run_evolve(cfg)
    assert not (tmp_path / "r").exists()


def test_out_directory_with_other_files_is_refused(tmp_path):
    """--out on a directory of the user's own files overwrote their report.md (newcomer)."""
    d = tmp_path / "mine"
    d.mkdir()
    (d / "report.md").write_text("my notes\n")
    p = evolve_cli(VADD_CO, "--harness", VADD_JSON, "--out", d, "--quiet", "--budget", 1)
    assert p.returncode == 2 and len(_err(p)) == 1 and "holds other files" in p.stderr, p.stderr
    assert (d / "report.md").read_text() == "my notes\n"
    assert sorted(x.name for x in d.iterdir()) == ["report.md"]


def test_resume_of_a_directory_without_a_run_is_refused(tmp_path):
    """--resume on a mistyped directory started a fresh run with the default budget."""
    p = evolve_cli(VADD_CO, "--harness", VADD_JSON, "--out", tmp_path / "typo", "--quiet",
                   "--resume")
    assert p.returncode == 2 and len(_err(p)) == 1 and "no run to resume" in p.stderr, p.stderr
    assert not (tmp_path / "typo").exists()


def test_an_agent_that_always_fails_is_reported(tmp_path):
    """An agent that crashes on every call: the run ends (exit 0, K0 stays the winner) but
    says so on stderr and in report.md with the reason, which only events.jsonl held."""
    run = tmp_path / "r"
    p = evolve_cli(VADD_CO, "--harness", VADD_JSON, "--out", run, "--quiet", "--budget", 1,
                   "--operators", "agent", "--agent", "python /nonexistent/agent.py")
    assert p.returncode == 0, p.stderr
    assert "operator agent failed on all" in p.stderr and "agent.py" in p.stderr, p.stderr
    md = (run / "report.md").read_text()
    assert "Last failure of `agent`" in md and "agent.py" in md

import pytest


@pytest.fixture(scope="session")
def vadd_nops(tmp_path_factory, llvm_mc):
    from evolve_helpers import make_vadd_nops
    return make_vadd_nops(tmp_path_factory.mktemp("k0") / "vadd_nops.co")


@pytest.fixture(scope="session")
def repeating_agent_run(tmp_path_factory, vadd_nops):
    """One run of the scripted agent with the plan wrong, wrong, noop, good (budget 2): an
    evaluated rejected edit, a duplicate of it, a no-op, an accepted edit.  (run dir, the
    agent's state dir holding task_1.json ... task_4.json)."""
    from evolve_helpers import SCRIPTED, VADD_JSON, evolve_cli
    d = tmp_path_factory.mktemp("repeating-agent")
    run, state = d / "run", d / "agent"
    p = evolve_cli(vadd_nops, "--harness", VADD_JSON, "--out", run, "--budget", 2,
                   "--operators", "agent", "--final-trials", 4, "--quiet", "--json",
                   "--agent", f"python {SCRIPTED} --state {state} --plan wrong,wrong,noop,good")
    assert p.returncode == 0, p.stderr
    return run, state

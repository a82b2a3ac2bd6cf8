"""``asmevo evolve K.co --harness H.json --out RUN_DIR``: the correctness-gated optimisation loop.

Every candidate passes the verifier against K0 before it is timed; the winner is checked
again (more trials, new seeds, the harness's reference) before best.co is written.
docs/evolve.md describes every option, the agent protocol and the run directory.
Exit status: 0 done, 2 bad input, 130 interrupted (resume with --resume).
"""

from __future__ import annotations

import argparse
import sys

#: flag dest -> config key (only flags given on the command line override the config file)
_KEYS = ("harness", "entry", "kernel", "out", "budget", "time", "seed", "jobs", "batch",
         "operators", "agent", "agent_timeout", "allow_agent_passes", "require", "chain_proofs", "executor",
         "ray_address", "trials", "final_trials", "islands", "target_speedup", "device", "timing_samples",
         "resume", "quiet")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Register the command-line options of ``asmevo evolve``."""
    S = argparse.SUPPRESS
    p.add_argument("kernel_file", metavar="K.co", help="K0: the code object to optimise (never modified)")
    p.add_argument("--harness", default=S, help="harness / manifest JSON (launch, inputs, reference)")
    p.add_argument("--entry", default=S, help="harness entry when H.json is a manifest list")
    p.add_argument("--kernel", default=S, help="kernel symbol (default: the harness's)")
    p.add_argument("--out", default=S, help="run directory (lineage store, best.co, report)")
    p.add_argument("--budget", type=int, default=S, help="distinct candidates to evaluate (default 300)")
    p.add_argument("--time", default=S, help="wall-clock limit: 90s, 30m, 1.5h")
    p.add_argument("--seed", type=int, default=S, help="random seed (default 0)")
    p.add_argument("--jobs", type=int, default=S, help="local worker processes (default 1)")
    p.add_argument("--batch", type=int, default=S, help="proposals per round (default 4)")
    p.add_argument("--operators", default=S,
                   help="comma-separated: passes,mutate,crossover[,agent] (default: the built-ins)")
    p.add_argument("--agent", default=S, metavar="CMD",
                   help="agent command: one JSON task on stdin, one JSON answer on stdout")
    p.add_argument("--agent-timeout", type=float, default=S, help="seconds per agent call (default 60)")
    p.add_argument("--allow-agent-passes", action="store_true", default=S,
                   help="run IR pass plugins sent by the agent (separate, limited process)")
    p.add_argument("--require", choices=("proved", "tested"), default=S,
                   help="proved: only verifier-proved candidates (default); tested: also those "
                        "differential testing could not tell apart")
    p.add_argument("--chain-proofs", action=argparse.BooleanOptionalAction, default=S,
                   help="prove a child against its proved parent first, K0 directly when that "
                        "fails (default on; the final check always proves the winner against K0)")
    p.add_argument("--executor", choices=("local", "ray"), default=S, help="where candidates are evaluated")
    p.add_argument("--ray-address", default=S, help="Ray cluster address (default: a local cluster)")
    p.add_argument("--trials", type=int, default=S, help="differential trials per candidate (default 4)")
    p.add_argument("--final-trials", type=int, default=S, help="trials of the final check (default 32)")
    p.add_argument("--islands", type=int, default=S, help="islands of the population (default 4)")
    p.add_argument("--target-speedup", type=float, default=S, help="stop at this speed-up (estimated; measured with --device hip)")
    from ..device import add_device_argument
    add_device_argument(p)
    for a in p._actions:          # given only when on the command line (over the config file)
        if a.dest == "device":
            a.default = S
    p.add_argument("--timing-samples", type=int, default=S,
                   help="paired timed launches of K0, parent and candidate on a real device "
                        "(default 10, at least 5)")
    p.add_argument("--resume", action="store_true", default=S, help="continue the run in --out")
    p.add_argument("--config", help="TOML file with any of these options (flags override it)")
    p.add_argument("--quiet", action="store_true", default=S, help="no progress bar")
    p.add_argument("--json", action="store_true", help="print report.json's summary as JSON")


def run(args: argparse.Namespace) -> int:
    try:
        from ..evolve.config import load_config
        from ..evolve.loop import run_evolve
        over = {k: getattr(args, k) for k in _KEYS if hasattr(args, k)}
        over["kernel_file"] = args.kernel_file
        cfg = load_config(args.config, over)
        # a missing HIP runtime or device is reported before any work (exit 2)
        from ..device import get_device
        get_device(cfg.device).close()
    except KeyboardInterrupt:   # (from here on run_evolve handles Ctrl-C and says what it kept)
        print("\ninterrupted before the run started: nothing kept", file=sys.stderr)
        return 130
    res = run_evolve(cfg)
    if res.exit_status != 0:
        return res.exit_status
    rep = res.report
    for n, st in rep.get("operators", {}).items():
        if st.get("failed") and not st.get("evaluated") and st.get("failed") == st.get("proposed"):
            # every attempt failed: say so, the run's exit status stays 0 (the loop went on)
            print(f"asmevo evolve: warning: operator {n} failed on all {st['failed']} attempt(s); "
                  f"last: {st.get('last_failure')}", file=sys.stderr)
    if getattr(args, "json", False):
        import json
        print(json.dumps({k: rep.get(k) for k in ("kernel", "k0_cycles", "best_cycles", "speedup",
                                                  "speedup_estimated", "speedup_measured",
                                                  "evaluated", "stop_reason")}
                         | {"timing_source": rep["timing"]["label"],
                            "winner": rep["winner"]["hash"], "run_dir": cfg.out}))
    else:
        fc = rep["final_check"]["verdict"]["status"]
        tm = rep["timing"]
        print(f"{rep['kernel']}: {tm['source']} speed-up {rep['speedup']:.3f}x "
              f"({rep['k0_cycles']:.0f} -> {rep['best_cycles']:.0f} cycles, {tm['label']}); "
              f"{rep['evaluated']} candidates, stopped on {rep['stop_reason']}; final check {fc}\n"
              f"  {cfg.out}/best.co  {cfg.out}/report.md  {cfg.out}/trajectory.png", file=sys.stdout)
    return 0

"""The end of a run: the final check of the winner, then best.co, best.s, best.diff,
report.json, report.md and trajectory.png (every file written to a temporary name and
renamed).

Final check: candidates that entered the population are tried best first
(``(cycles, instructions, step, hash)``); the stored code must hash to the candidate's key and
score the stored cycles again (the store is not trusted); each is built again, verified against K0 at level
``all`` (the strictest the harness allows) with ``final_trials`` trials on new seeds, and
run against the harness's numpy reference.  The first that passes is the winner; a
candidate that fails is recorded as dropped and the next is tried.  K0 itself is the last
resort (speed-up 1.0): a run never ends slower than K0.
"""

from __future__ import annotations

import json
import os
import time

from ..fileio import write_output
from .candidate import unified_diff
from .describe import edit_sentence
from .loop import derive

REPORT_SCHEMA = "asmevo.evolve.report/1"


def _ranked(run) -> list[dict]:
    rows = run.store.candidates(accepted_only=True)
    for r in rows:
        if r["step"] < 0:
            r["cycles"] = run.k0_cycles      # scored again in finalize
    sizes = {}
    for r in rows:
        sizes[r["hash"]] = sum(len(b.instructions) for b in run._load_blocks(r["hash"]))
    return sorted(rows, key=lambda r: (r["cycles"], sizes[r["hash"]], r["step"], r["hash"]))


def final_check(run, rec, path: str, *, patch_moved: bool = False) -> tuple[bool, dict, str, object]:
    """Build ``rec`` at ``path``, verify it against K0 with new seeds and more trials, and
    compare its outputs with the reference.  (passed, receipt, build kind, loaded module:
    the bytes written at ``path``, as loaded).  ``patch_moved``: give instructions that
    only moved their new address first, so K0 is patched in place when every change fits,
    as the gate builds (:func:`asmevo.evolve.gate.readdress`; used by the MCP export)."""
    from ..emu.harness import compare, make_inputs, make_launch, match_sentence, reference
    from ..emu.launch import run_kernel
    from ..verify import verify
    from ..ir.module import Kernel
    from .candidate import content_hash, flat_code
    from .score import Scorer
    cfg = run.cfg
    blocks = run._load_blocks(rec["hash"])
    if content_hash(Kernel(run.kernel, blocks)) != rec["hash"]:
        # the store is not trusted: its code must be what its key says
        return False, {"verdict": {"status": "store-mismatch", "message":
                                   "the stored code does not hash to the candidate's key"},
                       "trials": 0, "seed": None, "level": None, "require": cfg.require}, \
            None, None
    how, cand = _build(run, blocks, path, patch_moved=patch_moved)
    built = flat_code(cand.kernel(run.kernel))
    if built is None or built != flat_code(Kernel(run.kernel, blocks)):
        # best.s and best.diff are printed from the blocks: best.co must hold that code
        return False, {"verdict": {"status": "build-mismatch", "message":
                                   f"the code object built by {how} does not hold the "
                                   "candidate's code"},
                       "trials": 0, "seed": None, "level": None, "require": cfg.require}, \
            how, None
    # nor its timing: the winner is scored again (the model is deterministic; a measurement
    # does not repeat exactly, so a measured run checks only that a figure is stored)
    cycles = rec.get("cycles") if run.measured else Scorer(run.kernel, run.harness).score(cand).cycles
    if rec.get("cycles") is None or abs(cycles - rec["cycles"]) > 1e-6 * max(1.0, cycles):
        return False, {"verdict": {"status": "timing-mismatch", "message":
                                   f"stored {rec.get('cycles')} estimated cycles, "
                                   f"{cycles} when scored again"},
                       "trials": 0, "seed": None, "level": None, "require": cfg.require}, \
            how, None
    seed = derive(cfg.seed, "final", rec["hash"]) % (1 << 31)
    v = verify(run.k0, cand, harness=run.harness, level="all", entry=run.kernel,
               trials=cfg.final_trials, seed=seed, timeout_ms=max(cfg.z3_timeout_ms, 10000))
    lineage = None
    if _only_unproved(v):
        # z3 leaves the winner's windows against K0 undecided, testing found no difference:
        # the proof may still go link by link along its lineage (what the loop's chain of
        # proofs accepted), each link proved again now from the stored code
        lineage, why = prove_lineage(run, rec, cand, path + ".link.co")
        if lineage is not None:
            v = _lineage_verdict(v, lineage)
        else:
            v.notes.append(f"not proved along its lineage either: {why}")
    from .gate import passes_gate
    passed = passes_gate(v, cfg.require)
    receipt = {"verdict": v.to_json(), "trials": cfg.final_trials, "seed": seed, "level": "all",
               "require": cfg.require}
    if lineage is not None:
        receipt["lineage_proof"] = lineage
    if passed and run.measured:
        # on a real device: differential testing there too (same trials, new seeds)
        from ..device import get_device
        dev = get_device(cfg.device)
        try:
            vd = verify(run.k0, cand, harness=run.harness, level="diff", entry=run.kernel,
                        trials=cfg.final_trials, seed=seed, device=dev)
        finally:
            dev.close()
        receipt["device"] = {"device": cfg.device, "verdict": vd.to_json(),
                             "trials": cfg.final_trials, "seed": seed, "level": "diff"}
        passed = passes_gate(vd, cfg.require)
    if passed and run.harness.get("reference"):
        inputs = make_inputs(run.harness, seed + 1)
        res = run_kernel(cand, run.kernel, make_launch(run.harness, inputs))
        want = reference(run.harness, inputs)
        errs = compare(run.harness, res.outputs, want)
        receipt["reference"] = {"seed": seed + 1, "match": not errs, "errors": errs[:5],
                                "summary": (
                                    match_sentence(run.harness, want) if not errs else
                                    f"{len(errs)} output buffer(s) differ from the numpy "
                                    f"reference: {errs[0]}")}
        passed = not errs
    elif passed:
        receipt["reference"] = {"match": None, "note": "the harness has no reference"}
    return passed, receipt, how, cand


def _build(run, blocks, path: str, *, patch_moved: bool = False) -> tuple[str, object]:
    """K0 with the kernel's ``blocks``, written at ``path`` as the gate builds it (in-place
    patch or rebuild) and loaded back: ("patched" | "assembled", the loaded module)."""
    from ..backend.rebuild import write_code_object
    from ..frontend.loader import load
    from .gate import fresh_copy, readdress
    m = fresh_copy(run.k0, run.kernel, blocks)
    if patch_moved:
        readdress(m.kernel(run.kernel))
    how = write_code_object(m, path, inputs=(run.cfg.kernel_file,))
    return how, load(path)


def _only_unproved(v) -> bool:
    """True when ``v`` (level ``all`` against K0) is ``unknown-unproved`` for the z3 layer
    alone: static checks, ABI and differential testing passed."""
    from ..verify.verdict import Status
    ly = v.layers or {}
    return (v.status is Status.UNKNOWN_UNPROVED and ly.get("z3") == "unknown"
            and all(ly.get(k) == "pass" for k in ("static", "abi", "diff")))


def prove_lineage(run, rec, cand, path: str) -> tuple[list | None, str]:
    """Prove candidate ``rec`` (built and loaded as ``cand``) equivalent to K0 link by link
    along its lineage: each ancestor is rebuilt from the stored code (which must hash to its
    key: the store is not trusted, nor are its verdicts -- every link is proved again here)
    and the next one is proved against it by z3 (static checks, ABI, window proofs); a link
    z3 does not decide that way is proved against K0 directly (with the relational proof),
    which restarts the chain there.  Equivalence is transitive, so every link proved is a
    proof against K0.  Returns ``(links, "")`` -- one ``{"hash", "against"}`` per link,
    ``against`` ``"parent"`` or ``"K0"`` -- or ``(None, why)``."""
    from ..ir.module import Kernel
    from ..verify import verify
    from .candidate import content_hash
    cfg = run.cfg
    timeout = max(cfg.z3_timeout_ms, 10000)
    prev, links = run.k0, []
    chain = lineage_chain(run, rec["hash"])
    if not chain or chain[-1]["hash"] != rec["hash"] or chain[0]["parent"] != run.k0_hash:
        return None, "its lineage does not lead back to K0 in the store"
    try:
        for i, r in enumerate(chain):
            if r["hash"] == rec["hash"]:
                m = cand
            else:
                blocks = run._load_blocks(r["hash"])
                if content_hash(Kernel(run.kernel, blocks)) != r["hash"]:
                    return None, f"the stored code of ancestor {r['hash'][:12]} does not hash to its key"
                _, m = _build(run, blocks, path)
            against = "parent"
            v = verify(prev, m, level="z3", entry=run.kernel, timeout_ms=timeout, relational=False)
            if not v.accepted and prev is not run.k0:
                against = "K0"
                v = verify(run.k0, m, level="z3", entry=run.kernel, timeout_ms=timeout)
            if not v.accepted:
                return None, (f"link {i + 1} of {len(chain)} ({r['hash'][:12]}) is not proved "
                              f"against its parent nor against K0: {v.status.value}: {v.message}")
            links.append({"hash": r["hash"], "against": against})
            prev = m
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    return links, ""


def _lineage_verdict(v, links):
    """``accepted``: ``v`` (testing against K0 found no difference, z3 undecided) with the
    lineage proof of :func:`prove_lineage` in place of z3's undecided windows."""
    from ..verify.verdict import Evidence, Status, Verdict
    n_k0 = sum(1 for x in links if x["against"] == "K0")
    msg = (f"proved along its lineage: {len(links)} link(s) from K0, each proved again now from "
           f"the stored code ({len(links) - n_k0} against the parent, {n_k0} against K0); "
           "equivalence is transitive")
    # (the unknown-unproved verdict keeps z3's evidence; its message says what testing found)
    i = v.message.find("differential testing found no difference")
    tested = "; " + v.message[i:] if i >= 0 else ""
    layers = dict(v.layers, z3="pass")
    undecided = [e.data.get("message") or e.message for e in v.evidence][:3]
    return Verdict(Status.ACCEPTED, msg + tested,
                   [Evidence("z3", "lineage", msg, {"links": links,
                                                    "undecided_against_k0": undecided})],
                   layers, v.kernels, v.notes)


def lineage_chain(run, h: str) -> list[dict]:
    """The accepted edits from K0 to ``h``, oldest first."""
    chain = []
    while h:
        r = run.store.candidate(h, blocks=False)
        if r is None or r["step"] < 0:
            break
        chain.append(r)
        h = r["parent"]
    return list(reversed(chain))


def finalize(run, *, elapsed: float, stop_reason: str, rate: float) -> dict:
    from ..ir.module import Kernel
    from ..ir.printer import print_module
    from .score import Scorer
    cfg = run.cfg
    d = run.dir
    tmp = os.path.join(d, ".final-candidate.co")
    # K0's figure is not read from the store either (the model's; a measured run keeps the
    # median measured at the root)
    if not run.measured:
        run.k0_cycles = Scorer(run.kernel, run.harness).score(run.k0).cycles
    dropped, winner, receipt, how, cand = [], None, None, None, None
    for rec in _ranked(run):
        ok, rcp, hw, cm = final_check(run, rec, tmp)
        run.events.emit("final", hash=rec["hash"], passed=ok, status=rcp["verdict"]["status"])
        if ok:
            winner, receipt, how, cand = rec, rcp, hw, cm
            break
        dropped.append({"hash": rec["hash"], "cycles": rec["cycles"], "receipt": rcp})
    if winner is None:   # cannot happen: K0 passes against itself; kept as a guard
        raise RuntimeError("no candidate, not even K0, passed the final check")
    os.replace(tmp, os.path.join(d, "best.co"))
    k0k = run.k0.kernel(run.kernel)
    wk = Kernel(run.kernel, run._load_blocks(winner["hash"]))
    write_output(os.path.join(d, "best.s"), print_module(cand), inputs=(cfg.kernel_file,))
    write_output(os.path.join(d, "best.diff"), unified_diff(k0k, wk, "K0", "best"),
                 inputs=(cfg.kernel_file,))
    rep = build_report(run, winner, receipt, how, dropped, elapsed, stop_reason, rate)
    write_output(os.path.join(d, "report.json"), json.dumps(rep, indent=2, default=str) + "\n")
    write_output(os.path.join(d, "report.md"), report_md(rep))
    try:
        trajectory_png(run, os.path.join(d, "trajectory.png"))
    except Exception as e:  # the plot is a convenience; the report says why it is missing
        rep["trajectory_error"] = str(e)
    return rep


def build_report(run, winner, receipt, how, dropped, elapsed, stop_reason, rate) -> dict:
    cfg = run.cfg
    from .candidate import changed_windows
    from ..ir.module import Kernel
    chain = []
    prev_cycles = run.k0_cycles
    prev_blocks = run.k0.kernel(run.kernel).blocks
    for r in lineage_chain(run, winner["hash"]):
        blocks = run._load_blocks(r["hash"])
        parent_blocks = run._load_blocks(r["parent"]) if r["parent"] else prev_blocks
        pc = run._cycles_of(r["parent"]) if r["parent"] else prev_cycles
        windows = changed_windows(Kernel(run.kernel, parent_blocks), Kernel(run.kernel, blocks))
        chain.append({"hash": r["hash"], "step": r["step"], "operator": r["operator"],
                      "params": r["params"], "edit": r["edit"], "hypothesis": r["hypothesis"],
                      "windows": windows,
                      "summary": edit_sentence(r["operator"], r["edit"], windows),
                      "cycles_before": pc, "cycles_after": r["cycles"],
                      "receipt": {"status": r["status"], "layers": (r["verdict"] or {}).get("layers"),
                                  "proved_against": _proved_against(r["verdict"])}
                      | ({"timing": {k: (r["verdict"].get("timing") or {}).get(k) for k in
                                     ("accepted", "reason", "s_parent", "s_candidate", "required",
                                      "cv", "device")}}
                         if run.measured and r["verdict"] else {})})
    ops = {}
    for n, st in run.op_stats.items():
        ops[n] = dict(st, acceptance_rate=(st["accepted"] / st["proposed"]) if st["proposed"] else None)
    steps = run.store.steps()
    outcomes = {}
    for s in steps:
        outcomes[s["outcome"]] = outcomes.get(s["outcome"], 0) + 1
        if s["outcome"] in ("agent-failure", "operator-error") and s["operator"] in ops:
            ops[s["operator"]]["last_failure"] = s["message"]
    statuses = {}
    for c in run.store.candidates():
        if c["step"] >= 0:
            statuses[c["status"]] = statuses.get(c["status"], 0) + 1
    speedup = run.k0_cycles / winner["cycles"] if winner["cycles"] else 1.0
    from .score import timing_label
    source = "measured" if run.measured else "estimated"
    timing = {"source": source, "label": timing_label(run.scorer_id), "scorer": run.scorer_id}
    if run.measured:
        from ..perf.machine import load_machine
        timing["cycles"] = (f"median microseconds x {load_machine().clock_mhz:g} MHz "
                            "(the machine description's clock)")
        w = run.store.candidate(winner["hash"], blocks=False)
        wt = ((w or {}).get("verdict") or {}).get("timing") or {}
        timing["winner"] = {k: wt.get(k) for k in ("accepted", "reason", "s_parent",
                                                   "s_candidate", "required", "cv")}
    return {
        "schema": REPORT_SCHEMA,
        "kernel": run.kernel, "k0": os.path.abspath(cfg.kernel_file), "k0_sha256": run.k0_sha,
        "harness": os.path.abspath(cfg.harness), "entry": cfg.entry,
        "timing_model": run.scorer_id,
        "timing": timing,
        "estimated": not run.measured, "measured": run.measured,
        "device": cfg.device,
        "k0_cycles": run.k0_cycles, "best_cycles": winner["cycles"],
        "speedup": speedup,
        f"speedup_{source}": speedup,
        "winner": {"hash": winner["hash"], "step": winner["step"], "operator": winner["operator"],
                   "is_k0": winner["step"] < 0, "best_co": how},
        "final_check": receipt, "dropped": dropped,
        "edits": chain,
        "operators": ops,
        "steps": len(steps), "step_outcomes": outcomes, "candidate_statuses": statuses,
        "evaluated": run.store.count(), "stop_reason": stop_reason,
        "elapsed_seconds": elapsed, "candidates_per_minute": rate,
        "sessions": session_totals(os.path.join(run.dir, "events.jsonl")),
        "restarts": run.pop.restarts,
        "config": {k: v for k, v in cfg.to_json().items()},
        "created": time.time(),
    }


#: operators whose hypothesis is generated from the edit itself (the ``Change:`` line says
#: it from the structured record); any other operator's (the agent's) is its own words
def reference_summary(ref: dict | None) -> str:
    """The final check's comparison with the harness's numpy reference as a sentence (the
    receipt's ``reference``; reports written before it held a ``summary`` too)."""
    if not ref:
        return "not compared (the candidate did not pass the checks before it)"
    if ref.get("summary"):
        return ref["summary"]
    if ref.get("match") is None:
        return "none to compare with (the harness has no reference)"
    if ref["match"]:
        return "the output buffers match the numpy reference"
    errs = ref.get("errors") or []
    return "the outputs differ from the numpy reference" + (f": {errs[0]}" if errs else "")


_GENERATED_HYPOTHESES = frozenset({"passes", "mutate", "crossover"})


def _own_hypothesis(e: dict) -> bool:
    return bool(e.get("hypothesis")) and e["operator"] not in _GENERATED_HYPOTHESES


def report_md(rep: dict) -> str:
    L = [f"# asmevo evolve: {rep['kernel']}", ""]
    tm = rep["timing_model"]
    if rep.get("measured"):
        L.append(f"**Measured speed-up: {rep['speedup']:.3f}x** "
                 f"({rep['k0_cycles']:.0f} -> {rep['best_cycles']:.0f} cycles = "
                 f"{rep['timing']['cycles']}; {rep['timing']['label']}). Each candidate was "
                 "accepted only when faster than its parent beyond the noise (paired, "
                 "interleaved samples of K0, parent and candidate; docs/devices.md).")
    else:
        L.append(f"**Estimated speed-up: {rep['speedup_estimated']:.3f}x** "
                 f"({rep['k0_cycles']:.0f} -> {rep['best_cycles']:.0f} cycles; an estimate of the "
                 f"timing model {tm.get('name')} {tm.get('version')}, not a measurement).")
    L.append("")
    w = rep["winner"]
    L.append(f"Winner: `{w['hash'][:16]}` (step {w['step']}, operator {w['operator']}"
             f"{', K0 itself: no faster candidate passed' if w['is_k0'] else ''}); "
             f"best.co was {w['best_co']}.")
    fc = rep["final_check"]
    L.append(f"Final check: `{fc['verdict']['status']}` at level {fc['level']} with "
             f"{fc['trials']} trials (seed {fc['seed']}); reference: "
             f"{reference_summary(fc.get('reference'))}" +
             (f"; differential testing on {fc['device']['device']}: "
              f"`{fc['device']['verdict']['status']}`" if fc.get("device") else "") + ".")
    if fc.get("lineage_proof"):
        lp = fc["lineage_proof"]
        L.append(f"z3 does not decide the winner's windows against K0 directly; it was proved "
                 f"along its lineage instead: {len(lp)} link(s), each proved again from the "
                 f"stored code ({sum(x['against'] == 'parent' for x in lp)} against the parent, "
                 f"{sum(x['against'] == 'K0' for x in lp)} against K0): "
                 + " -> ".join(f"`{x['hash'][:12]}`" for x in lp) + ".")
    if rep["dropped"]:
        L.append(f"Dropped by the final check: {len(rep['dropped'])} candidate(s): " +
                 ", ".join(f"`{x['hash'][:12]}` ({x['receipt']['verdict']['status']})"
                           for x in rep["dropped"]))
    L += ["", f"Stopped on: {rep['stop_reason']}; {rep['evaluated']} distinct candidates in "
          f"{rep['steps']} steps; " + _time_line(rep) +
          f"; island restarts: {rep['restarts']}.", ""]
    source = "measured" if rep.get("measured") else "estimated"
    L += ["## Accepted edits from K0 to the winner", ""]
    if not rep["edits"]:
        L.append("None: the winner is K0.")
    for i, e in enumerate(rep["edits"], 1):
        wins = ", ".join(f"{x['block']}[{x['start']}:{x['end']}]" for x in e["windows"]) or "-"
        L.append(f"{i}. step {e['step']}, **{e['operator']}** {json.dumps(e['params'])}: "
                 f"{e['cycles_before']:.0f} -> {e['cycles_after']:.0f} {source} cycles; windows {wins}; "
                 f"receipt `{e['receipt']['status']}`"
                 + (f" (proved against its parent `{e['receipt']['proved_against'][:12]}`, itself "
                    "proved against K0)" if e["receipt"].get("proved_against") else "") + ".  ")
        summary = e.get("summary") or edit_sentence(e["operator"], e.get("edit"), e["windows"])
        L.append(f"   Change: {summary}" + ("  " if _own_hypothesis(e) else ""))
        if _own_hypothesis(e):
            L.append(f"   Hypothesis: {' '.join(str(e['hypothesis']).split())}")
    L += ["", "## Operators", "", "| operator | proposed | evaluated | passed gate | accepted | "
          "improved | duplicates (no-ops) | failed | acceptance |",
          "|---|---|---|---|---|---|---|---|---|"]
    for n, s in rep["operators"].items():
        ar = "-" if s["acceptance_rate"] is None else f"{100 * s['acceptance_rate']:.0f}%"
        L.append(f"| {n} | {s['proposed']} | {s['evaluated']} | {s['passed_gate']} | "
                 f"{s['accepted']} | {s['improved']} | {s.get('duplicates', 0)} "
                 f"({s.get('no_ops', 0)}) | {s['failed']} | {ar} |")
    L += ["", "Duplicates: proposals whose code was already evaluated (not evaluated again); "
          "no-ops: of those, proposals identical to their parent."]
    for n, s in rep["operators"].items():
        if s.get("last_failure"):
            L.append(f"\nLast failure of `{n}` ({s['failed']} in all): {s['last_failure']}")
    L += ["", "## Outcomes", "", "Steps: " + ", ".join(f"{k} {v}" for k, v in
                                                      sorted(rep["step_outcomes"].items())),
          "", "Candidates: " + ", ".join(f"{k} {v}" for k, v in
                                         sorted(rep["candidate_statuses"].items())), "",
          "Files: best.co, best.s, best.diff (against K0, stable block names), report.json, "
          "trajectory.png, lineage.sqlite, events.jsonl.", ""]
    return "\n".join(L)


def trajectory_png(run, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = [c for c in run.store.candidates() if c["step"] >= 0]
    fig = trajectory_figure(rows, run.k0_cycles, run.kernel, run.scorer_id, run.measured)
    tmp = path + ".tmp.png"
    fig.savefig(tmp, bbox_inches="tight")
    plt.close(fig)
    os.replace(tmp, path)


def trajectory_figure(rows: list[dict], k0_cycles: float, kernel: str, scorer: dict,
                      measured: bool = False):
    """The trajectory plot of candidate records ``rows`` (``step``, ``hash``, ``cycles``,
    ``accepted``): running best speed-up against candidates evaluated, every candidate a
    point.  The legend sits to the right, outside the axes, so it never hides the newest
    (rightmost) points, whatever their speed-ups."""
    import matplotlib.pyplot as plt
    from .score import timing_label
    rows = sorted(rows, key=lambda c: (c["step"], c["hash"]))
    xs_a, ys_a, xs_s, ys_s, xs_r = [], [], [], [], []
    best, bx, by = 1.0, [0], [1.0]
    for i, c in enumerate(rows, 1):
        sp = k0_cycles / c["cycles"] if c.get("cycles") else None
        if c["accepted"] and sp is not None:
            xs_a.append(i)
            ys_a.append(sp)
            best = max(best, sp)
        elif sp is not None:
            xs_s.append(i)
            ys_s.append(sp)
        else:
            xs_r.append(i)
        bx.append(i)
        by.append(best)
    fig, ax = plt.subplots(figsize=(9.5, 4.5), dpi=110)
    ax.step(bx, by, where="post", color="C3", lw=2, label="running best")
    ax.scatter(xs_a, ys_a, s=14, color="C0", label="accepted", zorder=3)
    ax.scatter(xs_s, ys_s, s=14, color="C1", marker="v", label="rejected: slower")
    lo = min([1.0] + ys_a + ys_s) - 0.02
    ax.scatter(xs_r, [lo] * len(xs_r), s=10, color="0.6", marker="x",
               label="rejected by the verifier")
    ax.set_xlabel("candidates evaluated")
    ax.set_ylabel(("measured" if measured else "estimated") + " speed-up over K0")
    ax.set_title(f"asmevo evolve: {kernel} ({timing_label(scorer)})", fontsize=9)
    # outside the axes, right of the data: the newest points are at the right edge
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def _proved_against(verdict) -> str | None:
    """The parent's hash when ``verdict`` is a chain of proofs (:meth:`asmevo.evolve.gate.
    GateContext._chained`), None when the candidate was proved against K0 directly."""
    for e in (verdict or {}).get("evidence") or []:
        if e.get("kind") == "chain":
            return (e.get("data") or {}).get("parent")
    return None


def session_totals(events_path: str) -> dict | None:
    """The whole run's sessions from its event log (a resumed run appends to it): ``{"count",
    "loop_seconds", "candidates", "candidates_per_minute"}`` -- each session from its
    ``start``/``resume`` event to its last event (so a killed session counts up to what it
    logged), candidates from ``candidate`` events.  None when the log is unreadable."""
    sessions, cur = [], None
    try:
        with open(events_path, encoding="utf-8") as f:
            for line in f:
                try:
                    e = json.loads(line)
                except ValueError:
                    continue
                ev, t = e.get("event"), e.get("t")
                if not isinstance(t, (int, float)):
                    continue
                if ev in ("start", "resume"):
                    cur = {"t0": t, "t1": t, "n": 0}
                    sessions.append(cur)
                elif cur is not None and ev not in ("final",):
                    cur["t1"] = max(cur["t1"], t)
                    if ev == "candidate":
                        cur["n"] += 1
    except OSError:
        return None
    if not sessions:
        return None
    secs = sum(x["t1"] - x["t0"] for x in sessions)
    n = sum(x["n"] for x in sessions)
    return {"count": len(sessions), "loop_seconds": secs, "candidates": n,
            "candidates_per_minute": n / (secs / 60) if secs > 0 else None}


def _time_line(rep) -> str:
    """This session's time and rate; over all sessions too when the run was resumed."""
    ss = rep.get("sessions")
    resumed = bool(ss and ss["count"] > 1)
    out = (f"{rep['elapsed_seconds']:.0f} s{' this session' if resumed else ''} "
           f"({rep['candidates_per_minute']:.1f} candidates/min)")
    if resumed:
        rate = ss["candidates_per_minute"]
        out += (f"; over its {ss['count']} sessions: {ss['candidates']} candidates in "
                f"{ss['loop_seconds']:.0f} s of search"
                + (f" ({rate:.1f} candidates/min)" if rate is not None else ""))
    return out

#!/usr/bin/env python3
"""Planted-bug (mutation) probe of the test suite over asmevo/semantics, asmevo/emu and
asmevo/verify.

Each mutant is one AST-level edit of one module -- a comparison flipped (``<`` <-> ``<=``,
``==`` <-> ``!=``, ``in`` <-> ``not in``, ``is`` <-> ``is not``), an integer constant moved by
+1/-1, ``and`` <-> ``or``, an arithmetic/bitwise operator swapped (``+``<->``-``,
``&``<->``|``, ``<<``<->``>>``), a ``not`` dropped, or a statement replaced by ``pass`` --
applied to a *copy* of the committed tree (``git archive HEAD``: never the checkout, where
others are working).  For each mutant only the test files that cover the mutated module run
(:data:`TESTS`), with ``-x`` and a per-mutant timeout; a mutant is *killed* when they fail,
*survived* when they pass, *timeout* when they do not finish in time (reported apart: on a
loaded machine a slow test run is not a kill).  The sample is a fixed, seeded choice of sites per package, so a re-run with the
same tree, seed and count gives the same mutants.

    nice -n 10 python3 scripts/mutation_probe.py                      # 50 per package, seed 14
    python3 scripts/mutation_probe.py --list --per-package 5          # show the sampled mutants
    python3 scripts/mutation_probe.py --only verify:equiv.py:123:cmp  # re-run chosen ones
    python3 scripts/mutation_probe.py --tree /path/to/copy ...        # test another copy

Results (one JSON line per mutant, then a summary) go to ``--out`` (default
``benchmarks/mutation_probe.jsonl``); the kill rate per package is printed at the end.
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import os
import pathlib
import random
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = ("semantics", "emu", "verify")

#: Test files that cover each module (paths under tests/), fastest and most direct first;
#: "*" is the package default.  Only tests of the default tier run (-m "not slow").
TESTS = {
    "semantics": {
        "*": ["semantics/test_numpy_semantics.py", "semantics/test_planted_mul24.py",
              "semantics/test_planted_registry.py", "semantics/test_planted_probe_survivors.py",
              "semantics/test_mutation_survivors_semantics.py",
              "semantics/test_z3_backend.py", "emu/test_executor.py", "emu/test_sys_ds_extra.py",
              "emu/test_executor_sgpr_writes.py", "verify/test_equiv.py"],
    },
    "emu": {
        "*": ["emu/test_executor.py", "emu/test_planted_emu.py", "emu/test_planted_probe_survivors.py",
              "emu/test_executor_sgpr_writes.py",
              "emu/test_sys_ds_extra.py", "emu/test_smem_offsets.py", "emu/test_lockstep.py",
              "emu/test_badinput_harness.py", "emu/test_cli.py", "emu/test_corpus.py",
              "emu/test_lockstep_batched.py", "emu/test_counting.py",
              "emu/test_mutation_survivors_emu.py", "emu/test_sgen.py", "emu/test_atomic_vec.py",
              "emu/test_lockstep_lane_sgprs.py", "emu/test_lockstep_mfma.py",
              "emu/test_lockstep_mubuf.py"],
        "harness.py": ["emu/test_badinput_harness.py", "emu/test_badinput_harness_types.py",
                       "emu/test_planted_probe_survivors.py", "emu/test_cli.py", "emu/test_corpus.py",
                       "verify/test_diff.py"],
        "trace.py": ["emu/test_planted_probe_survivors.py", "perf/test_trace.py", "emu/test_cli.py",
                     "emu/test_executor.py", "emu/test_corpus.py"],
    },
    "verify": {
        "*": ["verify/test_equiv.py", "verify/test_planted_memory_values.py",
              "verify/test_soundness_memory.py", "verify/test_cross_lane_memory.py",
              "verify/test_static_abi.py", "verify/test_verdict.py", "verify/test_diff.py",
              "verify/test_soundness_cli.py", "verify/test_cli.py",
              "verify/test_mutation_survivors_verify.py"],
        "equiv.py": ["verify/test_equiv.py", "verify/test_mutation_survivors_verify.py",
                     "verify/test_planted_memory_values.py",
                     "verify/test_soundness_memory.py", "verify/test_cross_lane_memory.py",
                     "verify/test_soundness_assembled.py"],
        "relational.py": ["verify/test_mutation_survivors_verify.py", "verify/test_relational.py"],
        "static.py": ["verify/test_static_abi.py", "verify/test_mutation_survivors_verify.py",
                      "verify/test_soundness_waits.py",
                      "verify/test_barrier_order.py", "verify/test_waitcnt_idle.py",
                      "verify/test_soundness_layout.py"],
        "abi.py": ["verify/test_static_abi.py", "verify/test_abi_text.py",
                   "verify/test_mutation_survivors_verify.py",
                   "verify/test_soundness_policy.py"],
        "elflayout.py": ["verify/test_soundness_layout.py", "verify/test_static_abi.py"],
        "diff.py": ["verify/test_diff.py", "verify/test_soundness_cli.py"],
        "verdict.py": ["verify/test_verdict.py", "verify/test_cli.py", "verify/test_soundness_cli.py"],
        "driver.py": ["verify/test_soundness_cli.py", "verify/test_cli.py",
                      "verify/test_soundness_policy.py", "verify/test_diff.py"],
        # the mutation generator is the verifier's measuring tool: its fast test only (the
        # small and full runs take minutes)
        "mutate.py": ["verify/test_mutation.py::test_generated_edits_are_single_legal_edits",
                      "verify/test_mutation_survivors_verify.py"],
    },
}

_CMP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
        ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot,
        ast.IsNot: ast.Is}
_BIN = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.BitAnd: ast.BitOr, ast.BitOr: ast.BitAnd,
        ast.LShift: ast.RShift, ast.RShift: ast.LShift, ast.Mult: ast.FloorDiv,
        ast.BitXor: ast.BitOr}


def _is_docstring(node, parent) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str))


def sites(tree: ast.Module) -> list[tuple[int, int, str, str]]:
    """Every mutation site: (node index in ast.walk order, line, operator, description)."""
    out = []
    for idx, node in enumerate(ast.walk(tree)):
        ln = getattr(node, "lineno", 0)
        if isinstance(node, ast.Compare):
            for k, op in enumerate(node.ops):
                if type(op) in _CMP:
                    out.append((idx, ln, f"cmp{k}", f"{type(op).__name__} -> {_CMP[type(op)].__name__}"))
        elif isinstance(node, ast.BoolOp):
            out.append((idx, ln, "boolop", "and <-> or"))
        elif isinstance(node, ast.BinOp) and type(node.op) in _BIN:
            out.append((idx, ln, "binop", f"{type(node.op).__name__} -> {_BIN[type(node.op)].__name__}"))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            out.append((idx, ln, "notdrop", "not x -> x"))
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            out.append((idx, ln, "const+1", f"{node.value} -> {node.value + 1}"))
            out.append((idx, ln, "const-1", f"{node.value} -> {node.value - 1}"))
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return,
                               ast.Raise, ast.If, ast.For, ast.While, ast.Continue, ast.Break)) \
                and not _is_docstring(node, None):
            out.append((idx, ln, "stmt", f"{type(node).__name__} -> pass"))
    return out


def apply(tree: ast.Module, idx: int, kind: str) -> ast.Module | None:
    """A copy of ``tree`` with mutation ``kind`` at node ``idx`` (None: not applicable)."""
    t = copy.deepcopy(tree)
    nodes = list(ast.walk(t))
    node = nodes[idx]
    if kind.startswith("cmp"):
        k = int(kind[3:])
        node.ops[k] = _CMP[type(node.ops[k])]()
    elif kind == "boolop":
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif kind == "binop":
        node.op = _BIN[type(node.op)]()
    elif kind == "notdrop":
        parent = next(p for p in nodes if any(c is node for c in ast.iter_child_nodes(p)))
        for f, v in ast.iter_fields(parent):
            if v is node:
                setattr(parent, f, node.operand)
            elif isinstance(v, list):
                for i, x in enumerate(v):
                    if x is node:
                        v[i] = node.operand
    elif kind in ("const+1", "const-1"):
        node.value += 1 if kind == "const+1" else -1
    elif kind == "stmt":
        parent = next(p for p in nodes if any(c is node for c in ast.iter_child_nodes(p)))
        for f, v in ast.iter_fields(parent):
            if isinstance(v, list) and any(x is node for x in v):
                v[[i for i, x in enumerate(v) if x is node][0]] = ast.Pass()
                break
        else:
            return None
    ast.fix_missing_locations(t)
    return t


def enumerate_mutants(tree_root: pathlib.Path, package: str) -> list[dict]:
    muts = []
    for f in sorted((tree_root / "asmevo" / package).glob("*.py")):
        tree = ast.parse(f.read_text())
        for idx, ln, kind, desc in sites(tree):
            muts.append({"package": package, "module": f.name, "node": idx, "line": ln,
                         "kind": kind, "desc": desc,
                         "id": f"{package}:{f.name}:{ln}:{kind}:{idx}"})
    return muts


def tests_for(package: str, module: str) -> list[str]:
    m = TESTS[package]
    return m.get(module, m["*"])


def _copy_tree(dst: pathlib.Path, rev: str) -> None:
    """The committed tree (``git archive rev``) of asmevo/, isa_specs/, tests/, pyproject.toml."""
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    arch = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "asmevo", "isa_specs", "tests",
                           "examples", "scripts", "docs", "README.md", "ARCHITECTURE.md",
                           "pyproject.toml"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dst)], input=arch, check=True)


def _corpus() -> str | None:
    sys.path.insert(0, str(ROOT / "tests"))
    from corpus_paths import CORPUS  # noqa: E402
    return str(CORPUS) if CORPUS else None


def run_tests(tree: pathlib.Path, tests: list[str], timeout: float, env: dict) -> tuple[str, float, str]:
    """(``killed``/``survived``/``timeout``, seconds, last lines of output)."""
    files = [f"tests/{t}" for t in tests if (tree / "tests" / t.split("::")[0]).is_file()]
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-m", "not slow",
           "--no-header", "-o", "addopts=--import-mode=importlib", *files]
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout,
                           start_new_session=True)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"")
        out = out.decode() if isinstance(out, bytes) else out
        return "timeout", time.perf_counter() - t0, out[-300:]
    dt = time.perf_counter() - t0
    tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-3:])
    if r.returncode == 0:
        return "survived", dt, tail
    if r.returncode in (1, 3):   # tests failed / internal error from the mutant
        return "killed", dt, tail
    return f"error-rc{r.returncode}", dt, tail


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--packages", nargs="+", default=list(PACKAGES), choices=PACKAGES)
    ap.add_argument("--per-package", type=int, default=50)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per mutant")
    ap.add_argument("--rev", default="HEAD", help="git revision to copy (default HEAD)")
    ap.add_argument("--tree", help="use this existing copy instead of a fresh git archive")
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "asmevo-mutation-probe"))
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "mutation_probe.jsonl"))
    ap.add_argument("--list", action="store_true", help="print the sampled mutants and stop")
    ap.add_argument("--only", nargs="+", help="mutant ids (package:module:line:kind:node) to run")
    ap.add_argument("--tests", nargs="+",
                    help="run these test files (under tests/) for every mutant instead of the map")
    ap.add_argument("--baseline", action="store_true",
                    help="first run each package's tests unmutated (they must pass)")
    args = ap.parse_args(argv)

    work = pathlib.Path(args.workdir)
    tree = pathlib.Path(args.tree) if args.tree else work / "tree"
    if not args.tree:
        _copy_tree(tree, args.rev)
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", args.rev], capture_output=True,
                         text=True).stdout.strip() if not args.tree else str(tree)
    chosen = []
    for pkg in args.packages:
        allm = enumerate_mutants(tree, pkg)
        rng = random.Random(f"{args.seed}:{pkg}")
        pick = allm if args.only else rng.sample(allm, min(args.per_package, len(allm)))
        print(f"{pkg}: {len(allm)} mutation sites, {len(pick) if not args.only else 'selected'} sampled",
              file=sys.stderr)
        chosen += pick
    if args.only:
        want = set(args.only)
        chosen = [m for m in chosen if m["id"] in want]
    if args.list:
        for m in chosen:
            print(m["id"], m["desc"], "->", " ".join(tests_for(m["package"], m["module"])))
        return 0

    env = {k: v for k, v in os.environ.items() if k not in ("CI",)}
    env["PYTHONPATH"] = str(tree)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    c = _corpus()
    if c:
        env["ASMEVO_CORPUS"] = c
    chk = subprocess.run([sys.executable, "-c", "import asmevo; print(asmevo.__file__)"], cwd=tree,
                         env=env, capture_output=True, text=True)
    assert chk.stdout.strip().startswith(str(tree)), f"the copy is not what runs: {chk.stdout}{chk.stderr}"

    if args.baseline:
        for pkg in args.packages:
            files = sorted({t for m in TESTS[pkg].values() for t in m})
            st, dt, tail = run_tests(tree, files, args.timeout * 4, env)
            print(f"baseline {pkg}: {st} in {dt:.0f}s {tail}", file=sys.stderr)
            if st != "survived":
                return 2

    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    results = []
    with out.open("w") as fh:
        for n, m in enumerate(chosen, 1):
            path = tree / "asmevo" / m["package"] / m["module"]
            orig = path.read_text()
            mt = apply(ast.parse(orig), m["node"], m["kind"])
            src = ast.unparse(mt) if mt is not None else None
            if src is None or src == ast.unparse(ast.parse(orig)):
                res = dict(m, status="not-applicable", seconds=0.0, tail="")
            else:
                try:
                    path.write_text(src)
                    st, dt, tail = run_tests(tree, args.tests or tests_for(m["package"], m["module"]),
                                             args.timeout, env)
                finally:
                    path.write_text(orig)
                res = dict(m, status=st, seconds=round(dt, 1), tail=tail)
            results.append(res)
            fh.write(json.dumps(res) + "\n")
            fh.flush()
            print(f"[{n}/{len(chosen)}] {res['status']:9s} {res['seconds']:6.1f}s {m['id']} {m['desc']}",
                  file=sys.stderr)
        summary = {}
        for pkg in args.packages:
            rs = [r for r in results if r["package"] == pkg and r["status"] != "not-applicable"]
            killed = sum(r["status"] == "killed" for r in rs)
            summary[pkg] = {"killed": killed, "total": len(rs),
                            "timeout": [r["id"] + " " + r["desc"] for r in rs if r["status"] == "timeout"],
                            "survived": [r["id"] + " " + r["desc"] for r in rs if r["status"] == "survived"],
                            "errors": [r["id"] for r in rs if r["status"].startswith("error")]}
        fh.write(json.dumps({"summary": summary, "seed": args.seed, "per_package": args.per_package,
                             "rev": rev}) + "\n")
    print("\nkill rate per package:")
    for pkg, s in summary.items():
        rate = s["killed"] / s["total"] if s["total"] else 0.0
        print(f"  {pkg:10s} {s['killed']}/{s['total']} ({rate:.0%}), {len(s['timeout'])} timed out")
        for x in s["timeout"]:
            print(f"      timeout: {x}")
        for x in s["survived"]:
            print(f"      survived: {x}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""One agent session: loaded kernels, their lineages, and every tool as a plain method.

The MCP server (:mod:`asmevo.mcp.server`) is a thin layer over this class, so the tools are
testable without the ``mcp`` package.  Every method takes and returns small JSON-ready
values; bad input raises :class:`~asmevo.errors.AsmevoError` with the same message the
command line gives (the server turns it into an MCP tool error and keeps serving).

Lineage: a kernel loaded with a harness gets a lineage store in
``RUN_DIR/<kernel>-<sha256 of K0, 12 hex>/`` -- the same store, schema and gate as
``asmevo evolve`` (:mod:`asmevo.evolve`), with the default search options.  Every
``propose_edit`` is one committed step (operator ``agent``), so
``asmevo evolve K0 --harness H --out THAT_DIR --resume`` continues from the agent's best
candidate, and an MCP session opened on an evolve run's directory sees its candidates.

Ids: kernels loaded get ``k1``, ``k2``...; candidates are named by their content hash (any
unique prefix of at least 8 hex digits is accepted).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile

import numpy as np

from ..errors import AsmevoError

#: rows a single ``listing`` call returns at most
MAX_ROWS = 2000


class _Kernel:
    def __init__(self, kid, path, module, harness, harness_path, entry):
        self.id, self.path, self.module = kid, path, module
        self.harness, self.harness_path, self.entry = harness, harness_path, entry
        self.sha = hashlib.sha256(open(path, "rb").read()).hexdigest()


class Lineage:
    """An evolve :class:`~asmevo.evolve.loop.Run` opened on a run directory, driven one
    proposal at a time."""

    def __init__(self, kern: _Kernel, run_dir: str, kernel_name: str):
        from ..evolve.config import EvolveConfig
        from ..evolve.executor import InlineExecutor
        from ..evolve.loop import Run, check_inputs
        cfg = EvolveConfig(kernel_file=kern.path, harness=kern.harness_path, entry=kern.entry,
                           kernel=kernel_name, out=run_dir, resume=True, quiet=True)
        cfg.validate()
        k0, h, kname = check_inputs(cfg)
        self.run = Run(cfg, k0, h, kname)
        self.run.open(resume_may_start=True)
        self.run.init_state()
        self.executor = InlineExecutor(self.run.spec())
        self.run.root(self.executor)
        self.run.replay()
        self.dir = run_dir
        self.kernel = kname

    def close(self):
        self.executor.close()
        self.run.events.close()
        self.run.store.close()

    def stale(self, c: dict | None) -> bool:
        """True when row ``c`` claims a pass (accepted, or verified but slower) by a verdict
        another version of the verifier gave (:data:`asmevo.verify.VERIFIER_VERSION`, as
        :meth:`asmevo.evolve.loop.Run._proved` checks): not trusted, since a soundness fix
        may refuse it now.  K0's own row is never stale."""
        from ..verify import VERIFIER_VERSION
        if c is None or c["hash"] == self.run.k0_hash:
            return False
        if not (c.get("accepted") or c.get("status") == "rejected-slower"):
            return False
        v = c.get("verdict")
        return not isinstance(v, dict) or v.get("verifier") != VERIFIER_VERSION

    def best_hash(self) -> str:
        """The population's best whose verdict is not :meth:`stale` (else K0)."""
        pop = self.run.pop
        for m in ([pop.best] if pop.best else []) + pop.all_members():
            if not self.stale(self.run.store.candidate(m.hash, blocks=False)):
                return m.hash
        return self.run.k0_hash


class Session:
    """The state of one MCP session (``run_dir``: where lineages live; a temporary
    directory when None)."""

    def __init__(self, run_dir: str | None = None):
        self.run_dir = os.path.abspath(run_dir) if run_dir else tempfile.mkdtemp(prefix="asmevo-mcp-")
        os.makedirs(self.run_dir, exist_ok=True)
        self.kernels: dict[str, _Kernel] = {}
        self.lineages: dict[str, Lineage] = {}

    def close(self):
        for lin in self.lineages.values():
            lin.close()
        self.lineages.clear()

    # -- helpers -----------------------------------------------------------------------
    def _kernel(self, kernel_id) -> _Kernel:
        if not isinstance(kernel_id, str) or kernel_id not in self.kernels:
            known = ", ".join(self.kernels) or "none loaded yet: call load_kernel first"
            raise AsmevoError(f"unknown kernel id {kernel_id!r} (known: {known})")
        return self.kernels[kernel_id]

    def _kname(self, k: _Kernel, name: str | None = None) -> str:
        if name:
            try:
                k.module.kernel(name)
            except KeyError:
                raise AsmevoError(f"{k.path} has no kernel {name!r} (kernels: "
                                  f"{', '.join(x.name for x in k.module.kernels)})") from None
            return name
        if k.harness and k.harness.get("kernel"):
            return k.harness["kernel"]
        ks = k.module.kernels
        if len(ks) != 1:
            raise AsmevoError(f"{k.path} holds {len(ks)} kernels; name one "
                              f"({', '.join(x.name for x in ks)})")
        return ks[0].name

    def _lineage(self, k: _Kernel) -> Lineage:
        if k.harness is None:
            raise AsmevoError(f"kernel {k.id} was loaded without a harness: candidates are "
                              "verified by running them, so load it again with harness=...")
        if k.id not in self.lineages:
            name = self._kname(k)
            d = os.path.join(self.run_dir, f"{_safe(name)}-{k.sha[:12]}")
            self.lineages[k.id] = Lineage(k, d, name)
        return self.lineages[k.id]

    def _find(self, ident: str):
        """A kernel id or a candidate hash (prefix) -> (Module, kernel name, description)."""
        if not isinstance(ident, str) or not ident:
            raise AsmevoError(f"expected a kernel id or a candidate id, got {ident!r}")
        if ident in self.kernels:
            k = self.kernels[ident]
            return k.module, self._kname(k), k, None
        for kid, lin in self.lineages.items():
            h = self._hash(lin, ident, missing_ok=True)
            if h:
                from ..evolve.gate import fresh_copy
                blocks = lin.run._load_blocks(h)
                return fresh_copy(lin.run.k0, lin.kernel, blocks), lin.kernel, self.kernels[kid], h
        raise AsmevoError(f"unknown id {ident!r}: not a loaded kernel ({', '.join(self.kernels) or '-'}) "
                          "nor a stored candidate")

    @staticmethod
    def _built(m, candidate):
        """The module of the bytes ``m`` is written as (what ``export`` writes): a candidate
        (K0 with stored blocks) is written as a code object and loaded back, so ``verify``
        and ``run`` judge and run those bytes, not the in-memory IR
        (:func:`asmevo.backend.rebuild.as_built`).  A loaded kernel is already its bytes."""
        from ..backend.rebuild import as_built
        from ..verify.driver import needs_building
        return as_built(m) if candidate or needs_building(m) else m

    @staticmethod
    def _hash(lin: Lineage, ident: str, missing_ok=False) -> str | None:
        s = ident.lower()
        if len(s) >= 8 and all(c in "0123456789abcdef" for c in s):
            rows = lin.run.store.db.execute("SELECT hash FROM candidates WHERE hash LIKE ?",
                                            (s + "%",)).fetchall()
            if len(rows) == 1:
                return rows[0][0]
            if len(rows) > 1:
                raise AsmevoError(f"candidate id {ident!r} is ambiguous: give more digits")
        if missing_ok:
            return None
        raise AsmevoError(f"unknown candidate id {ident!r}")

    # -- tools -------------------------------------------------------------------------
    def load_kernel(self, path: str, harness: str | None = None, entry: str | None = None) -> dict:
        """Load a code object (or assembly) and optionally its harness."""
        from ..analysis import AnalysisManager
        from ..emu.harness import check_reference, load_harness
        from ..frontend.loader import load_bytes
        if not isinstance(path, str) or not path:
            raise AsmevoError("path must be the path of a code object or assembly file")
        # the bytes: assembly text is assembled and linked, then loaded back (every tool then
        # sees what the hardware would run, not a parse that ignores .rept/.if/.long...)
        m = load_bytes(path)
        h = load_harness(harness, entry) if harness else None
        if h is not None:
            check_reference(h)  # run_kernel and evolve compare with it: say a bad one now
        kid = f"k{len(self.kernels) + 1}"
        k = _Kernel(kid, os.path.abspath(path), m, h, os.path.abspath(harness) if harness else None,
                    entry)
        self.kernels[kid] = k
        out = []
        for kern in m.kernels:
            occ = None
            try:
                rb = AnalysisManager(m).get("regbudget", kern)
                occ = {"waves_per_simd": rb.occupancy, "limits": rb.occupancy_limits}
            except Exception:
                pass
            out.append({"name": kern.name, "instructions": kern.num_instructions(),
                        "occupancy": occ})
        res = {"kernel_id": kid, "path": k.path, "kernels": out,
               "harness": (h.get("name") if h else None)}
        if h:
            res["kernel"] = self._kname(k)
            res["lineage_dir"] = os.path.join(self.run_dir, f"{_safe(res['kernel'])}-{k.sha[:12]}")
        return res

    def listing(self, kernel_id: str, start: int = 0, end: int | None = None,
                kernel: str | None = None) -> dict:
        """Instructions ``start..end`` (exclusive) with the indices and pcs edits use."""
        from ..evolve.candidate import listing
        m, name, _, h = self._find(kernel_id)
        rows = listing(m.kernel(self._kname(self.kernels.get(kernel_id), kernel) if kernel
                                and kernel_id in self.kernels else name))
        n = len(rows)
        start, end = _range(start, end, n)
        if end - start > MAX_ROWS:
            raise AsmevoError(f"range {start}..{end} holds {end - start} instructions; at most "
                              f"{MAX_ROWS} per call")
        return {"kernel": name, "total": n, "start": start, "end": end, "rows": rows[start:end]}

    def analyze(self, kernel_id: str, which: list | None = None) -> dict:
        """Waitcnt / hazard / register findings (the ``asmevo analyze`` report)."""
        from ..analysis import AnalysisManager
        from ..tools.analyze import _SECTIONS, analyze_kernel
        m, name, _, _ = self._find(kernel_id)
        sections = list(which) if which else ["waitcnt", "hazards", "regs"]
        bad = [s for s in sections if s not in _SECTIONS]
        if bad:
            raise AsmevoError(f"unknown analysis {bad[0]!r}; expected some of {', '.join(_SECTIONS)}")
        k = m.kernel(name)
        rep = analyze_kernel(k, AnalysisManager(m), set(sections))
        return json.loads(json.dumps(rep, default=str))

    def profile(self, kernel_id: str, top: int = 5) -> dict:
        """Estimated cycles, bottleneck and hot windows with their rows (the timing model's
        estimate unless the profile came from hardware)."""
        from ..perf import estimate
        top = _int(top, "top", 1, 100)
        m, name, k, _ = self._find(kernel_id)
        prof = estimate(m, name, harness=k.harness)
        kp = prof.kernel(name)
        rows = {r.index: r for r in kp.instructions}
        wins = []
        for w in kp.windows[:top]:
            wins.append({"start": w.start, "end": w.end, "start_pc": w.start_pc, "end_pc": w.end_pc,
                         "share": w.share, "cycles": w.cycles, "bottleneck": w.bottleneck,
                         "rows": [{"index": i, "pc": rows[i].pc, "text": rows[i].text,
                                   "hits": rows[i].hits, "latency": rows[i].latency,
                                   "stall": rows[i].stall, "idle": rows[i].idle}
                                  for i in range(w.start, w.end + 1) if i in rows]})
        return {"kernel": name, "model": prof.model, "source": prof.source,
                "estimated": prof.estimated, "cycles": kp.cycles, "microseconds": kp.microseconds,
                "occupancy": kp.occupancy, "occupancy_limit": kp.occupancy_limit,
                "bottleneck": kp.bottleneck, "profile_hash": prof.digest(), "windows": wins}

    def propose_edit(self, kernel_id: str, edit: dict | None = None, asm: str | None = None,
                     pipeline: str | None = None, hypothesis: str = "",
                     parent: str | None = None) -> dict:
        """Apply one edit (a window edit, a whole assembly text or a pass pipeline) to the
        parent (default: the lineage's best), gate it (build, verify, time) and store it."""
        from ..evolve.agent import AgentOperator
        from ..evolve.candidate import canonical_lines, content_hash, kernel_blocks
        from ..evolve.operators import Parent, ProposeContext
        from ..ir.module import Kernel
        k = self._kernel(kernel_id)
        lin = self._lineage(k)
        run = lin.run
        given = [x for x in (edit, asm, pipeline) if x is not None]
        if len(given) != 1:
            raise AsmevoError("give exactly one of edit (window-edit object), asm (assembly text) "
                              "or pipeline (opt -passes= syntax)")
        if not isinstance(hypothesis, str):
            raise AsmevoError("hypothesis must be a string")
        ph = self._hash(lin, parent) if parent else lin.best_hash()
        pcyc = run._cycles_of(ph)
        pblocks = run._load_blocks(ph)
        if edit is not None:
            ans = {"kind": "window-edit", "edit": edit}
        elif asm is not None:
            ans = {"kind": "asm", "asm": asm}
        else:
            ans = {"kind": "pipeline", "pipeline": pipeline}
        ctx = ProposeContext(run.k0, lin.kernel, run.pop, run.store, run.cfg, {})
        try:
            blocks, ed = AgentOperator()._apply(ans["kind"], ans, Parent(ph, pblocks, [], pcyc), ctx)
        except AsmevoError:
            raise
        except (KeyError, TypeError, ValueError) as e:
            raise AsmevoError(f"the {ans['kind']} does not apply: {e}") from None
        kk = Kernel(lin.kernel, blocks)
        h = content_hash(kk)
        old = run.store.candidate(h, blocks=False)
        # a stored pass by another verifier version is not trusted: gated again, as new
        again = lin.stale(old)
        step = run.next_step
        s = {"step": step, "batch": run.next_batch, "island": 0, "operator": "agent", "parent": ph,
             "hash": h, "outcome": "duplicate" if old and not again else "evaluated",
             "message": "mcp: verified again (stale verdict)" if again else "mcp",
             "seconds": 0.0}
        if old is None or again:
            rec = {"hash": h, "parent": ph, "step": step, "island": 0, "operator": "agent",
                   "params": {"kind": ans["kind"], "via": "mcp"}, "edit": ed,
                   "hypothesis": hypothesis[:2000], "listing": "\n".join(canonical_lines(kk)),
                   "blocks": kernel_blocks(kk)}
            from ..evolve.loop import derive
            task = {"hash": h, "blocks": rec["blocks"], "seed": derive(run.cfg.seed, "mcp", step)}
            task.update(run.chain_fields(ph))   # as in the loop: a chain of proofs when it can
            res = next(iter(lin.executor.map([task])))
            run.settle(rec, res)      # the loop's own rule: receipt, slower-than-parent
            if again:
                run.store.update_verdict(rec)
            else:
                run.store.add_candidate(rec)
        run.store.add_step(s)
        cand = run.store.candidate(h, blocks=False)
        run.apply_step(s, cand if s["outcome"] == "evaluated" else None)
        run.store.commit_batch(run.next_batch, step, 1)
        run.next_step, run.next_batch = step + 1, run.next_batch + 1
        return self._cand_summary(lin, cand, duplicate=old is not None, parent_cycles=pcyc)

    def _cand_summary(self, lin, c, duplicate=False, parent_cycles=None) -> dict:
        v = c.get("verdict") or {}
        ev = [{"layer": e.get("layer"), "kind": e.get("kind"), "message": e.get("message"),
               "data": e.get("data")} for e in (v.get("evidence") or [])[:4]]
        k0c = lin.run.k0_cycles
        cyc = c.get("cycles")
        out = {"candidate_id": c["hash"][:16], "hash": c["hash"], "parent": c.get("parent"),
               "status": c["status"], "outcome": c["outcome"], "accepted": bool(c["accepted"]),
               "duplicate": duplicate, "message": v.get("message"),
               "reasons": [e["message"] for e in ev if e.get("message")], "evidence": ev,
               "cycles": cyc, "estimated": lin.run.scorer_id.get("name") != "hip-events",
               "operator": c.get("operator"),
               "hypothesis": c.get("hypothesis")}
        if cyc:
            out["speedup_vs_k0"] = k0c / cyc
            if parent_cycles:
                out["speedup_vs_parent"] = parent_cycles / cyc
        if "timing" in v:
            out["timing"] = v["timing"]
        if lin.stale(c):
            from ..verify import VERIFIER_VERSION
            out.update(accepted=False, status="stale", outcome="unknown", stored_status=c["status"],
                       message=f"stored verdict ({c['status']}) was given by verifier version "
                               f"{v.get('verifier') if isinstance(v, dict) else None}, this is "
                               f"version {VERIFIER_VERSION}: not trusted; propose it again or "
                               "export it to verify it again")
        return json.loads(json.dumps(out, default=str))

    def verify(self, a: str, b: str, level: str = "all") -> dict:
        """The verifier's verdict on ``b`` against ``a`` (kernel or candidate ids)."""
        from ..verify import verify
        ma, name, ka, ha = self._find(a)
        mb, nb, _, hb = self._find(b)
        if nb != name:
            raise AsmevoError(f"{a} is kernel {name} and {b} is kernel {nb}: nothing to compare")
        if level not in ("static", "z3", "diff", "all"):
            raise AsmevoError(f"unknown level {level!r}; expected static, z3, diff or all")
        if ka.harness is None and level in ("diff", "all"):
            level = "z3"
        v = verify(self._built(ma, ha), self._built(mb, hb), harness=ka.harness, level=level, entry=name)
        return json.loads(json.dumps(v.to_json(), default=str))

    def run(self, kernel_id: str, seed: int = 0) -> dict:
        """Run in the emulator on the harness's inputs; outputs summarised, and checked
        against the harness's numpy reference when it has one."""
        from ..emu.harness import compare, make_inputs, make_launch, reference
        from ..emu.launch import run_kernel
        seed = _int(seed, "seed", 0, 2**32 - 1)
        m, name, k, h = self._find(kernel_id)
        if k.harness is None:
            raise AsmevoError(f"kernel {k.id} was loaded without a harness: nothing to run")
        inputs = make_inputs(k.harness, seed)
        res = run_kernel(self._built(m, h), name, make_launch(k.harness, inputs))
        outs = {}
        for n, arr in res.outputs.items():
            a = np.asarray(arr)
            d = {"dtype": str(a.dtype), "shape": list(a.shape), "first": a.reshape(-1)[:8].tolist()}
            if a.size and a.dtype.kind in "fiu":
                af = a.astype(np.float64)
                d.update(min=float(np.nanmin(af)), max=float(np.nanmax(af)),
                         mean=float(np.nanmean(af)), nan=int(np.isnan(af).sum()))
            outs[n] = d
        out = {"kernel": name, "seed": seed, "outputs": outs, "waves": res.waves,
               "instructions": res.instructions, "writes_outside": len(res.writes_outside)}
        if k.harness.get("reference"):
            errs = compare(k.harness, res.outputs, reference(k.harness, inputs))
            out["reference_check"] = {"ok": not errs, "mismatches": errs[:8]}
        return json.loads(json.dumps(out, default=str))

    def isa(self, mnemonic: str) -> dict:
        """The ISA-table record, its semantics summary and the hazard rules that name it."""
        from ..analysis.hazards import RULES
        from ..isa import lookup
        from ..semantics.registry import lookup as sem_lookup
        if not isinstance(mnemonic, str) or not mnemonic.strip():
            raise AsmevoError("mnemonic must be a non-empty string")
        info = lookup(mnemonic.strip().lower())
        if info is None:
            raise AsmevoError(f"unknown gfx942 mnemonic {mnemonic!r}")
        import dataclasses

        def plain(o):
            if dataclasses.is_dataclass(o) and not isinstance(o, type):
                return {f.name: getattr(o, f.name) for f in dataclasses.fields(o)}
            if isinstance(o, (set, frozenset, tuple)):
                return list(o)
            return getattr(o, "__dict__", None) or str(o)
        rec = json.loads(json.dumps(info, default=plain))
        sem = sem_lookup(info.name)
        rec_sem = None
        if sem is not None:
            rec_sem = {"kind": sem.kind, "dst": list(sem.dst), "src": list(sem.src),
                       "implicit_in": list(sem.imp_in), "implicit_out": list(sem.imp_out),
                       "z3": sem.fn is not None}
        cats = _categories(info)
        rules = [{"id": r.id, "producer": r.producer, "consumer": r.consumer,
                  "wait_states": str(r.wait_states), "source": r.source}
                 for r in RULES.values()
                 if any(c in f"{r.producer} | {r.consumer}" for c in cats)]
        return {"mnemonic": info.name, "record": rec, "semantics": rec_sem, "hazard_rules": rules,
                "categories": sorted(cats)}

    def lineage(self, kernel_id: str | None = None, top: int = 10) -> dict:
        """Candidates of the session's lineages, best first, with their receipts."""
        top = _int(top, "top", 1, 1000)
        out = []
        for kid, lin in self.lineages.items():
            if kernel_id and kid != kernel_id:
                continue
            rows = lin.run.store.candidates()
            rows.sort(key=lambda c: (not c["accepted"] or lin.stale(c),
                                     c["cycles"] if c["cycles"] else 1e30, c["step"]))
            out.append({"kernel_id": kid, "kernel": lin.kernel, "dir": lin.dir,
                        "k0_cycles": lin.run.k0_cycles, "evaluated": lin.run.store.count(),
                        "best": lin.best_hash(),
                        "candidates": [self._cand_summary(lin, c) for c in rows[:top]]})
        if kernel_id and not out:
            self._lineage(self._kernel(kernel_id))
            return self.lineage(kernel_id, top)
        return {"lineages": out}

    def best(self, kernel_id: str | None = None) -> dict:
        """The best accepted candidate of each lineage (or of ``kernel_id``'s)."""
        out = []
        for kid, lin in self.lineages.items():
            if kernel_id and kid != kernel_id:
                continue
            c = lin.run.store.candidate(lin.best_hash(), blocks=False)
            out.append({"kernel_id": kid} | self._cand_summary(lin, c))
        if kernel_id and not out:
            self._lineage(self._kernel(kernel_id))
            return self.best(kernel_id)
        return {"best": out}

    def export(self, candidate_id: str, path: str) -> dict:
        """Write a candidate as a code object at ``path`` (never over an input or K0).

        The bytes written are verified first: the candidate is built as the gate builds it
        (in-place patch of K0 when every change fits, else a rebuild) into a temporary file,
        and that file passes evolve's final check against K0 (:func:`asmevo.evolve.report.
        final_check`: the stored code hashes to its id, the built code is that code, the
        verifier at level ``all`` with more trials, the harness's reference); the bytes it
        loaded are then written by temp file + rename.  A stored verdict is never enough."""
        from ..evolve.report import final_check
        from ..fileio import write_output
        from ..frontend.loader import check_output_path
        if not isinstance(path, str) or not path:
            raise AsmevoError("path must be a file path")
        m, name, k, h = self._find(candidate_id)
        if h is None:
            raise AsmevoError(f"{candidate_id!r} is a loaded kernel, not a candidate")
        # only a candidate with a passing receipt leaves the session as a code object
        # (a rejected or unknown one was exported silently, without its verdict)
        lin = self.lineages.get(k.id)
        row = lin.run.store.candidate(h, blocks=False) if lin is not None else None
        status = row["status"] if row else None
        if row is None or not (row["accepted"] or status == "rejected-slower"):
            raise AsmevoError(f"candidate {candidate_id!r} did not pass the verifier "
                              f"(status {status}); only verified candidates are exported")
        check_output_path(path)
        inputs = tuple(x.path for x in self.kernels.values()) + tuple(
            x.harness_path for x in self.kernels.values() if x.harness_path)
        if os.path.exists(path) and any(os.path.samefile(path, p) for p in inputs
                                        if os.path.exists(p)):
            raise AsmevoError(f"refusing to write over an input: {path}")
        tmpdir = tempfile.mkdtemp(prefix="asmevo-export-")
        try:
            ok, receipt, how, cand = final_check(lin.run, row, os.path.join(tmpdir, "cand.co"),
                                                 patch_moved=True)
            v = receipt["verdict"]
            if not ok:
                ref = receipt.get("reference") or {}
                if v.get("status") == "accepted" and ref.get("match") is False:
                    why = f"the verifier accepted it, but {ref.get('summary')}"
                else:
                    why = f"{v.get('status')}: {v.get('message')}"
                raise AsmevoError(f"candidate {candidate_id!r} was not exported: the code object "
                                  f"built from it did not pass the final check ({why})")
            data = cand.code_object.data      # the bytes the check loaded and verified
        finally:
            import shutil
            shutil.rmtree(tmpdir, ignore_errors=True)
        write_output(path, data, inputs=inputs)
        return {"path": os.path.abspath(path), "how": how, "hash": h, "status": status,
                "verified": v.get("status"), "stale": lin.stale(row)}

    def assembly(self, ident: str) -> str:
        """Assembly text of a kernel or candidate (the resources)."""
        from ..ir.printer import print_module
        m, _, _, _ = self._find(ident)
        return print_module(m)


def _categories(info) -> set:
    fam = info.family
    cats = {info.base, info.name}
    if fam.startswith("VOP") and fam != "VOP3P-MAI":
        cats.add("VALU")
        if "dot" in info.base:
            cats.add("DOT")
        if info.latency == "trans":
            cats.add("TRANS")
    if fam == "VOP3P-MAI":
        cats |= {"MFMA"}
        cats.add("DGEMM" if "f64" in info.base else "XDL")
    if fam in ("GLOBAL", "FLAT", "SCRATCH", "MUBUF", "MTBUF"):
        cats |= {"VMEM", "FLAT"}
    if fam == "DS":
        cats.add("DS")
    if fam.startswith("SOP") and fam != "SOPP":
        cats.add("SALU")
    if fam == "SMEM":
        cats.add("SMEM")
    return cats


def _int(v, name, lo, hi) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise AsmevoError(f"{name} must be an integer in {lo}..{hi}, not {v!r}")
    return v


def _range(start, end, n):
    start = _int(start if start is not None else 0, "start", 0, 1 << 31)
    end = n if end is None else _int(end, "end", 0, 1 << 31)
    start, end = min(start, n), min(end, n)
    if end < start:
        raise AsmevoError(f"end ({end}) is before start ({start})")
    return start, end


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)[:80]

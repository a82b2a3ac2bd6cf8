"""Static checks used by ``--verify-each`` and ``--verify=static``.

:func:`static_violations` returns one message per problem; the pass manager
fails a pass that adds a message that was not there before it ran.  Sources,
used when their modules exist:

* ``asmevo.verify.static`` (the verifier's static layer);
* the analyses' violation lists: ``asmevo.analysis.waitcnt`` (a use of a
  register whose producing memory operation may still be outstanding) and
  ``asmevo.analysis.hazards`` (too few wait states between producer and
  consumer, CDNA3 ISA guide "Manually inserted wait states");
* always: register bounds -- every VGPR/AGPR/SGPR index below the
  kernel's allocation (``.amdhsa_next_free_vgpr``/``_sgpr``,
  ``.amdhsa_accum_offset``, or the decoded kernel descriptor), and registers
  in range of the ISA (v0..v255, a0..a255, s0..s101).
"""

from __future__ import annotations

import importlib

from ..ir import Kernel, Module
from ..ir.operands import Reg, base_of


def _try(modname: str):
    try:
        return importlib.import_module(modname)
    except ImportError:
        return None


def _int(text) -> int | None:
    try:
        return int(str(text).strip(), 0)
    except (TypeError, ValueError):
        return None


def register_limits(kernel: Kernel, module: Module | None) -> dict[str, int]:
    """Allocation limits of ``kernel``: ``{"v": n, "a": n, "s": n}`` (registers
    allowed, exclusive), from the ``.amdhsa_kernel`` block or the descriptor;
    only the keys that are known."""
    lim: dict[str, int] = {}
    blk = module.amdhsa_kernel(kernel.name) if module is not None else None
    if blk is not None:
        nv = _int(blk.fields.get(".amdhsa_next_free_vgpr"))
        ns = _int(blk.fields.get(".amdhsa_next_free_sgpr"))
        acc = _int(blk.fields.get(".amdhsa_accum_offset"))
        if nv is not None:
            if acc is not None:
                lim["v"] = acc
                lim["a"] = max(0, nv - acc)
            else:
                lim["v"] = nv
        if ns is not None:
            # next_free_sgpr excludes VCC/FLAT_SCRATCH/XNACK, which are named, not s-indexed
            lim["s"] = ns
    return lim


def register_bound_violations(kernel: Kernel, module: Module | None) -> list[str]:
    """Registers beyond the kernel's allocation or the ISA's register files."""
    from ..ir.operands import REG_FILES
    lim = register_limits(kernel, module)
    out = []
    for inst in kernel.instructions():
        for o in inst.operands:
            r = base_of(o)
            if not isinstance(r, Reg):
                continue
            top = r.index + r.count
            hard = REG_FILES.get(r.file)
            if hard is not None and top > hard:
                out.append(f"register-bounds: {inst.text()}: {r} beyond {r.file}{hard - 1}")
            elif r.file in lim and top > lim[r.file]:
                out.append(f"register-bounds: {inst.text()}: {r} beyond the allocation "
                           f"({lim[r.file]} {r.file.upper()}GPRs)")
    return out


def static_violations(kernel: Kernel, am) -> list[str]:
    """All static problems of ``kernel`` as sorted messages (see module docstring)."""
    module = getattr(am, "module", None)
    out = register_bound_violations(kernel, module)
    out.extend(_analysis_violations(kernel, am))
    return sorted(out)


def _analysis_violations(kernel: Kernel, am) -> list[str]:
    out: list[str] = []
    for modname, label in (("asmevo.analysis.waitcnt", "waitcnt"),
                           ("asmevo.analysis.hazards", "hazard")):
        mod = _try(modname)
        fn = getattr(mod, "violations", None) if mod else None
        if fn is None:
            continue
        for v in fn(kernel):
            out.append(f"{label}: {_describe(v)}")
    return out


def _describe(v) -> str:
    """A violation as text without addresses that change when code moves."""
    for attr in ("message", "text", "describe"):
        x = getattr(v, attr, None)
        if x is not None:
            return x() if callable(x) else str(x)
    return str(v)


def verify_result(original: Module, result: Module, mode: str, harness: str | None):
    """``--verify``: ``None`` if not requested, else ``(accepted, report text)``.

    ``static`` uses :func:`static_violations` on every kernel (new violations
    reject) unless ``asmevo.verify`` provides ``verify_modules``; ``diff`` and
    ``all`` need ``asmevo.verify`` (differential testing on the emulator).

    Raises:
        AsmevoError: the requested layer is not available.
    """
    from ..errors import AsmevoError
    ver = _try("asmevo.verify.api") or _try("asmevo.verify")
    fn = getattr(ver, "verify_modules", None) if ver else None
    if fn is not None:
        verdict = fn(original, result, layers=mode, harness=harness)
        ok = getattr(verdict, "accepted", None)
        if ok is None:
            ok = str(getattr(verdict, "status", "")).endswith("accepted")
        return bool(ok), str(verdict)
    if mode != "static":
        raise AsmevoError(f"--verify={mode} needs asmevo.verify (differential testing), "
                          "which is not available in this build")
    from .manager import AnalysisManager
    problems = []
    am_o, am_r = AnalysisManager(original), AnalysisManager(result)
    for k in result.kernels:
        try:
            ko = original.kernel(k.name)
        except KeyError:
            continue
        before = static_violations(ko, am_o)
        after = static_violations(k, am_r)
        for v in after:
            if v in before:
                before.remove(v)
            else:
                problems.append(f"{k.name}: {v}")
    return (not problems), "\n".join(problems)

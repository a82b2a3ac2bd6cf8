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
    out.extend(_verifier_violations(kernel, module))
    return sorted(out)


def _verifier_violations(kernel: Kernel, module) -> list[str]:
    """The verifier's candidate-only static checks (:mod:`asmevo.verify.static`: register
    bounds against the granulated descriptor, descriptor counts, LDS/scratch budgets,
    registers read before any write that the ABI does not initialise)."""
    if module is None or not kernel.is_kernel:
        return []
    try:
        from ..frontend.loader import amdhsa_descriptor
        from ..verify.abi import KernelFacts
        from ..verify.static import (budget_problems, check_descriptor_counts,
                                     check_register_bounds, undefined_reads)
    except ImportError:
        return []
    try:
        kd, src = kernel.descriptor, "code-object"
        if kd is None:
            blk = module.amdhsa_kernel(kernel.name)
            kd, src = (amdhsa_descriptor(module, blk), "amdhsa") if blk is not None \
                else (None, "none")
        f = KernelFacts(kernel.name, kernel, kd, src, kernel.metadata, kernel.name + ".kd")
        ev = []
        if kd is not None:
            ev += check_register_bounds(f, None) + check_descriptor_counts(f, None)
        ev += [e for _, e in budget_problems(module, f, None, None)]
        ev += undefined_reads(module, f, None, None)
    except Exception as e:  # noqa: BLE001 - a verifier that cannot judge this kernel
        return [f"verify: static checks failed: {type(e).__name__}: {e}"]
    out = []
    for e in ev:
        regs = (e.data or {}).get("registers") if e.kind == "undefined-at-entry" else None
        if regs:  # one message per register, so that reading fewer is not "new"
            out += [f"verify: {kernel.name}: may read {''.join(map(str, r))} before writing it "
                    "(not initialised by the kernel ABI)" for r in regs]
        else:
            out.append(f"verify: {e.message}")
    return out


def _analysis_violations(kernel: Kernel, am) -> list[str]:
    out: list[str] = []
    for name, label in (("waitcnt", "waitcnt"), ("hazards", "hazard")):
        try:
            a = am.get(name, kernel)
        except (KeyError, ImportError):
            continue  # analysis not built yet
        except Exception as e:  # noqa: BLE001 - an analysis that cannot handle the kernel
            out.append(f"{label}: analysis failed: {type(e).__name__}: {e}")
            continue
        for v in getattr(a, "violations", ()):
            out.append(f"{label}: {_describe(v)}")
    return out


def _describe(v) -> str:
    """A violation as text without positions (they change when code moves)."""
    inst = getattr(v, "inst", None)
    if inst is not None and hasattr(v, "rule") and hasattr(v, "required"):
        prod = getattr(v, "producer", None)
        u = getattr(v, "unit", None)
        reg = "" if u is None else f" ({u[0]}{u[1]})" if len(u) == 2 else f" ({u[0]})"
        return (f"rule {v.rule}: {prod.text() if prod is not None else '?'} -> {inst.text()}"
                f"{reg} needs {v.required} wait states")
    if inst is not None and hasattr(v, "counter"):
        u = v.unit
        reg = f"{u[0]}{u[1]}" if len(u) == 2 else u[0]
        return f"{inst.text()} reads {reg} before {v.counter}({v.needed})"
    for attr in ("message", "text", "describe"):
        x = getattr(v, attr, None)
        if x is not None:
            return x() if callable(x) else str(x)
    return str(v)


def verify_result(original: Module, result: Module, mode: str, harness: str | None,
                  kernels: list[str] | None = None, entry: str | None = None):
    """``--verify``: run :func:`asmevo.verify.verify` at level ``mode``
    (``static``, ``diff`` or ``all``) as ``asmevo verify`` does; returns the
    :class:`~asmevo.verify.Verdict`.  ``entry`` picks the harness entry when the
    harness file is a manifest list.

    Raises:
        AsmevoError: bad harness or original (from the verifier).
    """
    from ..verify import verify
    h = None
    if harness:
        from ..verify.diff import load_harness
        h = load_harness(harness, entry)
    if entry is None and kernels and len(kernels) == 1:
        entry = kernels[0]
    return verify(original, result, harness=h, level=mode, entry=entry)


# -- transactional edits ---------------------------------------------------------
def apply_edits(kernel: Kernel, plan) -> list:
    """Apply ``plan``: a list of ``(old, replacement list)`` where ``old`` is an
    instruction or a tuple of adjacent instructions (found by identity) replaced as
    one unit; returns an undo log for :func:`undo_edits`.

    Raises:
        ValueError: an instruction is not in the kernel, or a tuple is not adjacent.
    """
    undo = []
    for old, new in plan:
        olds = list(old) if isinstance(old, tuple) else [old]
        b, i = kernel.locate(olds[0])
        if any(b.instructions[i + k] is not o if i + k < len(b.instructions) else True
               for k, o in enumerate(olds)):
            raise ValueError("edit window is not adjacent")
        b.instructions[i:i + len(olds)] = list(new)
        undo.append((b, i, olds, len(new)))
    return undo


def undo_edits(undo: list) -> None:
    """Revert :func:`apply_edits`."""
    for b, i, olds, n in reversed(undo):
        b.instructions[i:i + n] = olds


def new_violations(kernel: Kernel, am, baseline) -> list[str]:
    """Static violations of ``kernel`` beyond the multiset ``baseline``."""
    from collections import Counter
    return list((Counter(static_violations(kernel, am)) - Counter(baseline)).elements())


def repair_hazards(kernel: Kernel, am, baseline, rounds: int = 4) -> list:
    """Insert ``s_nop`` before consumers of hazards that are not in ``baseline`` so that
    they get the wait states their rule requires (CDNA3 ISA guide "Manually inserted wait
    states"; ``s_nop N`` gives N+1, at most 8).  Returns an undo log (for
    :func:`undo_edits`); the caller checks whether violations remain."""
    from ..ir import Imm, Instruction
    undo: list = []
    base = set(baseline)
    for _ in range(rounds):
        try:
            hz = am.get("hazards", kernel)
        except (KeyError, ImportError):
            return undo
        todo: dict[int, tuple] = {}
        for h in getattr(hz, "violations", ()):
            if f"hazard: {_describe(h)}" in base:
                continue
            missing = int(h.required) - int(h.available)
            if missing <= 0:
                continue
            cur = todo.get(id(h.inst))
            if cur is None or missing > cur[1]:
                todo[id(h.inst)] = (h.inst, missing)
        if not todo:
            return undo
        for inst, missing in todo.values():
            nops = []
            while missing > 0:
                n = min(missing, 8)
                nops.append(Instruction("s_nop", [Imm(n - 1)]))
                missing -= n
            b, i = kernel.locate(inst)
            b.instructions[i:i + 1] = nops + [inst]
            undo.append((b, i, [inst], len(nops) + 1))
        am.invalidate(kernel, frozenset())
    return undo


def typechecks(inst) -> bool | None:
    """Whether ``inst`` passes :func:`asmevo.frontend.typecheck.check_instruction` (operand
    classes, constant bus, literal rules against the ISA table); ``None`` when the table is
    not available, so that each caller states its own policy for that case."""
    try:
        from ..frontend.typecheck import check_instruction
    except ImportError:
        return None
    from ..errors import AsmevoError
    try:
        check_instruction(inst)
    except ImportError:
        return None
    except AsmevoError:
        return False
    return True


class Snapshot:
    """A kernel's code and register counts (descriptor, metadata, its ``.amdhsa_kernel``
    fields), restorable after a failed attempt that also changed the counts."""

    def __init__(self, kernel: Kernel, module):
        import copy
        self.kernel = kernel
        self.blk = module.amdhsa_kernel(kernel.name) if module is not None else None
        self.code = [list(b.instructions) for b in kernel.blocks]
        self.fields = dict(self.blk.fields) if self.blk is not None else None
        self.kd = copy.deepcopy(kernel.descriptor)
        self.md = copy.deepcopy(kernel.metadata)

    def restore(self) -> None:
        """Put the code and the counts back as they were."""
        import copy
        for b, code in zip(self.kernel.blocks, self.code):
            b.instructions = list(code)
        if self.blk is not None:
            self.blk.fields.clear()
            self.blk.fields.update(self.fields)
        self.kernel.descriptor = copy.deepcopy(self.kd)
        if isinstance(self.kernel.metadata, dict) and isinstance(self.md, dict):
            self.kernel.metadata.clear()
            self.kernel.metadata.update(copy.deepcopy(self.md))


def in_frozen_block(kernel: Kernel, frozen: set[int], item) -> bool:
    """Whether the edit ``item`` (``(old, replacement list)``, ``old`` an instruction or a
    tuple of adjacent ones) lies in one of the ``frozen`` blocks (:func:`frozen_blocks`)."""
    first = item[0][0] if isinstance(item[0], tuple) else item[0]
    b, _ = kernel.locate(first)
    return id(b) in frozen


def try_edits(kernel: Kernel, am, items, baseline, repair: str = "shorter") -> bool:
    """Apply ``items`` as one transaction: keep them when they add no static violation
    beyond the multiset ``baseline``, else undo them all and return False.

    New hazards alone are first repaired with ``s_nop`` (:func:`repair_hazards`):
    ``repair="shorter"`` only when the nops inserted are no more than the instructions
    the edits remove (a repair never makes the code longer), ``"always"`` in any case,
    ``"never"`` not at all.
    """
    u = apply_edits(kernel, items)
    am.invalidate(kernel, frozenset())
    bad = new_violations(kernel, am, baseline)
    if not bad:
        return True
    removed = sum((len(o) if isinstance(o, tuple) else 1) - len(n) for o, n in items)
    if repair != "never" and (repair == "always" or removed > 0) \
            and all(v.startswith("hazard: rule") for v in bad):
        r = repair_hazards(kernel, am, baseline)
        added = sum(n - 1 for _, _, _, n in r)
        if (repair == "always" or added <= removed) and not new_violations(kernel, am, baseline):
            return True
        undo_edits(r)
    undo_edits(u)
    am.invalidate(kernel, frozenset())
    return False


def apply_checked(kernel: Kernel, am, plan, baseline, max_steps: int = 1000,
                  repair: bool = True, atomic: bool = False) -> list:
    """Apply ``plan`` unless it adds a static violation (waitcnt, hazard, register bound)
    beyond the multiset ``baseline`` (from :func:`static_violations`).

    New hazards alone are first repaired with ``s_nop`` when ``repair`` is true and the
    nops inserted are no more than the instructions the edits remove (:func:`try_edits`);
    if violations remain, the batch is undone and bisected: each half is tried on top of
    the edits kept so far (at most ``max_steps`` attempts), and single edits that still
    add a violation are dropped.  Edits in :func:`frozen_blocks` are dropped first.
    With ``atomic`` the plan is all or nothing (edits that only make sense together, such
    as a register renaming): nothing is applied when one edit lies in a frozen block or
    the whole plan adds a violation.  Returns the edits kept, in plan order.
    """
    if not plan:
        return []
    mode = "shorter" if repair else "never"
    frozen = frozen_blocks(kernel, getattr(am, "module", None))
    if frozen:
        movable = [it for it in plan if not in_frozen_block(kernel, frozen, it)]
        if atomic and len(movable) != len(plan):
            return []
        plan = movable
        if not plan:
            return []
    if atomic:
        return list(plan) if try_edits(kernel, am, plan, baseline, mode) else []

    # bisect: a group that passes is kept whole; a failing group is split in halves,
    # each tried on top of what was kept so far (single edits that fail are dropped)
    kept: list = []
    budget = [max_steps]

    def solve(items: list) -> None:
        if not items or budget[0] <= 0:
            return
        budget[0] -= 1
        if try_edits(kernel, am, items, baseline, mode):
            kept.extend(items)
            return
        if len(items) == 1:
            return
        mid = len(items) // 2
        solve(items[:mid])
        solve(items[mid:])
    solve(list(plan))
    return kept


def kernarg_preload(kernel: Kernel, module) -> bool:
    """Whether ``kernel`` preloads kernel arguments into SGPRs (descriptor
    ``kernarg_preload_spec_length`` or ``.amdhsa_user_sgpr_kernarg_preload_length``)."""
    kd = kernel.descriptor
    if kd is not None and getattr(kd, "kernarg_preload_spec_length", 0):
        return True
    blk = module.amdhsa_kernel(kernel.name) if module is not None else None
    if blk is not None:
        return _int(blk.fields.get(".amdhsa_user_sgpr_kernarg_preload_length", "0")) not in (None, 0)
    return False


def frozen_blocks(kernel: Kernel, module) -> set[int]:
    """ids of blocks the optimisation passes must not edit.

    * blocks no branch or fall-through reaches (padding or data between code);
    * with kernarg preloading, the entry block and everything up to the target of its
      branch: the firmware starts a preloading dispatch 256 bytes into the kernel,
      so the fallback prologue and its padding must keep their size (AMDGPUUsage
      "Preloaded Kernel Arguments").
    """
    from .liveness import kernel_flow
    flow = kernel_flow(kernel)
    frozen: set[int] = set()
    if flow.ok:
        pred = flow.pred
        for n, b in enumerate(kernel.blocks):
            if n and not pred[n]:
                frozen.add(id(b))
    if kernarg_preload(kernel, module) and kernel.blocks:
        entry = kernel.blocks[0]
        frozen.add(id(entry))
        last = entry.instructions[-1] if entry.instructions else None
        target = None
        if last is not None and last.opcode == "s_branch":
            target = next((getattr(o, "name", None) for o in last.operands), None)
        for b in kernel.blocks[1:]:
            if target is None or b.label == target:
                break
            frozen.add(id(b))
    return frozen

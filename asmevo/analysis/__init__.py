"""Analyses over one :class:`~asmevo.ir.Kernel`: CFG, liveness, waitcnt, register budget, hazards.

Each analysis is a class built from a kernel (``Cls(kernel, manager)``) and
cached by an :class:`AnalysisManager`, which passes reuse::

    am = AnalysisManager(module)
    cfg = am.get(CFG, kernel)
    live = am.get(Liveness, kernel)       # reuses the cached CFG
    am.invalidate(kernel, preserved={CFG})  # after an edit that kept the block structure

Instructions are identified by object identity (``Instruction.__eq__`` compares
values, so two identical ``s_nop 0`` are equal); every analysis maps them to
``(block index, instruction index)`` positions when it is computed, so it must
be invalidated after any edit.
"""

from __future__ import annotations

from typing import Any, TypeVar

T = TypeVar("T", bound="Analysis")


class Analysis:
    """Base class: ``Cls(kernel, manager)`` computes the analysis eagerly.

    Subclasses may call ``manager.get(Other, kernel)`` for their dependencies.
    ``module`` (from the manager) gives access to ``.amdhsa_kernel`` blocks of
    assembly input.
    """

    #: registry name (see :data:`ANALYSES`)
    name = ""

    def __init__(self, kernel, manager: "AnalysisManager | None" = None):
        self.kernel = kernel
        self.manager = manager if manager is not None else AnalysisManager()

    @property
    def module(self):
        """The module the kernel belongs to (may be ``None``)."""
        return getattr(self.manager, "module", None)

    def dep(self, cls: type[T]) -> T:
        """Another analysis of the same kernel through the manager's cache.

        Works with this package's :class:`AnalysisManager` (keyed by class) and
        with a name-keyed manager such as ``asmevo.passes.manager.AnalysisManager``
        (keyed by :attr:`name`, see :data:`ANALYSES`).
        """
        m = self.manager
        if isinstance(m, AnalysisManager):
            return m.get(cls, self.kernel)
        try:
            r = m.get(cls.name, self.kernel)
            if isinstance(r, cls):
                return r
        except Exception:
            pass
        return cls(self.kernel, m)


class AnalysisManager:
    """Caches analyses per (analysis class, kernel).

    Args:
        module: the :class:`~asmevo.ir.Module` the kernels belong to, when
            known (needed for ``.amdhsa_kernel`` fields of assembly input).
    """

    def __init__(self, module: Any = None):
        self.module = module
        self._cache: dict[tuple[type, int], tuple[Any, Analysis]] = {}

    def get(self, cls: type[T] | str, kernel) -> T:
        """The analysis ``cls`` (a class, or a name of :data:`ANALYSES`) of ``kernel``,
        computed on first request.

        Raises:
            KeyError: unknown analysis name.
        """
        if isinstance(cls, str):
            cls = _resolve(cls)
        key = (cls, id(kernel))
        hit = self._cache.get(key)
        if hit is not None and hit[0] is kernel:
            return hit[1]  # type: ignore[return-value]
        a = cls(kernel, self)
        self._cache[key] = (kernel, a)
        return a

    def cached(self, cls: type[T], kernel) -> T | None:
        """The cached analysis or ``None`` (never computes)."""
        hit = self._cache.get((cls, id(kernel)))
        return hit[1] if hit is not None and hit[0] is kernel else None  # type: ignore

    def invalidate(self, kernel=None, preserved: set | frozenset = frozenset()) -> None:
        """Drop the cached analyses of ``kernel`` (all kernels if ``None``) except the
        classes in ``preserved``."""
        for key in list(self._cache):
            k, _ = self._cache[key]
            if (kernel is None or k is kernel) and key[0] not in preserved:
                del self._cache[key]


#: analysis name -> "module:Class"; each class is callable as ``Class(kernel, manager)``,
#: so name-keyed managers (asmevo.passes.manager) can use these entries directly.
ANALYSES = {
    "cfg": "asmevo.analysis.cfg:CFG",
    "liveness": "asmevo.analysis.liveness:Liveness",
    "liveness-may": "asmevo.analysis.liveness:MayLiveness",
    "waitcnt": "asmevo.analysis.waitcnt:WaitcntAnalysis",
    "regbudget": "asmevo.analysis.regbudget:RegisterBudget",
    "hazards": "asmevo.analysis.hazards:HazardAnalysis",
}


def _resolve(name: str) -> type:
    import importlib
    spec = ANALYSES[name]
    mod, _, cls = spec.partition(":")
    return getattr(importlib.import_module(mod), cls)


def analyze_all(kernel, module=None) -> dict[str, Analysis]:
    """Every analysis of ``kernel`` (CFG, liveness, waitcnt, regbudget, hazards), by name."""
    from .cfg import CFG
    from .hazards import HazardAnalysis
    from .liveness import Liveness
    from .regbudget import RegisterBudget
    from .waitcnt import WaitcntAnalysis
    am = AnalysisManager(module)
    return {"cfg": am.get(CFG, kernel), "liveness": am.get(Liveness, kernel),
            "waitcnt": am.get(WaitcntAnalysis, kernel), "regs": am.get(RegisterBudget, kernel),
            "hazards": am.get(HazardAnalysis, kernel)}


__all__ = ["ANALYSES", "Analysis", "AnalysisManager", "analyze_all"]

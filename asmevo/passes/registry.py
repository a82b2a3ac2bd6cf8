"""The one table of passes: name -> (scope, factory, option doc).

Like LLVM's ``PassRegistry.def`` and xDSL's lazy ``get_all_passes()``: built-in
passes are listed here as ``"module:Class"`` strings and imported only when
used; plugins add entries with :func:`register_pass` (see
:mod:`asmevo.passes.plugin` and docs/passes.md).  Names are kebab-case; a name
may be registered once (a clash is an error, as in xDSL's ``universe``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

from ..errors import AsmevoError
from .base import Pass

#: Built-in passes: name -> "module:Class" (relative to asmevo.passes).
BUILTIN = {
    "dce": "dce:DeadCodeElimination",
    "waitcnt-relax": "waitcnt_relax:WaitcntRelax",
    "nop-trim": "nop_trim:NopTrim",
    "copy-prop": "copy_prop:CopyPropagation",
    "window-edit": "window_edit:WindowEdit",
    "scratch-forward": "scratch_forward:ScratchForward",
    "peephole": "peephole:Peephole",
    "redundant-move": "redundant_move:RedundantMove",
    "sched": "sched:Schedule",
    "regalloc-compact": "regalloc_compact:RegallocCompact",
    "sgpr-spill-promote": "sgpr_spill_promote:SgprSpillPromote",
    "scratch-promote": "scratch_promote:ScratchPromote",
    "loop-pipeline": "loop_pipeline:LoopPipeline",
}

#: The ``default`` pipeline (the text it expands to; see docs/passes.md).
DEFAULT_PIPELINE = ("kernel(scratch-promote,sgpr-spill-promote,scratch-forward,redundant-move,"
                    "copy-prop,dce,peephole,copy-prop,dce,sched,waitcnt-relax,nop-trim,"
                    "regalloc-compact)")


class RegistryError(AsmevoError):
    """A pass name clash or a malformed pass class."""


@dataclass(frozen=True)
class PassInfo:
    """One registry entry.

    Attributes:
        name: pipeline name (``"dce"``).
        loader: zero-argument callable returning the pass class (lazy import).
        origin: ``"builtin"`` or the plugin file that registered it.
    """

    name: str
    loader: Callable[[], type]
    origin: str = "builtin"

    @property
    def cls(self) -> type:
        """The pass class (imports the module on first use)."""
        return self.loader()

    @property
    def scope(self) -> str:
        """``"kernel"`` or ``"module"``."""
        return self.cls.scope

    @property
    def option_doc(self) -> str:
        """Parameter doc, e.g. ``"window=<int> (default 32)"``."""
        return self.cls.option_doc()

    @property
    def doc(self) -> str:
        """First paragraph of the pass class docstring, on one line."""
        para = (self.cls.__doc__ or "").strip().split("\n\n")[0]
        return " ".join(line.strip() for line in para.splitlines())


def _builtin_loader(spec: str) -> Callable[[], type]:
    mod, _, clsname = spec.partition(":")

    def load() -> type:
        return getattr(importlib.import_module(f"asmevo.passes.{mod}"), clsname)
    return load


_REGISTRY: dict[str, PassInfo] = {n: PassInfo(n, _builtin_loader(s)) for n, s in BUILTIN.items()}

#: Names the pipeline parser treats specially (never pass names).
RESERVED = frozenset({"module", "kernel", "default", "repeat"})


#: origin recorded for passes registered while a plugin file is being loaded
CURRENT_ORIGIN = "plugin"


def register_pass(cls: type | None = None, *, origin: str | None = None) -> Callable:
    """Register a pass class by its ``name``; usable as a decorator.

    ``cls`` must be a :class:`~asmevo.passes.base.Pass` subclass with a
    non-empty kebab-case ``name`` and ``scope`` ``"kernel"`` or ``"module"``.

    Raises:
        RegistryError: the name is taken, reserved, or the class is malformed.
    """
    def do(c: type) -> type:
        src = origin or CURRENT_ORIGIN
        if not (isinstance(c, type) and issubclass(c, Pass)):
            raise RegistryError(f"register_pass: {c!r} is not a subclass of asmevo.passes.Pass")
        name = getattr(c, "name", "")
        if not name or not isinstance(name, str) or name != name.strip() or any(
                ch in name for ch in ",;<>() ="):
            raise RegistryError(f"register_pass: {c.__name__} needs a pass name "
                                f"(class attribute 'name', kebab-case), got {name!r}")
        if name in RESERVED:
            raise RegistryError(f"register_pass: {name!r} is a reserved pipeline word")
        if c.scope not in ("kernel", "module"):
            raise RegistryError(f"register_pass: {c.__name__}.scope must be 'kernel' or "
                                f"'module', got {c.scope!r}")
        if name in _REGISTRY:
            raise RegistryError(f"register_pass: pass name {name!r} is already registered "
                                f"({_REGISTRY[name].origin})")
        _REGISTRY[name] = PassInfo(name, lambda: c, src)
        return c
    return do(cls) if cls is not None else do


def unregister_pass(name: str) -> None:
    """Remove a plugin pass (tests use this to clean up); built-ins cannot be removed."""
    info = _REGISTRY.get(name)
    if info is not None and info.origin != "builtin":
        del _REGISTRY[name]


def lookup(name: str) -> PassInfo | None:
    """The entry for ``name`` or ``None``."""
    return _REGISTRY.get(name)


def pass_names() -> list[str]:
    """All registered pass names, sorted."""
    return sorted(_REGISTRY)


def all_passes() -> list[PassInfo]:
    """All entries, sorted by name."""
    return [_REGISTRY[n] for n in pass_names()]

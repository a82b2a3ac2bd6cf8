"""What a pass is: a dataclass whose fields are its options, plus ``run``.

Modelled on xDSL's ``ModulePass`` (``xdsl/passes.py``) and LLVM's new pass
manager (``PassInfoMixin``, ``PreservedAnalyses``):

* ``name`` (class variable) is the kebab-case name used in pipelines
  (``waitcnt-relax``);
* ``scope`` is ``"kernel"`` (``run(kernel, am)`` once per kernel) or
  ``"module"`` (``run(module, am)`` once);
* dataclass fields are the options: ``sched<window=32;max-stall=4>`` sets
  ``window=32`` and ``max_stall=4`` (``-`` in a parameter name is ``_`` in the field);
  field metadata ``{"doc": "..."}`` documents an option;
* ``preserves`` names the analyses that stay valid when the pass changes the
  code (``"all"`` for every analysis); everything else is invalidated;
* ``run`` returns a :class:`PassResult` (or ``None`` / a ``dict`` of extra
  counters; the manager then works out ``changed`` by comparing the code).

The contract, as in xDSL: the code is valid gfx942 assembly before and after
the pass, and a pass that is not sure a change is safe leaves the code alone.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, ClassVar


@dataclass
class PassResult:
    """What one run of a pass did.

    Attributes:
        changed: whether the code was modified.  ``None`` lets the pass manager
            decide by comparing the instruction lists before and after.
        stats: extra named counters of the pass (``{"rules.mul-pow2": 3}``);
            the manager adds removed/added/moved/modified, s_nop wait states and
            s_waitcnt removed/added/changed by itself.
        preserved: analyses still valid (overrides the class's ``preserves``);
            ``None`` means use the class declaration.
        remarks: lines for the user that a counter cannot say (which block a refusal is
            about, what to give instead), printed under the pass's counters by ``--stats``
            and listed as the pass's ``remarks`` in ``--json``; not errors.
    """

    changed: bool | None = None
    stats: Counter = field(default_factory=Counter)
    preserved: frozenset[str] | str | None = None
    remarks: list[str] = field(default_factory=list)


class Pass:
    """Base class of all passes (kernel- or module-scoped); see the module docstring.

    Subclasses are ``@dataclass`` classes.  ``run`` must not raise for any
    well-formed input; it raises :class:`asmevo.errors.AsmevoError` for bad
    options or option files (e.g. an unparseable window-edit JSON).
    """

    name: ClassVar[str] = ""
    scope: ClassVar[str] = "kernel"
    preserves: ClassVar[frozenset[str] | str] = frozenset()

    def run(self, unit: Any, am: Any) -> PassResult | dict | None:  # pragma: no cover
        """Transform ``unit`` (a Kernel, or the Module for module passes)."""
        raise NotImplementedError

    # -- options ---------------------------------------------------------
    @classmethod
    def option_fields(cls) -> list[dataclasses.Field]:
        """The dataclass fields that are options (``[]`` for a pass without options)."""
        if not dataclasses.is_dataclass(cls):
            return []
        return [f for f in dataclasses.fields(cls) if f.init]

    @classmethod
    def option_doc(cls) -> str:
        """LLVM-style parameter doc: ``"window=<int> (default 32);max-stall=<int> (default 4)"``."""
        parts = []
        for f in cls.option_fields():
            kind = _type_name(f.type)
            default = _default_of(f)
            s = f"{f.name.replace('_', '-')}=<{kind}>"
            if default is not dataclasses.MISSING:
                s += f" (default {_fmt_value(default)})"
            else:
                s += " (required)"
            doc = f.metadata.get("doc") if f.metadata else None
            if doc:
                s += f": {doc}"
            parts.append(s)
        return ";".join(parts)

    def pipeline_text(self) -> str:
        """This pass with all options spelled out, in a form the pipeline parser accepts."""
        opts = []
        for f in self.option_fields():
            opts.append(f"{f.name.replace('_', '-')}={_fmt_value(getattr(self, f.name))}")
        return f"{self.name}<{';'.join(opts)}>" if opts else self.name


def _default_of(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
        return f.default_factory()  # type: ignore[misc]
    return dataclasses.MISSING


def _type_name(t: Any) -> str:
    s = t if isinstance(t, str) else getattr(t, "__name__", str(t))
    s = s.replace(" ", "")
    return {"int": "int", "bool": "bool", "str": "string", "float": "float"}.get(s, s)


def _fmt_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return ""
    return str(v)


def stat_counter(**kw: int) -> Counter:
    """A ``Counter`` of pass statistics (zero entries dropped)."""
    return Counter({k: v for k, v in kw.items() if v})

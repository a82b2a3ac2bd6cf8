"""Pipeline text -> a tree of configured passes, as ``opt -passes=`` parses it.

Syntax (LLVM ``PassBuilder::parsePipelineText``, ``llvm/docs/NewPassManager.rst``)::

    pipeline := element ("," element)*
    element  := NAME params? ("(" pipeline ")")?
    params   := "<" param (";" param)* ">"
    param    := KEY ("=" VALUE)?          # a bare KEY sets a bool option to true,
                                          # "no-KEY" sets it to false

* ``module(...)`` runs its contents once on the module; ``kernel(...)`` runs
  its contents on each selected kernel; ``repeat<N>(...)`` runs its contents
  N times; ``default`` expands to :data:`~asmevo.passes.registry.DEFAULT_PIPELINE`.
* A kernel pass written at module level is wrapped in ``kernel(...)``
  (consecutive ones share one wrapper); a module pass (or ``module(...)`` /
  ``default``) inside ``kernel(...)`` is an error.
* Parameter names use ``-`` where the option field uses ``_``
  (``max-stall=4`` sets ``max_stall``).  Values run to the next ``;`` or ``>``;
  quote a value with ``"`` to include those characters.
* Integer options are bounded by their field metadata ``{"min": .., "max": ..}``;
  without ``"min"`` an integer option must be >= 0 (every built-in integer option is a
  count or a limit).  ``repeat<N>`` takes 0 <= N <= :data:`MAX_REPEAT`, and so does the
  product of nested repeat counts.
* A kernel pass inside ``module(...)`` is wrapped in ``kernel(...)`` (as LLVM's
  ``parseModulePass`` adapts a function pass with ``createModuleToFunctionPassAdaptor``).

Every error is a :class:`PipelineError` naming the column (1-based) and, for
an unknown pass or parameter, listing the valid names.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field

from ..errors import AsmevoError
from . import registry
from .base import Pass


class PipelineError(AsmevoError):
    """A pipeline string that does not parse, names an unknown pass or parameter,
    or nests a module pass inside ``kernel(...)``."""

    def __init__(self, text: str, message: str, column: int | None = None):
        where = f" (column {column})" if column is not None else ""
        super().__init__(f"invalid pipeline '{text}'{where}: {message}")
        self.pipeline = text
        self.detail = message
        self.pipeline_column = column


# -- the tree --------------------------------------------------------------
@dataclass
class PassNode:
    """One configured pass instance."""

    info: registry.PassInfo
    instance: Pass

    @property
    def scope(self) -> str:
        """``"kernel"`` or ``"module"``."""
        return self.info.scope

    def text(self) -> str:
        """Canonical text with every option spelled out."""
        return self.instance.pipeline_text()


@dataclass
class ScopeNode:
    """``kernel(...)``, ``module(...)`` or ``repeat<N>(...)``."""

    kind: str
    children: list = field(default_factory=list)
    count: int = 1

    @property
    def scope(self) -> str:
        """Scope of the node: ``kernel(...)`` and a repeat of kernel passes are kernel-scoped."""
        if self.kind == "kernel":
            return "kernel"
        if self.kind == "repeat" and all(c.scope == "kernel" for c in self.children):
            return "kernel"
        return "module"

    def text(self) -> str:
        """Canonical text of the scope and its contents."""
        inner = ",".join(c.text() for c in self.children)
        if self.kind == "repeat":
            return f"repeat<{self.count}>({inner})"
        return f"{self.kind}({inner})"


Node = typing.Union[PassNode, ScopeNode]


def pipeline_text(nodes: list[Node]) -> str:
    """Print a parsed pipeline back in a form :func:`parse_pipeline` accepts."""
    return ",".join(n.text() for n in nodes)


#: Largest ``repeat<N>`` count; a bigger N is a PipelineError rather than a run without end.
MAX_REPEAT = 1000


# -- the parser --------------------------------------------------------------
_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def error(self, msg: str, pos: int | None = None) -> PipelineError:
        return PipelineError(self.text, msg, (self.pos if pos is None else pos) + 1)

    def peek(self) -> str:
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def name(self) -> tuple[str, int]:
        self.peek()
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] in _NAME_CHARS:
            self.pos += 1
        if start == self.pos:
            got = self.text[self.pos] if self.pos < len(self.text) else "end of text"
            raise self.error(f"expected a pass name, got {got!r}" if got != "end of text"
                             else "expected a pass name, got end of text", start)
        return self.text[start:self.pos], start

    def params(self) -> list[tuple[str, str | None, int]]:
        """``<k=v;flag>`` -> [(key, value or None, column0)]; self.pos is at '<'."""
        self.pos += 1
        out = []
        while True:
            self.peek()
            kstart = self.pos
            while self.pos < len(self.text) and self.text[self.pos] not in "=;>":
                self.pos += 1
            key = self.text[kstart:self.pos].strip()
            if self.pos >= len(self.text):
                raise self.error("missing '>' to close the parameter list", kstart)
            value = None
            if self.text[self.pos] == "=":
                self.pos += 1
                self.peek()
                if self.pos < len(self.text) and self.text[self.pos] == '"':
                    end = self.text.find('"', self.pos + 1)
                    if end < 0:
                        raise self.error("unterminated '\"' in parameter value")
                    value = self.text[self.pos + 1:end]
                    self.pos = end + 1
                    self.peek()
                else:
                    vstart = self.pos
                    while self.pos < len(self.text) and self.text[self.pos] not in ";>":
                        self.pos += 1
                    value = self.text[vstart:self.pos].strip()
                if self.pos >= len(self.text):
                    raise self.error("missing '>' to close the parameter list", kstart)
            if not key:
                raise self.error("empty parameter name", kstart)
            out.append((key, value, kstart))
            c = self.text[self.pos]
            self.pos += 1
            if c == ">":
                return out
            if c != ";":
                raise self.error(f"expected ';' or '>' after parameter {key!r}", self.pos - 1)

    def pipeline(self, depth: int) -> list:
        items = [self.element(depth)]
        while True:
            c = self.peek()
            if c == ",":
                self.pos += 1
                items.append(self.element(depth))
            elif c == ")":
                if depth == 0:
                    raise self.error("unbalanced ')'")
                return items
            elif c == "":
                if depth > 0:
                    raise self.error("missing ')'")
                return items
            else:
                raise self.error(f"expected ',' or ')' but found {c!r}" if depth
                                 else f"expected ',' but found {c!r}")

    def element(self, depth: int) -> tuple:
        """Raw element: (name, params, children or None, column0)."""
        name, start = self.name()
        params = self.params() if self.peek() == "<" else []
        children = None
        if self.peek() == "(":
            self.pos += 1
            if self.peek() == ")":
                raise self.error(f"empty {name}(...)", self.pos)
            children = self.pipeline(depth + 1)
            self.pos += 1  # ')'
        return (name, params, children, start)


def parse_pipeline(text: str) -> list[Node]:
    """Parse and configure a pipeline.

    Returns the top-level nodes: :class:`PassNode` s of module passes and
    :class:`ScopeNode` s (kernel passes at top level come wrapped in
    ``kernel(...)``).

    Raises:
        PipelineError: syntax error, unknown pass or parameter, bad parameter
            value, or a module pass nested inside ``kernel(...)``.
    """
    if not text.strip():
        raise PipelineError(text, "empty pipeline; valid passes: "
                            + ", ".join(registry.pass_names()))
    p = _Parser(text)
    raw = p.pipeline(0)
    nodes = _build(p, raw, in_kernel=False)
    return _wrap_top(nodes)


def _wrap_top(nodes: list[Node]) -> list[Node]:
    out: list[Node] = []
    for n in nodes:
        if n.scope == "kernel" and not (isinstance(n, ScopeNode) and n.kind == "kernel"):
            if out and isinstance(out[-1], ScopeNode) and out[-1].kind == "kernel" \
                    and getattr(out[-1], "_implicit", False):
                out[-1].children.append(n)
                continue
            s = ScopeNode("kernel", [n])
            s._implicit = True  # type: ignore[attr-defined]
            out.append(s)
        else:
            out.append(n)
    return out


def _build(p: _Parser, raw: list, in_kernel: bool, repeats: int = 1) -> list[Node]:
    out: list[Node] = []
    for name, params, children, start in raw:
        if name in ("module", "kernel"):
            if params:
                raise p.error(f"{name}(...) takes no parameters", start)
            if children is None:
                raise p.error(f"expected '(' after {name!r}", start + len(name))
            if name == "module" and in_kernel:
                raise p.error("module(...) cannot be nested inside kernel(...)", start)
            kids = _build(p, children, in_kernel or name == "kernel", repeats)
            out.append(ScopeNode(name, _wrap_top(kids) if name == "module" else kids))
        elif name == "repeat":
            if children is None:
                raise p.error("expected '(' after repeat<N>", start + len(name))
            if len(params) != 1 or params[0][1] is not None or not params[0][0].isdigit():
                raise p.error("repeat needs a count: repeat<N>(...)", start)
            if int(params[0][0]) > MAX_REPEAT:
                raise p.error(f"repeat<{params[0][0]}>: the count is limited to {MAX_REPEAT}; "
                              "expected repeat<N> with 0 <= N <= " f"{MAX_REPEAT}", params[0][2])
            if repeats * int(params[0][0]) > MAX_REPEAT:
                raise p.error(f"nested repeat<...> counts multiply to {repeats * int(params[0][0])}; "
                              f"the product is limited to {MAX_REPEAT}", params[0][2])
            kids = _build(p, children, in_kernel, repeats * max(1, int(params[0][0])))
            if not in_kernel and not all(k.scope == "kernel" for k in kids):
                kids = _wrap_top(kids)
            out.append(ScopeNode("repeat", kids, int(params[0][0])))
        elif name == "default":
            if params or children is not None:
                raise p.error("'default' takes no parameters or nested passes", start)
            if in_kernel:
                raise p.error("'default' cannot be nested inside kernel(...)", start)
            out.extend(parse_pipeline(registry.DEFAULT_PIPELINE))
        else:
            info = registry.lookup(name)
            if info is None:
                raise p.error(f"unknown pass {name!r}; valid passes: "
                              + ", ".join(registry.pass_names())
                              + "; scopes: module(...), kernel(...), repeat<N>(...), default",
                              start)
            if children is not None:
                raise p.error(f"pass {name!r} does not take nested passes", start)
            try:
                cls = info.cls
            except AsmevoError:
                raise
            except Exception as e:  # a plugin or built-in pass that fails to import
                raise p.error(f"pass {name!r} could not be loaded: {type(e).__name__}: {e}",
                              start) from None
            if in_kernel and cls.scope != "kernel":
                raise p.error(f"module pass {name!r} cannot be nested inside kernel(...)",
                              start)
            out.append(PassNode(info, _configure(p, cls, name, params)))
    return out


def _configure(p: _Parser, cls: type, name: str, params: list) -> Pass:
    fields = {f.name: f for f in cls.option_fields()}
    kwargs: dict = {}
    for key, value, col in params:
        fname = key.replace("-", "_")
        negate = False
        if fname not in fields and value is None and fname.startswith("no_") \
                and fname[3:] in fields:
            fname, negate = fname[3:], True
        if fname not in fields:
            if not fields:
                raise p.error(f"pass {name!r} takes no parameters, got {key!r}", col)
            raise p.error(f"pass {name!r} has no parameter {key!r}; valid parameters: "
                          + cls.option_doc(), col)
        f = fields[fname]
        if fname in kwargs:
            raise p.error(f"parameter {key!r} of pass {name!r} given twice", col)
        kwargs[fname] = _convert(p, name, key, _field_type(cls, f), value, negate, col)
        v = kwargs[fname]
        if isinstance(v, int) and not isinstance(v, bool):
            meta = f.metadata or {}
            lo, hi = meta.get("min", 0), meta.get("max")
            if (lo is not None and v < lo) or (hi is not None and v > hi):
                rng = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
                raise p.error(f"parameter {key!r} of pass {name!r} must be {rng}, got {v}", col)
    for f in fields.values():
        if f.name not in kwargs and f.default is dataclasses.MISSING \
                and f.default_factory is dataclasses.MISSING:  # type: ignore[misc]
            raise p.error(f"pass {name!r} needs parameter '{f.name.replace('_', '-')}' "
                          f"({cls.option_doc()})")
    try:
        return cls(**kwargs)
    except AsmevoError as e:
        raise p.error(f"pass {name!r}: {e.message}") from None
    except (TypeError, ValueError) as e:
        raise p.error(f"pass {name!r}: {e}") from None


def _field_type(cls: type, f: dataclasses.Field) -> str:
    t = f.type
    if not isinstance(t, str):
        t = getattr(t, "__name__", str(t))
    return t.replace(" ", "")


def _convert(p: _Parser, name: str, key: str, typ: str, value: str | None, negate: bool,
             col: int):
    base = typ.replace("|None", "").replace("Optional[", "").rstrip("]")
    if base == "bool":
        if value is None:
            return not negate
        v = value.lower()
        if v in ("true", "1", "yes", "on"):
            return True
        if v in ("false", "0", "no", "off"):
            return False
        raise p.error(f"parameter {key!r} of pass {name!r} expects true or false, "
                      f"got {value!r}", col)
    if value is None:
        raise p.error(f"parameter {key!r} of pass {name!r} needs a value ({key}=...)", col)
    if base == "int":
        try:
            return int(value, 0)
        except ValueError:
            raise p.error(f"parameter {key!r} of pass {name!r} expects an integer, "
                          f"got {value!r}", col) from None
    if base == "float":
        try:
            return float(value)
        except ValueError:
            raise p.error(f"parameter {key!r} of pass {name!r} expects a number, "
                          f"got {value!r}", col) from None
    return value

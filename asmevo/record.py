"""A base for plain record classes with a written-out ``__init__``: ``__repr__`` and
``__eq__`` over the fields named in ``_fields``, as a dataclass generates them.

The classes on the ``asmevo dis`` / ``asmevo asm`` path (code object, metadata, listing
records) use it instead of :mod:`dataclasses`, whose import (``inspect`` and what that
imports) and per-class code generation were some 25 ms of every ``asmevo dis`` (issue 16).
"""

from __future__ import annotations


class Record:
    """Fields in ``_fields`` (in order), those left out of ``repr`` in ``_norepr``; equal when
    of the same class with equal fields (else ``NotImplemented``); unhashable (mutable)."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _norepr: frozenset[str] = frozenset()
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields
                           if n not in self._norepr)
        return f"{type(self).__qualname__}({fields})"

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return [getattr(self, n) for n in self._fields] == \
                [getattr(other, n) for n in self._fields]
        return NotImplemented

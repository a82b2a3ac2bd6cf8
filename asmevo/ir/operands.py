"""Typed operands of gfx942 instructions.

Operand kinds (all immutable, hashable, compared by value):

* :class:`Reg` -- a range of 32-bit registers in one file: ``s``
  (SGPR, s0..s101 addressable), ``v`` (VGPR v0..v511 in the unified file,
  v0..v255 addressable), ``a`` (AGPR a0..a255), ``ttmp`` (ttmp0..ttmp15).
  ``v[4:7]`` is ``Reg("v", 4, 4)``.
* :class:`Special` -- a named special register: ``vcc``, ``vcc_lo``,
  ``vcc_hi``, ``exec``, ``exec_lo``, ``exec_hi``, ``m0``, ``scc``,
  ``flat_scratch``, ``flat_scratch_lo``, ``flat_scratch_hi``, ``xnack_mask``
  (and ``_lo``/``_hi``), ``src_shared_base`` and the other ``src_*`` aperture
  registers, ``src_vccz``, ``src_execz``, ``src_scc``, ``src_lds_direct``,
  ``off`` (no address/offset register), ``null``.
* :class:`Imm` -- an integer or floating-point immediate.  ``value`` is the
  number as written (``int`` or ``float``); ``text`` keeps the spelling.
* :class:`Label` -- a reference to a code label, optionally ``+ addend`` bytes.
* :class:`Expr` -- any other symbolic expression (``sym@rel32@lo+4``), kept as text.
* :class:`Func` -- a function-like operand: ``hwreg(HW_REG_MODE, 0, 4)``,
  ``sendmsg(MSG_INTERRUPT)``, ``gpr_idx(SRC0,DST)``, ``swizzle(...)``,
  ``vmcnt(0) lgkmcnt(0)`` (several calls in one operand are a tuple of Funcs:
  see :class:`FuncList`).

Source modifiers (``-v1``, ``|v1|``, ``neg(...)``, ``abs(...)``, ``sext(v1)``)
are carried by :class:`Src`, which wraps any of the above.

Register units: :func:`reg_units` splits an operand into 32-bit units named
``("s", 4)``, ``("v", 7)``, ``("a", 0)``, ``("ttmp", 3)`` or special units
``("vcc_lo",)``... as used by liveness and the emulator.  Special-register
aliases follow the GFX9 register map: ``vcc = s[106:107]``,
``flat_scratch = s[102:103]``, ``xnack_mask = s[104:105]``, ``m0 = s124``,
``exec = s[126:127]`` (CDNA3 ISA guide, "Scalar operands").
"""

from __future__ import annotations

from typing import Union

#: Register-file prefixes and their sizes (number of addressable 32-bit registers).
REG_FILES = {"s": 102, "v": 256, "a": 256, "ttmp": 16}

#: Special registers that are 64 bits wide (two 32-bit units).
SPECIAL_PAIRS = {
    "vcc": ("vcc_lo", "vcc_hi"),
    "exec": ("exec_lo", "exec_hi"),
    "flat_scratch": ("flat_scratch_lo", "flat_scratch_hi"),
    "xnack_mask": ("xnack_mask_lo", "xnack_mask_hi"),
}

#: All names accepted as :class:`Special`.
SPECIAL_NAMES = frozenset({
    "vcc", "vcc_lo", "vcc_hi", "exec", "exec_lo", "exec_hi", "m0", "scc",
    "flat_scratch", "flat_scratch_lo", "flat_scratch_hi",
    "xnack_mask", "xnack_mask_lo", "xnack_mask_hi",
    "src_shared_base", "src_shared_limit", "src_private_base", "src_private_limit",
    "src_pops_exiting_wave_id", "src_vccz", "src_execz", "src_scc", "src_lds_direct",
    "shared_base", "shared_limit", "private_base", "private_limit", "pops_exiting_wave_id",
    "vccz", "execz", "lds_direct",
    "tba", "tba_lo", "tba_hi", "tma", "tma_lo", "tma_hi",
    "off", "null",
})


class _Value:
    """What the operand classes share: immutable (assigning a field raises
    ``AttributeError``, as a frozen dataclass does), pickled as the list of field values (the
    form pickles of the earlier frozen dataclasses hold, so stored lineages still load).
    Each class lists its fields in ``__slots__`` and writes ``__init__``, ``__eq__`` and
    ``__hash__`` out (they are called often); not dataclasses, whose import and class
    building were some 25 ms of every ``asmevo dis`` (issue 16)."""

    __slots__ = ()

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name):
        raise AttributeError(f"cannot delete field {name!r}")

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__)
        return f"{type(self).__qualname__}({fields})"

    def __getstate__(self) -> list:
        return [getattr(self, n) for n in self.__slots__]

    def __setstate__(self, state: list) -> None:
        for n, v in zip(self.__slots__, state):
            _set(self, n, v)


_set = object.__setattr__


class Reg(_Value):
    """A range of ``count`` consecutive 32-bit registers starting at ``index``.

    ``file`` is ``"s"``, ``"v"``, ``"a"`` or ``"ttmp"``.  ``count`` is the
    width in dwords (1 for ``v3``; 4 for ``s[8:11]``).
    """

    __slots__ = ("file", "index", "count")
    __match_args__ = __slots__
    file: str
    index: int
    count: int

    def __init__(self, file: str, index: int, count: int = 1):
        _set(self, "file", file)
        _set(self, "index", index)
        _set(self, "count", count)

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.file, self.index, self.count) == (other.file, other.index, other.count)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.file, self.index, self.count))

    @property
    def last(self) -> int:
        """Index of the last register of the range."""
        return self.index + self.count - 1

    def __str__(self) -> str:
        if self.count == 1:
            return f"{self.file}{self.index}"
        return f"{self.file}[{self.index}:{self.last}]"


class Special(_Value):
    """A named special register (``vcc``, ``exec_lo``, ``m0``, ``scc``, ``off``...)."""

    __slots__ = ("name",)
    __match_args__ = __slots__
    name: str

    def __init__(self, name: str):
        _set(self, "name", name)

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.name,) == (other.name,)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.name,))

    @property
    def count(self) -> int:
        """Width in dwords (2 for ``vcc``/``exec``/``flat_scratch``/``xnack_mask``)."""
        return 2 if self.name in SPECIAL_PAIRS else 1

    def __str__(self) -> str:
        return self.name


class Imm(_Value):
    """An immediate. ``value`` is an int or float as written; ``text`` its spelling.

    Two immediates are equal when their values and spellings are equal, so a
    round trip through the printer preserves hex versus decimal versus float.  Values
    compare by kind and bits, not by Python's numeric equality: ``1`` is not ``1.0`` and
    ``-0.0`` is not ``0.0`` (they encode differently), and a NaN equals itself (caches
    such as the emulator's compiled programs are keyed on instructions' operands).
    """

    __slots__ = ("value", "text")
    __match_args__ = __slots__
    value: int | float
    text: str

    def __init__(self, value: int | float, text: str = ""):
        _set(self, "value", value)
        _set(self, "text", text)

    def _key(self) -> tuple:
        v = self.value
        if isinstance(v, bool):
            return (self.text, "b", v)
        if isinstance(v, float):
            return (self.text, "f", float.hex(float(v)))
        if isinstance(v, int):
            return (self.text, "i", v)
        return (self.text, "o", v)

    def __eq__(self, other) -> bool:
        if other.__class__ is self.__class__:
            return self._key() == other._key()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        if self.text:
            return self.text
        if isinstance(self.value, float):
            return repr(self.value)
        return hex(self.value) if (self.value > 64 or self.value < -16) else str(self.value)


class Label(_Value):
    """A reference to code label ``name`` plus ``addend`` bytes."""

    __slots__ = ("name", "addend")
    __match_args__ = __slots__
    name: str
    addend: int

    def __init__(self, name: str, addend: int = 0):
        _set(self, "name", name)
        _set(self, "addend", addend)

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.name, self.addend) == (other.name, other.addend)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.name, self.addend))

    def __str__(self) -> str:
        if self.addend:
            return f"{self.name}{self.addend:+d}"
        return self.name


class Expr(_Value):
    """A symbolic expression kept as text (``sym@rel32@lo+4``, ``(a-b)>>2``)."""

    __slots__ = ("text",)
    __match_args__ = __slots__
    text: str

    def __init__(self, text: str):
        _set(self, "text", text)

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.text,) == (other.text,)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.text,))

    def __str__(self) -> str:
        return self.text


class Func(_Value):
    """A call-like operand ``name(args)``: ``hwreg(HW_REG_MODE, 0, 4)``, ``vmcnt(0)``.

    ``args`` are ints or identifier strings as written.
    """

    __slots__ = ("name", "args")
    __match_args__ = __slots__
    name: str
    args: tuple

    def __init__(self, name: str, args: tuple = ()):
        _set(self, "name", name)
        _set(self, "args", args)

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.name, self.args) == (other.name, other.args)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.name, self.args))

    def __str__(self) -> str:
        return f"{self.name}({', '.join(str(a) for a in self.args)})"


class FuncList(_Value):
    """Several call-like items forming one operand: ``vmcnt(0) lgkmcnt(0)``."""

    __slots__ = ("items",)
    __match_args__ = __slots__
    items: tuple[Func, ...]

    def __init__(self, items: tuple[Func, ...]):
        _set(self, "items", items)

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.items,) == (other.items,)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.items,))

    def __str__(self) -> str:
        return " ".join(str(f) for f in self.items)


Base = Union[Reg, Special, Imm, Label, Expr, Func, FuncList]


class Src(_Value):
    """A source operand with modifiers: ``-|v1|`` is ``Src(Reg('v',1), neg=True, abs=True)``.

    ``style`` records the spelling: ``"bar"`` for ``|x|``, ``"func"`` for ``abs(x)``
    and ``neg(x)``; ``sext`` is the SDWA sign-extend modifier ``sext(x)``.
    """

    __slots__ = ("base", "neg", "abs", "sext", "style")
    __match_args__ = __slots__
    base: Base
    neg: bool
    abs: bool
    sext: bool
    style: str

    def __init__(self, base: Base, neg: bool = False, abs: bool = False, sext: bool = False,
                 style: str = "bar"):
        _set(self, "base", base)
        _set(self, "neg", neg)
        _set(self, "abs", abs)
        _set(self, "sext", sext)
        _set(self, "style", style)

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return (self.base, self.neg, self.abs, self.sext, self.style) == \
                (other.base, other.neg, other.abs, other.sext, other.style)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.base, self.neg, self.abs, self.sext, self.style))

    def __str__(self) -> str:
        s = str(self.base)
        if self.sext:
            s = f"sext({s})"
        if self.abs:
            s = f"|{s}|" if self.style == "bar" else f"abs({s})"
        if self.neg:
            s = f"-{s}" if self.style == "bar" else f"neg({s})"
        return s


Operand = Union[Reg, Special, Imm, Label, Expr, Func, FuncList, Src]


def base_of(op: Operand) -> Base:
    """The operand without source modifiers."""
    return op.base if isinstance(op, Src) else op


# Special registers that alias SGPR units on GFX9 (CDNA3 ISA guide, "SGPR addressing").
_SPECIAL_UNITS: dict[str, tuple[tuple, ...]] = {
    "vcc": (("vcc_lo",), ("vcc_hi",)),
    "exec": (("exec_lo",), ("exec_hi",)),
    "flat_scratch": (("flat_scratch_lo",), ("flat_scratch_hi",)),
    "xnack_mask": (("xnack_mask_lo",), ("xnack_mask_hi",)),
    "tba": (("tba_lo",), ("tba_hi",)),
    "tma": (("tma_lo",), ("tma_hi",)),
}


def reg_units(op: Operand) -> tuple[tuple, ...]:
    """Split a register operand into 32-bit units.

    Returns a tuple of unit keys: ``("v", 5)``, ``("s", 8)``, ``("a", 0)``,
    ``("ttmp", 2)`` or ``("vcc_lo",)``, ``("m0",)``, ``("scc",)``... Returns
    ``()`` for immediates, labels, ``off``/``null`` and read-only constants
    such as ``src_shared_base``.
    """
    op = base_of(op)
    if isinstance(op, Reg):
        f, i = op.file, op.index
        return tuple((f, i + k) for k in range(op.count))
    if isinstance(op, Special):
        n = op.name
        if n in _SPECIAL_UNITS:
            return _SPECIAL_UNITS[n]
        if n in ("off", "null") or n.startswith("src_") or n in (
                "shared_base", "shared_limit", "private_base", "private_limit",
                "pops_exiting_wave_id", "vccz", "execz", "lds_direct"):
            return ()
        return ((n,),)
    return ()

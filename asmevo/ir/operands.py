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

from dataclasses import dataclass
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


@dataclass(frozen=True, slots=True)
class Reg:
    """A range of ``count`` consecutive 32-bit registers starting at ``index``.

    ``file`` is ``"s"``, ``"v"``, ``"a"`` or ``"ttmp"``.  ``count`` is the
    width in dwords (1 for ``v3``; 4 for ``s[8:11]``).
    """

    file: str
    index: int
    count: int = 1

    @property
    def last(self) -> int:
        """Index of the last register of the range."""
        return self.index + self.count - 1

    def __str__(self) -> str:
        if self.count == 1:
            return f"{self.file}{self.index}"
        return f"{self.file}[{self.index}:{self.last}]"


@dataclass(frozen=True, slots=True)
class Special:
    """A named special register (``vcc``, ``exec_lo``, ``m0``, ``scc``, ``off``...)."""

    name: str

    @property
    def count(self) -> int:
        """Width in dwords (2 for ``vcc``/``exec``/``flat_scratch``/``xnack_mask``)."""
        return 2 if self.name in SPECIAL_PAIRS else 1

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Imm:
    """An immediate. ``value`` is an int or float as written; ``text`` its spelling.

    Two immediates are equal when their values and spellings are equal, so a
    round trip through the printer preserves hex versus decimal versus float.
    """

    value: int | float
    text: str = ""

    def __str__(self) -> str:
        if self.text:
            return self.text
        if isinstance(self.value, float):
            return repr(self.value)
        return hex(self.value) if (self.value > 64 or self.value < -16) else str(self.value)


@dataclass(frozen=True, slots=True)
class Label:
    """A reference to code label ``name`` plus ``addend`` bytes."""

    name: str
    addend: int = 0

    def __str__(self) -> str:
        if self.addend:
            return f"{self.name}{self.addend:+d}"
        return self.name


@dataclass(frozen=True, slots=True)
class Expr:
    """A symbolic expression kept as text (``sym@rel32@lo+4``, ``(a-b)>>2``)."""

    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Func:
    """A call-like operand ``name(args)``: ``hwreg(HW_REG_MODE, 0, 4)``, ``vmcnt(0)``.

    ``args`` are ints or identifier strings as written.
    """

    name: str
    args: tuple = ()

    def __str__(self) -> str:
        return f"{self.name}({', '.join(str(a) for a in self.args)})"


@dataclass(frozen=True, slots=True)
class FuncList:
    """Several call-like items forming one operand: ``vmcnt(0) lgkmcnt(0)``."""

    items: tuple[Func, ...]

    def __str__(self) -> str:
        return " ".join(str(f) for f in self.items)


Base = Union[Reg, Special, Imm, Label, Expr, Func, FuncList]


@dataclass(frozen=True, slots=True)
class Src:
    """A source operand with modifiers: ``-|v1|`` is ``Src(Reg('v',1), neg=True, abs=True)``.

    ``style`` records the spelling: ``"bar"`` for ``|x|``, ``"func"`` for ``abs(x)``
    and ``neg(x)``; ``sext`` is the SDWA sign-extend modifier ``sext(x)``.
    """

    base: Base
    neg: bool = False
    abs: bool = False
    sext: bool = False
    style: str = "bar"

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

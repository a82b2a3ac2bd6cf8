"""One machine instruction: mnemonic, typed operands and modifiers.

An :class:`Instruction` is treated as a value: passes build new ones with
:meth:`Instruction.evolve` (which forgets the original encoding) rather than
mutating operands in place, so that the backend can tell changed instructions
from untouched ones and patch a code object in place where sizes allow.
"""

from __future__ import annotations

from typing import Any, Iterable

from .operands import Operand

#: Modifier value kinds: ``True`` for a flag (``glc``), ``int`` (``offset:16``),
#: ``str`` (``dst_sel:WORD_1``), ``tuple`` (``op_sel:[0,1]``), or an operand-like
#: object with ``__str__`` (``offset:swizzle(QDMode,0,1,2,3)``).
ModValue = Any

_HEX_MODS = frozenset({"row_mask", "bank_mask"})


def format_modifier(name: str, value: ModValue) -> str:
    """Print one modifier in LLVM syntax: ``glc``, ``offset:16``, ``op_sel:[0,1]``."""
    if value is True:
        return name
    if isinstance(value, bool):  # explicit False, e.g. bound_ctrl:0 kept as int
        return f"{name}:{int(value)}"
    if isinstance(value, int):
        return f"{name}:{value:#x}" if name in _HEX_MODS else f"{name}:{value}"
    if isinstance(value, tuple):
        return f"{name}:[{','.join(str(v) for v in value)}]"
    return f"{name}:{value}"


class Instruction:
    """A gfx942 instruction.

    Attributes:
        opcode: the mnemonic as written, lower case, with any ``_e32``/``_e64``/
            ``_dpp``/``_sdwa`` suffix (``"v_add_f32_e32"``).
        operands: operands in assembly order (defs first, as LLVM prints them).
        modifiers: ordered ``(name, value)`` pairs after the operands
            (``[("offset", 16), ("glc", True)]``).
        encoding: the original machine-code bytes when read from a code object,
            else ``None``.  Cleared by :meth:`evolve`.
        address: byte address of the instruction in the code object's ``.text``
            (as llvm-objdump prints it), or ``None``.
        raw: print the instruction as ``.long`` words of ``encoding`` because its
            text would not re-encode to the same bytes (e.g. a literal equal to
            an inline constant, which llvm-mc would fold).
        line: 1-based source line when parsed from text, else ``None``.
    """

    __slots__ = ("opcode", "operands", "modifiers", "encoding", "address", "raw", "line", "_info")

    def __init__(self, opcode: str, operands: Iterable[Operand] = (),
                 modifiers: Iterable[tuple[str, ModValue]] = (), *, encoding: bytes | None = None,
                 address: int | None = None, raw: bool = False, line: int | None = None):
        self.opcode = opcode
        self.operands = list(operands)
        self.modifiers = list(modifiers)
        self.encoding = encoding
        self.address = address
        self.raw = raw
        self.line = line
        self._info = None

    # -- value semantics -------------------------------------------------
    def key(self) -> tuple:
        """Structural identity: opcode, operands and modifiers (not encoding/position)."""
        return (self.opcode, tuple(self.operands), tuple(self.modifiers))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Instruction) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def evolve(self, *, opcode: str | None = None, operands: Iterable[Operand] | None = None,
               modifiers: Iterable[tuple[str, ModValue]] | None = None) -> "Instruction":
        """Return a changed copy; the copy has no original encoding or address."""
        return Instruction(self.opcode if opcode is None else opcode,
                           self.operands if operands is None else operands,
                           self.modifiers if modifiers is None else modifiers)

    def copy(self) -> "Instruction":
        """An identical copy that keeps encoding and address."""
        return Instruction(self.opcode, self.operands, self.modifiers, encoding=self.encoding,
                           address=self.address, raw=self.raw, line=self.line)

    # -- modifiers -------------------------------------------------------
    def mod(self, name: str, default: ModValue = None) -> ModValue:
        """Value of modifier ``name`` (``True`` for a flag), or ``default``."""
        for n, v in self.modifiers:
            if n == name:
                return v
        return default

    def has_mod(self, name: str) -> bool:
        """Whether modifier ``name`` is present."""
        return any(n == name for n, _ in self.modifiers)

    # -- ISA table -------------------------------------------------------
    @property
    def info(self):
        """The ISA-table record for :attr:`opcode` (``asmevo.isa.InstrInfo``) or ``None``."""
        if self._info is None:
            from .. import isa  # local import: the table is loaded on first use
            self._info = isa.lookup(self.opcode)
        return self._info

    @property
    def size(self) -> int | None:
        """Encoded size in bytes: from the original encoding, else from the ISA table
        (plus 4 for a 32-bit literal); ``None`` if unknown."""
        if self.encoding is not None:
            return len(self.encoding)
        from .. import isa
        return isa.encoded_size(self)

    # -- text ------------------------------------------------------------
    def text(self) -> str:
        """Assembly text without leading tab: ``v_add_f32_e32 v0, v1, v2``."""
        s = self.opcode
        if self.operands:
            s += " " + ", ".join(map(str, self.operands))
        if self.modifiers:
            s += " " + " ".join([format_modifier(n, v) for n, v in self.modifiers])
        return s

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return f"Instruction({self.text()!r})"


def decoded_instruction(opcode: str, operands: Iterable[Operand],
                        modifiers: Iterable[tuple[str, ModValue]], encoding: bytes,
                        address: int, _new=object.__new__, _cls=Instruction,
                        _list=list) -> Instruction:
    """``Instruction(opcode, operands, modifiers, encoding=encoding, address=address)``, the
    same object made without the keyword-argument call: half the time, which counts for the
    disassembler's one instruction per listing line (33,000 lines, some 15 ms of
    ``asmevo dis`` for the largest AITer kernel; issue 16).  Sets every slot
    :meth:`Instruction.__init__` sets (``tests/ir`` checks that they agree)."""
    inst = _new(_cls)
    inst.opcode = opcode
    inst.operands = _list(operands)
    inst.modifiers = _list(modifiers)
    inst.encoding = encoding
    inst.address = address
    inst.raw = False
    inst.line = None
    inst._info = None
    return inst

"""Module -> kernels -> basic blocks -> instructions.

A :class:`Module` is an ordered list of top-level items, exactly as they
appear in an assembly file, so that printing reproduces an assemblable file:

* :class:`Directive` -- any directive line kept verbatim (``.text``,
  ``.globl k``, ``.p2align 8``, ``.section .rodata,"a",@progbits``, data...);
* :class:`LabelDef` -- a label outside any kernel's code (``k.kd:``);
* :class:`Kernel` -- the code of one function symbol (a kernel or a device
  function), split into :class:`BasicBlock` s;
* :class:`AmdhsaKernel` -- an ``.amdhsa_kernel NAME ... .end_amdhsa_kernel`` block;
* :class:`MetadataBlock` -- ``.amdgpu_metadata ... .end_amdgpu_metadata`` (YAML text).

Blocks start at a label, after a branch or ``s_endpgm``, or where a directive
sits inside code.  A block's ``directives`` are printed before its label.
"""

from __future__ import annotations

from typing import Any, Iterator, Union

from ..record import Record
from .instruction import Instruction


class Directive(Record):
    """A directive line: ``name`` (``".p2align"``) and its argument text (``"8"``)."""

    __slots__ = _fields = ("name", "args", "line")

    def __init__(self, name: str, args: str = "", line: int | None = None):
        self.name = name
        self.args = args
        self.line = line

    def text(self) -> str:
        """The directive as printed (tab-separated, as clang writes it)."""
        return f"{self.name}\t{self.args}" if self.args else self.name


class LabelDef(Record):
    """A label definition outside kernel code (``vadd_f32.kd:``)."""

    __slots__ = _fields = ("name", "line")

    def __init__(self, name: str, line: int | None = None):
        self.name = name
        self.line = line


class BasicBlock(Record):
    """A maximal straight-line run of instructions.

    Attributes:
        label: the label that starts the block (``".LBB0_2"``) or ``None``.
        instructions: the instructions, in order.
        directives: directive lines printed before the label (``.p2align 6``).
    """

    __slots__ = _fields = ("label", "instructions", "directives")

    def __init__(self, label: str | None = None, instructions: list[Instruction] | None = None,
                 directives: list[Directive] | None = None):
        self.label = label
        self.instructions = [] if instructions is None else instructions
        self.directives = [] if directives is None else directives

    def __iter__(self) -> Iterator[Instruction]:
        return iter(self.instructions)

    def __len__(self) -> int:
        return len(self.instructions)


class Kernel(Record):
    """The code of one function symbol.

    Attributes:
        name: the symbol (``"vadd_f32"``).
        blocks: basic blocks in layout order; the first is the entry.
        is_kernel: True for an ``amdhsa`` kernel entry (has a kernel descriptor).
        descriptor: the decoded kernel descriptor
            (``asmevo.frontend.descriptor.KernelDescriptor``) when known.
        metadata: this kernel's entry of the ``amdhsa.kernels`` metadata list
            (a dict as decoded from msgpack/YAML) when known.
        address: the symbol's address in the code object, when read from one.
    """

    __slots__ = _fields = ("name", "blocks", "is_kernel", "descriptor", "metadata", "address")

    def __init__(self, name: str, blocks: list[BasicBlock] | None = None, is_kernel: bool = True,
                 descriptor: Any = None, metadata: dict | None = None,
                 address: int | None = None):
        self.name = name
        self.blocks = [] if blocks is None else blocks
        self.is_kernel = is_kernel
        self.descriptor = descriptor
        self.metadata = metadata
        self.address = address

    # -- traversal -------------------------------------------------------
    def instructions(self) -> Iterator[Instruction]:
        """All instructions in layout order."""
        for b in self.blocks:
            yield from b.instructions

    def positions(self) -> Iterator[tuple[BasicBlock, int, Instruction]]:
        """``(block, index, instruction)`` for every instruction, in layout order."""
        for b in self.blocks:
            for i, inst in enumerate(b.instructions):
                yield b, i, inst

    def num_instructions(self) -> int:
        """Number of instructions (labels and directives excluded)."""
        return sum(len(b.instructions) for b in self.blocks)

    def block(self, label: str) -> BasicBlock:
        """The block whose label is ``label``.

        Raises:
            KeyError: no such label in this kernel.
        """
        for b in self.blocks:
            if b.label == label:
                return b
        raise KeyError(f"no label {label!r} in kernel {self.name}")

    def labels(self) -> set[str]:
        """All labels defined in this kernel's code."""
        return {b.label for b in self.blocks if b.label}

    def locate(self, inst: Instruction) -> tuple[BasicBlock, int]:
        """Find ``inst`` (by identity) and return its block and index.

        Raises:
            ValueError: the instruction is not in this kernel.
        """
        for b in self.blocks:
            for i, x in enumerate(b.instructions):
                if x is inst:
                    return b, i
        raise ValueError(f"{inst!r} is not in kernel {self.name}")

    # -- editing ---------------------------------------------------------
    def remove(self, inst: Instruction) -> None:
        """Remove ``inst`` (by identity)."""
        b, i = self.locate(inst)
        del b.instructions[i]

    def replace(self, inst: Instruction, new: Instruction | list[Instruction]) -> None:
        """Replace ``inst`` with one instruction or a list of them (possibly empty)."""
        b, i = self.locate(inst)
        b.instructions[i:i + 1] = new if isinstance(new, list) else [new]

    def insert_before(self, anchor: Instruction, new: Instruction | list[Instruction]) -> None:
        """Insert ``new`` immediately before ``anchor``."""
        b, i = self.locate(anchor)
        b.instructions[i:i] = new if isinstance(new, list) else [new]

    def insert_after(self, anchor: Instruction, new: Instruction | list[Instruction]) -> None:
        """Insert ``new`` immediately after ``anchor``."""
        b, i = self.locate(anchor)
        b.instructions[i + 1:i + 1] = new if isinstance(new, list) else [new]

    def move_before(self, inst: Instruction, anchor: Instruction) -> None:
        """Move ``inst`` so that it sits immediately before ``anchor``."""
        self.remove(inst)
        self.insert_before(anchor, inst)


class AmdhsaKernel(Record):
    """An ``.amdhsa_kernel NAME`` block: ordered ``.amdhsa_*`` fields as text values."""

    __slots__ = _fields = ("name", "fields", "line")

    def __init__(self, name: str, fields: dict[str, str] | None = None, line: int | None = None):
        self.name = name
        self.fields = {} if fields is None else fields
        self.line = line


class MetadataBlock(Record):
    """An ``.amdgpu_metadata`` block; ``text`` is the YAML between the directives."""

    __slots__ = _fields = ("text", "line")

    def __init__(self, text: str, line: int | None = None):
        self.text = text
        self.line = line


Item = Union[Directive, LabelDef, Kernel, AmdhsaKernel, MetadataBlock]


class Module(Record):
    """A whole assembly file / code object.

    Attributes:
        items: top-level items in file order (see module docstring).
        source: the file it came from, for messages.
        code_object: the :class:`asmevo.frontend.codeobject.CodeObject` it was
            read from, when it came from a binary (kept so the backend can patch
            bytes in place and preserve ABI details), else ``None``.
    """

    __slots__ = _fields = ("items", "source", "code_object")

    def __init__(self, items: list[Item] | None = None, source: str | None = None,
                 code_object: Any = None):
        self.items = [] if items is None else items
        self.source = source
        self.code_object = code_object

    @property
    def kernels(self) -> list[Kernel]:
        """All functions with code (kernels and device functions), in file order."""
        return [it for it in self.items if isinstance(it, Kernel)]

    def kernel(self, name: str) -> Kernel:
        """The function named ``name``.

        Raises:
            KeyError: listing the names that exist.
        """
        for k in self.kernels:
            if k.name == name:
                return k
        raise KeyError(f"no kernel {name!r}; kernels: {', '.join(k.name for k in self.kernels)}")

    def directive_value(self, name: str) -> str | None:
        """Argument text of the first top-level directive ``name`` (e.g. ``.amdgcn_target``)."""
        for it in self.items:
            if isinstance(it, Directive) and it.name == name:
                return it.args
        return None

    @property
    def target(self) -> str | None:
        """The target id from ``.amdgcn_target`` without quotes, or ``None``."""
        v = self.directive_value(".amdgcn_target")
        return v.strip().strip('"') if v else None

    def amdhsa_kernel(self, name: str) -> AmdhsaKernel | None:
        """The ``.amdhsa_kernel`` block of kernel ``name``, if the file has one."""
        for it in self.items:
            if isinstance(it, AmdhsaKernel) and it.name == name:
                return it
        return None

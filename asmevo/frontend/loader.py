"""One entry point for every tool: a path -> :class:`~asmevo.ir.Module`.

* code objects (``.co``, ``.hsaco``, any file starting with the ELF magic) are
  disassembled (:func:`asmevo.frontend.disasm.disassemble`);
* assembly text (``.s``, ``.amdgcn``, ``.asm``, anything else) is parsed
  (:func:`asmevo.frontend.asm_parser.parse_asm`).  Triton's
  ``.amdgcn_target "amdgpu9.42-amd-amdhsa-unknown-gfx942"`` line is kept as
  written; :mod:`asmevo.backend.assemble` rewrites it for llvm-mc 19.
"""

from __future__ import annotations

import os

from ..errors import AsmevoError, CodeObjectError
from ..ir.module import Module

ELF_MAGIC = b"\x7fELF"
CODE_OBJECT_SUFFIXES = (".co", ".hsaco", ".o", ".elf", ".so")


def is_code_object(path: str) -> bool:
    """Whether ``path`` starts with the ELF magic (or, if unreadable, has a code-object suffix)."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == ELF_MAGIC
    except OSError:
        return path.endswith(CODE_OBJECT_SUFFIXES)


def load(path: str | os.PathLike) -> Module:
    """Load a code object or an assembly file as a Module.

    Raises:
        AsmevoError: the file does not exist, is a directory or is not UTF-8 text.
        CodeObjectError: a truncated/corrupt/foreign code object (also for a
            ``.co``/``.hsaco`` file that is not an ELF at all).
        AsmSyntaxError: the assembly does not parse (file:line:col).
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise AsmevoError("no such file", file=path)
    if os.path.isdir(path):
        raise AsmevoError("is a directory, expected a code object or an assembly file", file=path)
    if is_code_object(path) or path.endswith((".co", ".hsaco")):
        from .disasm import disassemble
        return disassemble(path)
    try:
        with open(path, "rb") as f:
            raw = f.read()
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise AsmevoError(f"not UTF-8 text at byte {e.start}; expected assembly text or an ELF code "
                          "object", file=path, offset=e.start) from None
    except OSError as e:
        raise AsmevoError(f"cannot read: {e.strerror}", file=path) from None
    if "\0" in text:
        raise CodeObjectError("binary data that is not an ELF file; expected assembly text or an ELF "
                              "code object", file=path, offset=text.index("\0"))
    from .asm_parser import parse_asm
    return parse_asm(text, path)

"""One entry point for every tool: a path -> :class:`~asmevo.ir.Module`.

* code objects (``.co``, ``.hsaco``, any file starting with the ELF magic) are
  disassembled (:func:`asmevo.frontend.disasm.disassemble`);
* assembly text (``.s``, ``.amdgcn``, ``.asm``, anything else) is parsed
  (:func:`asmevo.frontend.asm_parser.parse_asm`) and each kernel gets the
  ``descriptor`` and ``metadata`` a code object assembled from it would hold
  (:func:`fill_text_abi`), so both kinds of input give the same ABI facts.  Triton's
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


def check_output_path(path: str | os.PathLike) -> None:
    """Refuse an output path that cannot be a file: an existing directory, or a path whose
    parent is not a directory (checked before any work, so the CLI exits 2 with the path).

    Raises:
        AsmevoError: naming ``path``.
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        raise AsmevoError("is a directory; expected a file path for the output", file=path)
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise AsmevoError(f"cannot write output: directory {parent} does not exist", file=path)


def read_assembly_text(path: str | os.PathLike, *, allow_empty: bool = True) -> str:
    """The UTF-8 text of an assembly file.

    Raises:
        AsmevoError: missing, a directory, unreadable (permissions, I/O error), not UTF-8
            (byte offset given), contains NUL bytes, an ELF code object, or (``allow_empty``
            false) empty or only whitespace (located at ``file:1:1``).
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise AsmevoError("no such file", file=path)
    if os.path.isdir(path):
        raise AsmevoError("is a directory, expected an assembly file", file=path)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise AsmevoError(f"cannot read: {e.strerror or e}", file=path) from None
    if raw[:4] == ELF_MAGIC:
        raise AsmevoError("this is a code object (ELF); expected assembly text (use 'asmevo dis' first)",
                          file=path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise AsmevoError(f"not UTF-8 text at byte {e.start}; expected assembly text or an ELF code "
                          "object", file=path, offset=e.start) from None
    if "\0" in text:
        raise CodeObjectError("binary data that is not an ELF file; expected assembly text or an ELF "
                              "code object", file=path, offset=text.index("\0"))
    if not allow_empty and not text.strip():
        raise AsmevoError("empty file; expected assembly text", file=path, line=1, column=1)
    return text


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
    text = read_assembly_text(path)
    from .asm_parser import parse_asm
    module = parse_asm(text, path)
    fill_text_abi(module)
    return module


def fill_text_abi(module: Module) -> None:
    """Fill ``Kernel.descriptor`` and ``Kernel.metadata`` of a module parsed from assembly text,
    the values a code object assembled from it would hold:

    * ``descriptor``: :meth:`KernelDescriptor.from_directives` of the kernel's
      ``.amdhsa_kernel`` block (llvm-mc 19's encoding, checked field by field against the
      corpus code objects), with the target id of ``.amdgcn_target`` for the
      ``.amdhsa_reserve_xnack_mask`` check; ``kernel_code_entry_byte_offset`` stays 0 (the
      linker's layout decides it).  Left ``None`` when a field is an expression.
    * ``metadata``: the kernel's ``amdhsa.kernels`` entry of the ``.amdgpu_metadata`` YAML,
      read with llvm-mc's typing (:func:`asmevo.frontend.metadata.read_yaml_metadata`), so it
      equals the entry decoded from the code object's msgpack note.

    Raises:
        AsmSyntaxError: malformed metadata YAML, or an ``.amdhsa_kernel`` block llvm-mc would
            reject (missing field, user SGPR count below the implied count, xnack mask vs
            target id), located at the block's line.
    """
    from ..errors import AsmSyntaxError
    from ..ir.module import AmdhsaKernel, MetadataBlock
    from .descriptor import DirectiveValueError, KernelDescriptor
    from .metadata import read_yaml_metadata
    kernels = {k.name: k for k in module.kernels}
    target = module.target
    for it in module.items:
        if isinstance(it, AmdhsaKernel) and it.name in kernels:
            try:
                kd = KernelDescriptor.from_directives(it.fields, target=target)
            except DirectiveValueError:
                continue  # an expression: only llvm-mc can evaluate it
            except ValueError as e:
                raise AsmSyntaxError(f".amdhsa_kernel {it.name}: {e}", file=module.source,
                                     line=it.line, column=1) from None
            kernels[it.name].descriptor = kd
        elif isinstance(it, MetadataBlock):
            doc = read_yaml_metadata(it.text, file=module.source, line=it.line)
            entries = doc.get("amdhsa.kernels") or []
            if not isinstance(entries, list):
                raise AsmSyntaxError(".amdgpu_metadata: amdhsa.kernels is not a list",
                                     file=module.source, line=it.line)
            for entry in entries:
                if not isinstance(entry, dict):
                    raise AsmSyntaxError(".amdgpu_metadata: an amdhsa.kernels entry is not a map",
                                         file=module.source, line=it.line)
                name = entry.get(".name")
                if name not in kernels:
                    sym = entry.get(".symbol")
                    name = sym[:-3] if isinstance(sym, str) and sym.endswith(".kd") else name
                if name in kernels:
                    kernels[name].metadata = entry

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
from typing import TYPE_CHECKING, Collection

from ..errors import AsmevoError, CodeObjectError

if TYPE_CHECKING:
    from ..ir.module import AmdhsaKernel, MetadataBlock, Module
    from .descriptor import KernelDescriptor

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


#: e_machine of AMDGPU code objects (EM_AMDGPU = 224, little-endian: AMDGPUUsage, "ELF Code
#: Object")
_EM_AMDGPU = (224).to_bytes(2, "little")


def read_assembly_text(path: str | os.PathLike, *, allow_empty: bool = True,
                       expected: str = "assembly text or an ELF code object") -> str:
    """The UTF-8 text of an assembly file; ``expected``: what the caller accepts, for the
    messages (``asmevo asm``: only assembly text).

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
    from ..limits import check_input_size, check_literals, max_input_bytes, max_literal
    try:
        with open(path, "rb") as f:
            raw = f.read(max_input_bytes() + 1)
    except OSError as e:
        raise AsmevoError(f"cannot read: {e.strerror or e}", file=path) from None
    check_input_size(len(raw), path, "assembly text")
    if raw[:4] == ELF_MAGIC:
        if raw[18:20] == _EM_AMDGPU:
            raise AsmevoError("this is a code object (ELF); expected assembly text (use "
                              "'asmevo dis' first)", file=path)
        machine = int.from_bytes(raw[18:20], "little") if len(raw) >= 20 else None
        raise AsmevoError(f"this is an ELF file for another machine (e_machine {machine}), not "
                          "an AMDGPU code object; expected assembly text", file=path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise AsmevoError(f"not UTF-8 text at byte {e.start}; expected {expected}", file=path,
                          offset=e.start) from None
    if "\0" in text:
        raise CodeObjectError(f"binary data that is not an ELF file; expected {expected}",
                              file=path, offset=text.index("\0"))
    if not allow_empty and not text.strip():
        raise AsmevoError("empty file; expected assembly text", file=path, line=1, column=1)
    if _may_hold_long_number(text, max_literal()):
        check_literals(text, path)
    check_incbin(text, path)
    return text


#: ASCII bytes -> b"a" for the characters of :func:`asmevo.limits.check_literals`'s run
#: filter (``[0-9A-Fa-fxX_]``), b" " for every other byte
_LITERAL_RUN = bytes(ord("a") if chr(c) in "0123456789ABCDEFabcdefxX_" else ord(" ")
                     for c in range(256))


def _may_hold_long_number(text: str, limit: int) -> bool:
    """False when ``check_literals(text)`` certainly passes: no run of more than ``limit``
    characters of its filter class (a byte translation and a substring search, 2 ms on a
    megabyte, where the filter regex takes 20)."""
    if len(text) <= limit or not text.isascii():
        return len(text) > limit
    return b"a" * (limit + 1) in text.encode("ascii").translate(_LITERAL_RUN)


_INCBIN = __import__("re").compile(r'^([ \t]*\.incbin[ \t]+)"([^"\n]*)"', __import__("re").M)


def check_incbin(text: str, path: str) -> None:
    """``.incbin "FILE"`` must name a regular file within the input size limit: llvm-mc reads
    a device or a pipe (``/dev/zero``) until memory or time runs out.

    Raises:
        AsmevoError: located at the file name of the directive.
    """
    if ".incbin" not in text:
        return
    from ..limits import check_input_size
    for m in _INCBIN.finditer(text):
        target = m.group(2)
        line = text.count("\n", 0, m.start()) + 1
        col = len(m.group(1)) + 2
        full = target if os.path.isabs(target) else os.path.join(os.getcwd(), target)
        if os.path.exists(full) and not os.path.isfile(full):
            raise AsmevoError(f".incbin \"{target}\": not a regular file (a device, pipe or "
                              "directory); expected a file of data to include", file=path,
                              line=line, column=col)
        if os.path.isfile(full):
            try:
                check_input_size(os.path.getsize(full), path, f".incbin \"{target}\"")
            except AsmevoError as e:
                e.offset, e.line, e.column = None, line, col
                raise


def check_input_path(path: str) -> None:
    """What :func:`load` refuses before reading: a path that names no file, or a directory.

    Raises:
        AsmevoError: either, naming the path (bad input, exit 2).
    """
    if not os.path.exists(path):
        raise AsmevoError("no such file", file=path)
    if os.path.isdir(path):
        raise AsmevoError("is a directory, expected a code object or an assembly file", file=path)


def load(path: str | os.PathLike) -> Module:
    """Load a code object or an assembly file as a Module.

    Raises:
        AsmevoError: the file does not exist, is a directory or is not UTF-8 text.
        CodeObjectError: a truncated/corrupt/foreign code object (also for a
            ``.co``/``.hsaco`` file that is not an ELF at all).
        AsmSyntaxError: the assembly does not parse or does not type-check against the ISA
            table (unknown mnemonic, operand class/width, register range; see
            :mod:`asmevo.frontend.typecheck`), an unknown ``.amdhsa_kernel`` directive or an
            undefined branch label (:func:`check_text_module`), all at file:line:col.
    """
    path = os.fspath(path)
    check_input_path(path)
    if is_code_object(path) or path.endswith((".co", ".hsaco")):
        from .disasm import disassemble
        return disassemble(path)
    text = read_assembly_text(path)
    from .asm_parser import parse_asm
    module = parse_asm(text, path, check=True)
    check_text_module(module, text)
    fill_text_abi(module)
    return module


def load_bytes(path: str | os.PathLike) -> Module:
    """The module of the bytes the hardware would run: a code object is loaded
    (disassembled); assembly text is checked as :func:`load` checks it (located errors,
    exit 2), then assembled and linked (llvm-mc + ld.lld, the backend's
    :func:`asmevo.backend.assemble.assemble_bytes`) and the resulting code object is loaded.
    The text is never trusted as parsed: what the IR does not model (``.rept``, ``.if``,
    ``.long`` words, macros, symbol arithmetic) is in these bytes as the assembler made it,
    and the parser's refusals of such text (:class:`~asmevo.errors.NotModelledError`) do
    not stop this route.

    Every route that judges or runs a kernel given as a file (``asmevo verify``/``run``,
    ``asmevo-opt --verify``, the MCP tools, the harness check) loads it with this.

    Raises:
        AsmevoError: unreadable or malformed input; for text, llvm-mc or ld.lld diagnostics.
    """
    path = os.fspath(path)
    check_input_path(path)
    if is_code_object(path) or path.endswith((".co", ".hsaco")):
        return load(path)
    text = check_text(path)
    return load_assembled_text(text, path)


def check_text(path: str) -> str:
    """Read the assembly file ``path`` and make :func:`load`'s checks on it (parse, type
    check, labels, ``.amdhsa_kernel`` and metadata values), except the parser's refusal of
    what the IR does not model; returns the text.

    Raises:
        AsmevoError: as :func:`load` (located at file:line:column).
    """
    from ..errors import NotModelledError
    from .asm_parser import parse_asm
    text = read_assembly_text(path)
    try:
        module = parse_asm(text, path, check=True)
    except NotModelledError:
        return text     # the assembler decides what such text is (its diagnostics located)
    check_text_module(module, text)
    fill_text_abi(module)
    return text


def load_assembled_text(text: str, source: str) -> Module:
    """Assemble ``text`` (of the file ``source``) into a temporary code object and load it.

    Raises:
        AsmevoError: llvm-mc or ld.lld diagnostics (located in ``source``).
    """
    import tempfile
    from ..backend.assemble import assemble_bytes
    data = assemble_bytes(text, filename=source)
    with tempfile.TemporaryDirectory(prefix="asmevo-bytes-") as d:
        out = os.path.join(d, os.path.splitext(os.path.basename(source or "input"))[0] + ".co")
        with open(out, "wb") as f:
            f.write(data)
        m = load(out)
    m.source = source
    return m


#: The ``.amdhsa_kernel`` block directives llvm-mc 19 accepts (AMDGPUAsmParser.cpp
#: ParseDirectiveAMDHSAKernel); any other ``.amdhsa_*`` line inside the block is
#: "unknown .amdhsa_kernel directive".
AMDHSA_KERNEL_DIRECTIVES = frozenset("""
.amdhsa_accum_offset .amdhsa_dx10_clamp .amdhsa_enable_private_segment
.amdhsa_exception_fp_denorm_src .amdhsa_exception_fp_ieee_div_zero .amdhsa_exception_fp_ieee_inexact
.amdhsa_exception_fp_ieee_invalid_op .amdhsa_exception_fp_ieee_overflow
.amdhsa_exception_fp_ieee_underflow .amdhsa_exception_int_div_zero .amdhsa_float_denorm_mode_16_64
.amdhsa_float_denorm_mode_32 .amdhsa_float_round_mode_16_64 .amdhsa_float_round_mode_32
.amdhsa_forward_progress .amdhsa_fp16_overflow .amdhsa_group_segment_fixed_size .amdhsa_ieee_mode
.amdhsa_kernarg_size .amdhsa_memory_ordered .amdhsa_next_free_sgpr .amdhsa_next_free_vgpr
.amdhsa_private_segment_fixed_size .amdhsa_reserve_flat_scratch .amdhsa_reserve_vcc
.amdhsa_reserve_xnack_mask .amdhsa_round_robin_scheduling .amdhsa_shared_vgpr_count
.amdhsa_system_sgpr_private_segment_wavefront_offset .amdhsa_system_sgpr_workgroup_id_x
.amdhsa_system_sgpr_workgroup_id_y .amdhsa_system_sgpr_workgroup_id_z
.amdhsa_system_sgpr_workgroup_info .amdhsa_system_vgpr_workitem_id .amdhsa_tg_split
.amdhsa_user_sgpr_count .amdhsa_user_sgpr_dispatch_id .amdhsa_user_sgpr_dispatch_ptr
.amdhsa_user_sgpr_flat_scratch_init .amdhsa_user_sgpr_kernarg_preload_length
.amdhsa_user_sgpr_kernarg_preload_offset .amdhsa_user_sgpr_kernarg_segment_ptr
.amdhsa_user_sgpr_private_segment_buffer .amdhsa_user_sgpr_private_segment_size
.amdhsa_user_sgpr_queue_ptr .amdhsa_uses_dynamic_stack .amdhsa_wavefront_size32
.amdhsa_workgroup_processor_mode""".split())


def _find_column(line_text: str, word: str) -> int | None:
    """1-based column of ``word`` as a whole token in ``line_text`` (``None`` when absent)."""
    import re
    m = re.search(r"(?<![\w.$])" + re.escape(word) + r"(?![\w.$])", line_text)
    return m.start() + 1 if m else None


def check_text_module(module: Module, text: str) -> None:
    """Checks llvm-mc makes on assembly text that the per-instruction type check does not:

    * every ``.amdhsa_*`` line of an ``.amdhsa_kernel`` block is a directive llvm-mc 19
      knows (:data:`AMDHSA_KERNEL_DIRECTIVES`; llvm-mc: "unknown .amdhsa_kernel directive");
    * every label a branch (``s_branch``, ``s_cbranch_*``, ``s_call_b64``) names is defined
      in the module (llvm-mc: "undefined label 'X'").

    Raises:
        AsmSyntaxError: located at ``file:line:column`` of the directive or label.
    """
    from ..errors import AsmSyntaxError
    from ..ir.module import AmdhsaKernel, Directive, LabelDef
    from ..ir.operands import Label
    lines = text.split("\n")
    src = module.source
    for it in module.items:
        if not isinstance(it, AmdhsaKernel):
            continue
        for key in it.fields:
            if key in AMDHSA_KERNEL_DIRECTIVES:
                continue
            line = col = None
            for n in range((it.line or 1), len(lines) + 1):
                c = _find_column(lines[n - 1], key)
                if c is not None:
                    line, col = n, c
                    break
            raise AsmSyntaxError(f"unknown .amdhsa_kernel directive {key}; expected one of the "
                                 f".amdhsa_* fields llvm-mc accepts (AMDGPUUsage 'AMDHSA Kernel "
                                 f"Assembler Directives')", file=src, line=line or it.line,
                                 column=col if line else None)
    defined: set[str] = set()
    for it in module.items:
        if isinstance(it, LabelDef):
            defined.add(it.name)
        elif isinstance(it, Directive) and it.name in (".set", ".equ", ".equiv", ".globl",
                                                        ".global", ".weak", ".extern"):
            defined.add(it.args.split(",")[0].strip())
    for k in module.kernels:
        defined.add(k.name)
        defined |= k.labels()
    for k in module.kernels:
        for inst in k.instructions():
            op = inst.opcode
            if not (op.startswith(("s_branch", "s_cbranch_")) or op == "s_call_b64"):
                continue
            for o in inst.operands:
                if isinstance(o, Label) and o.name not in defined:
                    col = None
                    if inst.line is not None and 0 < inst.line <= len(lines):
                        col = _find_column(lines[inst.line - 1], o.name)
                    raise AsmSyntaxError(f"undefined label '{o.name}'; expected a label defined "
                                         "in this file", file=src, line=inst.line,
                                         column=col if inst.line is not None else None)


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
    from ..ir.module import AmdhsaKernel, Directive, LabelDef, MetadataBlock
    from .descriptor import KernelDescriptor
    kernels = {k.name: k for k in module.kernels}
    items = module.items
    for idx, it in enumerate(items):
        # raw forms written by `asmevo dis` when no directive form reproduces the bytes
        if isinstance(it, LabelDef) and it.name.endswith(".kd") and it.name[:-3] in kernels \
                and kernels[it.name[:-3]].descriptor is None:
            b = _raw_bytes(items, idx + 1, stop_size=it.name)
            if b is not None and len(b) == 64:
                kernels[it.name[:-3]].descriptor = KernelDescriptor.from_bytes(b, file=module.source)
        elif isinstance(it, Directive) and it.name == ".section" and it.args.startswith(".note"):
            for entry in _raw_note_kernels(items, idx + 1, module.source):
                name = entry.get(".name")
                if name in kernels and kernels[name].metadata is None:
                    kernels[name].metadata = entry
    for it in module.items:
        if isinstance(it, AmdhsaKernel) and it.name in kernels:
            kd = amdhsa_descriptor(module, it)
            if kd is not None:  # None: an expression, only llvm-mc can evaluate it
                kernels[it.name].descriptor = kd
        elif isinstance(it, MetadataBlock):
            for name, entry in yaml_kernel_metadata(it, kernels, file=module.source).items():
                kernels[name].metadata = entry


def amdhsa_descriptor(module: Module, block: AmdhsaKernel) -> KernelDescriptor | None:
    """The descriptor llvm-mc 19 builds for ``block``, an ``.amdhsa_kernel`` block of
    ``module``, checked against the module's ``.amdgcn_target``
    (:meth:`KernelDescriptor.from_directives`); None when a field is an expression (only
    llvm-mc can evaluate it).

    Raises:
        AsmSyntaxError: a block llvm-mc would reject, at the block's ``file:line:1``.
    """
    from ..errors import AsmSyntaxError
    from .descriptor import DirectiveValueError, KernelDescriptor
    def out_of_range(key: str, val, expected: str) -> AsmSyntaxError:
        line = col = None
        if module.source and block.line:
            try:
                with open(module.source, encoding="utf-8", errors="replace") as f:
                    lines = f.read().split("\n")
                for n in range(block.line, len(lines) + 1):
                    c = _find_column(lines[n - 1], key)
                    if c is not None:
                        line, col = n, lines[n - 1].find(str(val).strip(), c) + 1 or None
                        break
            except OSError:
                pass
        return AsmSyntaxError(f".amdhsa_kernel {block.name}: {key} {val}: value out of range; "
                              f"expected {expected}", file=module.source,
                              line=line or block.line, column=col if line else 1)

    for key, val in block.fields.items():
        try:
            v = int(str(val).strip(), 0)
        except ValueError:
            continue  # an expression: only llvm-mc can evaluate it
        if not 0 <= v < 1 << 32:  # llvm-mc: "value out of range"
            raise out_of_range(key, val, "an integer from 0 to 2^32-1")
    try:
        kd = KernelDescriptor.from_directives(block.fields, target=module.target)
    except DirectiveValueError:
        return None
    except ValueError as e:
        raise AsmSyntaxError(f".amdhsa_kernel {block.name}: {e}", file=module.source,
                             line=block.line, column=1) from None
    try:
        kd.to_bytes()  # every field within its bit width (llvm-mc: "value out of range")
    except ValueError as e:
        from .descriptor import DIRECTIVE_FIELDS
        by_attr = {a: k for k, a in DIRECTIVE_FIELDS.items()}
        by_attr.update(granulated_workitem_vgpr_count=".amdhsa_next_free_vgpr",
                       granulated_wavefront_sgpr_count=".amdhsa_next_free_sgpr",
                       accum_offset=".amdhsa_accum_offset")
        for attr, key in by_attr.items():
            if f" {attr} " in f" {e} " and key in block.fields:
                raise out_of_range(key, block.fields[key], f"a value that fits its field ({e})")
        raise AsmSyntaxError(f".amdhsa_kernel {block.name}: {e}", file=module.source,
                             line=block.line, column=1) from None
    return kd


def yaml_kernel_metadata(block: MetadataBlock, names: Collection[str], *,
                         file: str | None = None) -> dict[str, dict]:
    """Kernel name -> ``amdhsa.kernels`` entry of an ``.amdgpu_metadata`` block (of ``file``),
    read with llvm-mc's typing (:func:`asmevo.frontend.metadata.read_yaml_metadata`); an
    entry is matched by ``.name``, else by ``.symbol`` ``NAME.kd``; only ``names`` are kept.

    Raises:
        AsmSyntaxError: malformed YAML, ``amdhsa.kernels`` not a list of maps (at the block).
    """
    from ..errors import AsmSyntaxError
    from .metadata import check_yaml_metadata, read_yaml_metadata
    doc = read_yaml_metadata(block.text, file=file, line=block.line)
    check_yaml_metadata(doc, block.text, file=file, line=block.line)
    entries = doc.get("amdhsa.kernels") or []
    if not isinstance(entries, list):
        raise AsmSyntaxError(".amdgpu_metadata: amdhsa.kernels is not a list",
                             file=file, line=block.line)
    out: dict[str, dict] = {}
    for entry in entries:
        if not isinstance(entry, dict):
            raise AsmSyntaxError(".amdgpu_metadata: an amdhsa.kernels entry is not a map",
                                 file=file, line=block.line)
        name = entry.get(".name")
        if name not in names:
            sym = entry.get(".symbol")
            name = sym[:-3] if isinstance(sym, str) and sym.endswith(".kd") else name
        if name in names:
            out[name] = entry
    return out


_DATA_SIZES = {".byte": 1, ".short": 2, ".hword": 2, ".2byte": 2, ".long": 4, ".int": 4, ".4byte": 4,
               ".quad": 8, ".8byte": 8}


def _raw_bytes(items: list, start: int, *, stop_size: str | None = None,
               limit: int | None = None) -> bytes | None:
    """Bytes of the plain data directives from ``items[start]`` (``.byte``/``.short``/``.long``/
    ``.quad`` integers, ``.fill N, SIZE, V``, ``.zero N``) up to ``.size STOP, ...`` or ``limit``
    bytes.  A non-integer ``.quad`` (``NAME - NAME.kd``, a link-time value) reads as 0.
    ``None`` when another item comes first."""
    from ..ir.module import Directive
    out = bytearray()
    for it in items[start:]:
        if limit is not None and len(out) >= limit:
            break
        if not isinstance(it, Directive):
            return None
        if it.name == ".size" and stop_size and it.args.split(",")[0].strip() == stop_size:
            return bytes(out)
        if it.name == ".p2align":
            continue
        vals = [v.strip() for v in it.args.split(",")] if it.args.strip() else []
        try:
            if it.name in _DATA_SIZES:
                n = _DATA_SIZES[it.name]
                for v in vals:
                    try:
                        x = int(v, 0)
                    except ValueError:
                        if n != 8:
                            return None
                        x = 0
                    out += (x & ((1 << (8 * n)) - 1)).to_bytes(n, "little")
            elif it.name == ".fill":
                cnt, size, val = (int(v, 0) for v in vals)
                out += (val & ((1 << (8 * size)) - 1)).to_bytes(size, "little") * cnt
            elif it.name in (".zero", ".skip", ".space") and len(vals) == 1:
                out += bytes(int(vals[0], 0))
            else:
                return None
        except ValueError:
            return None
    return bytes(out) if stop_size is None else None


def _raw_note_kernels(items: list, start: int, source: str | None) -> list[dict]:
    """The ``amdhsa.kernels`` entries of an NT_AMDGPU_METADATA note written as data
    (``.long NAMESZ, DESCSZ, 32`` / ``.asciz "AMDGPU"`` / data bytes), else ``[]``."""
    doc = raw_note_document(items, start, source)
    return [k for k in (doc or {}).get("amdhsa.kernels") or [] if isinstance(k, dict)]


def raw_note_document(items: list, start: int, source: str | None = None) -> dict | None:
    """The decoded metadata map of an NT_AMDGPU_METADATA note written as data items
    starting at ``items[start]`` (just after its ``.section .note`` directive), or ``None``
    when the items are not such a note."""
    from ..ir.module import Directive
    from .metadata import NOTE_OWNER, NT_AMDGPU_METADATA, decode_metadata
    rest = [it for it in items[start:start + 4] if not (isinstance(it, Directive) and it.name == ".p2align")]
    if len(rest) < 2 or not all(isinstance(it, Directive) for it in rest[:2]):
        return None
    head, owner = rest[0], rest[1]
    try:
        namesz, descsz, ntype = (int(v, 0) for v in head.args.split(","))
    except ValueError:
        return None
    if head.name != ".long" or owner.name != ".asciz" or owner.args.strip() != f'"{NOTE_OWNER}"' \
            or ntype != NT_AMDGPU_METADATA:
        return None
    j = next(n for n in range(start, len(items)) if items[n] is owner) + 1
    desc = _raw_bytes(items, j, limit=descsz)
    if desc is None or len(desc) < descsz:
        return None
    try:
        return decode_metadata(desc[:descsz], file=source).raw
    except AsmevoError:
        return None

"""Print IR as reassemblable gfx942 assembly (the syntax llvm-mc accepts).

Instructions flagged ``raw`` (their text would not re-encode to the original
bytes, e.g. a literal equal to an inline constant, which llvm-mc folds) are
printed as ``.long`` words of their original encoding followed by the text in
a comment, so untouched code reassembles byte for byte.
"""

from __future__ import annotations

import io

from .instruction import Instruction
from .module import AmdhsaKernel, BasicBlock, Directive, Kernel, LabelDef, MetadataBlock, Module


def print_instruction(inst: Instruction) -> str:
    """One line (no newline): ``\\tv_add_f32_e32 v0, v1, v2``, or ``.long`` words if raw."""
    if inst.raw and inst.encoding is not None:
        enc = inst.encoding
        words = ", ".join(f"{int.from_bytes(enc[i:i + 4], 'little'):#010x}"
                          for i in range(0, len(enc), 4))
        return f"\t.long\t{words}\t; {inst.text()}"
    return "\t" + inst.text()


def print_block(block: BasicBlock, out: io.StringIO, memo: dict | None = None) -> None:
    """Write a block: its directives, its label, its instructions.

    ``memo`` (one :func:`print_module` call's): instruction line by opcode and the
    identities of its operand and modifier objects.  Operands and modifier pairs are
    immutable values, and instructions parsed from the same text share them (a kernel
    repeats a few thousand distinct lines), so equal keys print equal text; the objects
    stay alive, so their identities stay unique, for the whole call."""
    for d in block.directives:
        out.write("\t" + d.text() + "\n")
    if block.label:
        out.write(block.label + ":\n")
    lines = []
    append = lines.append
    if memo is None:
        memo = {}
    get = memo.get
    for inst in block.instructions:
        if inst.raw and inst.encoding is not None:
            append(print_instruction(inst))
            continue
        key = (inst.opcode, *map(id, inst.operands), None, *map(id, inst.modifiers))
        line = get(key)
        if line is None:
            line = memo[key] = "\t" + inst.text()
        append(line)
    if lines:
        lines.append("")
        out.write("\n".join(lines))


def print_kernel(kernel: Kernel, out: io.StringIO, memo: dict | None = None) -> None:
    """Write a function's code: the symbol label, then its blocks."""
    out.write(f"{kernel.name}:\n")
    if memo is None:
        memo = {}
    for i, b in enumerate(kernel.blocks):
        if i == 0 and b.label == kernel.name:
            b = BasicBlock(None, b.instructions, b.directives)
        print_block(b, out, memo)


def print_module(module: Module) -> str:
    """The whole module as assembly text that llvm-mc can assemble."""
    out = io.StringIO()
    memo: dict = {}  # see print_block
    for it in module.items:
        if isinstance(it, Directive):
            out.write("\t" + it.text() + "\n")
        elif isinstance(it, LabelDef):
            out.write(it.name + ":\n")
        elif isinstance(it, Kernel):
            print_kernel(it, out, memo)
        elif isinstance(it, AmdhsaKernel):
            out.write(f"\t.amdhsa_kernel {it.name}\n")
            for k, v in it.fields.items():
                out.write(f"\t\t{k} {v}\n")
            out.write("\t.end_amdhsa_kernel\n")
        elif isinstance(it, MetadataBlock):
            out.write("\t.amdgpu_metadata\n")
            out.write(it.text if it.text.endswith("\n") else it.text + "\n")
            out.write("\t.end_amdgpu_metadata\n")
        else:  # pragma: no cover - programming error
            raise TypeError(f"unknown module item {it!r}")
    return out.getvalue()

"""Patch a code object in place when the edited code still fits byte for byte.

When every instruction that came from the file (``Instruction.address`` set)
keeps its address, and the new or changed instructions exactly fill the bytes
the function had, the original file is copied with only those instructions'
bytes replaced (plus changed kernel descriptors).  Every other byte (section
layout, symbols, notes, padding) stays as it was.  New encodings come from
llvm-mc (``-show-encoding``); a changed branch is encoded with its numeric
offset after the layout is known (SOPP simm16 = (target - pc - 4) / 4).
"""

from __future__ import annotations

from ..fileio import write_output
from ..ir.instruction import Instruction
from ..ir.module import Kernel, Module
from ..ir.operands import Imm, Label
from ..ir.printer import print_instruction


def encode_instructions(insts: list[Instruction]) -> list[bytes] | None:
    """Encode instructions with llvm-mc; ``None`` if one does not assemble or needs a fixup."""
    from ..errors import AsmevoError
    from ..frontend.disasm import _show_encodings
    if not insts:
        return []
    try:
        encs = _show_encodings([print_instruction(i) for i in insts])
    except AsmevoError:
        return None
    if len(encs) != len(insts) or any(b is None for e in encs for b in e):
        return None
    return [bytes(e) for e in encs]


def _layout(kernel: Kernel, start: int, sizes: dict[int, int]) -> tuple[dict[int, int], dict[str, int], int]:
    addr_of: dict[int, int] = {}
    labels: dict[str, int] = {}
    pos = start
    for b in kernel.blocks:
        if b.label:
            labels[b.label] = pos
        for inst in b.instructions:
            addr_of[id(inst)] = pos
            pos += sizes[id(inst)]
    labels.setdefault(kernel.name, start)
    return addr_of, labels, pos


def _branch_target(inst: Instruction, labels: dict[str, int]) -> int | None:
    if not inst.operands:
        return None
    op = inst.operands[-1]
    if isinstance(op, Label) and op.name in labels:
        return labels[op.name] + (getattr(op, "addend", 0) or 0)
    return None


def patch_in_place(module: Module, path: str, *, inputs: tuple[str, ...] = (),
                   prepared: bool = False) -> bool:
    """Write ``module``'s original code object to ``path`` with only changed bytes replaced.

    Returns ``False`` (writing nothing) when the module did not come from a
    code object, a block of a function carries directives (only the assembler knows
    what they emit), a function's code no longer fits its original byte range,
    an instruction from the file moved, a changed instruction does not
    assemble, kernels were added or removed, or the metadata changed.
    ``prepared`` means :func:`asmevo.backend.rebuild.prepare` already ran.
    """
    from ..frontend.disasm import branch_target, is_branch
    from .rebuild import metadata_document, prepare
    co = module.code_object
    if co is None:
        return False
    if not prepared:
        prepare(module)
    doc = metadata_document(module)
    if co.metadata is not None and doc != co.metadata.raw:
        return False
    funcs = module.kernels
    if {k.name for k in funcs} != set(co.code_ranges):
        return False
    if any(b.directives for k in funcs for b in k.blocks):
        return False  # what a directive among the code emits is the assembler's: rebuild
    text = co.text
    new_text = bytearray(text.data)
    for k in funcs:
        start, end = co.code_ranges[k.name]
        insts = list(k.instructions())
        changed = [i for i in insts if i.encoding is None]
        plain = [i for i in changed if not is_branch(i.opcode)]
        encs = encode_instructions(plain)
        if encs is None:
            return False
        enc_of = {id(i): e for i, e in zip(plain, encs)}
        sizes = {}
        for i in insts:
            if i.encoding is not None:
                sizes[id(i)] = len(i.encoding)
            elif id(i) in enc_of:
                sizes[id(i)] = len(enc_of[id(i)])
            else:
                sizes[id(i)] = 4  # SOPP branch
        addr_of, labels, pos = _layout(k, start, sizes)
        if pos != end:
            return False
        for i in insts:
            if i.address is not None and i.encoding is not None and addr_of[id(i)] != i.address:
                return False
        # branches: changed ones, and unchanged ones whose label moved
        redo = []
        for i in insts:
            if not is_branch(i.opcode):
                continue
            tgt = _branch_target(i, labels)
            if i.encoding is not None and (tgt is None or branch_target(addr_of[id(i)], i.encoding) == tgt):
                continue
            if tgt is None:
                return False
            delta = tgt - addr_of[id(i)] - 4
            if delta % 4 or not -(1 << 17) <= delta < (1 << 17):
                return False
            ops = list(i.operands)
            ops[-1] = Imm(delta // 4, str(delta // 4))
            redo.append((i, Instruction(i.opcode, ops, i.modifiers)))
        benc = encode_instructions([n for _, n in redo])
        if benc is None or any(len(e) != 4 for e in benc):
            return False
        for (i, _), e in zip(redo, benc):
            enc_of[id(i)] = e
        # every instruction's bytes at its address: one that only moved (re-addressed by the
        # loop's gate, asmevo.evolve.gate.readdress) keeps its encoding but not its old place
        for i in insts:
            e = enc_of.get(id(i))
            if e is None:
                e = i.encoding
            if e is None:
                continue
            off = addr_of[id(i)] - text.addr
            new_text[off:off + len(e)] = e
    data = bytearray(co.data)
    data[text.offset:text.offset + text.size] = new_text
    for ck in co.kernels:
        k = next((x for x in funcs if x.name == ck.name), None)
        if k is None or k.descriptor is None:
            continue
        new_kd = k.descriptor.to_bytes()
        if new_kd != ck.descriptor_bytes:
            sec = co.section_at(ck.kd_address)
            off = sec.offset + ck.kd_address - sec.addr
            data[off:off + 64] = new_kd
    write_output(path, bytes(data), inputs=tuple(inputs) + ((module.source,) if module.source else ()))
    return True

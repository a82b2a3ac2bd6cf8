"""A candidate is K0 with one kernel's code replaced: its blocks, canonical text and hash.

The content hash covers the canonical text of the optimised kernel: blocks named ``bb0``,
``bb1``... in layout order (branch targets renamed alike), one instruction a line (a raw
instruction with its bytes, since those, not its text, are written), each block's
directives before it.  Two
candidates with the same code have the same hash whatever their labels, addresses or the
operator that made them, so the store never holds or evaluates a program twice.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import pickle

from ..ir.module import Kernel, Module
from ..ir.operands import Label


def label_map(kernel: Kernel) -> dict[str, str]:
    """Block label -> stable name ``bbN`` (N = block index)."""
    return {b.label: f"bb{i}" for i, b in enumerate(kernel.blocks) if b.label}


def inst_text(inst, names: dict[str, str]) -> str:
    """Instruction text with block labels renamed to their stable names."""
    if any(isinstance(o, Label) and o.name in names for o in inst.operands):
        ops = [Label(names[o.name], o.addend) if isinstance(o, Label) and o.name in names else o
               for o in inst.operands]
        return inst.evolve(operands=ops).text()
    return inst.text()


def canonical_lines(kernel: Kernel) -> list[str]:
    """The kernel as text with stable block names (what is hashed and diffed)."""
    names = label_map(kernel)
    out = []
    for i, b in enumerate(kernel.blocks):
        # every line that may affect the bytes is hashed: a block's directives, and the words
        # of a raw instruction (written as .long: its bytes, not its text, are what runs)
        out.extend("\t" + d.text() for d in b.directives)
        out.append(f"bb{i}:")
        out.extend("\t" + inst_text(x, names) + (f"\t; bytes {x.encoding.hex()}"
                                                  if x.raw and x.encoding is not None else "")
                   for x in b.instructions)
    return out


def flat_code(kernel: Kernel) -> list[str] | None:
    """The kernel's code as one token per instruction: its bytes (hex; encoded with llvm-mc
    where an edited instruction has none) or, for a branch, its opcode and the index of the
    instruction it jumps to.  Equal for two kernels that hold the same code whatever their
    block boundaries, label names or spellings (``v_add_f32`` and ``v_add_f32_e32``); None
    when an instruction does not encode."""
    from ..backend.patch import encode_instructions
    first, idx = {}, 0
    for b in kernel.blocks:
        if b.label:
            first[b.label] = idx
        idx += len(b.instructions)
    insts = [x for b in kernel.blocks for x in b.instructions]

    def target(x):
        return next((first.get(o.name) for o in x.operands if isinstance(o, Label)), None)

    todo = [x for x in insts if x.encoding is None and target(x) is None]
    encs = encode_instructions(todo)
    if encs is None:
        return None
    enc = {id(x): e for x, e in zip(todo, encs)}
    out = []
    for x in insts:
        t = target(x)
        if t is not None:
            out.append(f"{x.opcode} @{t}")
        else:
            out.append(bytes(x.encoding if x.encoding is not None else enc[id(x)]).hex())
    return out


def content_hash(kernel: Kernel) -> str:
    """sha256 of :func:`canonical_lines` (hex)."""
    return hashlib.sha256("\n".join(canonical_lines(kernel)).encode()).hexdigest()


def kernel_blocks(kernel: Kernel) -> bytes:
    """The kernel's blocks, serialised for the store and for workers (read back with
    :func:`load_blocks`, never with ``pickle.loads``)."""
    return pickle.dumps(kernel.blocks, protocol=pickle.HIGHEST_PROTOCOL)


#: Modules whose classes a stored block list may name (the IR's value types and the ISA
#: table's records an instruction carries).
_IR_MODULES = ("asmevo.ir.instruction", "asmevo.ir.module", "asmevo.ir.operands", "asmevo.isa")


class _BlocksUnpickler(pickle.Unpickler):
    """An unpickler that builds only the IR's own classes, so that a crafted
    ``lineage.sqlite`` (a run directory is user data: it may come from anyone) cannot run code
    on ``--resume``: ``pickle.loads`` would call whatever callable the bytes name."""

    def find_class(self, module, name):
        import importlib
        if module in _IR_MODULES:
            obj = getattr(importlib.import_module(module), name, None)
            if isinstance(obj, type) and obj.__module__ == module:
                return obj
        raise pickle.UnpicklingError(f"stored blocks name {module}.{name}, which is not an "
                                     "asmevo IR class")


def load_blocks(data: bytes):
    """The block list stored by :func:`kernel_blocks`.

    Raises :class:`pickle.UnpicklingError` (or another ``Exception``) on bytes that are not a
    list of IR blocks; builds no object outside :data:`_IR_MODULES`."""
    import io
    blocks = _BlocksUnpickler(io.BytesIO(bytes(data))).load()
    if not isinstance(blocks, list):
        raise pickle.UnpicklingError("stored blocks are not a list of basic blocks")
    return blocks


def graft(k0: Module, kernel_name: str, blocks) -> Module:
    """A copy of ``k0`` whose kernel ``kernel_name`` has ``blocks`` (bytes or a list)."""
    if isinstance(blocks, (bytes, bytearray)):
        blocks = load_blocks(blocks)
    m = copy.copy(k0)
    m.items = list(k0.items)
    for i, it in enumerate(m.items):
        if isinstance(it, Kernel) and it.name == kernel_name:
            k = copy.copy(it)
            # instructions are values (ARCHITECTURE.md): new blocks and lists suffice
            k.blocks = [type(b)(b.label, list(b.instructions), list(b.directives)) for b in blocks]
            m.items[i] = k
            break
    else:
        raise KeyError(kernel_name)
    return m


def clone_kernel_blocks(kernel: Kernel):
    """Independent copy of the blocks (instructions are values; lists are copied)."""
    return [type(b)(b.label, list(b.instructions), list(b.directives)) for b in kernel.blocks]


def listing(kernel: Kernel) -> list[dict]:
    """One row per instruction: index, pc (byte offset from the kernel start, from the
    ISA table's sizes when an instruction has no encoding), block, text."""
    names = label_map(kernel)
    rows, pc, idx = [], 0, 0
    for bi, b in enumerate(kernel.blocks):
        for x in b.instructions:
            rows.append({"index": idx, "pc": pc, "block": f"bb{bi}", "text": inst_text(x, names)})
            pc += x.size or 4
            idx += 1
    return rows


def unified_diff(a: Kernel, b: Kernel, a_name: str = "K0", b_name: str = "best") -> str:
    """Assembly diff with stable block names (no addresses)."""
    return "".join(difflib.unified_diff([x + "\n" for x in canonical_lines(a)],
                                        [x + "\n" for x in canonical_lines(b)],
                                        fromfile=a_name, tofile=b_name, n=3))


def changed_blocks(a: Kernel, b: Kernel) -> list[int]:
    """Indices of blocks whose instruction text differs (same block count assumed);
    every index when the counts differ."""
    if len(a.blocks) != len(b.blocks):
        return list(range(max(len(a.blocks), len(b.blocks))))
    na, nb = label_map(a), label_map(b)
    return [i for i, (x, y) in enumerate(zip(a.blocks, b.blocks))
            if [inst_text(p, na) for p in x.instructions] != [inst_text(q, nb) for q in y.instructions]]


def changed_windows(a: Kernel, b: Kernel) -> list[dict]:
    """Per changed block, the window of the candidate ``b`` that differs from ``a``
    (common prefix and suffix stripped): ``{"block", "start", "end"}`` (indices into
    ``b``'s instruction list, end exclusive)."""
    out = []
    if len(a.blocks) != len(b.blocks):
        return [{"block": "*", "start": 0, "end": b.num_instructions()}]
    na, nb = label_map(a), label_map(b)
    base = 0
    for i, (x, y) in enumerate(zip(a.blocks, b.blocks)):
        ta = [inst_text(p, na) for p in x.instructions]
        tb = [inst_text(q, nb) for q in y.instructions]
        if ta != tb:
            p = 0
            while p < min(len(ta), len(tb)) and ta[p] == tb[p]:
                p += 1
            s = 0
            while s < min(len(ta), len(tb)) - p and ta[-1 - s] == tb[-1 - s]:
                s += 1
            out.append({"block": f"bb{i}", "start": base + p, "end": base + len(tb) - s})
        base += len(y.instructions)
    return out

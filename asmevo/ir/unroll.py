"""Unroll a uniform self-loop twice, with the exit test between the copies (a normalisation).

:func:`unroll_self_loop` rewrites one self-loop block ``B`` (its last instruction a
conditional branch ``s_cbranch_scc0/scc1/vccz/vccnz`` to ``B``'s own label, its fall-through
successor the next block ``X``) into a kernel that runs *exactly the same instructions in the
same order* on every path, only with branches in other places.  It is used twice:

* by the ``loop-pipeline`` pass (:mod:`asmevo.passes.loop_pipeline`), which then overlaps
  the two copies;
* by the verifier (:func:`asmevo.verify.equiv.check_kernels`), which proves a pipelined
  candidate against the *normalised* original with the relational proof
  (:mod:`asmevo.verify.relational`) -- that proof needs corresponding CFGs.

Neither imports the other; both import this module.

**The rewrite.**  ``B``'s body (without its branch ``br``) is split as ``P ++ C``, ``C`` the
longest suffix that writes nothing the branch reads (SCC for ``s_cbranch_scc*``, VCC for
``s_cbranch_vcc*``) and holds nothing of the deny list below.  Then, with new labels that
are unique in the kernel::

    H (B's position and label):  P ; inv(br) -> E      (scc0<->scc1, vccz<->vccnz)
    M (new, after H):            C ; P ; C ; br -> H
    X (unchanged, after M):      ...                    (gets a label if it had none)
    ...
    E (new, after the last block): C ; s_branch X

**Why it is correct.**  Unrolling a loop twice with the exit test between the copies is a
pure duplication: ``P C [test] P C [test] ...`` is the same sequence.  In ``H`` the test
runs after ``P`` instead of after ``P C``; it reads only the condition register (CDNA3 ISA
guide, "Program flow control": ``S_CBRANCH_SCC0/SCC1`` test SCC, ``S_CBRANCH_VCCZ/VCCNZ``
test VCCZ, i.e. VCC == 0) which ``C`` does not write, so it takes the same decision; and a
branch has no effect but the program counter, so the ``C`` that ran before it now runs
after it -- at the start of ``M`` when the loop goes on, in ``E`` (then ``s_branch X``)
when it leaves.  Every path of the result therefore executes the original's non-branch
instructions in the original's order, with the same values: the same registers, memory
accesses, waits and barriers.  ``E`` is placed after the last block, whose last instruction
does not fall through, so no existing fall-through changes; ``M`` falls through to ``X``
exactly as ``B`` did.

**Preconditions** (else None; all conservative):

* ``B`` is not the entry block (block 0), has a label, and ends in one of the four branches
  above, whose only operand is ``B``'s label (no addend);
* ``B`` is not the last block (``X`` exists), and the kernel's last block ends in
  ``s_endpgm`` or ``s_branch`` (nothing falls into ``E``);
* the kernel has no indirect control flow (``s_setpc_b64``, ``s_swappc_b64``,
  ``s_call_b64``, a branch to a label outside the kernel or with an addend): every branch
  target is a block we can see; and nothing in it depends on where code sits
  (``s_getpc_b64``, a symbolic expression such as a PC-relative relocation): the rewrite
  grows the loop and appends ``E``, so everything after the loop moves;
* no instruction of ``B``'s body is a branch or ``s_endpgm``, reads the program counter
  (``s_getpc_b64``: duplicated code runs at another address), names a label or a symbolic
  expression (a PC-relative relocation), is an undecodable word or data directive, or is
  missing from the ISA table;
* ``C`` additionally holds nothing from the deny list: ``s_sethalt``, ``s_trap``,
  ``s_sendmsg*``, ``s_barrier``, ``s_setreg*``, ``s_set_gpr_idx*``, ``s_setprio``,
  ``s_sleep``, ``s_icache_inv``, ``s_movrel*``/``v_movrel*`` (registers written by
  index: VCC among them), anything writing EXEC (its SGPR aliases
  ``s[126:127]``), anything without semantics in :mod:`asmevo.semantics.registry`;
* ``P`` and ``C`` are both non-empty;
* the result is at most 32767 - 512 dwords long (s_cbranch/s_branch take a signed 16-bit
  dword offset, CDNA3 ISA guide "SOPP"; a shorter kernel keeps every branch in range, with
  room for the ``s_nop`` s a pass may add).

What an instruction writes comes from the ISA table (:func:`asmevo.isa.operand_roles`,
:func:`asmevo.isa.implicit_defs`: LLVM's SOPInstructions.td ``Defs = [SCC]``) united with
the semantics registry's implicit outputs (:mod:`asmevo.semantics.registry`), so a write
either source knows of keeps the instruction out of ``C``.
"""

from __future__ import annotations

from .instruction import Instruction
from .module import BasicBlock, Kernel
from .operands import Expr, Label, reg_units

#: the conditional branches this normalisation handles -> their inverse
INVERSE = {"s_cbranch_scc0": "s_cbranch_scc1", "s_cbranch_scc1": "s_cbranch_scc0",
           "s_cbranch_vccz": "s_cbranch_vccnz", "s_cbranch_vccnz": "s_cbranch_vccz"}

#: the units each branch reads (VCC's SGPR aliases s106/s107 included)
_COND_UNITS = {"scc": frozenset({("scc",)}),
               "vcc": frozenset({("vcc_lo",), ("vcc_hi",), ("s", 106), ("s", 107)})}
_EXEC_UNITS = frozenset({("exec_lo",), ("exec_hi",), ("s", 126), ("s", 127)})

#: never in C (prefixes of mnemonics); see the module docstring
_DENY_C = ("s_sethalt", "s_trap", "s_sendmsg", "s_barrier", "s_setreg", "s_set_gpr_idx",
           "s_setprio", "s_sleep", "s_icache_inv", "s_rfe", "s_setkill", "s_cbranch",
           "s_branch", "s_endpgm", "s_setpc", "s_getpc", "s_swappc", "s_call",
           "s_movrel", "v_movrel")
#: never in the loop body at all
_DENY_BODY = ("s_cbranch", "s_branch", "s_endpgm", "s_setpc", "s_getpc", "s_swappc", "s_call",
              "s_rfe")

#: control flow that leaves the kernel's visible CFG, or code whose meaning depends on where
#: it sits (the normalisation moves code: everything after the loop shifts)
_INDIRECT = ("s_setpc_b64", "s_swappc_b64", "s_call_b64", "s_getpc_b64")

#: signed 16-bit dword offset of SOPP branches (32767), less a margin for the s_nop wait
#: states a pass may add afterwards
MAX_DWORDS = 32767 - 512

_IMPLICIT_NAMES = {"scc": (("scc",),), "vcc": (("vcc_lo",), ("vcc_hi",)),
                   "exec": (("exec_lo",), ("exec_hi",)), "m0": (("m0",),)}


def cond_kind(opcode: str) -> str | None:
    """``"scc"`` or ``"vcc"`` for the four branches handled, else None."""
    if opcode in ("s_cbranch_scc0", "s_cbranch_scc1"):
        return "scc"
    if opcode in ("s_cbranch_vccz", "s_cbranch_vccnz"):
        return "vcc"
    return None


def writes(inst: Instruction) -> frozenset | None:
    """Register units ``inst`` may write: explicit ``def``/``defuse`` operands and implicit
    defs from the ISA table, plus the semantics registry's implicit outputs.  None when the
    ISA table does not know the instruction (it may write anything)."""
    from .. import isa
    if inst.info is None:
        return None
    try:
        out = set()
        for op in isa.def_operands(inst):
            out.update(reg_units(op))
        out.update(isa.implicit_defs(inst))
    except Exception:  # noqa: BLE001 - the table cannot place its operands: unknown
        return None
    from ..semantics.registry import lookup
    spec = lookup(inst.opcode)
    if spec is not None:
        for name in spec.imp_out:
            out.update(_IMPLICIT_NAMES.get(name, ((name,),)))
    return frozenset(out)


def _undecodable(inst: Instruction) -> bool:
    return inst.opcode.startswith(".") or inst.info is None


def _symbolic(inst: Instruction) -> bool:
    """A symbolic expression operand (``sym@rel32@lo+4``: a PC-relative relocation), or a
    label outside a branch."""
    branch = inst.opcode == "s_branch" or inst.opcode.startswith("s_cbranch")
    for o in inst.operands:
        b = getattr(o, "base", o)
        if isinstance(b, Expr) or (isinstance(b, Label) and not branch):
            return True
    return False


def _body_ok(inst: Instruction) -> bool:
    """May ``inst`` be duplicated (part of P or C)?"""
    if _undecodable(inst) or inst.opcode.startswith(_DENY_BODY):
        return False
    return not any(isinstance(o, (Label, Expr)) or isinstance(getattr(o, "base", None), (Label, Expr))
                   for o in inst.operands)


def _c_ok(inst: Instruction, cond: frozenset) -> bool:
    """May ``inst`` be part of C (moved across the exit branch)?"""
    from ..semantics.registry import lookup
    if not _body_ok(inst) or inst.opcode.startswith(_DENY_C):
        return False
    spec = lookup(inst.opcode)
    if spec is None or spec.kind == "unsupported":
        return False
    w = writes(inst)
    if w is None:
        return False
    return not (w & cond) and not (w & _EXEC_UNITS)


def split_loop(kernel: Kernel, bi: int) -> tuple[int, int] | None:
    """``(len(P), len(C))`` for self-loop block ``bi`` when :func:`unroll_self_loop` applies
    to it (every precondition of the module docstring holds), else None."""
    blocks = kernel.blocks
    if not 0 < bi < len(blocks) - 1:
        return None
    b = blocks[bi]
    if not b.label or len(b.instructions) < 3:
        return None
    br = b.instructions[-1]
    kind = cond_kind(br.opcode)
    if kind is None or br.modifiers or len(br.operands) != 1:
        return None
    t = br.operands[0]
    if not (isinstance(t, Label) and t.addend == 0 and t.name == b.label):
        return None
    last = blocks[-1].instructions
    if not last or not (last[-1].opcode.startswith("s_endpgm") or last[-1].opcode == "s_branch"):
        return None
    labels = [x.label for x in blocks if x.label]
    if len(labels) != len(set(labels)):
        return None
    labels = set(labels)
    for x in blocks:
        for inst in x.instructions:
            op = inst.opcode
            if op in _INDIRECT or _symbolic(inst):
                return None
            if op == "s_branch" or op.startswith("s_cbranch"):
                lab = [o for o in inst.operands if isinstance(o, Label)]
                if len(lab) != 1 or lab[0].addend or lab[0].name not in labels:
                    return None
    body = b.instructions[:-1]
    if not all(_body_ok(i) for i in body):
        return None
    cond = _COND_UNITS[kind]
    n = len(body)
    while n > 0 and _c_ok(body[n - 1], cond):
        n -= 1
    np_, nc = n, len(body) - n
    if np_ == 0 or nc == 0:
        return None
    return np_, nc


def _dup(inst: Instruction) -> Instruction:
    """A second occurrence of ``inst``: same value and bytes, no address (it lives elsewhere)."""
    return Instruction(inst.opcode, inst.operands, inst.modifiers, encoding=inst.encoding,
                       raw=inst.raw)


def _fresh(taken: set, base: str) -> str:
    name, k = base, 1
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    taken.add(name)
    return name


def _size_dwords(blocks) -> int | None:
    total = 0
    for b in blocks:
        for i in b.instructions:
            s = i.size
            if s is None:
                s = 12   # the longest gfx942 encoding (64-bit + literal)
            total += s
    return total // 4


def unroll_self_loop(kernel: Kernel, block_index: int, *, taken_labels=()) -> Kernel | None:
    """``kernel`` with self-loop block ``block_index`` unrolled twice (module docstring), or
    None when a precondition fails.  ``kernel`` is not modified; the result shares the
    untouched blocks' instruction values (instructions are values) but has its own block
    objects and lists.  ``taken_labels``: labels the new ones must also avoid (other
    kernels' labels in the same module)."""
    split = split_loop(kernel, block_index)
    if split is None:
        return None
    np_, nc = split
    blocks = kernel.blocks
    b = blocks[block_index]
    body, br = b.instructions[:-1], b.instructions[-1]
    P, C = body[:np_], body[np_:]
    taken = set(kernel.labels()) | set(taken_labels)
    stem = f".Lunroll_{kernel.name}_{block_index}"
    e_label = _fresh(taken, stem + "_exit")
    x = blocks[block_index + 1]
    new_blocks = [BasicBlock(blk.label, list(blk.instructions), list(blk.directives))
                  for blk in blocks]
    xb = new_blocks[block_index + 1]
    if xb.label is None:
        xb.label = _fresh(taken, stem + "_next")
    x_label = xb.label
    h = BasicBlock(b.label, list(P) + [br.evolve(opcode=INVERSE[br.opcode],
                                                 operands=[Label(e_label)])],
                   list(b.directives))
    m = BasicBlock(None, [_dup(i) for i in C] + [_dup(i) for i in P] + [_dup(i) for i in C]
                   + [_dup(br)], [])
    e = BasicBlock(e_label, [_dup(i) for i in C]
                   + [Instruction("s_branch", [Label(x_label)])], [])
    new_blocks[block_index] = h
    new_blocks.insert(block_index + 1, m)
    new_blocks.append(e)
    del x
    size = _size_dwords(new_blocks)
    if size is None or size > MAX_DWORDS:
        return None
    return Kernel(kernel.name, new_blocks, kernel.is_kernel, kernel.descriptor, kernel.metadata,
                  kernel.address)


def self_loops(kernel: Kernel) -> list[int]:
    """Indices of the blocks :func:`unroll_self_loop` applies to."""
    return [i for i in range(len(kernel.blocks)) if split_loop(kernel, i) is not None]

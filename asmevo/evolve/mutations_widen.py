"""Widen memory accesses: two accesses of one base at adjacent offsets become one.

As LLVM's SILoadStoreOptimizer does (offsetsCanBeCombined / widthsFit /
checkAndPrepareMerge), in one block:

* ``s_load_dword{,x2,x4}`` pairs of equal width, same base and cache bits, offsets back to
  back -> ``s_load_dwordx{2,4,8}``;
* ``global_load_dword{,x2,x3}`` pairs, same address operands and cache bits, offsets back
  to back, at most 4 dwords -> ``global_load_dwordx{2,3,4}``; ``global_store_dword*`` alike
  when the data registers already form one tuple;
* ``ds_read_b32``/``ds_read_b64`` pairs, same address -> ``ds_read2_b32``/``ds_read2_b64``
  (offsets in elements, 8 bits each, distinct); ``ds_write_b32``/``_b64`` -> ``ds_write2_*``.

Alignment: every merged access needs only the alignment its parts had.  Global and scalar
(constant) memory ignore the two low address bits of dword and larger accesses, so a
multi-dword access needs dword alignment only (LLVM SIISelLowering
allowsMisalignedMemoryAccesses, "8.1.6"), which the dword parts already required; a
``ds_read2``/``ds_write2`` accesses each element at its own address, exactly as the two
single accesses did.  Buffer loads are left alone: their range checking (out-of-bounds
lanes read 0, which Triton's masking relies on) is not modelled per dword here.

Legal by construction: loads are merged at the first one (the second hoisted), stores at
the second (the first sunk); nothing between may write memory (loads) or access it
(stores), be pinned (barrier, message, branch), or write the address registers; the hoisted
destination must be free in between (not read, written or live).  The destinations must be
one aligned tuple (VGPR tuples even, SGPR pairs even, 4+ at a multiple of 4); when they are
not, both loaded values are renamed to a free aligned tuple
(:mod:`asmevo.evolve.mutations_rename`) or the pair is skipped.  One memory operation fewer
is counted, so every ``s_waitcnt`` of the counter after the merged one, up to a wait for 0,
waits for one fewer outstanding operation (a block that neither has such a wait nor ends the
program is skipped).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.instruction import Instruction
from ..ir.operands import Imm, Reg, base_of
from .mutations import _pinned, move
from . import mutations_rename as R   # attribute access: safe in an import cycle


@dataclass(frozen=True)
class Kind:
    family: str          #: smem | global-load | global-store | ds-read | ds-write
    width: int           #: dwords moved
    counter: int         #: 0 vmcnt, 1 lgkmcnt


_SMEM = {"s_load_dword": 1, "s_load_dwordx2": 2, "s_load_dwordx4": 4}
_GLD = {"global_load_dword": 1, "global_load_dwordx2": 2, "global_load_dwordx3": 3}
_GST = {"global_store_dword": 1, "global_store_dwordx2": 2, "global_store_dwordx3": 3}
_DSR = {"ds_read_b32": 1, "ds_read_b64": 2}
_DSW = {"ds_write_b32": 1, "ds_write_b64": 2}
_SMEM_WIDE = {2: "s_load_dwordx2", 4: "s_load_dwordx4", 8: "s_load_dwordx8"}
_GLD_WIDE = {2: "global_load_dwordx2", 3: "global_load_dwordx3", 4: "global_load_dwordx4"}
_GST_WIDE = {2: "global_store_dwordx2", 3: "global_store_dwordx3", 4: "global_store_dwordx4"}


def kind_of(inst) -> Kind | None:
    op = inst.opcode
    if op in _SMEM and len(inst.operands) == 3 and isinstance(inst.operands[2], Imm):
        return Kind("smem", _SMEM[op], 1)
    if op in _GLD and not inst.has_mod("lds"):
        return Kind("global-load", _GLD[op], 0)
    if op in _GST:
        return Kind("global-store", _GST[op], 0)
    if op in _DSR and not inst.has_mod("gds"):
        return Kind("ds-read", _DSR[op], 1)
    if op in _DSW and not inst.has_mod("gds"):
        return Kind("ds-write", _DSW[op], 1)
    return None


def _offset(inst, kind: Kind) -> int:
    if kind.family == "smem":
        return int(inst.operands[2].value)
    return int(inst.mod("offset", 0) or 0)


def _other_mods(inst) -> tuple:
    return tuple((n, v) for n, v in inst.modifiers if n != "offset")


def _address_ops(inst, kind: Kind) -> tuple:
    if kind.family == "smem":
        return (inst.operands[1],)
    if kind.family == "global-load":
        return tuple(inst.operands[1:])
    if kind.family == "global-store":
        return (inst.operands[0],) + tuple(inst.operands[2:])
    return (inst.operands[1],) if kind.family == "ds-read" else (inst.operands[0],)


def _data(inst, kind: Kind) -> Reg:
    return base_of(inst.operands[1] if kind.family in ("global-store", "ds-write")
                   else inst.operands[0])


def _reg_units(ops) -> frozenset:
    out = set()
    for o in ops:
        b = base_of(o)
        if isinstance(b, Reg):
            out |= R.units(b)
    return frozenset(out)


def pair_problem(a, b) -> str | None:
    """Why ``a`` (earlier) and ``b`` cannot be one access (offsets, widths, operands);
    None when they can."""
    ka, kb = kind_of(a), kind_of(b)
    if ka is None or kb is None or ka.family != kb.family:
        return "not two accesses of one kind"
    if _address_ops(a, ka) != _address_ops(b, kb) or _other_mods(a) != _other_mods(b):
        return "different address operands or cache bits"
    oa, ob = _offset(a, ka), _offset(b, kb)
    if oa == ob:
        return "same offset"
    if ka.family in ("ds-read", "ds-write"):
        if ka.width != kb.width:
            return "different element sizes"
        elt = 4 * ka.width
        if oa % elt or ob % elt or not (0 <= oa // elt <= 255 and 0 <= ob // elt <= 255):
            return "offsets do not fit the 8-bit element offsets"
        return None
    lo, hi = (ka, kb) if oa < ob else (kb, ka)
    if min(oa, ob) + 4 * lo.width != max(oa, ob):
        return "offsets are not back to back"
    w = ka.width + kb.width
    if ka.family == "smem":
        if ka.width != kb.width or w not in _SMEM_WIDE:
            return "scalar loads merge only equal widths into 2, 4 or 8 dwords"
    elif w > 4:
        return "more than 4 dwords"
    if _reg_units(_address_ops(a, ka)) & R.units(_data(a, ka)) and ka.family in (
            "smem", "global-load", "ds-read"):
        return "the first load overwrites the address"
    return None


def _merged(a, b, kind_a: Kind, lo_first: bool, data: Reg, offs: tuple[int, int]):
    """The one instruction for the pair (``lo_first``: ``a`` holds the low part)."""
    fam = kind_a.family
    mods = [m for m in a.modifiers if m[0] != "offset"]
    if fam == "smem":
        return Instruction(_SMEM_WIDE[data.count], [data, a.operands[1], Imm(min(offs), hex(min(offs)))],
                           a.modifiers)
    if fam == "global-load":
        om = [("offset", min(offs))] if min(offs) else []
        return Instruction(_GLD_WIDE[data.count], [data, *a.operands[1:]], om + mods)
    if fam == "global-store":
        om = [("offset", min(offs))] if min(offs) else []
        return Instruction(_GST_WIDE[data.count], [a.operands[0], data, *a.operands[2:]], om + mods)
    elt = 4 * kind_a.width
    o0, o1 = (offs[0], offs[1]) if lo_first else (offs[1], offs[0])
    om = ([("offset0", o0 // elt)] if o0 else []) + ([("offset1", o1 // elt)] if o1 else [])
    if fam == "ds-read":
        return Instruction("ds_read2_b32" if elt == 4 else "ds_read2_b64",
                           [data, a.operands[1]], om + mods)
    d0, d1 = (a.operands[1], b.operands[1]) if lo_first else (b.operands[1], a.operands[1])
    return Instruction("ds_write2_b32" if elt == 4 else "ds_write2_b64",
                       [a.operands[0], d0, d1], om + mods)


def _between_problem(ins, p1: int, p2: int, a, b, kind: Kind) -> str | None:
    """Whether the work strictly between the pair lets it become one access at the first
    (loads) or the second (stores) position."""
    from ..analysis.waitcnt import is_memory_write
    from ..isa import writes_lds
    load = kind.family in ("smem", "global-load", "ds-read")
    moved = b if load else a
    addr = _reg_units(_address_ops(moved, kind))
    mine = R.units(_data(moved, kind))
    for x in ins[p1 + 1:p2]:
        if x.opcode not in ("s_waitcnt", "s_nop") and _pinned(x):
            return f"{x.opcode} is in between"
        e = R._eff(x)
        if e.defs_may & (addr | (mine if not load else frozenset())):
            return f"{x.text()} writes the address or data"
        i = x.info
        is_mem = bool(i and (i.mem is not None or i.is_vmem or i.is_smem or i.is_ds or i.is_flat))
        if load and (is_memory_write(x) or writes_lds(x)):
            return f"{x.text()} writes memory"
        if not load and is_mem:
            return f"{x.text()} accesses memory"
    return None


def _fix_waits(ins, after: int, counter: int) -> dict | str:
    """{index: new wait} waiting for one fewer operation of ``counter`` after ``after``, up
    to a wait for 0; a reason when the block ends first without ending the program."""
    from ..analysis.waitcnt import MAX, make_waitcnt, parse_waitcnt
    edits: dict = {}
    for j in range(after + 1, len(ins)):
        x = ins[j]
        if x.opcode == "s_waitcnt":
            c = list(parse_waitcnt(x))
            if c[counter] == 0:
                return edits
            if c[counter] < MAX[counter]:
                c[counter] -= 1
                edits[j] = make_waitcnt(tuple(c))
    if ins and ins[-1].opcode == "s_endpgm":
        return edits
    return "operations may still be outstanding at the end of the block"


def merge_pair(view, bi: int, p1: int, p2: int, allow_rename: bool = True):
    """{index: instruction or None (removed)} merging the accesses at ``p1 < p2`` of block
    ``bi``, or the reason it cannot."""
    ins = view.blocks[bi].instructions
    a, b = ins[p1], ins[p2]
    why = pair_problem(a, b)
    if why:
        return why
    kind = kind_of(a)
    kb = kind_of(b)
    why = _between_problem(ins, p1, p2, a, b, kind)
    if why:
        return why
    oa, ob = _offset(a, kind), _offset(b, kb)
    da, db = _data(a, kind), _data(b, kb)
    load = kind.family in ("smem", "global-load", "ds-read")
    total = kind.width + kb.width
    if R.units(da) & R.units(db):
        return "the two data registers overlap"
    # which part is low: by address for widened accesses, free for read2/write2
    if kind.family in ("ds-read", "ds-write"):
        lo_first = None
    else:
        lo_first = oa < ob
    edits: dict = {}
    data = None
    if kind.family == "ds-write":    # two data operands: any registers
        lo_first, data = True, da
    for first in ((lo_first,) if lo_first is not None else (True, False)):
        if data is not None:
            break
        lo, hi = (da, db) if first else (db, da)
        if lo.file == hi.file and hi.index == lo.index + lo.count \
                and lo.index % R.align_of(lo.file, total) == 0:
            data, lo_first = Reg(lo.file, lo.index, total), first
            break
    if data is not None and load:
        # the second destination is written earlier now: it must be free in between
        if R.units(db) & R.busy_units(view, bi, p1, p2 - 1) - R.units(da):
            data = None
    if data is None:
        if not load or not allow_rename or (da.file == "v" and not view.vgpr_renames):
            return "the data registers are not one aligned tuple"
        lo_first = True if lo_first is None else lo_first
        va, vb = R.value_range(view, bi, p1, 0), R.value_range(view, bi, p2, 0)
        if isinstance(va, str) or isinstance(vb, str):
            return f"cannot rename the destinations: {va if isinstance(va, str) else vb}"
        end = max(va.last, vb.last, p2)
        ts = R.free_targets(view, bi, p1, end, da.file, total)
        if not ts:
            return "no free aligned tuple for the merged destination"
        data = ts[0]
        part_a = Reg(data.file, data.index if lo_first else data.index + kb.width, kind.width)
        part_b = Reg(data.file, data.index + kind.width if lo_first else data.index, kb.width)
        R.rename_edits(view, va, part_a, with_def=False, edits=edits)
        R.rename_edits(view, vb, part_b, with_def=False, edits=edits)
    new = _merged(a, b, kind, lo_first, data, (oa, ob))
    from ..passes.checks import typechecks
    if typechecks(new) is not True:
        return f"{new.text()} does not encode"
    at, gone = (p1, p2) if load else (p2, p1)
    if gone in edits or at in edits:
        return "a renamed use is the access itself"
    edits[at], edits[gone] = new, None
    waits = _fix_waits(ins, p2, kind.counter)
    if isinstance(waits, str):
        return waits
    for j, w in waits.items():
        if j in edits:
            return "a wait to adjust is also renamed"
        edits[j] = w
    return edits


def candidate_pairs(ins, i: int, span: int = 16):
    """Later instructions of the block that may pair with instruction ``i``."""
    if kind_of(ins[i]) is None:
        return []
    return [j for j in range(i + 1, min(len(ins), i + span)) if pair_problem(ins[i], ins[j]) is None]


@move("widen", env=True)
def widen(blocks, hot, rng, env):
    """Two accesses of one base at adjacent offsets as one wider access (or a
    ``ds_read2``/``ds_write2``)."""
    view = env.view(blocks)
    if not view.ok:
        return None
    from .mutations import _copy, _flat
    flat = _flat(blocks)
    pairs = []
    for g in sorted(hot):
        if g >= len(flat):
            continue
        bi, i = flat[g]
        for j in candidate_pairs(blocks[bi].instructions, i):
            pairs.append((g, bi, i, j))
    rng.shuffle(pairs)
    for g, bi, i, j in pairs[:6]:
        edits = merge_pair(view, bi, i, j)
        if isinstance(edits, str):
            continue
        nb = _copy(blocks)
        old = blocks[bi].instructions
        nb[bi].instructions = [edits[k] if k in edits else x for k, x in enumerate(old)
                               if not (k in edits and edits[k] is None)]
        if not R.window_provable(view, bi, nb[bi].instructions):
            continue
        merged = edits[i] if edits.get(i) is not None else edits[j]
        return nb, {"move": "widen", "index": g, "a": old[i].text(), "b": old[j].text(),
                    "new": merged.text()}
    return None

"""Register renaming for the moves: one value (a def and its uses) moved to a free register.

A *value* is one instruction's write of a VGPR/SGPR operand and every read of it that
follows in the same block, up to the instruction that overwrites it in full or to its last
read when it is dead after that (EXEC-aware may-liveness,
:class:`asmevo.analysis.liveness.MayLiveness`).  Renaming it breaks false (WAR/WAW)
dependences on the old register, so that ``move``/``hoist-load`` can reorder afterwards; the
widening moves use it to make two load destinations one aligned tuple.

Legal by construction (:func:`value_range`, :func:`free_targets`):

* the def writes the whole register in every active lane (not DPP/SDWA/``op_sel``/``d16``,
  not tied like ``v_fmac``, not ``v_writelane``/MFMA); every read is an explicit operand
  lying inside the register; no read or partial write of it is left over;
* a VGPR value: its def and reads are per-lane (no DPP, swizzle, readlane) and no
  instruction of its range writes EXEC, so the lanes the def skipped are never read;
* the value is dead after its range (its register is not live after the last read, or it
  is overwritten in full, under the same EXEC for a VGPR);
* the new register is free over the whole range (not live after any instruction of it, not
  read or written by any of them), has the same width and file, is aligned as gfx942 wants
  (VGPR tuples even; SGPR pairs even, 4+ dwords at a multiple of 4), lies inside the
  kernel's allocation (descriptor, metadata and ``.amdhsa_next_free_*``: the counts are
  never raised) and is no register the ABI initialises at entry (user/system SGPRs: kernarg
  pointer, work-group ids, preloaded arguments; ``v0``); EXEC/VCC/M0/SCC are never renamed.

Kernels the passes must not touch (indirect calls, registers read by index,
``s_set_gpr_idx``) are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ir.operands import REG_FILES, Reg, Src, base_of
from .mutations import move

#: register files a value may be renamed in
FILES = ("v", "s")
#: SGPRs the hardware reserves beyond the named ones on gfx942 (VCC, XNACK, FLAT_SCRATCH)
EXTRA_SGPRS = 6


def align_of(file: str, count: int) -> int:
    """Start alignment of a ``count``-dword tuple (CDNA3 ISA guide, "SGPR/VGPR alignment";
    :func:`asmevo.frontend.typecheck.check_register`)."""
    if count < 2:
        return 1
    if file in ("s", "ttmp"):
        return 2 if count == 2 else 4
    return 2


def aligned(r: Reg) -> bool:
    return r.index % align_of(r.file, r.count) == 0


def units(r: Reg) -> frozenset:
    return frozenset((r.file, r.index + k) for k in range(r.count))


# -- the kernel as the moves see it -----------------------------------------------------

class MoveEnv:
    """What the register-allocating moves need besides the blocks: K0 (its descriptor,
    metadata and ABI) and the kernel's name.  :meth:`view` analyses one block list.

    ``vgpr_renames`` (default off): whether ``rename`` and ``widen`` may rename VGPR values.
    They are legal, but the verifier's window proof compares every VGPR a changed window
    writes that is read anywhere (EXEC-masked lanes survive later writes), so a renamed VGPR
    is proved only by the relational proof across blocks: 10-50x the cost of a window proof,
    paid again by every descendant (each is verified against K0), and undecided on kernels
    with LDS traffic in the window.  SGPR renames are proved by the window proof."""

    def __init__(self, k0, kernel_name: str, vgpr_renames: bool = False):
        self.k0 = k0
        self.kernel_name = kernel_name
        self.vgpr_renames = vgpr_renames
        self._views: list = []

    def view(self, blocks) -> "KernelView":
        for b, v in self._views:
            if b is blocks:
                return v
        v = KernelView(self.k0, self.kernel_name, blocks)
        v.vgpr_renames = self.vgpr_renames
        self._views = ([(blocks, v)] + self._views)[:4]
        return v


class KernelView:
    """One candidate's kernel with liveness by position (block, index).

    The analysed kernel holds copies of the instructions, so that positions are unique even
    when one instruction value appears twice."""

    #: see :class:`MoveEnv`
    vgpr_renames = False

    def __init__(self, k0, kernel_name: str, blocks):
        from ..analysis import AnalysisManager
        from ..analysis.liveness import MayLiveness
        from ..passes.liveness import kernel_flow
        from .candidate import graft
        copies = [type(b)(b.label, [x.copy() for x in b.instructions], list(b.directives))
                  for b in blocks]
        self.module = graft(k0, kernel_name, copies)
        self.kernel = self.module.kernel(kernel_name)
        self.blocks = self.kernel.blocks
        am = AnalysisManager(self.module)
        flow = kernel_flow(self.kernel, am)
        self.ok = flow.ok and self.kernel.is_kernel
        self.live = am.get(MayLiveness, self.kernel) if self.ok else None
        self.limits = register_budget(self.kernel, self.module)
        k0k = k0.kernel(kernel_name)
        self.k0_blocks = k0k.blocks if len(k0k.blocks) == len(blocks) else None
        self.pinned = abi_units(self.kernel, self.module)

    def live_after(self, bi: int, ii: int) -> frozenset:
        return self.live.live_after(self.blocks[bi].instructions[ii])

    def live_before(self, bi: int, ii: int) -> frozenset:
        return self.live.live_before(self.blocks[bi].instructions[ii])

    def live_out(self, bi: int) -> frozenset:
        return self.live.live_out(bi)


def register_budget(kernel, module) -> dict[str, int]:
    """Registers a move may name, per file (exclusive bound): the least of the descriptor's
    allocation, the metadata counts and the ``.amdhsa_next_free_*`` fields, so that no count
    is ever raised; without any of them, the highest register the kernel already names."""
    from ..passes.checks import register_limits
    lim = {"v": REG_FILES["v"], "s": REG_FILES["s"]}
    known = {"v": False, "s": False}

    def cap(f, n):
        if n is not None:
            lim[f] = min(lim[f], int(n))
            known[f] = True
    kd = kernel.descriptor
    if kd is not None:
        cap("v", kd.vgpr_count)
        if kd.accum_offset_vgprs:
            cap("v", kd.accum_offset_vgprs)
        cap("s", kd.sgpr_count - EXTRA_SGPRS)
    md = kernel.metadata if isinstance(kernel.metadata, dict) else {}
    for key, f, extra in ((".vgpr_count", "v", 0), (".sgpr_count", "s", EXTRA_SGPRS)):
        try:
            cap(f, int(md[key]) - extra)
        except (KeyError, TypeError, ValueError):
            pass
    for f, n in register_limits(kernel, module).items():
        if f in lim:
            cap(f, n)
    if not all(known.values()):
        top = {"v": 0, "s": 0}
        for inst in kernel.instructions():
            for o in inst.operands:
                r = base_of(o)
                if isinstance(r, Reg) and r.file in top:
                    top[r.file] = max(top[r.file], r.index + r.count)
        for f in lim:
            if not known[f]:
                lim[f] = top[f]
    return lim


def abi_units(kernel, module) -> frozenset:
    """Units the kernel ABI gives a meaning at entry (never chosen as a new register): the
    user and system SGPRs, ``v0`` (packed work-item ids) and whatever else the analysis says
    the hardware initialises."""
    from ..analysis._abi import kernel_abi
    from ..passes.regalloc_compact import RegallocCompact
    u = set(kernel_abi(kernel, module).entry_units())
    u |= {("s", i) for i in range(RegallocCompact._min_sgprs(kernel, module))}
    u.add(("v", 0))
    return frozenset(u)


# -- instruction facts --------------------------------------------------------------------

def _eff(inst):
    from ..passes.effects import effects
    return effects(inst)


def _roles(inst):
    from ..isa import operand_roles
    try:
        return operand_roles(inst)
    except Exception:
        return None


def _writes_exec(inst) -> bool:
    return any(u[0] in ("exec_lo", "exec_hi") for u in _eff(inst).defs_may)


def _per_lane(inst) -> bool:
    from ..analysis.liveness import lane_effects
    return lane_effects(inst)[0]


def swap_reg(o, new: Reg):
    """Operand ``o`` with its register replaced by ``new`` (source modifiers kept)."""
    if isinstance(o, Src):
        return Src(new, o.neg, o.abs, o.sext, o.style)
    return new


def full_def_with(inst, k: int, new: Reg):
    """``inst`` with operand ``k`` (a def) renamed to ``new`` when that operand is then a
    full write in every active lane (the register is not also read, not partial), else
    ``None``."""
    x = inst.evolve(operands=[swap_reg(o, new) if j == k else o for j, o in enumerate(inst.operands)])
    e = _eff(x)
    if not e.known or e.partial or e.uses_all or e.barrier_kernel or not units(new) <= e.defs_must:
        return None
    if new.file == "v" and (not e.vector or not _per_lane(x)):
        return None
    if inst.opcode.startswith(("v_writelane", "v_mfma", "v_smfmac", "v_permlane")):
        return None
    return x


# -- values ------------------------------------------------------------------------------

@dataclass
class Value:
    """One value: written by operand ``op`` of ``blocks[block][index]`` (register ``reg``),
    read by ``uses`` = [(index, operand position)] of the same block; ``last`` is the last
    instruction the new register must stay free through (the last read, or the def)."""

    block: int
    index: int
    op: int
    reg: Reg
    uses: list = field(default_factory=list)
    last: int = 0


def def_operand(inst) -> int | None:
    """Position of the first operand ``inst`` writes that is a VGPR/SGPR register (role
    ``def``), or ``None``."""
    roles = _roles(inst)
    if not roles:
        return None
    for k, (o, r) in enumerate(zip(inst.operands, roles)):
        if r == "def" and isinstance(base_of(o), Reg) and base_of(o).file in FILES:
            return k
        if r == "defuse" and isinstance(base_of(o), Reg):
            return None
    return None


def _probe(inst, reg: Reg) -> Reg:
    """A register of ``reg``'s shape that no operand of ``inst`` touches (for effect tests)."""
    used = set()
    for o in inst.operands:
        b = base_of(o)
        if isinstance(b, Reg):
            used |= units(b)
    top = REG_FILES[reg.file] - reg.count
    for s in range(top, -1, -reg.count):
        r = Reg(reg.file, s, reg.count)
        if not units(r) & used:
            return r
    return reg


_FULL_CACHE: dict = {}


def full_write_units(inst) -> frozenset:
    """VGPR/SGPR units ``inst`` overwrites in full (in every active lane for VGPRs, per-lane
    instructions only): its ``def`` register operands that are full writes when renamed
    away from its sources (:func:`full_def_with`)."""
    key = inst.key()
    r = _FULL_CACHE.get(key)
    if r is None:
        out = set()
        roles = _roles(inst) or []
        for k, (o, role) in enumerate(zip(inst.operands, roles)):
            b = base_of(o)
            if role == "def" and isinstance(b, Reg) and b.file in FILES \
                    and full_def_with(inst, k, _probe(inst, b)) is not None:
                out |= units(b)
        if len(_FULL_CACHE) > 100000:
            _FULL_CACHE.clear()
        r = _FULL_CACHE[key] = frozenset(out)
    return r


def value_range(view: KernelView, bi: int, i: int, k: int | None = None) -> Value | str:
    """The value written by operand ``k`` (default :func:`def_operand`) of instruction
    ``i`` of block ``bi``, or the reason it cannot be renamed."""
    ins = view.blocks[bi].instructions
    d = ins[i]
    if k is None:
        k = def_operand(d)
    if k is None:
        return "no register def"
    reg = base_of(d.operands[k])
    if not isinstance(reg, Reg) or reg.file not in FILES:
        return "not a VGPR/SGPR"
    if (_roles(d) or [None] * (k + 1))[k] != "def":
        return "the def also reads its register"
    ru = units(reg)
    vec = reg.file == "v"
    if not ru <= full_write_units(d):
        return "the def is not a full write of its register"
    val = Value(bi, i, k, reg, [], i)
    open_ = set(ru)
    for j in range(i + 1, len(ins)):
        x = ins[j]
        ex = _eff(x)
        if not ex.known or ex.uses_all or ex.barrier_kernel:
            return f"{x.opcode} is not understood"
        if vec and _writes_exec(x):
            return "EXEC changes inside the value's range"
        rd = ex.uses & open_
        if rd:
            if vec and not _per_lane(x):
                return f"{x.opcode} reads other lanes"
            roles = _roles(x)
            if roles is None:
                return f"{x.opcode}: no operand roles"
            cover = set()
            for p, (o, r) in enumerate(zip(x.operands, roles)):
                b = base_of(o)
                if r == "def" or not isinstance(b, Reg) or not units(b) & open_:
                    continue
                if r == "defuse" or not units(b) <= open_:
                    return f"{x.text()} reads part of the value with other registers"
                val.uses.append((j, p))
                cover |= units(b)
            if not rd <= cover:
                return f"{x.text()} reads the register implicitly"
            val.last = j
        wr = ex.defs_may & open_
        if wr:
            if not wr <= full_write_units(x):
                return f"{x.text()} writes part of the value"
            open_ -= wr
        if not open_:
            break
    if open_ and open_ & view.live_out(bi):
        return "the value is live out of its block"
    if not val.uses:
        return "the value is never read"
    return val


_MODEL_CACHE: dict = {}


def z3_modelled(insts) -> bool:
    """Whether the verifier's window proof can execute ``insts`` symbolically (no barrier,
    branch, cross-lane or other unmodelled instruction): a change whose window it cannot
    execute is never proved, only tested, so the moves skip it rather than spend the gate's
    budget on it."""
    from ..semantics.registry import Unsupported
    from ..semantics.z3backend import symexec
    key = tuple(x.key() for x in insts)
    r = _MODEL_CACHE.get(key)
    if r is None:
        try:
            symexec(list(insts))
            r = True
        except Unsupported:
            r = False
        except Exception:  # noqa: BLE001 - anything else the executor trips on: not provable
            r = False
        if len(_MODEL_CACHE) > 20000:
            _MODEL_CACHE.clear()
        _MODEL_CACHE[key] = r
    return r


def window_provable(view: "KernelView", bi: int, new_insts) -> bool:
    """Whether the window the verifier will compare for block ``bi`` -- the candidate's block
    ``new_insts`` against K0's, common prefix and suffix stripped (so it also covers what the
    lineage changed before in this block) -- can be executed symbolically on both sides."""
    k0b = view.k0_blocks
    if k0b is None or bi >= len(k0b):
        return z3_modelled(new_insts)
    old = k0b[bi].instructions
    p = 0
    while p < min(len(old), len(new_insts)) and old[p] == new_insts[p]:
        p += 1
    so, sn = len(old), len(new_insts)
    while so > p and sn > p and old[so - 1] == new_insts[sn - 1]:
        so -= 1
        sn -= 1
    return z3_modelled(old[p:so]) and z3_modelled(new_insts[p:sn])


def busy_units(view: KernelView, bi: int, lo: int, hi: int) -> set:
    """Units not free anywhere in ``[lo, hi]`` of block ``bi``: live after one of those
    instructions, or read or written by one of them."""
    ins = view.blocks[bi].instructions
    busy: set = set()
    for j in range(lo, hi + 1):
        e = _eff(ins[j])
        busy |= e.uses | e.defs_may
        busy |= view.live_after(bi, j)
    return busy


def free_targets(view: KernelView, bi: int, lo: int, hi: int, file: str, count: int,
                 avoid=frozenset()) -> list[Reg]:
    """Aligned ``count``-dword registers of ``file`` inside the budget, not ABI registers,
    free over instructions ``[lo, hi]`` of block ``bi`` and disjoint from ``avoid``."""
    busy = busy_units(view, bi, lo, hi) | set(view.pinned) | set(avoid)
    step = align_of(file, count)
    out = []
    for s in range(0, view.limits.get(file, 0) - count + 1, step):
        r = Reg(file, s, count)
        if not units(r) & busy:
            out.append(r)
    return out


def target_problem(view: KernelView, val: Value, new: Reg) -> str | None:
    """Why ``new`` cannot hold ``val`` (None: it can)."""
    if new.file != val.reg.file or new.count != val.reg.count:
        return "another file or width"
    if not aligned(new):
        return f"{new} is not aligned for a {new.count}-dword tuple"
    if new.index + new.count > view.limits.get(new.file, 0):
        return f"{new} is outside the kernel's register allocation"
    if units(new) & view.pinned:
        return f"{new} has a meaning at kernel entry (ABI)"
    if units(new) & units(val.reg):
        return "overlaps the old register"
    if units(new) & busy_units(view, val.block, val.index, val.last):
        return f"{new} is live or used inside the value's range"
    return None


def rename_edits(view: KernelView, val: Value, new: Reg, with_def: bool = True,
                 edits: dict | None = None) -> dict | None:
    """{index: new instruction} of block ``val.block`` renaming ``val`` to ``new`` (the def
    too unless ``with_def`` is False), added to ``edits`` when given (renames compose);
    None when the renamed def is not a full write."""
    ins = view.blocks[val.block].instructions
    edits = {} if edits is None else edits
    if with_def:
        d = full_def_with(ins[val.index], val.op, new)
        if d is None:
            return None
        edits[val.index] = d
    by: dict = {}
    for j, p in val.uses:
        by.setdefault(j, []).append(p)
    for j, ps in by.items():
        x = edits.get(j, ins[j])
        ops = list(x.operands)
        for p in ps:
            b = base_of(ops[p])
            ops[p] = swap_reg(ops[p], Reg(new.file, new.index + b.index - val.reg.index, b.count))
        edits[j] = x.evolve(operands=ops)
    return edits


def apply_edits(blocks, bi: int, edits: dict, originals) -> list:
    """New block list with ``edits`` applied to block ``bi`` (``originals``: the parent's
    instructions by index, so that untouched ones keep their encodings)."""
    from .mutations import _copy
    nb = _copy(blocks)
    ins = nb[bi].instructions
    for j, x in edits.items():
        ins[j] = x if x is not None else originals[j]
    return nb


# -- the move ----------------------------------------------------------------------------

def _renamable(inst, vgprs: bool) -> bool:
    k = def_operand(inst)
    if k is None or (not vgprs and base_of(inst.operands[k]).file != "s"):
        return False
    e = _eff(inst)
    return e.known and not e.uses_all and inst.opcode not in ("s_waitcnt", "s_nop")


def _false_dep(ins, i: int, reg: Reg, span: int = 12) -> bool:
    """Whether the register is read or written by a nearby instruction outside its value
    (a WAR/WAW dependence a rename would break)."""
    ru = units(reg)
    for j in range(max(0, i - span), min(len(ins), i + span)):
        if j != i and ru & (_eff(ins[j]).defs_may):
            return True
    return False


@move("rename", env=True)
def rename(blocks, hot, rng, env):
    """One value (def and reads) to a free register of the same width, breaking false
    dependences on the old one (see the module docstring for the legality rules)."""
    view = env.view(blocks)
    if not view.ok:
        return None
    from .mutations import _flat
    flat = _flat(blocks)
    cands = [g for g in sorted(hot) if g < len(flat)
             and _renamable(blocks[flat[g][0]].instructions[flat[g][1]], view.vgpr_renames)]
    if not cands:
        return None
    # values with a nearby WAR/WAW on their register first (what a rename unblocks), SGPR
    # values often too: the window proof sees they are dead, while a renamed VGPR's old and
    # new registers stay compared (inactive lanes), leaving it to the relational proof
    pref, sgpr = [], []
    for g in cands:
        x = blocks[flat[g][0]].instructions[flat[g][1]]
        r = base_of(x.operands[def_operand(x)])
        if _false_dep(blocks[flat[g][0]].instructions, flat[g][1], r):
            pref.append(g)
        if r.file == "s":
            sgpr.append(g)
    p = rng.random()
    order = list(pref if pref and p < 0.45 else sgpr if sgpr and p < 0.8 else cands)
    rng.shuffle(order)
    for g in order[:8]:
        bi, i = flat[g]
        val = value_range(view, bi, i)
        if isinstance(val, str):
            continue
        targets = free_targets(view, bi, val.index, val.last, val.reg.file, val.reg.count,
                               avoid=units(val.reg))
        if not targets:
            continue
        new = rng.choice(targets)
        edits = rename_edits(view, val, new)
        if edits is None:
            continue
        nb = apply_edits(blocks, bi, edits, blocks[bi].instructions)
        if not window_provable(view, bi, nb[bi].instructions):
            continue
        return nb, {"move": "rename", "index": g, "old": str(val.reg), "new": str(new),
                    "uses": len(val.uses), "inst": blocks[bi].instructions[i].text()}
    return None

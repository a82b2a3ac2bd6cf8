"""STOKE-style local moves inside hot windows, legal by construction where that is cheap.

Each move takes the parent's blocks (lists of instructions; never edited in place), a set of
hot instruction indices and a ``random.Random``, and returns ``(new_blocks, description)`` or
``None`` when it finds nothing to do.  Dependences come from
:func:`asmevo.passes.effects.effects` (register units read and written, implicit
EXEC/VCC/SCC/M0, side effects); the operator then drops any result that adds a static
violation (waitcnt, hazard, register bounds: :func:`asmevo.passes.checks.static_violations`).
Whatever passes that filter still goes through the whole gate.

Moves: ``swap`` (independent neighbours), ``move`` (an instruction up or down past
independent work), ``hoist-load`` (a load as early as its operands allow, raising the
``vmcnt`` of the waits it crosses), ``sink-wait`` (an ``s_waitcnt`` down to just before the
first instruction that needs it), ``wait-weaken`` / ``wait-strengthen`` (one counter +1/-1),
``wait-merge`` (adjacent waits into one), ``nop-trim`` (remove or shorten an ``s_nop``),
``e32`` (an ``_e64`` VOP form as its shorter ``_e32`` encoding when it type-checks).

Moves that allocate registers take a fourth argument, a
:class:`~asmevo.evolve.mutations_rename.MoveEnv` (K0 and the kernel name: EXEC-aware
liveness by position, the register budget of the descriptor/metadata, the ABI registers);
each lives in its own module:

* ``rename`` (:mod:`.mutations_rename`): one value (a def and its reads up to its end in the
  block) to a free, aligned register of the same width inside the allocation, never an ABI
  register, never EXEC/VCC/M0/SCC; breaks WAR/WAW dependences for ``move``/``hoist-load``;
  SGPR values only unless ``MoveEnv.vgpr_renames`` (a renamed VGPR needs the verifier's
  relational proof, see :class:`~asmevo.evolve.mutations_rename.MoveEnv`);
* ``interleave`` (:mod:`.mutations_interleave`): a chain ``acc = acc op x`` split over two
  accumulators, only for exact integer ops (``v_add_u32``, ``v_and/or/xor_b32``,
  ``v_max/min_{i,u}32``, ``v_mul_lo_u32``), never float add/FMA/max/min;
* ``widen`` (:mod:`.mutations_widen`): two accesses of one base at adjacent offsets as one
  (``s_load_dword*``, ``global_load/store_dword*``) or as ``ds_read2``/``ds_write2``, the
  destinations renamed to an aligned tuple when needed, ``s_waitcnt`` counts adjusted.
"""

from __future__ import annotations

from ..ir.instruction import Instruction
from ..ir.operands import Imm

MOVES: dict = {}
#: moves that also take a :class:`asmevo.evolve.mutations_rename.MoveEnv` (K0, kernel name:
#: liveness, register budget, ABI registers) as a fourth argument
NEEDS_ENV: set = set()


def move(name, env: bool = False):
    def deco(fn):
        MOVES[name] = fn
        if env:
            NEEDS_ENV.add(name)
        return fn
    return deco


def call_move(name, blocks, hot, rng, env=None):
    """Run move ``name``; a move that needs an environment finds nothing without one."""
    if name in NEEDS_ENV:
        return MOVES[name](blocks, hot, rng, env) if env is not None else None
    return MOVES[name](blocks, hot, rng)


# -- instruction facts ----------------------------------------------------------------

def _eff(inst):
    from ..passes.effects import effects
    return effects(inst)


def _is_mem(inst) -> bool:
    i = inst.info
    return bool(i and (i.mem is not None or i.is_vmem or i.is_smem or i.is_ds or i.is_flat))


def _is_load(inst) -> bool:
    i = inst.info
    return bool(i and i.mem is not None and i.mem.kind == "load")


def _pinned(inst) -> bool:
    """Never moved: branches, endpgm, barriers, messages, mode and other side effects that
    are not plain memory, waits or nops."""
    i = inst.info
    if i is None or i.branch is not None:
        return True
    op = inst.opcode
    if op in ("s_waitcnt", "s_nop"):
        return False
    if op.startswith(("s_barrier", "s_sendmsg", "s_setprio", "s_sleep", "s_set", "s_get", "s_dcache",
                      "buffer_wbl2", "buffer_inv", "s_trap", "s_icache", "s_ttrace", "s_endpgm")):
        return True
    e = _eff(inst)
    if e.uses_all or e.barrier_kernel:
        return True
    if e.side_effects and not _is_mem(inst):
        return True
    if i.mem is not None and i.mem.kind not in ("load", "store"):
        return True  # atomics, cache operations
    return False


def independent(a, b) -> bool:
    """Whether ``a`` and ``b`` may trade places (registers, memory order, waits)."""
    if _pinned(a) or _pinned(b):
        return False
    ea, eb = _eff(a), _eff(b)
    if ea.defs_may & (eb.uses | eb.defs_may) or eb.defs_may & ea.uses:
        return False
    wa, wb = a.opcode == "s_waitcnt", b.opcode == "s_waitcnt"
    if wa and wb:
        return False
    if wa or wb:
        other = b if wa else a
        # a wait may trade places with non-memory work; the waitcnt check judges the uses
        return not _is_mem(other)
    if a.opcode == "s_nop" or b.opcode == "s_nop":
        return True
    if _is_mem(a) and _is_mem(b):
        return _is_load(a) and _is_load(b) and a.info.is_smem == b.info.is_smem \
            and a.info.is_vmem == b.info.is_vmem
    return True


# -- helpers ------------------------------------------------------------------------

def _copy(blocks):
    return [type(b)(b.label, list(b.instructions), list(b.directives)) for b in blocks]


def _flat(blocks):
    """[(block index, position)] by global instruction index."""
    return [(bi, i) for bi, b in enumerate(blocks) for i in range(len(b.instructions))]


def _pick(rng, hot, flat, pred):
    cands = [g for g in sorted(hot) if g < len(flat) and pred(*flat[g])]
    return rng.choice(cands) if cands else None


# -- moves -------------------------------------------------------------------------

@move("swap")
def swap(blocks, hot, rng):
    flat = _flat(blocks)

    def ok(bi, i):
        ins = blocks[bi].instructions
        return i + 1 < len(ins) and independent(ins[i], ins[i + 1])
    g = _pick(rng, hot, flat, ok)
    if g is None:
        return None
    bi, i = flat[g]
    nb = _copy(blocks)
    ins = nb[bi].instructions
    ins[i], ins[i + 1] = ins[i + 1], ins[i]
    return nb, {"move": "swap", "index": g, "a": ins[i + 1].text(), "b": ins[i].text()}


@move("move")
def move_inst(blocks, hot, rng):
    flat = _flat(blocks)
    g = _pick(rng, hot, flat, lambda bi, i: not _pinned(blocks[bi].instructions[i]))
    if g is None:
        return None
    bi, i = flat[g]
    ins = blocks[bi].instructions
    x = ins[i]
    d = rng.choice([-1, 1]) * rng.randint(1, 6)
    step = 1 if d > 0 else -1
    j = i
    while j != i + d:
        k = j + step
        if not 0 <= k < len(ins) or not independent(x, ins[k]):
            break
        j = k
    if j == i:
        return None
    nb = _copy(blocks)
    l = nb[bi].instructions
    l.insert(j, l.pop(i))
    return nb, {"move": "move", "index": g, "by": j - i, "inst": x.text()}


def _bump_vmcnt(w):
    from ..analysis.waitcnt import MAX, make_waitcnt, parse_waitcnt
    vm, lg, ex = parse_waitcnt(w)
    if vm >= MAX[0]:
        return w
    return make_waitcnt((vm + 1, lg, ex))


@move("hoist-load")
def hoist_load(blocks, hot, rng):
    """A VMEM load as early as its operands allow; a vmcnt wait it crosses counts one more
    outstanding operation (VMEM loads return in order)."""
    from ..analysis.waitcnt import MAX, parse_waitcnt
    flat = _flat(blocks)
    g = _pick(rng, hot, flat, lambda bi, i: _is_load(blocks[bi].instructions[i])
              and blocks[bi].instructions[i].info.is_vmem)
    if g is None:
        return None
    bi, i = flat[g]
    ins = list(blocks[bi].instructions)
    x = ins[i]
    j = i
    while j > 0:
        y = ins[j - 1]
        if y.opcode == "s_waitcnt":
            if parse_waitcnt(y)[0] == MAX[0] - 1:
                break
            # x is issued before the wait now: one more operation is outstanding there.
            # A wait that covered x's own operands is caught by the static waitcnt check.
            ins[j - 1], ins[j] = x, _bump_vmcnt(y)
            j -= 1
            continue
        if not independent(x, y):
            break
        ins[j - 1], ins[j] = x, y
        j -= 1
    if j == i:
        return None
    nb = _copy(blocks)
    nb[bi].instructions = ins
    return nb, {"move": "hoist-load", "index": g, "by": j - i, "inst": x.text()}


@move("sink-wait")
def sink_wait(blocks, hot, rng):
    flat = _flat(blocks)
    g = _pick(rng, hot, flat, lambda bi, i: blocks[bi].instructions[i].opcode == "s_waitcnt")
    if g is None:
        return None
    bi, i = flat[g]
    ins = blocks[bi].instructions
    n = rng.randint(1, 4)
    j = i
    while j + 1 < len(ins) and j - i < n and independent(ins[i], ins[j + 1]):
        j += 1
    if j == i:
        return None
    nb = _copy(blocks)
    l = nb[bi].instructions
    l.insert(j, l.pop(i))
    return nb, {"move": "sink-wait", "index": g, "by": j - i, "inst": ins[i].text()}


def _change_wait(blocks, hot, rng, delta):
    from ..analysis.waitcnt import MAX, make_waitcnt, parse_waitcnt
    flat = _flat(blocks)
    g = _pick(rng, hot, flat, lambda bi, i: blocks[bi].instructions[i].opcode == "s_waitcnt")
    if g is None:
        return None
    bi, i = flat[g]
    w = blocks[bi].instructions[i]
    c = list(parse_waitcnt(w))
    idx = [k for k in range(3) if (c[k] < MAX[k] if delta > 0 else 0 < c[k] <= MAX[k])]
    if delta < 0:
        idx = [k for k in range(3) if 0 < c[k] < MAX[k]] or idx
    if not idx:
        return None
    k = rng.choice(idx)
    c[k] = min(MAX[k], max(0, c[k] + delta))
    new = make_waitcnt(tuple(c))
    nb = _copy(blocks)
    if new is None:
        del nb[bi].instructions[i]
    else:
        nb[bi].instructions[i] = new
    return nb, {"move": "wait-weaken" if delta > 0 else "wait-strengthen", "index": g,
                "old": w.text(), "new": new.text() if new else None}


@move("wait-weaken")
def wait_weaken(blocks, hot, rng):
    return _change_wait(blocks, hot, rng, +1)


@move("wait-strengthen")
def wait_strengthen(blocks, hot, rng):
    return _change_wait(blocks, hot, rng, -1)


@move("wait-merge")
def wait_merge(blocks, hot, rng):
    """Two waits with only independent work between them become one at the later place
    (the counts are the minimum of both)."""
    from ..analysis.waitcnt import make_waitcnt, parse_waitcnt
    flat = _flat(blocks)
    g = _pick(rng, hot, flat, lambda bi, i: blocks[bi].instructions[i].opcode == "s_waitcnt"
              and any(x.opcode == "s_waitcnt" for x in blocks[bi].instructions[i + 1:i + 6]))
    if g is None:
        return None
    bi, i = flat[g]
    ins = blocks[bi].instructions
    j = next(k for k in range(i + 1, min(i + 6, len(ins))) if ins[k].opcode == "s_waitcnt")
    a, b = parse_waitcnt(ins[i]), parse_waitcnt(ins[j])
    merged = make_waitcnt(tuple(min(x, y) for x, y in zip(a, b)))
    nb = _copy(blocks)
    l = nb[bi].instructions
    l[j] = merged
    del l[i]
    return nb, {"move": "wait-merge", "index": g, "into": j - 1}


@move("nop-trim")
def nop_trim(blocks, hot, rng):
    flat = _flat(blocks)
    g = _pick(rng, hot, flat, lambda bi, i: blocks[bi].instructions[i].opcode == "s_nop")
    if g is None:
        return None
    bi, i = flat[g]
    x = blocks[bi].instructions[i]
    n = x.operands[0].value if x.operands and isinstance(x.operands[0], Imm) else 0
    nb = _copy(blocks)
    if n == 0 or rng.random() < 0.5:
        del nb[bi].instructions[i]
        return nb, {"move": "nop-remove", "index": g, "inst": x.text()}
    nb[bi].instructions[i] = x.evolve(operands=[Imm(n - 1, str(n - 1))])
    return nb, {"move": "nop-shorten", "index": g, "from": n, "to": n - 1}


@move("e32")
def e32(blocks, hot, rng):
    from ..isa import lookup
    from ..passes.checks import typechecks
    flat = _flat(blocks)

    def ok(bi, i):
        x = blocks[bi].instructions[i]
        return x.opcode.endswith("_e64") and not x.modifiers and lookup(x.opcode[:-4] + "_e32")
    g = _pick(rng, hot, flat, ok)
    if g is None:
        return None
    bi, i = flat[g]
    x = blocks[bi].instructions[i]
    new = Instruction(x.opcode[:-4] + "_e32", x.operands, x.modifiers)
    if typechecks(new) is not True:
        return None
    nb = _copy(blocks)
    nb[bi].instructions[i] = new
    return nb, {"move": "e32", "index": g, "old": x.text(), "new": new.text()}


# the register-allocating moves live in their own modules (one concept each); importing
# them registers them
from . import mutations_interleave, mutations_rename, mutations_widen  # noqa: E402,F401

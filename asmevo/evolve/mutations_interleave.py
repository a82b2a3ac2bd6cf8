"""Interleave accumulators: a chain of reductions on one register split over two.

A chain is ``acc = acc (op) x1; acc = acc (op) x2; ...`` in one block (same opcode, ``acc``
one VGPR that nothing else reads or writes in between, no EXEC write inside).  With ``n >= 3``
links it becomes::

    acc = acc (op) x1            # link 1, unchanged
                                 # link 2 removed
    t   = x2 (op) x3             # at link 3 (x2 still holds its value there)
    acc = acc (op) x4            # links 4, 6, ... stay on acc
    t   = t (op) x5              # links 5, 7, ... go to t
    ...
    acc = acc (op) t             # right after the last link

the same number of instructions with two dependence chains of half the length, ``t`` a
VGPR free over the chain (:func:`asmevo.evolve.mutations_rename.free_targets`: inside the
allocation, not an ABI register).

Only for operations that are associative, commutative and exact on every input, so the
result is bit-identical: ``v_add_u32`` (wrapping, no clamp), ``v_and_b32``, ``v_or_b32``,
``v_xor_b32``, ``v_max_{i,u}32``, ``v_min_{i,u}32``, ``v_mul_lo_u32``, without modifiers.
Never float add/FMA (rounding depends on the order) and not float max/min either: in IEEE
mode a signalling NaN operand is returned quieted (``S0`` first) and a NaN/NaN pair keeps one
payload by position (CDNA3 pseudocode, :mod:`asmevo.semantics`), so reassociating changes the
bits of NaN results.  No carry-out forms (``v_add_co_u32`` writes VCC) and no SALU (SCC).
"""

from __future__ import annotations

from ..ir.operands import Reg, Src, base_of
from .mutations import move
from . import mutations_rename as R   # attribute access: safe in an import cycle

#: base opcodes (without _e32/_e64) that may be reassociated bit-exactly
EXACT_OPS = frozenset({"v_add_u32", "v_and_b32", "v_or_b32", "v_xor_b32", "v_max_i32",
                       "v_max_u32", "v_min_i32", "v_min_u32", "v_mul_lo_u32"})


def base_op(opcode: str) -> str:
    for suf in ("_e32", "_e64"):
        if opcode.endswith(suf):
            return opcode[:-len(suf)]
    return opcode


def _link(inst):
    """``(acc, x operand, acc position)`` when ``inst`` is ``acc = acc (op) x`` of an exact
    op without modifiers, else None."""
    if base_op(inst.opcode) not in EXACT_OPS or inst.modifiers or len(inst.operands) != 3:
        return None
    if any(isinstance(o, Src) for o in inst.operands):
        return None
    d, a, b = inst.operands
    if not isinstance(d, Reg) or d.file != "v" or d.count != 1:
        return None
    if a == d and b != d:
        return d, b, 1
    if b == d and a != d:
        return d, a, 2
    return None


def find_chain(ins, i: int):
    """Indices of the chain starting at link ``i`` (at least one link), or None."""
    first = _link(ins[i])
    if first is None:
        return None
    acc, _, _ = first
    op = base_op(ins[i].opcode)
    au = R.units(acc)
    chain = [i]
    for j in range(i + 1, len(ins)):
        x = ins[j]
        e = R._eff(x)
        if not e.known or e.uses_all:
            break
        if R._writes_exec(x):
            break
        touches = au & (e.uses | e.defs_may)
        if not touches:
            continue
        lk = _link(x)
        if lk is None or lk[0] != acc or base_op(x.opcode) != op:
            break
        chain.append(j)
    return chain


def _make(op: str, dst: Reg, a, b, like):
    """``dst = a (op) b`` in the first encoding that type-checks (e32 with either operand
    order, then e64), or None."""
    from ..ir.instruction import Instruction
    from ..passes.checks import typechecks
    forms = [like.opcode] if not like.opcode.endswith(("_e32", "_e64")) else \
        [op + "_e32", op + "_e64"]
    for opc in forms:
        for x, y in ((a, b), (b, a)):
            inst = Instruction(opc, [dst, x, y], ())
            if typechecks(inst) is True:
                return inst
    return None


def interleave_chain(view, bi: int, chain: list[int], t: Reg | None = None):
    """{index: instruction or None (removed)} plus ``("after", last, inst)`` for the chain,
    or the reason it cannot be interleaved."""
    ins = view.blocks[bi].instructions
    if len(chain) < 3:
        return "a chain needs three links"
    links = [_link(ins[j]) for j in chain]
    acc = links[0][0]
    op = base_op(ins[chain[0]].opcode)
    xs = [lk[1] for lk in links]
    i2, i3 = chain[1], chain[2]
    # x2 is read at link 3 now: nothing may overwrite it in between
    x2u = R.units(base_of(xs[1])) if isinstance(base_of(xs[1]), Reg) else frozenset()
    for j in range(i2 + 1, i3):
        if x2u & R._eff(ins[j]).defs_may:
            return "x2 is overwritten before link 3"
    xu = set()
    for x in xs:
        if isinstance(base_of(x), Reg):
            xu |= R.units(base_of(x))
    if t is None:
        ts = R.free_targets(view, bi, i3, chain[-1], "v", 1, avoid=xu | R.units(acc))
        if not ts:
            return "no free VGPR for the second accumulator"
        t = ts[0]
    elif t in R.free_targets(view, bi, i3, chain[-1], "v", 1, avoid=xu | R.units(acc)):
        pass
    else:
        return f"{t} is not free over the chain"
    edits: dict = {i2: None}
    first = _make(op, t, xs[1], xs[2], ins[i3])
    if first is None:
        return "t = x2 (op) x3 does not encode"
    edits[i3] = first
    for n, j in enumerate(chain[3:], start=4):
        if n % 2:           # odd links go to t
            x = ins[j]
            ops = [t if o == acc else o for o in x.operands]
            new = x.evolve(operands=ops)
            from ..passes.checks import typechecks
            if typechecks(new) is not True:
                return f"{new.text()} does not encode"
            edits[j] = new
    comb = _make(op, acc, acc, t, ins[chain[-1]])
    if comb is None:
        return "acc = acc (op) t does not encode"
    return edits, comb, t


@move("interleave", env=True)
def interleave(blocks, hot, rng, env):
    """A chain of exact integer reductions on one VGPR split over two accumulators."""
    view = env.view(blocks)
    if not view.ok:
        return None
    from .mutations import _copy, _flat
    flat = _flat(blocks)
    starts = []
    for g in sorted(hot):
        if g >= len(flat):
            continue
        bi, i = flat[g]
        ins = blocks[bi].instructions
        if _link(ins[i]) is None:
            continue
        c = find_chain(ins, i)
        if c and len(c) >= 3:
            starts.append((g, bi, c))
    rng.shuffle(starts)
    for g, bi, c in starts[:4]:
        res = interleave_chain(view, bi, c)
        if isinstance(res, str):
            continue
        edits, comb, t = res
        nb = _copy(blocks)
        ins = nb[bi].instructions
        new = []
        for j, x in enumerate(ins):
            if j in edits:
                if edits[j] is not None:
                    new.append(edits[j])
            else:
                new.append(x)
            if j == c[-1]:
                new.append(comb)
        nb[bi].instructions = new
        if not R.window_provable(view, bi, new):
            continue
        return nb, {"move": "interleave", "index": g, "links": len(c), "op": base_op(
            blocks[bi].instructions[c[0]].opcode), "acc": str(_link(blocks[bi].instructions[c[0]])[0]),
            "t": str(t)}
    return None

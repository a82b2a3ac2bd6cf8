"""Single-edit mutations of kernels, for measuring the verifier (tests/verify/test_mutation.py).

Semantics-*changing* edits (the verifier must reject them or say unknown):

* ``swap-noncommutative``: swap src0/src1 of a non-commutative instruction
  (``v_sub*``, shifts, ``v_cndmask``, ordered compares...), or src0/src2 of a
  multiply-add-like one (``v_mad*``, ``v_fma*``, ``v_and_or``...), when they differ;
* ``reg-index``: change a source register to a neighbouring one of the same file;
* ``const``: change an immediate operand or a memory ``offset:`` modifier;
* ``drop-waitcnt`` / ``lower-waitcnt``: remove an ``s_waitcnt`` or lower one of its
  counts, where a later instruction reads a register loaded before it;
* ``drop-nop``: remove an ``s_nop`` that separates a hazard pair (per the hazard analysis);
* ``swap-dependent``: swap two adjacent instructions that depend on each other;
* ``branch-cond``: invert a conditional branch (``scc0``<->``scc1``, ``vccz``<->``vccnz``,
  ``execz``<->``execnz``).

Semantics-*preserving* edits (the verifier should accept them):

* ``swap-commutative``: swap the operands of a commutative instruction;
* ``reorder-independent``: swap two adjacent independent ALU instructions (unless that
  creates a hazard the kernel did not have: then it is not semantics-preserving on hardware);
* ``peephole``: replace an instruction by a form that z3 proves equivalent
  (``v_lshlrev_b32 d, 1, x`` -> ``v_add_u32 d, x, x``, ``v_sub_u32 d, a, b`` ->
  ``v_subrev_u32 d, b, a`` ...).

Each :class:`Mutation` carries the edited module (other kernels and blocks are
shared with the original, instructions are values).  Edits that break the
operand rules of the ISA table (:mod:`asmevo.frontend.typecheck`) are dropped,
so the verifier sees legal code.  Whether a "changing" edit really changes the
kernel's outputs is not guaranteed (a changed register may be dead); the
mutation test reports every accepted one.
"""

from __future__ import annotations

import dataclasses
import random
import re
from dataclasses import dataclass
from typing import Iterator

from ..ir.instruction import Instruction
from ..ir.module import BasicBlock, Kernel, Module
from ..ir.operands import Imm, Reg, Special, Src, base_of

CHANGING_KINDS = ("swap-noncommutative", "reg-index", "const", "drop-waitcnt", "lower-waitcnt",
                  "drop-nop", "swap-dependent", "branch-cond")
PRESERVING_KINDS = ("swap-commutative", "reorder-independent", "peephole")


@dataclass
class Mutation:
    """One edit.

    Attributes:
        kind: one of :data:`CHANGING_KINDS` / :data:`PRESERVING_KINDS`.
        changing: True for a semantics-changing edit.
        kernel: kernel name; ``block``/``index``: position of the (first) edited instruction.
        before, after: instruction texts (``after`` empty for a removal).
        module: the edited module.
    """

    kind: str
    changing: bool
    kernel: str
    block: int
    index: int
    before: str
    after: str
    module: Module
    new: list = dataclasses.field(default_factory=list)

    def describe(self) -> str:
        """One line: ``kind kernel@block:index: before -> after``."""
        return f"{self.kind} {self.kernel}@{self.block}:{self.index}: {self.before} -> {self.after or '(removed)'}"


def with_block(module: Module, kernel: str, bi: int, insts: list[Instruction]) -> Module:
    """A module equal to ``module`` except that block ``bi`` of ``kernel`` holds ``insts``."""
    items = []
    for it in module.items:
        if isinstance(it, Kernel) and it.name == kernel:
            blocks = list(it.blocks)
            b = blocks[bi]
            blocks[bi] = BasicBlock(b.label, list(insts), list(b.directives))
            it = Kernel(it.name, blocks, it.is_kernel, it.descriptor, it.metadata, it.address)
        items.append(it)
    return Module(items, module.source, module.code_object)


# ---------------------------------------------------------------------------- helpers

def _with_base(op, base):
    """``op`` with ``base`` in place of its base operand (its source modifiers kept)."""
    if isinstance(op, Src):
        return Src(base, op.neg, op.abs, op.sext, op.style)
    return base


_COMMUTATIVE = re.compile(
    r"^v_(add|mul|and|or|xor|max|min|mul_lo|mul_hi|mul_u32_u24|mul_i32_i24|mul_hi_u32_u24|"
    r"mul_hi_i32_i24|add_co)_(f32|f16|u32|i32|b32|u16|i16|f64|u64)(_e32|_e64)?$|"
    r"^v_(max3|min3|med3)_.*|^s_(add|mul|and|or|xor|nand|nor|xnor|max|min)_(u32|i32|b32|b64)$|"
    r"^v_fma_f32$|^v_fma_f64$|^v_mad_u64_u32$|^v_mad_i64_i32$|^v_mul_lo_u32$|^v_mul_hi_u32$|"
    r"^v_cmp_(eq|ne|lg|neq|o|u)_(f32|f64|i32|u32|i16|u16|f16|i64|u64)(_e32|_e64)?$")
_NONCOMMUTATIVE = re.compile(
    r"^v_(sub|subrev|sub_co|subrev_co|lshlrev|lshrrev|ashrrev|cndmask|ldexp|bfm)_\w+$|"
    r"^s_(sub|lshl|lshr|ashr|bfm|andn2|orn2|cselect)_\w+$|"
    r"^v_cmp_(lt|gt|le|ge|nlt|ngt|nle|nge)_\w+$|^s_cmp_(lt|gt|le|ge)_\w+$|"
    r"^v_(bfe|bfi|alignbit|alignbyte|perm|lshl_add|lshl_or|lerp)_\w+$|^v_pk_(sub|lshlrev|lshrrev|ashrrev)_\w+$")
#: three-source ops that commute in src0/src1 but not with src2 (a*b+c, (a&b)|c, (a+b)<<c, (a^b)+c)
_NONCOMMUTATIVE_02 = re.compile(r"^v_(mad|fma|mad_u64|mad_i64|and_or|add_lshl|xad|add3|or3|xor3)_\w+$|"
                                r"^v_(mad|fma)_(u32_u24|i32_i24|u16|i16|f32|f64|f16)$")
_COMMUTATIVE_ALL3 = re.compile(r"^v_(add3|or3|xor3)_")
_BRANCH_FLIP = {"s_cbranch_scc0": "s_cbranch_scc1", "s_cbranch_scc1": "s_cbranch_scc0",
                "s_cbranch_vccz": "s_cbranch_vccnz", "s_cbranch_vccnz": "s_cbranch_vccz",
                "s_cbranch_execz": "s_cbranch_execnz", "s_cbranch_execnz": "s_cbranch_execz"}
_NO_REORDER = re.compile(r"^(s_waitcnt|s_nop|s_barrier|s_endpgm|s_branch|s_cbranch|s_set|s_get|"
                         r"s_sendmsg|s_dcache|buffer_|global_|flat_|scratch_|ds_|s_load|s_buffer|"
                         r"s_store|v_readlane|v_writelane|v_readfirstlane|s_sleep|s_trap|s_icache)")


def _src_range(inst: Instruction) -> tuple[int, int]:
    """Index range of the source operands (after the destinations)."""
    from ..analysis._isa import facts
    f = facts(inst)
    ndef = 0
    for op in inst.operands:
        b = base_of(op)
        if isinstance(b, (Reg, Special)) and any(u in f.defs or u in f.partial
                                                  for u in _units(b)):
            ndef += 1
        else:
            break
    return ndef, len(inst.operands)


def _units(op) -> tuple:
    from ..ir.operands import reg_units
    return reg_units(op)


_LEGAL_CACHE: dict[str, bool] = {}


def legal_texts(texts: list[str]) -> dict[str, bool]:
    """Which instruction texts llvm-mc accepts for gfx942 (one batch run; cached).

    The assembler is the legality oracle (operand classes, VOP2 src1 rules,
    inline-constant limits), not a second copy of those rules."""
    todo = sorted({t for t in texts if t not in _LEGAL_CACHE})
    if todo:
        from ..errors import ToolFailedError
        from ..llvm import MCPU, TRIPLE, run_tool
        src = "\n".join(todo) + "\n"
        try:
            run_tool("llvm-mc", [f"-triple={TRIPLE}", f"-mcpu={MCPU}", "-show-encoding"], input=src)
            bad: set[int] = set()
        except ToolFailedError as e:
            bad = {int(m.group(1)) for m in re.finditer(r"<stdin>:(\d+):\d+: error", str(e))}
            if not bad:  # unexpected failure: trust nothing
                bad = set(range(1, len(todo) + 1))
        for i, t in enumerate(todo, 1):
            _LEGAL_CACHE[t] = i not in bad
    return {t: _LEGAL_CACHE[t] for t in texts}


def _legal(inst: Instruction) -> bool:
    """Kept for the generators' early filtering: always True here; :func:`generate`
    filters every edited instruction through :func:`legal_texts` in one batch."""
    return True


def _vop2_ok(inst: Instruction, ops: list) -> bool:
    """e32 (VOP2/VOPC) forms: src1 must be a VGPR (CDNA3 ISA guide, "VOP2")."""
    if not inst.opcode.endswith("_e32"):
        return True
    s, _ = _src_range(inst)
    if len(ops) <= s + 1:
        return True
    src1 = base_of(ops[s + 1])
    return isinstance(src1, Reg) and src1.file == "v"


def _imm_is(op, value: int) -> bool:
    b = base_of(op)
    return isinstance(b, Imm) and isinstance(b.value, int) and b.value == value


def _is_vgpr(op) -> bool:
    return isinstance(op, Reg) and op.file == "v"


# ---------------------------------------------------------------------------- generators

def _positions(module: Module) -> Iterator[tuple[Kernel, int, BasicBlock, int, Instruction]]:
    for k in module.kernels:
        for bi, b in enumerate(k.blocks):
            for ii, inst in enumerate(b.instructions):
                yield k, bi, b, ii, inst


def _replace(module, k, bi, b, ii, new: list[Instruction], kind, changing, before) -> Mutation:
    insts = b.instructions[:ii] + new + b.instructions[ii + 1:]
    return Mutation(kind, changing, k.name, bi, ii, before, "; ".join(i.text() for i in new),
                    with_block(module, k.name, bi, insts), list(new))


def _swap_operands(inst: Instruction, i: int, j: int) -> Instruction:
    ops = list(inst.operands)
    ops[i], ops[j] = ops[j], ops[i]
    return inst.evolve(operands=ops)


def _swaps(module: Module, commutative: bool) -> Iterator[Mutation]:
    pat = _COMMUTATIVE if commutative else _NONCOMMUTATIVE
    for k, bi, b, ii, inst in _positions(module):
        base = inst.opcode
        if inst.opcode.endswith(("_dpp", "_sdwa")):
            continue
        if not commutative and _NONCOMMUTATIVE_02.match(base) and not _COMMUTATIVE_ALL3.match(base):
            s, e = _src_range(inst)
            if e - s >= 3 and inst.operands[s] != inst.operands[s + 2]:
                new = _swap_operands(inst, s, s + 2)
                yield _replace(module, k, bi, b, ii, [new], "swap-noncommutative", True, inst.text())
            continue
        if not pat.match(base):
            continue
        if commutative and re.search(r"_(f16|f32|f64|bf16)", base) and not base.startswith("v_cmp"):
            continue  # NaN payload selection depends on operand order (bit-exact outputs)
        s, e = _src_range(inst)
        if e - s < 2:
            continue
        a, c = inst.operands[s], inst.operands[s + 1]
        if a == c:
            continue
        if isinstance(a, Src) or isinstance(c, Src):
            if commutative:
                continue  # keep modifiers attached: skip
        new = _swap_operands(inst, s, s + 1)
        if not _vop2_ok(new, new.operands) or not _legal(new):
            continue
        yield _replace(module, k, bi, b, ii, [new], "swap-commutative" if commutative
                       else "swap-noncommutative", not commutative, inst.text())


def _reg_index(module: Module, rng: random.Random) -> Iterator[Mutation]:
    for k, bi, b, ii, inst in _positions(module):
        if _NO_REORDER.match(inst.opcode) and not inst.opcode.startswith(("global_", "ds_", "buffer_",
                                                                          "flat_", "scratch_")):
            continue
        s, e = _src_range(inst)
        cands = [i for i in range(s, e) if isinstance(base_of(inst.operands[i]), Reg)
                 and base_of(inst.operands[i]).file in ("v", "s")]
        if not cands:
            continue
        i = rng.choice(cands)
        op = inst.operands[i]
        r = base_of(op)
        step = r.count if r.file == "s" and r.count > 1 else 1
        delta = rng.choice((-step, step)) if r.index >= step else step
        nr = Reg(r.file, r.index + delta, r.count)
        nop = _with_base(op, nr)
        ops = list(inst.operands)
        ops[i] = nop
        new = inst.evolve(operands=ops)
        if not _legal(new):
            continue
        yield _replace(module, k, bi, b, ii, [new], "reg-index", True, inst.text())


def _consts(module: Module, rng: random.Random) -> Iterator[Mutation]:
    for k, bi, b, ii, inst in _positions(module):
        if inst.opcode.startswith(("s_waitcnt", "s_nop", "s_cbranch", "s_branch", "s_sleep",
                                   "s_setprio", "s_getreg", "s_setreg", "s_sendmsg")):
            continue
        imms = [i for i, op in enumerate(inst.operands)
                if isinstance(base_of(op), Imm) and isinstance(base_of(op).value, int)]
        if imms:
            i = rng.choice(imms)
            v = base_of(inst.operands[i]).value
            nv = v + 1 if v not in (-1,) else 0
            if -16 <= v <= 64 and not -16 <= nv <= 64:
                nv = v - 1
            op = inst.operands[i]
            ni = Imm(nv)
            ops = list(inst.operands)
            ops[i] = _with_base(op, ni)
            new = inst.evolve(operands=ops)
            if _legal(new):
                yield _replace(module, k, bi, b, ii, [new], "const", True, inst.text())
                continue
        off = inst.mod("offset")
        if isinstance(off, int) and not isinstance(off, bool) and inst.opcode.startswith(
                ("global_", "ds_", "buffer_", "scratch_", "flat_", "s_load", "s_buffer_load")):
            mods = [(n, (v + 4 if n == "offset" else v)) for n, v in inst.modifiers]
            new = inst.evolve(modifiers=mods)
            if _legal(new):
                yield _replace(module, k, bi, b, ii, [new], "const", True, inst.text())


def _waitcnt_edits(module: Module) -> Iterator[Mutation]:
    """Remove an ``s_waitcnt``, or raise one of its counts (wait for fewer operations) to
    one more than the weakest safe count, where the wait is needed: some register
    use or memory-order point depends on it
    (:meth:`asmevo.analysis.waitcnt.WaitcntAnalysis.required` below the maximum)."""
    from ..analysis import AnalysisManager
    from ..analysis.waitcnt import MAX, NAMES, WaitcntAnalysis, format_waitcnt, parse_waitcnt
    from ..frontend.asm_parser import parse_instruction
    for k in module.kernels:
        try:
            wa = WaitcntAnalysis(k, AnalysisManager(module))
        except Exception:  # noqa: BLE001 - analysis cannot handle this kernel
            continue
        for bi, b in enumerate(k.blocks):
            for ii, inst in enumerate(b.instructions):
                if inst.opcode != "s_waitcnt":
                    continue
                try:
                    req = wa.required(inst)
                except KeyError:
                    continue
                need = [req[n] for n in NAMES]
                cur = list(parse_waitcnt(inst))
                if all(need[c] >= MAX[c] for c in range(3)):
                    continue
                insts = b.instructions[:ii] + b.instructions[ii + 1:]
                yield Mutation("drop-waitcnt", True, k.name, bi, ii, inst.text(), "",
                               with_block(module, k.name, bi, insts))
                c = next(c for c in range(3) if need[c] < MAX[c])
                weaker = list(cur)
                weaker[c] = need[c] + 1
                new = parse_instruction("s_waitcnt " + format_waitcnt(tuple(weaker)))
                if new != inst:
                    yield _replace(module, k, bi, b, ii, [new], "lower-waitcnt", True, inst.text())


def _drop_nops(module: Module) -> Iterator[Mutation]:
    """Remove an ``s_nop`` that separates a hazard pair: one whose removal makes the
    hazard analysis (:mod:`asmevo.analysis.hazards`) report a violation the kernel
    did not have (a redundant ``s_nop`` changes nothing and is not generated)."""
    try:
        from ..analysis import AnalysisManager
        from ..analysis.hazards import HazardAnalysis
    except ImportError:
        return

    def count(m: Module, kname: str) -> int:
        try:
            return len(HazardAnalysis(m.kernel(kname), AnalysisManager(m)).violations)
        except Exception:  # noqa: BLE001
            return -1

    base: dict[str, int] = {}
    for k, bi, b, ii, inst in _positions(module):
        if inst.opcode != "s_nop" or ii == 0 or ii + 1 >= len(b.instructions):
            continue
        if k.name not in base:
            base[k.name] = count(module, k.name)
        insts = b.instructions[:ii] + b.instructions[ii + 1:]
        mod = with_block(module, k.name, bi, insts)
        if base[k.name] < 0 or count(mod, k.name) <= base[k.name]:
            continue
        yield Mutation("drop-nop", True, k.name, bi, ii, inst.text(), "", mod)


def _adjacent_swaps(module: Module, dependent: bool) -> Iterator[Mutation]:
    from ..analysis._isa import facts
    for k, bi, b, ii, inst in _positions(module):
        if ii + 1 >= len(b.instructions):
            continue
        nxt = b.instructions[ii + 1]
        if _NO_REORDER.match(inst.opcode) or _NO_REORDER.match(nxt.opcode):
            continue
        if inst == nxt:
            continue
        fa, fb = facts(inst), facts(nxt)
        da, ua = set(fa.defs) | set(fa.partial), set(fa.uses)
        db, ub = set(fb.defs) | set(fb.partial), set(fb.uses)
        dep = bool(da & ub) or bool(db & ua) or bool(da & db)
        if dep != dependent:
            continue
        if dependent and not (da & ub):
            continue  # keep true (read-after-write) dependences only: clearly changing
        if dependent and inst.opcode == nxt.opcode and re.match(r"^v_(max|min)_", inst.opcode):
            continue  # min/max chains (and max(x,x) canonicalisation) commute: not changing
        insts = list(b.instructions)
        insts[ii], insts[ii + 1] = insts[ii + 1], insts[ii]
        mod = with_block(module, k.name, bi, insts)
        if not dependent and _new_hazards(module, mod, k.name):
            continue  # moving a VALU closer to its consumer needs wait states: not preserving
        yield Mutation("swap-dependent" if dependent else "reorder-independent", dependent,
                       k.name, bi, ii, f"{inst.text()}; {nxt.text()}", f"{nxt.text()}; {inst.text()}",
                       mod)


_HZ_CACHE: dict = {}


def _hazard_count(m: Module, kname: str) -> int:
    try:
        from ..analysis import AnalysisManager
        from ..analysis.hazards import HazardAnalysis
        return len(HazardAnalysis(m.kernel(kname), AnalysisManager(m)).violations)
    except Exception:  # noqa: BLE001 - no analysis: no filtering
        return 0


def _new_hazards(orig: Module, mod: Module, kname: str) -> bool:
    key = (id(orig), kname)
    if key not in _HZ_CACHE:
        _HZ_CACHE.clear() if len(_HZ_CACHE) > 64 else None
        _HZ_CACHE[key] = _hazard_count(orig, kname)
    return _hazard_count(mod, kname) > _HZ_CACHE[key]


def _branch_flips(module: Module) -> Iterator[Mutation]:
    for k, bi, b, ii, inst in _positions(module):
        if inst.opcode in _BRANCH_FLIP:
            new = inst.evolve(opcode=_BRANCH_FLIP[inst.opcode])
            yield _replace(module, k, bi, b, ii, [new], "branch-cond", True, inst.text())


def _peephole_candidates(inst: Instruction) -> list[Instruction]:  # noqa: C901
    """Rewrites of ``inst`` that are equivalent by construction (each is then proved by z3
    before use when a z3 backend exists)."""
    op, ops = inst.opcode, inst.operands
    out: list[Instruction] = []
    n = len(ops)
    if op == "v_lshlrev_b32_e32" and n == 3 and _imm_is(ops[1], 1) and _is_vgpr(ops[2]):
        out.append(Instruction("v_add_u32_e32", [ops[0], ops[2], ops[2]]))
    if op == "v_sub_u32_e32" and n == 3 and _is_vgpr(ops[1]):
        out.append(Instruction("v_subrev_u32_e32", [ops[0], ops[2], ops[1]]))
    if op == "v_subrev_u32_e32" and n == 3 and _is_vgpr(ops[1]):
        out.append(Instruction("v_sub_u32_e32", [ops[0], ops[2], ops[1]]))
    if op == "v_mov_b32_e32" and n == 2 and _is_vgpr(ops[1]):
        out.append(Instruction("v_or_b32_e32", [ops[0], ops[1], ops[1]]))
    if op == "v_mov_b32_e32" and n == 2 and _imm_is(ops[1], 0):
        out.append(Instruction("v_bfrev_b32_e32", [ops[0], Imm(0)]))
    if op == "s_mov_b32" and n == 2 and isinstance(ops[1], Reg):
        out.append(Instruction("s_mov_b32", [ops[0], ops[1]]))  # re-encoded (drops the raw bytes)
    if op in ("v_add_u32_e32", "v_xor_b32_e32", "v_or_b32_e32", "v_and_b32_e32") and n == 3:
        out.append(Instruction(op.replace("_e32", "_e64"), [ops[0], ops[2], ops[1]]))
    if op == "v_lshlrev_b32_e32" and n == 3 and isinstance(base_of(ops[1]), Imm) \
            and isinstance(base_of(ops[1]).value, int) and 0 <= base_of(ops[1]).value <= 6:
        out.append(Instruction("v_mul_lo_u32", [ops[0], ops[2], Imm(1 << base_of(ops[1]).value)]))
    if op == "v_lshl_add_u64" and n == 4 and _imm_is(ops[2], 0):
        out.append(Instruction("v_lshl_add_u64", [ops[0], ops[3], ops[2], ops[1]]))
    return out


def _peepholes(module: Module, prove: bool) -> Iterator[Mutation]:
    cands = [(k, bi, b, ii, inst, new) for k, bi, b, ii, inst in _positions(module)
             for new in _peephole_candidates(inst)]
    ok = legal_texts([c[-1].text() for c in cands])
    for k, bi, b, ii, inst, new in cands:
        if not ok[new.text()]:
            continue
        if prove:
            from .equiv import check_windows
            r = check_windows([inst], [new], timeout_ms=5000)
            if not r.equivalent:
                continue
        yield _replace(module, k, bi, b, ii, [new], "peephole", False, inst.text())


def generate(module: Module, *, seed: int = 0, changing: bool = True, preserving: bool = True,
             prove_peepholes: bool = True) -> list[Mutation]:
    """All single-edit mutations of ``module`` of the requested families (deterministic
    for a given ``seed``)."""
    rng = random.Random(seed)
    out: list[Mutation] = []
    if changing:
        out += list(_swaps(module, commutative=False))
        out += list(_reg_index(module, rng))
        out += list(_consts(module, rng))
        out += list(_waitcnt_edits(module))
        out += list(_drop_nops(module))
        out += list(_adjacent_swaps(module, dependent=True))
        out += list(_branch_flips(module))
    if preserving:
        out += list(_swaps(module, commutative=True))
        out += list(_adjacent_swaps(module, dependent=False))
        out += list(_peepholes(module, prove_peepholes))
    ok = legal_texts([i.text() for m in out for i in m.new])
    return [m for m in out if all(ok[i.text()] for i in m.new)]


def sample(mutations: list[Mutation], n: int, seed: int = 0) -> list[Mutation]:
    """A deterministic sample of at most ``n`` mutations, spread over kinds."""
    rng = random.Random(seed)
    by_kind: dict[str, list[Mutation]] = {}
    for m in mutations:
        by_kind.setdefault(m.kind, []).append(m)
    for v in by_kind.values():
        rng.shuffle(v)
    out: list[Mutation] = []
    while len(out) < n and any(by_kind.values()):
        for kind in sorted(by_kind):
            if by_kind[kind] and len(out) < n:
                out.append(by_kind[kind].pop())
    return out


# ---------------------------------------------------------------------------- evaluation

@dataclass
class Outcome:
    """The verifier's answer for one mutation."""

    mutation: Mutation
    status: str
    outcome: str
    layers: dict
    message: str
    seconds: float


def evaluate(original: Module, mutations: list[Mutation], *, harness: dict | None = None,
             trials: int = 3, seed: int = 0, timeout_ms: int = 5000) -> list[Outcome]:
    """Verify every mutation against ``original`` (level ``all`` with a harness, else ``z3``)."""
    import time
    from .driver import verify
    cache: dict = {}
    out = []
    for m in mutations:
        t = time.perf_counter()
        v = verify(original, m.module, harness=harness, level="all" if harness else "z3",
                   trials=trials, seed=seed, timeout_ms=timeout_ms, diff_cache=cache)
        out.append(Outcome(m, v.status.value, v.outcome, dict(v.layers), v.message,
                           time.perf_counter() - t))
    return out


def summarize(outcomes: list[Outcome]) -> dict:
    """Rates and per-layer breakdown.

    Returns ``{"changing": {...}, "preserving": {...}}`` with counts per outcome,
    per status, per kind, the rates (changing: rejected-or-unknown; preserving:
    accepted) and the mutations that missed the target.
    """
    res: dict = {}
    for label, want in (("changing", True), ("preserving", False)):
        xs = [o for o in outcomes if o.mutation.changing == want]
        by_status: dict = {}
        by_kind: dict = {}
        for o in xs:
            by_status[o.status] = by_status.get(o.status, 0) + 1
            k = by_kind.setdefault(o.mutation.kind, {"accepted": 0, "rejected": 0, "unknown": 0})
            k[o.outcome] += 1
        good = [o for o in xs if (o.outcome != "accepted") == want]
        bad = [o for o in xs if (o.outcome != "accepted") != want]
        from .verdict import Status
        by_layer: dict = {}
        for st, n in by_status.items():
            layer = Status(st).layer if Status(st).outcome == "rejected" else Status(st).outcome
            by_layer[layer] = by_layer.get(layer, 0) + n
        res[label] = {"n": len(xs), "good": len(good),
                      "rate": (len(good) / len(xs)) if xs else None,
                      "by_layer": dict(sorted(by_layer.items())),
                      "by_status": dict(sorted(by_status.items())), "by_kind": by_kind,
                      "misses": [f"{o.mutation.describe()} => {o.status}: {o.message[:160]}"
                                 for o in bad]}
    return res

"""Straight runs of a lockstep group's fast instructions compiled to one Python function.

:meth:`asmevo.emu.lockstep._Group._run_fast` runs instruction after instruction through a
dispatch on its form (a table look-up, a tuple unpack, set operations per instruction).
For a *block* -- consecutive instructions from one pc that are all ``vec``/``mem``
instructions writing no SGPR (``_F_VEC``) or scalar instructions that write no EXEC
(``_F_UNI``), up to and including a branch -- the same calls are made by one generated
function, in order, without that dispatch; a block whose branch goes back to its first
instruction (a self-loop) repeats inside the function.  The function is used only where
the dispatch would run every instruction of the block the same way: the SGPRs the block
reads are equal in the running waves (and SCC is), no other wave waits at a pc of the
block, and the instruction limit is not reached.  What each instruction does is its own
closure's work, so the results are those of :meth:`_run_fast`; the scalar instructions
run on the first running wave and what they wrote is copied to the others afterwards
(``wrote``, ``scc``: what the first ``k`` instructions of the block write, per ``k``).

A closure raising :class:`MemoryFault` writes nothing: the function returns the pc of that
instruction, and the caller runs it again on its general path, for the exact error.
``tests/emu/test_lockstep_block.py`` compares runs with and without blocks.
"""

from __future__ import annotations

from . import lockstep_blockgen as _gen
from .memory import MemoryFault

import re

#: compile blocks (False: _run_fast dispatches every instruction; tests compare the two)
ENABLED = True
_MIN_LEN = 2
#: at most this many instructions in one block (bounds the generated code)
MAX_LEN = 64
#: a block that is not a self-loop is compiled when the group comes to it again
COMPILE_AFTER = 1


class Block:
    """A compiled block: ``fn(view, w0, budget) -> (next pc, instructions run, faulted)``;
    ``reads`` the SGPR slots any of its instructions reads, ``pcs`` its pcs, ``length``,
    ``wrote[k]`` / ``scc[k]``: the SGPRs written / whether SCC is written by its first
    ``k`` instructions (``k`` up to ``length``); ``lm`` the SGPR slots its vector
    instructions read as lane masks (each wave its own row: the caller copies the first
    wave's pending scalar writes of them to the other waves before calling ``fn``)."""

    __slots__ = ("fn", "full", "reads", "pcs", "length", "wrote", "scc", "source", "lm")


def blocks(prog, fast, F_VEC, F_UNI, lm=None):
    """Per pc: the :class:`Block` starting there, an int (a block may start there: how
    often the group came to it; :func:`visit`), or None; cached on the program.  Blocks
    start at *leaders* -- a fast instruction after one that is not, after a branch, at a
    branch target, at a vector instruction reading as a lane mask an SGPR that a scalar
    instruction before it in the block writes, or every :data:`MAX_LEN` instructions of a
    longer run -- so that no instruction is compiled into more than one block.  ``fast``:
    :func:`asmevo.emu.lockstep._fast_forms` of the program (forms ``F_VEC`` / ``F_UNI``);
    ``lm``: per pc, the SGPR slots read as lane masks (:func:`asmevo.emu.lockstep._lm_reads`):
    each wave reads its own row, where the first wave's scalar writes arrive only when the
    block returns, so the caller copies them before a block whose ``lm`` they touch."""
    b = getattr(prog, "_lockstep_blocks", None)
    if b is None:
        from ..semantics.registry import lookup
        n = len(prog.insts)
        b = [None] * (n + 1)
        if ENABLED:
            ok, term, targets = [], [], set()
            for pc in range(n):
                f = fast[pc]
                spec = lookup(prog.insts[pc].opcode)
                ok.append(f is not None and f[0] in (F_VEC, F_UNI) and spec is not None and
                          spec.kind != "sys")
                term.append(ok[-1] and spec.kind == "branch")
                br = getattr(prog.code[pc], "branch", None)
                if br is not None:
                    targets.add(br[1])
            ok.append(False)
            ends = {}
            pc = 0
            while pc < n:
                if not ok[pc]:
                    pc += 1
                    continue
                end = pc + 1
                wrote = set(fast[pc][2])
                while end < n and end - pc < MAX_LEN and ok[end] and not term[end - 1] and \
                        end not in targets and \
                        (lm is None or not lm[end] or lm[end].isdisjoint(wrote)):
                    wrote.update(fast[end][2])
                    end += 1
                if end - pc >= _MIN_LEN:
                    ends[pc] = end
                    b[pc] = 0
                pc = end
            prog._lockstep_block_ends = ends
        prog._lockstep_blocks = b
    return b


def visit(prog, fast, pc):
    """The group comes to leader ``pc`` (``blocks(prog)[pc]`` an int): count it; the
    :class:`Block` once it is worth compiling -- at the second visit, or the first when its
    branch goes back to its start (a self-loop) -- else None."""
    b = prog._lockstep_blocks
    end = prog._lockstep_block_ends[pc]
    br = getattr(prog.code[end - 1], "branch", None)
    if b[pc] < COMPILE_AFTER and not (br is not None and br[1] == pc):
        b[pc] += 1
        return None
    b[pc] = blk = _compile(prog, fast, pc, end)
    return blk


def _compile(prog, fast, start, end):
    """The :class:`Block` of instructions ``start`` .. ``end - 1``."""
    from ..semantics.registry import lookup
    L = end - start
    code = prog.code
    params = {}
    reads = frozenset()
    wrote = [frozenset()]
    scc = [False]
    insts = []      # (pc, name, closure argument, may fault, vector)
    for j, pc in enumerate(range(start, end)):
        form, ridx, wset, wscc, m = fast[pc]
        reads = reads | ridx
        wrote.append(wrote[-1] | wset)
        scc.append(scc[-1] or bool(wscc))
        params[f"c{j}"] = code[pc]
        kind = lookup(prog.insts[pc].opcode).kind
        mem = kind in ("vmem", "vmem_atomic", "smem", "mubuf", "mubuf_atomic") or m[0] == "mem"
        insts.append((pc, f"c{j}", "view" if form == 0 else "w0", mem, form == 0))
    lmr = getattr(prog, "_lockstep_lm_reads", None)
    lm = frozenset().union(*(lmr[pc] for pc in range(start, end))) if lmr else frozenset()
    # a self-loop whose lane-mask reads see its own scalar writes of the pass before returns
    # after each pass (the caller copies the first wave's writes to the others first)
    repeat = lm.isdisjoint(wrote[-1])
    blk = Block()
    blk.lm = lm
    blk.reads = reads
    blk.pcs = frozenset(range(start, end))
    blk.length = L
    blk.wrote = wrote
    blk.scc = scc
    dead = _scc_dead(prog, fast, params, insts, False)
    blk.fn, blk.source = _build(_calls(insts, start, end, params, dead, repeat), params,
                                f"<block {start}-{end}>")
    blk.full = None
    full = _full(prog, insts, start, end, params, _scc_dead(prog, fast, params, insts, True)) \
        if repeat else None
    if full is not None:
        blk.full, src = _build(full, params, f"<block {start}-{end} full>")
        blk.source += src
    return blk


_CODE: dict = {}     # generated source -> its code object


def _build(body, params, name):
    """Compile ``blk(view, w0, budget)`` from its ``body`` lines."""
    src = f"def make({', '.join(params)}):\n" \
          "    def blk(view, w0, budget):\n" + \
          "".join(f"        {x}\n" for x in body) + \
          "    return blk\n"
    ns = dict(_gen.NAMESPACE, MemoryFault=MemoryFault)
    code = _CODE.get(src)
    if code is None:    # (a program's next version has most of its blocks' text again)
        code = compile(src, name, "exec")
        if len(_CODE) >= 4096:
            _CODE.clear()
        _CODE[src] = code
    exec(code, ns)    # noqa: S102
    return ns["make"](*params.values()), src


def _scalar_body(lines: list, last: bool) -> list:
    """A written-out scalar instruction's lines (:func:`_scalar`) inside a block: only the
    block's last instruction branches, so the others drop their ``npc =`` line."""
    return lines if last else [x for x in lines if not x.startswith("npc =")]


def _calls(insts, start, end, params, dead, repeat=True):
    """The block as its closures' calls (any EXEC); ``repeat``: a self-loop repeats inside
    the function (else it returns after each pass)."""
    L = end - start
    lines = []
    consts: dict = {}
    for j, (pc, name, arg, mem, _) in enumerate(insts):
        call = f"{name}({arg})"
        sc = _scalar(params[name], consts, j, pc, name, [], dead) if arg == "w0" else None
        if sc is not None:
            lines += _scalar_body(sc, pc + 1 == end)
            if pc + 1 < end:
                continue
        elif mem:
            lines += ["try:", f"    npc = {call}", "except MemoryFault:",
                      f"    return {pc}, k + {j}, True"]
        else:
            lines.append(f"npc = {call}")
        if pc + 1 < end:
            lines += [f"if npc != {pc + 1}:", f"    return npc, k + {j + 1}, False"]
    lines += [f"k += {L}",
              f"if npc != {start} or budget - k < {L}:" if repeat else "if True:",
              "    return npc, k, False"]     # (a self-loop repeats)
    params.update(consts)
    return ["s = w0.s", "k = 0", "while True:"] + ["    " + x for x in lines]


def _fill(lines, name, arg, pc, j, flush):
    """``lines`` with ``SLOW`` (the closure's call) and ``FAULT`` (write back ``flush``, then
    return the fault at instruction ``j``, pc ``pc``) filled in."""
    out = []
    for x in lines:
        ind = x[:len(x) - len(x.lstrip())]
        y = x.strip()
        if y == "SLOW":
            out.append(f"{ind}{name}({arg})")
        elif y == "FAULT":
            out += [ind + f for f in flush] + [f"{ind}return {pc}, k + {j}, True"]
        else:
            out.append(x)
    return out


def _scc_dead(prog, fast, params, insts, full):
    """The positions ``j`` in the block whose instruction's SCC result nothing can see: the
    next instruction that touches SCC writes it without reading it, and none before that
    can leave the block (only code written out without a memory access: generated scalar
    code, no-ops and -- with ``full`` -- the inline FMA and v_lshl_add_u64)."""
    dead = set()
    info = []
    for pc, name, _, _, _ in insts:
        m = fast[pc][4]
        c = params[name]
        stays = getattr(c, "sgen", None) is not None or (
            _gen.inline_scalar(c) is not None and getattr(c, "branch", None) is None) or \
            (full and _gen._name(c) in _gen.PURE and
             _gen.inline(prog.insts[pc], c, _gen.Regs(), {}, "x") is not None)
        info.append((bool(m[2]), bool(fast[pc][3]), stays))
    for j, (_, wscc, _) in enumerate(info):
        if not wscc or getattr(params[insts[j][1]], "sgen", None) is None:
            continue
        for rs, ws, stays in info[j + 1:]:
            if rs:
                break
            if ws:
                dead.add(j)
                break
            if not stays:
                break
    return dead


def _drop_scc(lines):
    """``lines`` of generated scalar code without its SCC write and the temporaries only
    that write used (the expressions have no side effects)."""
    lines = [x for x in lines if not x.startswith("w0.scc = ")]
    while True:
        names = [x.split(" = ", 1)[0] for x in lines]
        text = "\n".join(lines)
        drop = {i for i, nm in enumerate(names) if _TEMP.fullmatch(nm) and
                len(re.findall(rf"\b{nm}\b", text)) == 1}
        if not drop:
            return lines
        lines = [x for i, x in enumerate(lines) if i not in drop]


_TEMP = re.compile(r"[at]\d+_\d+")


def _scalar(closure, consts, j, pc, name, flush, dead=frozenset(), regs=None):
    """Lines for a scalar instruction (on ``w0``) written out, or None (call its closure);
    ``dead``: positions whose SCC result is not needed (:func:`_scc_dead`); ``regs``
    (:class:`asmevo.emu.lockstep_blockgen.Regs`, updated): SGPRs and SCC in its locals."""
    for smem, f in ((False, _gen.inline_scalar), (False, lambda c: _gen.inline_sgen(c, str(j))),
                    (True, lambda c: _gen.inline_smem(c, consts, str(j), regs))):
        lines = f(closure)
        if lines is not None:
            if j in dead and getattr(closure, "sgen", None) is not None:
                lines = _drop_scc(lines)
            if not any(x.strip().startswith("npc =") for x in lines):
                lines = lines + [f"npc = {pc + 1}"]
            if regs is not None and not smem:   # (inline_smem did it with regs)
                out: list = []
                regs.scalar_lines(out, lines)
                lines = out
            return _fill(lines, name, "w0", pc, j, flush)
    return None


def _full_body(prog, insts, start, end, params, regs, consts, dead):
    """The block's lines for full EXEC from register state ``regs`` (updated to the state
    at its end; ``npc`` then holds the next pc); the number of instructions inlined."""
    L = end - start
    out = []
    n_inl = 0
    floats = _gen.float_reads(prog.insts[start:end], [params[n] for _, n, _, _, _ in insts])
    for j, (pc, name, arg, mem, vector) in enumerate(insts):
        lines = _gen.inline(prog.insts[pc], params[name], regs, consts, str(j), floats)
        if lines is not None:
            n_inl += 1
            out += _fill(lines, name, arg, pc, j, [])    # (the slow way wrote back)
            if j == L - 1:
                out.append(f"npc = {pc + 1}")
            continue
        if arg == "w0":
            ex = []
            regs.copy().flush(ex)
            sc = _scalar(params[name], consts, j, pc, name, ex, dead, regs)
        else:
            sc = None
        after = regs.before_closure(out, prog.insts[pc], vector) if sc is None else ()
        call = f"{name}({arg})"
        if sc is not None:
            out += _scalar_body(sc, pc + 1 == end)
            if pc + 1 < end:
                continue
        elif mem:
            ex = []
            regs.copy().flush(ex)
            out += ["try:", f"    npc = {call}", "except MemoryFault:"] + \
                ["    " + x for x in ex] + [f"    return {pc}, k + {j}, True"]
        else:
            out.append(f"npc = {call}")
        if sc is None:
            regs.after_closure(out, after)
        if pc + 1 < end:
            ex = []
            regs.copy().flush(ex)
            out += [f"if npc != {pc + 1}:"] + ["    " + x for x in ex] + \
                [f"    return npc, k + {j + 1}, False"]
    return out, n_inl


def _full(prog, insts, start, end, params, dead):
    """The block's lines for full EXEC in every running wave (vector forms inline,
    :mod:`asmevo.emu.lockstep_blockgen`), or None when none is inlined.  The first pass
    starts with nothing in locals; a self-loop's later passes with what is in locals at
    the end of a pass and also at the start of the one before (a fixed point)."""
    L = end - start
    consts: dict = {}
    first, n_inl = _full_body(prog, insts, start, end, params, _gen.Regs(), consts, dead)
    if not n_inl:
        return None
    e0 = _gen.Regs()
    _full_body(prog, insts, start, end, params, e0, {}, dead)
    head = e0.copy()
    for _ in range(8):
        e = head.copy()
        _full_body(prog, insts, start, end, params, e, {}, dead)
        nxt = head.meet(e)
        if nxt.key() == head.key():
            break
        head = nxt
    else:
        return None
    e = head.copy()
    loop, _ = _full_body(prog, insts, start, end, params, e, consts, dead)

    def ending(state):
        ex = []
        state.copy().flush(ex)
        tr = []
        state.copy().flush_to(tr, head)
        return [f"k += {L}", f"if npc != {start} or budget - k < {L}:"] + \
            ["    " + x for x in ex] + ["    return npc, k, False"] + tr
    params.update(consts)
    entry = ["Vf = view.v", "s = w0.s", "sF = s.view(F32)", "k = 0"]
    outs = sorted({m for x in first + loop for m in re.findall(r"\bO_\d+\b", x)})
    if outs or any("OFF" in x for x in first + loop):
        params["BUFS"] = {}
        entry.append("T, TW, TM, TB, RX, RA, RL, OFF, OFFI, AM, C, X, Z, OUTS = "
                     f"block_buffers(BUFS, Vf.shape[1], {len(outs)})")
        if outs:
            entry.append(f"{', '.join(outs)}, = OUTS")
    return entry + first + ending(e0) + \
        ["while True:"] + ["    " + x for x in loop + ending(e)]

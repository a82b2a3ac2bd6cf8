"""Run the waves of a workgroup in lockstep while they execute the same code.

The register files of the W waves become views into shared arrays (``V``: (512, W, 64),
``A``: (256, W, 64), ``S``: (W, 128)), so every per-wave closure keeps working.  While all
waves are at the same instruction:

* ``vec`` instructions (lane-independent VALU / packed / mix instructions that only write
  vector registers) run ONCE on a :class:`BatchView` whose rows are (W*64,) lanes, provided
  the SGPRs they read hold the same value in every wave (one numpy call serves W waves);
* ``uni`` instructions (SALU, SOPC, branches, nops) run once on wave 0 when every SGPR
  (and SCC) they read is equal in all waves; the SGPRs/SCC they write are then copied to
  the other waves (the result is the same for all);
* everything else (memory, cross-lane, lane masks, non-uniform operands) runs wave by wave;
  when the waves' next instructions differ they continue one at a time (the round-robin
  scheduler of :func:`asmevo.emu.launch._run_group`) and re-merge at the next ``s_barrier``
  that all of them reach.

Because all waves are at the same instruction, a lockstep ``s_barrier`` completes at once.
Results are the same as running the waves one by one: the batched forms compute exactly
the per-wave closures' values.
"""

from __future__ import annotations

import numpy as np

from ..ir.operands import Reg, Special
from ..isa import def_operands, implicit_defs, implicit_uses, use_operands
from ..semantics.registry import lookup
from .executor import LANE_COUNT as lane_count
from .memory import EmuError, MemoryFault
from .state import EXEC, SPECIAL_SGPR, TTMP_BASE

BARRIER, ENDPGM = -1, -2
_VEC_KINDS = ("valu", "vop3p", "mix")
_UNI_KINDS = ("salu", "sopc", "branch", "nop", "barrier")
_DPP_MODS = ("quad_perm", "row_shl", "row_shr", "row_ror", "row_bcast", "row_mirror",
             "row_half_mirror", "row_newbcast", "wave_shl", "wave_shr", "wave_rol", "wave_ror")


class BatchView:
    """The W waves seen as one wave of W*64 lanes (for ``vec`` closures)."""

    __slots__ = ("v", "a", "s", "exec_mask", "exec_all", "exec_any", "mode", "scc")


def _sgpr_units(ops) -> list | None:
    """SGPR slot indices of operands/units; None when one is not an SGPR-file unit."""
    out = []
    for op in ops:
        if isinstance(op, tuple):          # implicit unit: ("exec_lo",), ("scc",), ("vcc_lo",)
            name = op[0]
            if name == "scc":
                continue
            if name in SPECIAL_SGPR:
                out.append(SPECIAL_SGPR[name])
                continue
            return None
        b = getattr(op, "base", op)
        if isinstance(b, Reg):
            if b.file == "s":
                out += range(b.index, b.index + b.count)
            elif b.file == "ttmp":
                out += range(TTMP_BASE + b.index, TTMP_BASE + b.index + b.count)
            elif b.file not in ("v", "a"):
                return None
        elif isinstance(b, Special):
            n = b.name
            if n in SPECIAL_SGPR:
                i = SPECIAL_SGPR[n]
                out += [i, i + 1] if n in ("vcc", "exec", "flat_scratch", "xnack_mask") else [i]
            elif n in ("scc", "src_scc", "execz", "src_execz", "vccz", "src_vccz"):
                if n.endswith("execz"):
                    out += [EXEC, EXEC + 1]
                elif n.endswith("vccz"):
                    out += [SPECIAL_SGPR["vcc"], SPECIAL_SGPR["vcc"] + 1]
            elif n in ("off", "null") or n.startswith("src_"):
                continue
            else:
                return None
    return out


def _reads_scc(inst, spec) -> bool:
    if "scc" in spec.imp_in or any(u == ("scc",) for u in implicit_uses(inst)):
        return True
    return any(isinstance(getattr(o, "base", o), Special) and
               getattr(o, "base", o).name in ("scc", "src_scc") for o in inst.operands)


def classify(inst) -> tuple | None:
    """Lockstep form of one instruction: ``("vec"|"uni", read_idx, reads_scc, write_idx,
    writes_scc)`` or None (run wave by wave)."""
    spec = lookup(inst.opcode)
    if spec is None:
        return None
    kind = spec.kind
    if spec.name in ("v_readlane_b32", "v_writelane_b32") and len(inst.operands) == 3:
        return _lane_mode(inst, spec.name)
    if kind == "ds" and spec.extra.get("op") in ("read", "write") and \
            spec.extra.get("size", 0) % 4 == 0 and not spec.extra.get("d16") and \
            len(inst.operands) == 2 and not inst.has_mod("gds"):
        ops = [getattr(o, "base", o) for o in inst.operands]
        addr, reg = (ops[1], ops[0]) if spec.extra["op"] == "read" else (ops[0], ops[1])
        if isinstance(addr, Reg) and addr.file == "v" and isinstance(reg, Reg) and \
                reg.file in ("v", "a"):
            return ("ds" + spec.extra["op"][0], addr.index, reg.file, reg.index,
                    spec.extra["size"] // 4, int(inst.mod("offset", 0) or 0))
    if kind == "vmem" and spec.extra.get("seg") == "global" and spec.extra["size"] % 4 == 0 \
            and not spec.extra.get("d16") and not spec.extra.get("lds"):
        kind = "mem"        # global_load/store_dword*: one gather/scatter for all waves
    elif kind in _VEC_KINDS:
        if inst.opcode.endswith(("_dpp", "_sdwa")) or any(inst.has_mod(m) for m in _DPP_MODS):
            return None
        if "lm" in spec.dst or "lm" in spec.src or spec.imp_in or spec.imp_out:
            return None
        if spec.fn is None or "lane_id" in getattr(getattr(spec.fn, "__code__", None),
                                                   "co_names", ("lane_id",)):
            return None
        if "mbcnt" in spec.name or "readlane" in spec.name or "writelane" in spec.name:
            return None
        for op in inst.operands[:len(spec.dst)]:
            b = getattr(op, "base", op)
            if not (isinstance(b, Reg) and b.file in ("v", "a")):
                return None
    elif kind not in _UNI_KINDS:
        return None
    try:
        uses = list(use_operands(inst))
        if kind not in _VEC_KINDS + ("mem",):   # a VALU's implicit EXEC use is per lane here
            uses += list(implicit_uses(inst))
        defs = list(def_operands(inst)) + list(implicit_defs(inst))
    except Exception:   # noqa: BLE001  (an instruction the ISA table does not describe)
        return None
    ridx = _sgpr_units(uses)
    widx = _sgpr_units(defs)
    if ridx is None or widx is None:
        return None
    if spec.name in ("s_cbranch_execz", "s_cbranch_execnz"):
        ridx += [EXEC, EXEC + 1]
    elif spec.name in ("s_cbranch_vccz", "s_cbranch_vccnz"):
        ridx += [SPECIAL_SGPR["vcc"], SPECIAL_SGPR["vcc"] + 1]
    if kind in _VEC_KINDS + ("mem",) and widx:
        return None
    writes_scc = "scc" in spec.imp_out or any(u == ("scc",) for u in implicit_defs(inst))
    w = sorted(set(widx))
    if w and w == list(range(w[0], w[-1] + 1)):
        wsl = slice(w[0], w[-1] + 1)       # contiguous: a slice copies faster
    else:
        wsl = np.array(w, np.intp) if w else None
    return (kind if kind in ("barrier", "mem") else ("vec" if kind in _VEC_KINDS else "uni"),
            frozenset(ridx), _reads_scc(inst, spec), wsl, frozenset(w), writes_scc,
            EXEC in w or EXEC + 1 in w)


def _lane_mode(inst, name):
    """v_readlane_b32 / v_writelane_b32 with an SGPR/constant lane select: ("rl"|"wl", lane
    select (slot or -1 - constant), register, other operand slot or -1 - constant)."""
    d, x, sel = (getattr(o, "base", o) for o in inst.operands)

    def sslot(o):
        if isinstance(o, Reg) and o.file == "s" and o.count == 1:
            return o.index
        if type(o).__name__ == "Imm" and isinstance(o.value, int):
            return -1 - (o.value & 0xFFFFFFFF)
        return None
    ls = sslot(sel)
    if ls is None:
        return None
    if name == "v_readlane_b32":
        if not (isinstance(x, Reg) and x.file == "v" and isinstance(d, Reg) and d.file == "s"
                and d.count == 1):
            return None
        return ("rl", ls, x.index, d.index)
    xs = sslot(x)
    if xs is None or not (isinstance(d, Reg) and d.file == "v" and d.count == 1):
        return None
    return ("wl", ls, d.index, xs)


def sgpr_writes(inst):
    """(SGPR slots written, writes SCC) of an instruction, or None when unknown."""
    try:
        defs = list(def_operands(inst)) + list(implicit_defs(inst))
    except Exception:   # noqa: BLE001
        return None
    w = _sgpr_units(defs)
    if w is None:
        return None
    return frozenset(w), any(u == ("scc",) for u in implicit_defs(inst)) or \
        "scc" in getattr(lookup(inst.opcode), "imp_out", ("scc",))


_DW = {k: np.arange(k, dtype=np.intp)[:, None] for k in (1, 2, 3, 4)}


def _lds_words(waves):
    """(uint32 view of one buffer holding every wave's LDS, per-lane dword offset of each
    wave's LDS in it (W*64,), {ndw: highest valid byte address}) or (None, None, None)
    when the workgroups' LDS are not segments of one buffer."""
    stores = [wv.group.lds._store for wv in waves]
    base = stores[0].base
    size = waves[0].group.lds.data.size
    if base is None or any(st.base is not base for st in stores) or base.dtype != np.uint8 or \
            base.size % 4 or any(wv.group.lds.data.size != size for wv in waves) or size < 4:
        return None, None, None
    p0 = base.__array_interface__["data"][0]
    offs = [(st.__array_interface__["data"][0] - p0) for st in stores]
    if any(o % 4 for o in offs):
        return None, None, None
    seg = np.repeat(np.array(offs, np.intp) // 4, 64)
    lim = {k: np.uint32(size - 4 * k) for k in (1, 2, 3, 4) if size >= 4 * k}
    if len(lim) < 4:
        return None, None, None
    return base.view(np.uint32), seg, lim


def _nonuniform(S, waves):
    """(frozenset of SGPR slots whose value differs between the waves, SCC uniform?)."""
    d = np.flatnonzero((S != S[0]).any(axis=0))
    s0 = waves[0].scc
    return frozenset(d.tolist()), all(wv.scc == s0 for wv in waves)


def _bind(waves):
    """Make the waves' register files views of shared arrays; returns (V, A, S)."""
    W = len(waves)
    V, A, S = (getattr(waves[0], f).base for f in ("v", "a", "s"))
    if V is not None and A is not None and S is not None and V.shape[1:] == (W, 64) and \
            A.shape[1:] == (W, 64) and S.shape[0] == W and \
            all(wv.v.base is V and wv.a.base is A and wv.s.base is S for wv in waves) and \
            all(np.shares_memory(wv.v, V[:, w]) and wv.s is not None for w, wv in enumerate(waves)):
        return V, A, S          # already views of shared files (asmevo.emu.launch)
    V = np.empty((waves[0].v.shape[0], W, 64), np.uint32)
    A = np.empty((waves[0].a.shape[0], W, 64), np.uint32)
    S = np.empty((W, waves[0].s.shape[0]), np.uint32)
    for w, wv in enumerate(waves):
        V[:, w] = wv.v
        A[:, w] = wv.a
        S[w] = wv.s
        wv.v = V[:, w]
        wv.a = A[:, w]
        wv.s = S[w]
    return V, A, S


def run_lockstep(prog, waves, limit: int, fallback) -> None:
    """Run one workgroup's ``waves`` (all at the same pc) to ``s_endpgm``; ``fallback(prog,
    waves, limit)`` runs waves that diverged until they reach a barrier (returns the waves
    at the barrier).  Raises EmuError like :meth:`Program.run_wave`."""
    W = len(waves)
    modes, writes = prog.lockstep_modes()
    code = prog.code
    V, A, S = _bind(waves)
    view = BatchView()
    view.v = V.reshape(V.shape[0], W * 64)
    view.a = A.reshape(A.shape[0], W * 64)
    w0 = waves[0]
    rest = waves[1:]
    live = waves
    Vf, Af = view.v, view.a
    lds, lds_seg, lds_lim = _lds_words(waves)
    while live:
        if len(live) < W or len({wv.pc for wv in live}) != 1 or \
                len({wv.mode for wv in live}) != 1 or any(wv.gpr_idx for wv in live):
            live = fallback(prog, live, limit)
            continue
        pc = w0.pc
        n = 0
        nu, scc_u = _nonuniform(S, waves)
        try:
            while True:
                n += 1
                if n > limit:
                    raise EmuError(f"kernel {prog.kernel.name}: more than {limit} instructions in "
                                   f"one wave (runaway loop?) at {prog.where(pc)}")
                m = modes[pc]
                if m is not None and m[0] in ("dsr", "dsw"):
                    if lds is not None and all(wv.exec_all for wv in waves):
                        kind, areg, rfile, rreg, ndw, off = m
                        a = Vf[areg]
                        if off:
                            a = a + np.uint32(off)
                        if not np.count_nonzero((a & np.uint32(3)) | (a > lds_lim[ndw])):
                            w = (a >> np.uint32(2)).astype(np.intp) + lds_seg
                            R = Vf if rfile == "v" else Af
                            if kind == "dsr":
                                if ndw == 1:
                                    R[rreg] = lds[w]
                                else:
                                    R[rreg:rreg + ndw] = lds[w[None, :] + _DW[ndw]]
                            elif ndw == 1:
                                lds[w] = R[rreg]
                            else:
                                lds[w[None, :] + _DW[ndw]] = R[rreg:rreg + ndw]
                            pc += 1
                            continue
                    m = None
                if m is not None and m[0] in ("rl", "wl"):
                    kind, ls, reg, other = m
                    if ls >= 0 and ls in nu:
                        m = None
                    else:
                        lane = (S[0, ls] if ls >= 0 else -1 - ls) & 63
                        if kind == "rl":
                            S[:, other] = V[reg, :, lane]
                            nu = nu - {other} if S[:, other].min() == S[:, other].max() \
                                else nu | {other}
                        else:
                            V[reg, :, lane] = S[:, other] if other >= 0 else \
                                ((-1 - other) & 0xFFFFFFFF)
                        pc += 1
                        continue
                if m is not None:
                    kind, ridx, rscc, wsl, wset, wscc, wexec = m
                    if (not nu or ridx.isdisjoint(nu)) and (scc_u or not rscc):
                        if kind == "vec" or kind == "mem":
                            view.s = S[0]
                            if all(wv.exec_all for wv in waves):
                                view.exec_all = True
                                view.exec_any = True
                                view.exec_mask = None
                            else:
                                view.exec_all = False
                                view.exec_mask = np.concatenate([wv.exec_mask for wv in waves])
                                view.exec_any = any(wv.exec_any for wv in waves)
                            view.mode = w0.mode
                            lane_count[0] = W * 64
                            try:
                                pc = code[pc](view)
                                continue
                            except MemoryFault:
                                if kind != "mem":
                                    raise
                                # nothing was written: run it wave by wave for the exact error
                            finally:
                                lane_count[0] = 64
                        elif kind == "barrier":
                            pc += 1         # every wave is here: the barrier completes
                            continue
                        else:
                            npc = code[pc](w0)
                            if wsl is not None:
                                S[1:, wsl] = S[0, wsl]
                                if nu:
                                    nu = nu - wset
                            if wscc:
                                s0 = w0.scc
                                for wv in rest:
                                    wv.scc = s0
                                scc_u = True
                            if wexec:
                                for wv in rest:
                                    wv.exec_mask, wv.exec_all, wv.exec_any = \
                                        w0.exec_mask, w0.exec_all, w0.exec_any
                            if npc == ENDPGM:
                                for wv in waves:
                                    wv.done = True
                                return
                            pc = npc
                            continue
                # wave by wave
                cur = pc
                npcs = []
                for wv in waves:
                    try:
                        npcs.append(code[cur](wv))
                    except MemoryFault as e:
                        inst = prog.insts[cur]
                        raise EmuError(f"kernel {prog.kernel.name}, {prog.where(cur)}, "
                                       f"'{inst.text()}': lane {e.lane}: {e}") from None
                p0 = npcs[0]
                if all(p == p0 for p in npcs):
                    if p0 >= 0 or p0 == BARRIER:
                        wr = writes[cur]
                        pc = p0 if p0 >= 0 else w0.pc
                        if wr is None:
                            nu, scc_u = _nonuniform(S, waves)
                        else:
                            wset, wscc = wr
                            if wset:
                                cols = sorted(wset)
                                blk = S[:, cols]
                                diff = {c for c, d in zip(cols, (blk != blk[0]).any(axis=0))
                                        if d}
                                nu = (nu - wset) | diff
                            if wscc:
                                s0 = w0.scc
                                scc_u = all(wv.scc == s0 for wv in rest)
                        continue
                    for wv in waves:
                        wv.done = True
                    return
                # divergence: record each wave's position and continue one by one
                live = []
                at = []
                for wv, p in zip(waves, npcs):
                    if p >= 0:
                        wv.pc = p
                        live.append(wv)
                    elif p == BARRIER:
                        at.append(wv)
                    else:
                        wv.done = True
                live = fallback(prog, live, limit) + at if live else at
                break
        finally:
            for wv in waves:
                wv.count += n
        if live and len(live) == W and len({wv.pc for wv in live}) == 1:
            continue

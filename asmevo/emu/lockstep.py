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
from ..semantics.npbackend import NP
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


def classify(inst, closure=None) -> tuple | None:
    """Lockstep form of one instruction: ``("vec"|"uni"|"mem"|"barrier", read_idx,
    reads_scc, write_idx, write_set, writes_scc, writes_exec, batched)``, ``("cmp", ...)``
    (a VOPC; ``closure`` is its compiled closure), a DS or lane-move form, or None (run wave
    by wave).  ``batched``: for SALU bitwise operations, the form that runs them for every
    wave at once when their operands differ between the waves (:func:`_sbit_mode`)."""
    spec = lookup(inst.opcode)
    if spec is None:
        return None
    kind = spec.kind
    if kind == "vopc":
        return _cmp_mode(inst, spec, closure)
    if spec.name in ("v_readlane_b32", "v_writelane_b32") and len(inst.operands) == 3:
        return _lane_mode(inst, spec.name)
    if kind == "ds":
        return _ds_mode(inst, spec)
    if kind == "vmem" and spec.extra.get("seg") == "scratch":
        return _scratch_mode(inst, spec)
    if kind == "smem" and not spec.extra.get("store") and not spec.extra.get("atomic"):
        kind = "uni"        # a scalar load at the same address in every wave: run once
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
    elif kind not in _UNI_KINDS + ("uni",):
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
            EXEC in w or EXEC + 1 in w, _sbit_mode(inst, spec) if kind == "salu" else None)


def _scratch_mode(inst, spec):
    """("scr", SGPR slots read, load?, register file, register, dwords, offset, SGPR offset
    slot or None): a scratch load/store at one address (SGPR + offset, no VGPR address) in
    every lane of every wave, or None."""
    ex = spec.extra
    size = ex.get("size", 0)
    if size % 4 or ex.get("d16") or ex.get("lds"):
        return None
    ops = [getattr(o, "base", o) for o in inst.operands]
    if len(ops) != 3:
        return None
    if ex["load"]:
        reg, vaddr, saddr = ops
    else:
        vaddr, reg, saddr = ops
    if not (isinstance(vaddr, Special) and vaddr.name == "off") or \
            not (isinstance(reg, Reg) and reg.file in ("v", "a")):
        return None
    if isinstance(saddr, Special) and saddr.name == "off":
        sl = None
    else:
        sl = _slot(saddr, 1)
        if sl is None:
            return None
    return ("scr", frozenset(() if sl is None else (sl,)), bool(ex["load"]), reg.file,
            reg.index, size // 4, int(inst.mod("offset", 0) or 0), sl)


def _scratch_words(waves):
    """One uint32 (W, 64, dwords) array holding the scratch of every wave (each wave's
    ScratchMemory becomes a view of it), or None (no scratch, or different sizes)."""
    sc = [wv.scratch for wv in waves]
    if sc[0] is None or any(x is None or x.per_lane != sc[0].per_lane or
                            x._store.shape != sc[0]._store.shape for x in sc):
        return None
    base = sc[0]._store.base
    if base is not None and base.ndim == 3 and base.shape[0] == len(waves) and \
            all(x._store.base is base and np.shares_memory(x._store, base[k])
                for k, x in enumerate(sc)):
        return base.view(np.uint32)
    allw = np.empty((len(waves),) + sc[0]._store.shape, np.uint8)
    for k, x in enumerate(sc):
        allw[k] = x._store
        x._store = x.data = allw[k]
        x.words = allw[k].view(np.uint32)
    return allw.view(np.uint32)


def _scratch_batch(m, Vf, Af, SW, per_lane, s0, ex, W) -> bool:
    """Run scratch form ``m`` (:func:`_scratch_mode`) for the running waves at once; False
    when the address is unaligned or out of range (run wave by wave instead)."""
    _, _, load, f, r, nd, off, sl = m
    if not ex.any:
        return True
    o = off + (int(s0[sl]) if sl is not None else 0)
    if o & 3 or o < 0 or o + 4 * nd > per_lane:
        return False
    R = Vf if f == "v" else Af
    blk = SW[:, :, o >> 2:(o >> 2) + nd]            # (W, 64, nd)
    if load:
        x = blk.transpose(2, 0, 1).reshape(nd, W * 64)
        if ex.all:
            R[r:r + nd] = x
        else:
            np.copyto(R[r:r + nd], x, where=ex.mask)
    else:
        x = R[r:r + nd].reshape(nd, W, 64).transpose(1, 2, 0)
        if ex.all:
            blk[...] = x
        else:
            np.copyto(blk, x, where=ex.mask.reshape(W, 64)[:, :, None])
    return True


def _slot(op, n):
    """SGPR slot of an ``n``-dword SGPR-file operand (even for n == 2), or None."""
    b = getattr(op, "base", op)
    if getattr(op, "neg", False) or getattr(op, "abs", False):
        return None
    u = _sgpr_units([b]) if isinstance(b, (Reg, Special)) else None
    if not u or len(u) != n or u != list(range(u[0], u[0] + n)) or (n == 2 and u[0] % 2):
        return None
    return u[0]


def _cmp_mode(inst, spec, closure):
    """("cmp", SGPR slots read, destination slot (None: null), cmpx, (fn, r0, r1)): a VOPC of
    W waves as one comparison of W*64 lanes, packed into each wave's mask."""
    batch = getattr(closure, "vopc", None)
    if batch is None or inst.opcode.endswith(("_dpp", "_sdwa")) or \
            any(inst.has_mod(m) for m in _DPP_MODS) or spec.fn is None or \
            "lane_id" in getattr(getattr(spec.fn, "__code__", None), "co_names", ("lane_id",)):
        return None
    ops = list(inst.operands)
    if len(ops) == 2:
        ops = [Special("vcc")] + ops
    if len(ops) != 3:
        return None
    d = getattr(ops[0], "base", ops[0])
    if isinstance(d, Special) and d.name == "null":
        dst = None
    else:
        dst = _slot(d, 2)
        if dst is None:
            return None
    try:
        ridx = _sgpr_units(list(use_operands(inst)))
    except Exception:   # noqa: BLE001
        return None
    if ridx is None:
        return None
    return ("cmp", frozenset(ridx), dst, bool(spec.extra.get("cmpx")), batch)


_BITOPS = {
    "and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
    "andn2": lambda a, b: a & ~b, "orn2": lambda a, b: a | ~b, "nand": lambda a, b: ~(a & b),
    "nor": lambda a, b: ~(a | b), "xnor": lambda a, b: ~(a ^ b), "andn1": lambda a, b: ~a & b,
    "orn1": lambda a, b: ~a | b,
}


def _sbit_mode(inst, spec):
    """(op, width, dst slot, source slots, saveexec, writes SCC) of an SALU bitwise operation
    on SGPRs (s_and/or/xor/andn2/orn2/nand/nor/xnor_b32/b64, s_not, s_mov, the saveexec
    family), which :func:`_sbit_batch` runs for all waves with numpy; or None."""
    name = spec.name
    parts = name.split("_")
    if len(parts) < 3 or parts[0] != "s":
        return None
    saveexec = len(parts) == 4 and parts[2] == "saveexec" and parts[3] == "b64"
    if saveexec:
        op, wd = parts[1], 64
        if op not in _BITOPS:
            return None
    elif len(parts) == 3 and parts[2] in ("b32", "b64") and \
            (parts[1] in _BITOPS or parts[1] in ("not", "mov")) and parts[1] not in ("andn1", "orn1"):
        op, wd = parts[1], int(parts[2][1:])
    else:
        return None
    n = wd // 32
    nsrc = 1 if saveexec or op in ("not", "mov") else 2
    ops = inst.operands
    if len(ops) != 1 + nsrc:
        return None
    slots = [_slot(o, n) for o in ops]
    if any(x is None for x in slots):
        return None
    return (op, wd, slots[0], tuple(slots[1:]), saveexec, op != "mov")


def _ds_mode(inst, spec):
    """Batched form of an LDS instruction (see :func:`_ds_batch`) or None."""
    ex = spec.extra
    op = ex.get("op")
    if inst.has_mod("gds") or ex.get("d16"):
        return None
    ops = [getattr(o, "base", o) for o in inst.operands]
    if not all(isinstance(o, Reg) and o.file in ("v", "a") for o in ops):
        return None
    size = ex.get("size", 0)
    if op in ("read", "write") and size % 4 == 0 and len(ops) == 2:
        addr, reg = (ops[1], ops[0]) if op == "read" else (ops[0], ops[1])
        if addr.file != "v":
            return None
        return ("ds" + op[0], addr.index, ((reg.file, reg.index),), size // 4,
                (int(inst.mod("offset", 0) or 0),))
    if op in ("read2", "write2") and size % 4 == 0:
        st = ex["stride"] * size
        offs = (int(inst.mod("offset0", 0) or 0) * st, int(inst.mod("offset1", 0) or 0) * st)
        nd = size // 4
        if op == "read2" and len(ops) == 2 and ops[1].file == "v":
            d = ops[0]
            return ("dsr", ops[1].index, ((d.file, d.index), (d.file, d.index + nd)), nd, offs)
        if op == "write2" and len(ops) == 3 and ops[0].file == "v":
            return ("dsw", ops[0].index, tuple((o.file, o.index) for o in ops[1:]), nd, offs)
        return None
    if op == "swizzle" and len(ops) == 2 and ops[0].file == "v" and ops[1].file == "v":
        from ..semantics.lanes import swizzle_map
        return ("swz", ops[1].index, ops[0].index,
                np.asarray(swizzle_map(inst.mod("offset", 0)), np.intp))
    if op in ("permute", "bpermute") and len(ops) == 3 and \
            all(o.file == "v" for o in ops):
        return (op, ops[1].index, ops[2].index, ops[0].index, int(inst.mod("offset", 0) or 0))
    return None


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


def _nonuniform(S, act, ia):
    """(frozenset of SGPR slots whose value differs between the waves ``act`` (rows ``ia``
    of ``S``, or every row when ``ia`` is None), SCC uniform?)."""
    Sa = S if ia is None else S[ia]
    d = np.flatnonzero((Sa != Sa[0]).any(axis=0))
    s0 = act[0].scc
    return frozenset(d.tolist()), all(wv.scc == s0 for wv in act)


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


_BASE64 = {}


def _wave_base(W):
    """Per lane of W waves: 64 * its wave's position (lane maps of swizzle/permute)."""
    b = _BASE64.get(W)
    if b is None:
        b = _BASE64[W] = np.repeat(np.arange(W, dtype=np.intp) * 64, 64)
    return b


class _Exec:
    """EXEC of the waves running together, as one (W*64,) view: ``all`` (every lane of
    every wave active), ``mask`` (bool (W*64,), lanes of waves not running are off; None
    when ``all``), ``sel`` (indices of the active lanes, computed on demand)."""

    __slots__ = ("all", "any", "mask", "_sel")

    def __init__(self, waves, act, pos):
        if len(act) == len(waves) and all(wv.exec_all for wv in act):
            self.all, self.any, self.mask = True, True, None
        else:
            W = len(waves)
            m = np.zeros((W, 64), bool)
            for wv in act:
                m[pos[id(wv)]] = wv.exec_mask
            self.all = False
            self.any = any(wv.exec_any for wv in act)
            self.mask = m.reshape(W * 64)
        self._sel = None

    @property
    def sel(self):
        if self._sel is None:
            self._sel = np.flatnonzero(self.mask)
        return self._sel


def _ds_batch(m, Vf, Af, lds, lds_seg, lds_lim, ex, W) -> bool:
    """Run LDS instruction form ``m`` (:func:`_ds_mode`) for the running waves at once, as
    their closures would one wave after another (same values, same order of the stores);
    False (nothing done) when an address is unaligned or out of range: the caller then runs
    the instruction wave by wave for the exact behaviour or error."""
    kind = m[0]
    if kind in ("dsr", "dsw"):
        _, areg, regs, nd, offs = m
        if not ex.any:
            return True
        a = Vf[areg]
        if ex.all:
            seg = lds_seg
        else:
            sel = ex.sel
            a = a[sel]
            seg = lds_seg[sel]
        lim = lds_lim[nd]
        ws = []
        for off in offs:
            b = a + np.uint32(off) if off else a
            if np.count_nonzero((b & np.uint32(3)) | (b > lim)):
                return False
            ws.append((b >> np.uint32(2)).astype(np.intp) + seg)
        if kind == "dsr":
            for w, (f, r) in zip(ws, regs):
                R = Vf if f == "v" else Af
                if ex.all:
                    if nd == 1:
                        R[r] = lds[w]
                    else:
                        R[r:r + nd] = lds[w[None, :] + _DW[nd]]
                elif nd == 1:
                    R[r, sel] = lds[w]
                else:
                    R[r:r + nd, sel] = lds[w[None, :] + _DW[nd]]
            return True
        # stores: one wave after another; in each wave block by block, dword by dword
        idx, val = [], []
        for w, (f, r) in zip(ws, regs):
            R = Vf if f == "v" else Af
            if ex.all:
                x = R[r:r + nd]
            else:
                x = R[r:r + nd, sel]
            idx.append(w[None, :] + _DW[nd])
            val.append(x)
        if len(idx) == 1 and nd == 1:
            lds[idx[0][0]] = val[0][0]
            return True
        I = np.concatenate(idx)         # (blocks * nd, lanes)
        X = np.concatenate(val)
        if W > 1:
            if ex.all:
                J = I.shape[0]
                I = I.reshape(J, W, 64).transpose(1, 0, 2)
                X = X.reshape(J, W, 64).transpose(1, 0, 2)
            else:
                order = np.argsort(np.broadcast_to(sel >> 6, I.shape).ravel(), kind="stable")
                I = I.ravel()[order]
                X = X.ravel()[order]
        lds[I.ravel()] = X.ravel()
        return True
    if kind == "swz":
        _, src, dst, smap = m
        g = (np.tile(smap, W) + _wave_base(W))
        x = Vf[src][g]
        if ex.all:
            Vf[dst] = x
        else:
            x = np.where(ex.mask[g], x, np.uint32(0))
            np.copyto(Vf[dst], x, where=ex.mask)
        return True
    _, areg, dreg, dst, off = m
    g = (((Vf[areg].astype(np.int64) + off) >> 2) & 63) + _wave_base(W)
    data = Vf[dreg]
    if kind == "bpermute":
        x = data[g]
        if ex.all:
            Vf[dst] = x
        else:
            np.copyto(Vf[dst], np.where(ex.mask[g], x, np.uint32(0)), where=ex.mask)
        return True
    v = np.zeros(W * 64, np.uint32)
    if ex.all:
        v[g] = data
        Vf[dst] = v
    else:
        sel = ex.sel
        v[g[sel]] = data[sel]
        np.copyto(Vf[dst], v, where=ex.mask)
    return True


def run_lockstep(prog, waves, limit: int, fallback) -> None:
    """Run the ``waves`` of a lockstep set (all at the same pc) to ``s_endpgm``.

    The waves at the lowest pc run together (:func:`_run_together`) until they diverge, reach
    a pc where other waves wait, a barrier or the end; waves at a barrier wait until every
    wave that has not ended reaches one.  ``fallback(prog, waves, limit)`` runs waves one at
    a time until a barrier (returns the waves at the barrier); it is used only for waves in
    different floating-point modes or in s_set_gpr_idx mode.  Raises EmuError like
    :meth:`Program.run_wave`."""
    W = len(waves)
    V, A, S = _bind(waves)
    g = _Group(prog, waves, V, A, S, limit)
    pos = g.pos
    waiting = []
    while True:
        live = [wv for wv in waves if not wv.done and wv.pc != _WAIT]
        if not live:
            if not waiting:
                return
            for wv, p in waiting:       # the barrier completes
                wv.pc = p
            waiting = []
            continue
        cur = min(wv.pc for wv in live)
        act = [wv for wv in live if wv.pc == cur]
        if len({wv.mode for wv in act}) != 1 or any(wv.gpr_idx for wv in act):
            for wv in fallback(prog, act, limit):
                waiting.append((wv, wv.pc))
                wv.pc = _WAIT
            continue
        for wv in act:
            if wv.count > limit:
                raise EmuError(f"kernel {prog.kernel.name}: more than {limit} instructions in "
                               f"one wave (runaway loop?) at {prog.where(cur)}")
        others = frozenset(wv.pc for wv in live if wv.pc != cur)
        alone = len(act) == len(live) and not waiting
        ia = None if len(act) == W else np.array([pos[id(wv)] for wv in act], np.intp)
        for wv, p in g.run_together(act, ia, cur, others, alone):
            waiting.append((wv, p))
            wv.pc = _WAIT


_WAIT = 1 << 62     # pc of a wave waiting at a barrier (its real pc is kept aside)


class _Group:
    """The shared state of a lockstep set and the loop that runs its waves together."""

    def __init__(self, prog, waves, V, A, S, limit):
        self.prog = prog
        self.waves = waves
        self.W = W = len(waves)
        self.V, self.A, self.S = V, A, S
        self.pos = {id(wv): k for k, wv in enumerate(waves)}
        self.limit = limit
        view = BatchView()
        view.v = V.reshape(V.shape[0], W * 64)
        view.a = A.reshape(A.shape[0], W * 64)
        self.view = view
        self.lds = _lds_words(waves)
        self.scratch = _scratch_words(waves)
        self.per_lane = waves[0].scratch.per_lane if self.scratch is not None else 0

    def run_together(self, act, ia, pc, others, alone):
        """Run the waves ``act`` (rows ``ia`` of the register files, None: all) from ``pc``
        while they stay at one pc; returns [(wave, pc after the barrier)] of those that
        stop at a barrier that does not complete (``alone``: no other wave is live, so a
        barrier completes at once); the others' ``pc`` / ``done`` are set."""
        prog = self.prog
        modes, writes = prog.lockstep_modes()
        code = prog.code
        W, V, S, view = self.W, self.V, self.S, self.view
        Vf, Af = view.v, view.a
        lds, lds_seg, lds_lim = self.lds
        scratch, per_lane = self.scratch, self.per_lane
        limit = self.limit
        pos = self.pos
        w0 = act[0]
        i0 = pos[id(w0)]
        rest = act[1:]
        full = ia is None
        if full:
            ia1 = slice(1, None)
        else:
            ia1 = ia[1:]
        n = 0
        mark = 0            # instructions counted into wv.lanes so far

        def exec_state():
            ex = _Exec(self.waves, act, pos)
            view.exec_all, view.exec_any, view.exec_mask = ex.all, ex.any, ex.mask
            return ex
        ex = exec_state()
        nu, scc_u = _nonuniform(S, act, ia)
        try:
            while True:
                if others and pc in others:     # other waves wait here: run with them
                    for wv in act:
                        wv.pc = pc
                    return []
                n += 1
                if n > limit:
                    raise EmuError(f"kernel {prog.kernel.name}: more than {limit} instructions in "
                                   f"one wave (runaway loop?) at {prog.where(pc)}")
                m = modes[pc]
                if m is not None:
                    kind = m[0]
                    if kind in _DS_KINDS:
                        if lds is not None and _ds_batch(m, Vf, Af, lds, lds_seg, lds_lim,
                                                         ex, W):
                            pc += 1
                            continue
                        m = None
                    elif kind == "rl" or kind == "wl":
                        _, ls, reg, other = m
                        if ls >= 0 and ls in nu:
                            m = None
                        else:
                            lane = (S[i0, ls] if ls >= 0 else -1 - ls) & 63
                            if kind == "rl":
                                if full:
                                    S[:, other] = V[reg, :, lane]
                                    rows = S[:, other]
                                else:
                                    S[ia, other] = V[reg, ia, lane]
                                    rows = S[ia, other]
                                nu = nu - {other} if rows.min() == rows.max() else nu | {other}
                            else:
                                if other >= 0:
                                    val = S[:, other] if full else S[ia, other]
                                else:
                                    val = (-1 - other) & 0xFFFFFFFF
                                if full:
                                    V[reg, :, lane] = val
                                else:
                                    V[reg, ia, lane] = val
                            pc += 1
                            continue
                    elif kind == "scr":
                        if (not nu or m[1].isdisjoint(nu)) and scratch is not None:
                            if _scratch_batch(m, Vf, Af, scratch, per_lane, S[i0], ex, W):
                                pc += 1
                                continue
                        m = None
                    elif kind == "cmp":
                        if not nu or m[1].isdisjoint(nu):
                            dst, cmpx = m[2], m[3]
                            if cmpx or dst == EXEC:
                                self._count(act, n - mark)
                                mark = n
                            view.s = S[i0]
                            view.mode = w0.mode
                            lane_count[0] = W * 64
                            try:
                                res = _cmp_batch(m[4], view, ex, W)
                            finally:
                                lane_count[0] = 64
                            rows = slice(None) if full else ia
                            if dst is not None:
                                S[rows, dst:dst + 2] = res[rows]
                                nu = _renu(S, ia, nu, (dst, dst + 1))
                            if cmpx or dst == EXEC:
                                if cmpx:
                                    S[rows, EXEC:EXEC + 2] = res[rows]
                                    nu = _renu(S, ia, nu, (EXEC, EXEC + 1))
                                for wv in act:
                                    wv.sync_exec()
                                ex = exec_state()
                            pc += 1
                            continue
                        m = None
                if m is not None:
                    kind, ridx, rscc, wsl, wset, wscc, wexec, alt = m
                    if alt is not None and nu and not ridx.isdisjoint(nu):
                        if wexec:
                            self._count(act, n - mark)
                            mark = n
                        _sbit_batch(alt, S, act, ia)
                        nu = _renu(S, ia, nu, sorted(wset))
                        if wscc:
                            s0 = w0.scc
                            scc_u = all(wv.scc == s0 for wv in rest)
                        if wexec:
                            for wv in act:
                                wv.sync_exec()
                            ex = exec_state()
                        pc += 1
                        continue
                    if (kind == "vec" or kind == "mem") and nu and not ridx.isdisjoint(nu) and \
                            (scc_u or not rscc):
                        runs = _runs(S, ia, W, sorted(ridx & nu))
                        if len(runs) < len(act):
                            pc = self._run_parts(pc, runs, kind, ex, w0.mode)
                            continue
                    if (not nu or ridx.isdisjoint(nu)) and (scc_u or not rscc):
                        if kind == "vec" or kind == "mem":
                            view.s = S[i0]
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
                            if alone:
                                pc += 1         # every live wave is here: the barrier completes
                                continue
                            self._count(act, n - mark)
                            mark = n
                            return [(wv, pc + 1) for wv in act]
                        else:
                            if wexec:
                                self._count(act, n - mark)
                                mark = n
                            try:
                                npc = code[pc](w0)
                            except MemoryFault:
                                npc = None      # (a scalar load) wave by wave, for the error
                            if npc is not None:
                                if wsl is not None:
                                    if full:
                                        S[1:, wsl] = S[0, wsl]
                                    elif isinstance(wsl, slice):
                                        S[ia1, wsl] = S[i0, wsl]
                                    else:
                                        S[np.ix_(ia1, wsl)] = S[i0, wsl]
                                    if nu:
                                        nu = nu - wset
                                if wscc:
                                    s0 = w0.scc
                                    for wv in rest:
                                        wv.scc = s0
                                    scc_u = True
                                if wexec:
                                    for wv in rest:
                                        wv.exec_mask, wv.exec_all, wv.exec_any, wv.exec_n = \
                                            w0.exec_mask, w0.exec_all, w0.exec_any, w0.exec_n
                                    ex = exec_state()
                                if npc == ENDPGM:
                                    for wv in act:
                                        wv.done = True
                                    return []
                                pc = npc
                                continue
                # wave by wave
                self._count(act, n - mark)
                mark = n
                cur = pc
                npcs = []
                for wv in act:
                    try:
                        npcs.append(code[cur](wv))
                    except MemoryFault as e:
                        inst = prog.insts[cur]
                        raise EmuError(f"kernel {prog.kernel.name}, {prog.where(cur)}, "
                                       f"'{inst.text()}': lane {e.lane}: {e}") from None
                wr = writes[cur]
                if wr is None or EXEC in wr[0] or EXEC + 1 in wr[0]:
                    ex = exec_state()
                p0 = npcs[0]
                if all(p == p0 for p in npcs):
                    if p0 >= 0 or p0 == BARRIER:
                        if wr is None:
                            nu, scc_u = _nonuniform(S, act, ia)
                            if len({wv.mode for wv in act}) != 1:
                                pc = p0 if p0 >= 0 else w0.pc
                                if p0 == BARRIER:
                                    return [(wv, pc) for wv in act]
                                for wv in act:
                                    wv.pc = pc
                                return []
                        else:
                            wset, wscc = wr
                            if wset:
                                cols = sorted(wset)
                                blk = S[:, cols] if full else S[np.ix_(ia, cols)]
                                diff = {c for c, d in zip(cols, (blk != blk[0]).any(axis=0))
                                        if d}
                                nu = (nu - wset) | diff
                            if wscc:
                                s0 = w0.scc
                                scc_u = all(wv.scc == s0 for wv in rest)
                        if p0 >= 0:
                            pc = p0
                            continue
                        if alone:
                            pc = w0.pc
                            continue
                        return [(wv, wv.pc) for wv in act]
                    for wv in act:
                        wv.done = True
                    return []
                # the waves went different ways: the caller regroups them
                at = []
                for wv, p in zip(act, npcs):
                    if p >= 0:
                        wv.pc = p
                    elif p == BARRIER:
                        at.append((wv, wv.pc))
                    else:
                        wv.done = True
                return at
        finally:
            self._count(act, n - mark)
            for wv in act:
                wv.count += n

    def _run_parts(self, pc, runs, kind, ex, mode):
        """Run a ``vec``/``mem`` instruction once per run ``(k0, k1)`` of consecutive waves
        (whose SGPR operands are equal); returns the next pc.  A memory fault runs the
        rest wave by wave, for the exact error."""
        prog = self.prog
        code = prog.code
        V, A, S = self.V, self.A, self.S
        sub = BatchView()
        sub.mode = mode
        npc = pc + 1
        for k0, k1 in runs:
            nl = (k1 - k0) * 64
            sub.v = V[:, k0:k1].reshape(V.shape[0], nl)
            sub.a = A[:, k0:k1].reshape(A.shape[0], nl)
            sub.s = S[k0]
            if ex.all:
                sub.exec_all, sub.exec_any, sub.exec_mask = True, True, None
            else:
                msk = ex.mask[k0 * 64:k1 * 64]
                sub.exec_all, sub.exec_any, sub.exec_mask = False, bool(msk.any()), msk
            lane_count[0] = nl
            try:
                npc = code[pc](sub)
            except MemoryFault:
                if kind != "mem":
                    raise
                lane_count[0] = 64
                left = [wv for k, wv in enumerate(self.waves) if k >= k0 and
                        any(a <= k < b for a, b in runs)]
                for wv in left:     # the runs before were complete, as wave by wave
                    try:
                        npc = code[pc](wv)
                    except MemoryFault as e:
                        inst = prog.insts[pc]
                        raise EmuError(f"kernel {prog.kernel.name}, {prog.where(pc)}, "
                                       f"'{inst.text()}': lane {e.lane}: {e}") from None
                return npc
            finally:
                lane_count[0] = 64
        return npc

    @staticmethod
    def _count(act, k):
        """Add ``k`` instructions, each at the waves' current EXEC, to their lane counts."""
        if k:
            for wv in act:
                wv.lanes += k * wv.exec_n


_DS_KINDS = ("dsr", "dsw", "swz", "permute", "bpermute")
_ONES = {}


def _runs(S, ia, W, cols):
    """Runs ``(k0, k1)`` of consecutive running waves (rows ``ia`` of ``S``; None: all W)
    whose SGPRs ``cols`` are equal."""
    rows = list(range(W)) if ia is None else ia.tolist()
    vals = S[rows][:, cols].tolist()
    runs = []
    k0 = prev = rows[0]
    v0 = vals[0]
    for r, v in zip(rows[1:], vals[1:]):
        if r != prev + 1 or v != v0:
            runs.append((k0, prev + 1))
            k0, v0 = r, v
        prev = r
    runs.append((k0, prev + 1))
    return runs


def _renu(S, ia, nu, cols):
    """``nu`` (the SGPR slots that differ between the running waves) after a write of
    ``cols``."""
    cols = list(cols)
    blk = S[:, cols] if ia is None else S[np.ix_(ia, cols)]
    diff = {c for c, d in zip(cols, (blk != blk[0]).any(axis=0)) if d}
    return (nu - set(cols)) | diff


def _cmp_batch(batch, view, ex, W):
    """The lane masks (uint32 (W, 2): each wave's SGPR pair) of a VOPC run on ``view``, as
    its closure computes them wave by wave (inactive lanes 0)."""
    fn, r0, r1 = batch
    res = fn(NP, r0(view), r1(view))
    if res.shape[0] == 1:
        res = res.repeat(W * 64)
    mask = ex.mask
    if mask is None:
        mask = _ONES.get(W)
        if mask is None:
            mask = _ONES[W] = np.ones(W * 64, bool)
    res = res & mask
    return np.packbits(res.reshape(W, 64), axis=1, bitorder="little").view(np.uint32)


def _sbit_batch(alt, S, act, ia):
    """Run an SALU bitwise operation (:func:`_sbit_mode`) for the waves ``act`` (rows ``ia``
    of ``S``; None: all) at once; sets their SCC; EXEC is left to the caller to resync."""
    op, wd, d, srcs, saveexec, wscc = alt
    rows = slice(None) if ia is None else ia
    if wd == 64:
        X = S.view(np.uint64)
        sh = 1
    else:
        X = S
        sh = 0
    vals = [X[rows, x >> sh] for x in srcs]
    if saveexec:
        e = X[rows, EXEC >> 1].copy()
        r = _BITOPS[op](vals[0], e)
        X[rows, d >> sh] = e        # sdst gets the old EXEC, then EXEC the result
        X[rows, EXEC >> 1] = r
    else:
        if op == "mov":
            r = vals[0].copy()
        elif op == "not":
            r = ~vals[0]
        else:
            r = _BITOPS[op](vals[0], vals[1])
        X[rows, d >> sh] = r
    if wscc:
        for wv, z in zip(act, (r != 0).tolist()):
            wv.scc = z

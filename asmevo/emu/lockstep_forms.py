"""How :mod:`asmevo.emu.lockstep` runs one instruction for a group of waves at once.

:func:`classify` gives each instruction its group form (computed once per Program by
:meth:`Program.lockstep_modes`); the ``_*_batch`` functions run the forms that need more
than the instruction's own closure on a (W*64)-lane view: LDS (:func:`_ds_batch`), VOPC
(:func:`_cmp_batch`), SALU bitwise/saveexec over per-wave values (:func:`_sbit_batch`),
scratch at one address (:func:`_scratch_batch`).  Each computes exactly what the waves'
closures compute one wave after another (same values, same order of stores), or declines
(returns False) so that the instruction runs wave by wave.
"""

from __future__ import annotations

import numpy as np

from ..ir.operands import Reg, Special
from ..isa import def_operands, implicit_defs, implicit_uses, use_operands
from ..semantics.npbackend import NP
from ..semantics.registry import lookup
from .exec_ds import UFUNC_AT
from .state import EXEC, SPECIAL_SGPR, TTMP_BASE


_VEC_KINDS = ("valu", "vop3p", "mix")


_UNI_KINDS = ("salu", "sopc", "branch", "nop", "barrier", "endpgm")


_DPP_MODS = ("quad_perm", "row_shl", "row_shr", "row_ror", "row_bcast", "row_mirror",
             "row_half_mirror", "row_newbcast", "wave_shl", "wave_shr", "wave_rol", "wave_ror")


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


def _lane_mask_slots(inst, spec) -> tuple:
    """(SGPR slots a vector instruction reads as lane masks -- its ``lm`` sources and an
    implicit VCC --, SGPR slots its other sources read)."""
    nd = len(spec.dst)
    lm, other = [], []
    for op, ty in zip(inst.operands[nd:], spec.src):
        (lm if ty == "lm" else other).append(op)
    lm_slots = set(_sgpr_units(lm) or ()) | \
        ({SPECIAL_SGPR["vcc"], SPECIAL_SGPR["vcc"] + 1} if spec.imp_in else set())
    return lm_slots, set(_sgpr_units(other) or ())


def lane_mask_reads(inst) -> frozenset:
    """The SGPR slots a vector instruction reads as lane masks, each lane its own wave's
    (in a lockstep group: each wave's own row of the SGPR file, ``BatchView.sfile``), so a
    scalar write to them that is still only in the first running wave's row must be copied
    to the others before it (:mod:`asmevo.emu.lockstep`); empty for other instructions."""
    spec = lookup(inst.opcode)
    if spec is None or spec.kind not in _VEC_KINDS or \
            not ("lm" in spec.src or spec.imp_in):
        return frozenset()
    try:
        return frozenset(_lane_mask_slots(inst, spec)[0])
    except Exception:   # noqa: BLE001  (not in the ISA table: classify refuses it anyway)
        return frozenset()


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
    per_wave = False
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
    elif kind == "vmem_atomic" and spec.extra.get("seg") == "global":
        kind = "mem"        # lanes in wave order: as the waves one after another
    elif kind in ("mubuf", "mubuf_atomic") and not inst.has_mod("lds"):
        kind = "mem"        # buffer loads/stores/atomics (not LDS DMA): lanes in wave order
        # (without a data format, each wave's own V# and SGPR offset: exec_mubuf reads
        # them per lane in a group, so they need not be equal in every wave)
        per_wave = not spec.extra.get("format") and not spec.extra.get("tbuffer")
    elif kind == "mfma" and not spec.extra.get("sparse"):
        pass                # once for the running waves (exec_mfma's group form)
    elif kind in _VEC_KINDS:
        if inst.opcode.endswith("_sdwa") or kind != "valu" and (
                inst.opcode.endswith("_dpp") or any(inst.has_mod(m) for m in _DPP_MODS)):
            return None     # (VALU DPP maps are per wave: asmevo.emu.exec_valu)
        if (spec.imp_in and (kind != "valu" or tuple(spec.imp_in) != ("vcc",))) or \
                spec.imp_out or ("lm" in spec.src and kind != "valu"):
            return None
        if spec.fn is None or "lane_id" in getattr(getattr(spec.fn, "__code__", None),
                                                   "co_names", ("lane_id",)):
            return None
        if "mbcnt" in spec.name or "readlane" in spec.name or "writelane" in spec.name:
            return None
        for op, ty in zip(inst.operands[:len(spec.dst)], spec.dst):
            b = getattr(op, "base", op)
            if ty == "lm":      # a carry-out mask: each wave's to its SGPR pair (not EXEC)
                if not (isinstance(b, Special) and b.name == "null") and \
                        _slot(b, 2) in (None, EXEC):
                    return None
            elif not (isinstance(b, Reg) and b.file in ("v", "a")):
                return None
    elif kind not in _UNI_KINDS + ("uni",):
        return None
    try:
        uses = list(use_operands(inst))
        if kind not in _VEC_KINDS + ("mem", "mfma"):   # a VALU's implicit EXEC use is per lane
            uses += list(implicit_uses(inst))
        defs = list(def_operands(inst)) + list(implicit_defs(inst))
    except Exception:   # noqa: BLE001  (an instruction the ISA table does not describe)
        return None
    ridx = _sgpr_units(uses)
    widx = _sgpr_units(defs)
    if ridx is None or widx is None:
        return None
    if per_wave:
        ridx = []
    if kind in _VEC_KINDS and ("lm" in spec.src or spec.imp_in):
        # lane-mask sources are read per wave (each wave's own SGPR pair): they need not
        # be equal in all waves; other SGPR sources must
        lm_slots, keep = _lane_mask_slots(inst, spec)
        ridx = [r for r in ridx if r not in lm_slots or r in keep]
    if spec.name in ("s_cbranch_execz", "s_cbranch_execnz"):
        ridx += [EXEC, EXEC + 1]
    elif spec.name in ("s_cbranch_vccz", "s_cbranch_vccnz"):
        ridx += [SPECIAL_SGPR["vcc"], SPECIAL_SGPR["vcc"] + 1]
    if kind in ("mem", "mfma") and widx or \
            kind in _VEC_KINDS and (EXEC in widx or EXEC + 1 in widx):
        return None
    writes_scc = "scc" in spec.imp_out or any(u == ("scc",) for u in implicit_defs(inst))
    w = sorted(set(widx))
    if w and w == list(range(w[0], w[-1] + 1)):
        wsl = slice(w[0], w[-1] + 1)       # contiguous: a slice copies faster
    else:
        wsl = np.array(w, np.intp) if w else None
    return (kind if kind in ("barrier", "mem") else
            ("vec" if kind in _VEC_KINDS + ("mfma",) else "uni"),
            frozenset(ridx), _reads_scc(inst, spec), wsl, frozenset(w), writes_scc,
            EXEC in w or EXEC + 1 in w, (_sbit_mode(inst, spec) or _snp_mode(inst, spec))
            if kind == "salu" else _snp_mode(inst, spec) if kind == "sopc" else
            _br_mode(closure) if kind == "branch" else None)


#: scalar operations run for all waves at once with the numpy backend of their semantics
#: when their operands differ between the waves (tests/emu/test_lockstep_batched.py checks
#: each against the per-wave Python-int closures)
SNP_OPS = frozenset(
    [f"s_{o}_{t}" for o in ("add", "sub") for t in ("u32", "i32")] +
    ["s_addc_u32", "s_subb_u32", "s_mul_i32", "s_mul_hi_u32", "s_lshl_b32", "s_lshr_b32",
     "s_ashr_i32", "s_lshl_b64", "s_lshr_b64", "s_ashr_i64", "s_cselect_b32", "s_cselect_b64",
     "s_min_u32", "s_max_u32", "s_min_i32", "s_max_i32", "s_absdiff_i32", "s_bfe_u32",
     "s_lshl1_add_u32", "s_lshl2_add_u32", "s_lshl3_add_u32", "s_lshl4_add_u32"] +
    [f"s_cmp_{c}_{t}" for c in ("eq", "lg", "gt", "ge", "lt", "le") for t in ("u32", "i32")] +
    ["s_cmp_eq_u64", "s_cmp_lg_u64"])


def _snp_mode(inst, spec):
    """("snp", fn, sources, destinations, reads SCC, writes SCC) of an operation in
    :data:`SNP_OPS` whose operands are SGPRs or constants: sources ``("s", slot, width)`` or
    ``("c", value, width)``, destinations ``(slot, width)`` (not EXEC); or None."""
    from ..semantics.immediates import imm_bits
    from .exec_common import _s_imm_fix
    if spec.name not in SNP_OPS or spec.fn is None:
        return None
    nd, ns = len(spec.dst), len(spec.src)
    ops = inst.operands
    if len(ops) != nd + ns or (spec.imp_in and tuple(spec.imp_in) != ("scc",)) or \
            (spec.imp_out and tuple(spec.imp_out) != ("scc",)):
        return None
    srcs = []
    for op, ty in zip(ops[nd:], spec.src):
        b = getattr(_s_imm_fix(inst, op, ty), "base", _s_imm_fix(inst, op, ty))
        w = int(ty[1:])
        if type(b).__name__ == "Imm" and isinstance(b.value, int):
            srcs.append(("c", imm_bits(b.value, ty, b.text), w))
            continue
        sl = _slot(b, w // 32)
        if sl is None:
            return None
        srcs.append(("s", sl, w))
    dsts = []
    for op, ty in zip(ops[:nd], spec.dst):
        w = int(ty[1:])
        sl = _slot(getattr(op, "base", op), w // 32)
        if sl is None or EXEC <= sl + w // 32 - 1 and sl <= EXEC + 1:
            return None
        dsts.append((sl, w))
    return ("snp", spec.fn, tuple(srcs), tuple(dsts), bool(spec.imp_in), bool(spec.imp_out))


_UT = {32: np.uint32, 64: np.uint64}


def _snp_batch(alt, S, act, ia):
    """Run a scalar operation (:func:`_snp_mode`) for the waves ``act`` (rows ``ia`` of
    ``S``; None: all) with the numpy backend: one value per wave."""
    _, fn, srcs, dsts, rscc, wscc = alt
    rows = slice(None) if ia is None else ia
    args = []
    for kind, x, w in srcs:
        if kind == "c":
            args.append(np.array([x], _UT[w]))
        elif w == 32:
            args.append(S[rows, x].copy())
        else:
            args.append(np.ascontiguousarray(S[rows, x:x + 2]).view(np.uint64)[:, 0])
    if rscc:
        args.append(np.array([wv.scc for wv in act], bool))
    res = fn(NP, *args)
    if len(dsts) + wscc == 1:
        res = (res,)
    n = len(act)
    for (sl, w), r in zip(dsts, res):
        r = np.asarray(r)
        if r.shape != (n,):
            r = np.broadcast_to(r, (n,))
        if w == 32:
            S[rows, sl] = r.astype(np.uint32)
        else:
            r = r.astype(np.uint64)
            S[rows, sl] = (r & np.uint64(0xFFFFFFFF)).astype(np.uint32)
            S[rows, sl + 1] = (r >> np.uint64(32)).astype(np.uint32)
    if wscc:
        c = np.asarray(res[-1])
        c = (c if c.shape == (n,) else np.broadcast_to(c, (n,))).tolist()
        for wv, z in zip(act, c):
            wv.scc = bool(z)


def _br_mode(closure):
    """("br", name, target, next) of a conditional branch (its closure's ``branch``)."""
    b = getattr(closure, "branch", None)
    if b is None or b[0] == "s_branch":
        return None
    return ("br",) + tuple(b)


_TAKEN_IF_SET = ("s_cbranch_scc1", "s_cbranch_vccnz", "s_cbranch_execnz")

#: vector kinds that write nothing in a wave whose EXEC is 0 (when they write only VGPRs /
#: AGPRs; MFMA, v_readlane/v_writelane and the swap/movrel kinds ignore EXEC or write SGPRs)
_INERT_KINDS = ("valu", "vop3p", "mix", "ds", "vmem", "vmem_atomic", "mubuf", "mubuf_atomic")
_INERT_NOPS = ("s_nop", "s_waitcnt", "s_waitcnt_vmcnt", "s_waitcnt_lgkmcnt", "s_waitcnt_expcnt")


def inert_without_lanes(inst) -> bool:
    """Does ``inst`` change nothing -- no register, no memory, no LDS, no wave state -- in a
    wave whose EXEC is 0?  True for VALU / packed / mix, LDS and vector memory instructions
    that write only VGPRs / AGPRs (a vector instruction writes and accesses only the lanes
    EXEC enables: CDNA3 ISA guide, 3.3 "EXEC mask"), and for s_nop / s_waitcnt; False for
    anything that writes an SGPR, SCC, VCC, EXEC or M0 (VOPC, carry-outs, readlane), ignores
    EXEC (MFMA, v_writelane), moves data to LDS from memory, or uses GWS / append / consume,
    and for every other scalar instruction.  (:mod:`asmevo.emu.lockstep` lets such waves run
    a forward ``s_cbranch_execz``'s region instead of jumping over it.)"""
    spec = lookup(inst.opcode)
    if spec is None:
        return False
    if spec.name in _INERT_NOPS:
        return True
    if spec.kind not in _INERT_KINDS or inst.has_mod("lds") or spec.extra.get("lds") or \
            any(x in spec.name for x in ("lane", "gws", "append", "consume", "ordered",
                                         "mfma", "smfmac")):
        return False
    try:
        defs = list(def_operands(inst)) + list(implicit_defs(inst))
    except Exception:   # noqa: BLE001  (an instruction the ISA table does not describe)
        return False
    for d in defs:
        b = getattr(d, "base", d)
        if not (isinstance(b, Reg) and b.file in ("v", "a")):
            return False        # (implicit units are tuples: VCC, SCC, EXEC, M0, ...)
    return True


def _br_batch(alt, S, act, ia):
    """Next pc of each running wave at a conditional branch whose condition differs."""
    _, name, t, nxt = alt
    if name in ("s_cbranch_scc0", "s_cbranch_scc1"):
        c = [bool(wv.scc) for wv in act]
    elif name.endswith(("execz", "execnz")):
        c = [wv.exec_any for wv in act]     # (the cached EXEC flags: Wave.sync_exec)
    else:
        i = SPECIAL_SGPR["vcc"]
        rows = S[:, i:i + 2] if ia is None else S[ia, i:i + 2]
        c = np.logical_or.reduce(rows, axis=1).tolist()
    if name in _TAKEN_IF_SET:
        return [t if x else nxt for x in c]
    return [nxt if x else t for x in c]


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
    if inst.has_mod("gds"):
        return None
    ops = [getattr(o, "base", o) for o in inst.operands]
    if not all(isinstance(o, Reg) and o.file in ("v", "a") for o in ops):
        return None
    size = ex.get("size", 0)
    if op == "read" and size in (1, 2) and len(ops) == 2 and ops[1].file == "v":
        # ds_read_u8/i8/u16/i16 and their d16(_hi) forms
        d16 = 2 if ex.get("d16_hi") else (1 if ex.get("d16") else 0)
        return ("dsrs", ops[1].index, (ops[0].file, ops[0].index), size,
                bool(ex.get("signed")), d16, int(inst.mod("offset", 0) or 0))
    if ex.get("d16"):
        return None
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
    if op == "atomic" and not ex.get("ret") and size == 4 and ex.get("aop") in UFUNC_AT and \
            len(ops) == 2 and all(o.file == "v" for o in ops):
        return ("dsa", ops[0].index, ops[1].index, ex["aop"], int(inst.mod("offset", 0) or 0))
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
_MAX = np.maximum.reduce
_BOR = np.bitwise_or.reduce


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
    ptr = {}        # per workgroup (its waves share one LDS)
    offs = []
    for st in stores:
        o = ptr.get(id(st))
        if o is None:
            o = ptr[id(st)] = st.__array_interface__["data"][0] - p0
        offs.append(o)
    if any(o % 4 for o in offs):
        return None, None, None
    seg = np.repeat(np.array(offs, np.intp) // 4, 64)
    lim = {k: np.uint32(size - 4 * k) for k in (1, 2, 3, 4) if size >= 4 * k}
    if len(lim) < 4:
        return None, None, None
    return base.view(np.uint32), seg, lim


def lds_layout(base, seg, parts, nwaves, size):
    """:func:`_lds_words` of a lockstep set built by :mod:`asmevo.emu.launch`: ``parts``
    workgroups of ``nwaves`` waves whose LDS are consecutive ``seg``-byte segments (``size``
    bytes used) of the uint8 buffer ``base``, without inspecting the waves."""
    if base is None or seg % 4 or size < 16:
        return None, None, None
    key = (seg, parts, nwaves, size)
    lay = _LAYOUTS.get(key)
    if lay is None:
        sg = np.repeat(np.arange(parts, dtype=np.intp) * (seg // 4), nwaves * 64)
        lim = {k: np.uint32(size - 4 * k) for k in (1, 2, 3, 4)}
        lay = _LAYOUTS[key] = (sg, lim)
        if len(_LAYOUTS) > 64:
            _LAYOUTS.clear()
    return base.view(np.uint32), lay[0], lay[1]


_LAYOUTS: dict = {}


_BASE64 = {}


def _wave_base(W):
    """Per lane of W waves: 64 * its wave's position (lane maps of swizzle/permute)."""
    b = _BASE64.get(W)
    if b is None:
        b = _BASE64[W] = np.repeat(np.arange(W, dtype=np.intp) * 64, 64)
    return b


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
        if not a.size:
            return True
        if not (offs[0] | offs[-1]) & 3:
            # dword offsets (read2/write2 always): every address is aligned when the
            # register is, and in range when its highest value plus the highest offset is
            # (no uint32 wrap-around then: anything else is left to the per-wave closures)
            if _BOR(a) & 3 or int(_MAX(a)) + max(offs) > lim:
                return False
            w0 = (a >> 2) + seg         # (uint32 + intp: int64 dword indices)
            ws = [w0 + (off >> 2) if off else w0 for off in offs]
        else:
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
    if kind == "dsrs":     # a sub-dword read, zero/sign-extended or into a half register
        _, areg, (f, r), size, signed, d16, off = m
        if not ex.any:
            return True
        a, seg = Vf[areg], lds_seg
        if not ex.all:
            sel = ex.sel
            a, seg = a[sel], seg[sel]
        b = a.astype(np.int64) + off
        if np.count_nonzero((b & (size - 1)) | (b > int(lds_lim[1]) + 4 - size)):
            return False
        if size == 1:
            x = lds.view(np.uint8)[b + 4 * seg]
            x = x.view(np.int8).astype(np.int32).view(np.uint32) if signed else \
                x.astype(np.uint32)
        else:
            x = lds.view(np.uint16)[(b >> 1) + 2 * seg]
            x = x.view(np.int16).astype(np.int32).view(np.uint32) if signed else \
                x.astype(np.uint32)
        R = Vf if f == "v" else Af
        if d16:
            x = x & np.uint32(0xFFFF)
            old = R[r] if ex.all else R[r, sel]
            x = (old & np.uint32(0xFFFF)) | (x << np.uint32(16)) if d16 == 2 else \
                (old & np.uint32(0xFFFF0000)) | x
        if ex.all:
            R[r] = x
        else:
            R[r, sel] = x
        return True
    if kind == "dsa":      # an order-independent atomic without return
        _, areg, dreg, aop, off = m
        if not ex.any:
            return True
        a, x, seg = Vf[areg], Vf[dreg], lds_seg
        if not ex.all:
            sel = ex.sel
            a, x, seg = a[sel], x[sel], seg[sel]
        if not a.size:
            return True
        if off & 3:
            b = a.astype(np.int64) + off
            if np.count_nonzero((b & 3) | (b > lds_lim[1])):
                return False
            w = (b >> 2) + seg
        else:       # (as for reads and writes: two reductions of the address register)
            if _BOR(a) & 3 or int(_MAX(a)) + off > lds_lim[1]:
                return False
            w = (a >> 2) + seg
            if off:
                w += off >> 2
        f, signed = UFUNC_AT[aop]
        if signed:
            f(lds.view(np.int32), w, x.view(np.int32))
        else:
            f(lds, w, x)
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


_DS_KINDS = ("dsr", "dsrs", "dsw", "dsa", "swz", "permute", "bpermute")


_ONES = {}


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

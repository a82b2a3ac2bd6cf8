"""Liveness of 32-bit register units and register pressure.

A unit is live at a point if some path from the point reads it before writing
it.  Units are the keys of :func:`asmevo.ir.operands.reg_units`: ``("v", i)``,
``("s", i)``, ``("a", i)``, ``("ttmp", i)``, ``("vcc_lo",)``, ``("exec_hi",)``,
``("m0",)``, ``("scc",)``...  Sets are stored as Python ints (bit sets over
:attr:`Liveness.units`) and exposed as ``frozenset`` of units.

Rules:

* defs and uses come from :func:`asmevo.analysis._isa.facts`; partial writes
  (SDWA ``dst_unused:UNUSED_PRESERVE``/``dst_sel`` != DWORD, d16 loads,
  ``v_writelane``, tied accumulators) use the old value and do not kill it;
* a VALU write under a partial EXEC mask is treated as a full write (as
  LLVM's register liveness does: must-liveness, right for register
  allocation); passes that rename registers across divergent control flow
  must account for inactive lanes themselves;
* :class:`MayLiveness` (``exec_aware``) is the may-liveness the passes use
  (``asmevo.passes.liveness`` wraps it): uses and kills come from
  :func:`asmevo.analysis._isa.effects`; only SGPR and special-register writes
  that are full (``defs_must``) kill, a VGPR/AGPR write never does (it writes
  only the lanes active in EXEC, a later read in another lane sees the older
  value), and an instruction that reads registers by index or is not
  understood (``uses_all``) uses every register (:func:`may_use_kill`);
* the kernel exit uses nothing (``s_endpgm`` reads no register); a call or indirect jump
  (``s_swappc_b64``, ``s_call_b64``, ``s_setpc_b64``) uses every register of the kernel;
* an undecodable word (``.long``, :func:`asmevo.analysis.waitcnt.is_undecodable`) may be
  any instruction: it uses every register of the kernel and kills none (it may not write);
* the entry defines what the kernel descriptor initialises
  (:meth:`asmevo.analysis._abi.KernelABI.entry_units`); anything else live into
  the entry is reported in :attr:`Liveness.undefined_at_entry`;
* between ``s_set_gpr_idx_on`` and ``s_set_gpr_idx_off`` (CDNA3 ISA guide,
  "GPR indexing"), and for ``v_movrel*``/``s_movrel*``, an indexed VGPR/SGPR
  operand may address any register from its base upward: such a source reads
  every register of the file from its index to the end, and such a write kills
  nothing.
"""

from __future__ import annotations

from ..ir.operands import REG_FILES, Func, Imm, reg_units
from . import Analysis
from ._abi import kernel_abi
from ._isa import effects, facts, is_vector_unit
from .cfg import CFG, EXIT
from .waitcnt import is_undecodable

_INDEXED_ALWAYS = ("v_movrels", "v_movreld", "v_movrelsd", "s_movrels", "s_movreld")
_CALLS = ("s_swappc_b64", "s_call_b64", "s_setpc_b64")
_ALL_MODES = frozenset({"SRC0", "SRC1", "SRC2", "DST"})
#: VALU operand position -> gpr_idx mode bit (defs first: dst, src0, src1, src2)
_MODE_OF_POS = {0: "DST", 1: "SRC0", 2: "SRC1", 3: "SRC2"}


def _gpr_idx_modes(inst) -> frozenset:
    """Modes enabled by ``s_set_gpr_idx_on sN, gpr_idx(...)`` (or its 4-bit immediate)."""
    for o in inst.operands[1:]:
        if isinstance(o, Func) and o.name == "gpr_idx":
            return frozenset(str(a).upper() for a in o.args)
        if isinstance(o, Imm) and isinstance(o.value, int):
            return frozenset(m for i, m in enumerate(("SRC0", "SRC1", "SRC2", "DST"))
                             if o.value >> i & 1)
    return _ALL_MODES


_MAY_CACHE: dict = {}


def may_use_kill(inst) -> tuple[frozenset, frozenset]:
    """``(units read, units killed)`` of ``inst`` under may-liveness: the
    :func:`~asmevo.analysis._isa.effects` ``uses``, and the ``defs_must`` that are
    not VGPR/AGPR units (a vector write only writes the lanes active in EXEC).
    ``uses_all`` instructions are not widened here (see :class:`MayLiveness`)."""
    k = inst.key()
    r = _MAY_CACHE.get(k)
    if r is None:
        e = effects(inst)
        if len(_MAY_CACHE) > 200000:
            _MAY_CACHE.clear()
        r = _MAY_CACHE[k] = (e.uses, frozenset(x for x in e.defs_must if not is_vector_unit(x)))
    return r


#: vector instructions that read or write other lanes than their own, or lanes
#: regardless of EXEC (CDNA3 ISA guide: V_READLANE/V_WRITELANE, DS_SWIZZLE/PERMUTE,
#: DPP; MFMA treated alike)
_CROSS_LANE = ("v_readlane", "v_readfirstlane", "v_writelane", "ds_swizzle", "ds_permute",
               "ds_bpermute", "v_mfma", "v_smfmac", "v_permlane")
_DPP_MODS = ("quad_perm", "row_shl", "row_shr", "row_ror", "wave_shl", "wave_shr", "wave_rol",
             "wave_ror", "row_mirror", "row_half_mirror", "row_bcast", "row_newbcast",
             "row_mask", "bank_mask", "bound_ctrl", "dpp8", "fi")
_EXEC_UNITS = frozenset((("exec_lo",), ("exec_hi",)))
_LANE_CACHE: dict = {}


def lane_effects(inst) -> tuple[bool, frozenset, bool]:
    """``(per_lane, full vector writes, writes EXEC)`` of ``inst`` for the EXEC-aware
    liveness: ``per_lane`` when it reads and writes its VGPRs/AGPRs only in the lanes
    active in EXEC (a VALU, VMEM or DS instruction without DPP or cross-lane access);
    the full vector writes are its VGPR/AGPR ``defs_must`` when it is per-lane and its
    destination keeps nothing of its old value."""
    k = inst.key()
    r = _LANE_CACHE.get(k)
    if r is None:
        e = effects(inst)
        op = inst.opcode
        pl = bool(e.vector and e.known and not e.uses_all and e.kind in ("valu", "vmem", "ds")
                  and not op.startswith(_CROSS_LANE) and "_dpp" not in op
                  and not any(inst.has_mod(m) for m in _DPP_MODS))
        full = frozenset(u for u in e.defs_must if is_vector_unit(u)) \
            if pl and not e.partial else frozenset()
        if len(_LANE_CACHE) > 200000:
            _LANE_CACHE.clear()
        r = _LANE_CACHE[k] = (pl, full, bool(e.defs_may & _EXEC_UNITS))
    return r


class Liveness(Analysis):
    """Per-block live-in/live-out, per-instruction live sets and register pressure.

    Attributes:
        units: list of all units seen (bit ``i`` of a set is ``units[i]``).
        live_in, live_out: per block index, bit sets.
        entry_defined: units the kernel ABI initialises.
        undefined_at_entry: units live into the entry that the ABI does not
            initialise (reads of undefined registers), sorted.
        max_pressure: ``{"v": n, "a": n, "s": n}`` maximum number of live units
            of each file at any point (between instructions).
        max_pressure_at: file -> ``(block, index)`` of the instruction before
            which the maximum first occurs.
    """

    name = "liveness"
    #: False: must-liveness (every write kills); True: may-liveness (see :class:`MayLiveness`)
    exec_aware = False

    def __init__(self, kernel, manager=None):
        super().__init__(kernel, manager)
        self.cfg = self.dep(CFG)
        blocks = self.cfg.blocks
        self.units: list = []
        self._uidx: dict = {}
        self.abi = kernel_abi(kernel, self.module)
        idx_on = self._gpr_idx_mode()
        # per instruction (use bits, def bits)
        self._ud: list[list[tuple[int, int]]] = []
        # per instruction: bits of the units written (occupied across it, for pressure);
        # the kill bits of _ud in must-liveness
        self._wr: list[list[int]] = []
        widen: list[tuple[int, int]] = []
        for bi, b in enumerate(blocks):
            on = _ALL_MODES if idx_on[bi] else frozenset()
            rows = []
            for inst in b.instructions:
                if inst.opcode.startswith("s_set_gpr_idx_on"):
                    on = _gpr_idx_modes(inst)
                elif inst.opcode.startswith("s_set_gpr_idx_off"):
                    on = frozenset()
                rows.append(self._use_def(inst, on))
                if inst.opcode in _CALLS or is_undecodable(inst) or (
                        self.exec_aware and effects(inst).uses_all):
                    widen.append((bi, len(rows) - 1))
            self._ud.append(rows)
            if self.exec_aware:
                self._wr.append([self._bits(effects(i).defs_may) for i in b.instructions])
            else:
                self._wr.append([d for _, d in rows])
        # calls and indirect jumps (s_swappc_b64, s_call_b64, s_setpc_b64): the target may read
        # any register, so they use every unit of the kernel (conservative); in may-liveness
        # also instructions that read registers by index or are not understood
        everything = (1 << len(self.units)) - 1
        for bi, ii in widen:
            u, d = self._ud[bi][ii]
            self._ud[bi][ii] = (u | everything, d)
        # per instruction for the EXEC-aware mode: (per-lane uses, full per-lane writes,
        # writes EXEC) as bit sets, see _scan
        self._lane: list[list[tuple[int, int, bool]]] | None = None
        if self.exec_aware:
            vmask = self._bits(u for u in self.units if is_vector_unit(u))
            self._lane = []
            for bi, b in enumerate(blocks):
                row = []
                for ii, inst in enumerate(b.instructions):
                    pl, full, xw = lane_effects(inst)
                    u = self._ud[bi][ii][0]
                    row.append(((u & vmask) if pl and u != everything else 0,
                                self._bits(full), xw))
                self._lane.append(row)
        # block summaries
        n = len(blocks)
        gen = [0] * n
        kill = [0] * n
        for bi in range(n):
            if self.exec_aware:
                gen[bi] = self._scan(bi, 0)[0]
                k = 0
                for _, d in self._ud[bi]:
                    k |= d
                kill[bi] = k
                continue
            g = k = 0
            for u, d in reversed(self._ud[bi]):
                g = (g & ~d) | u
                k = (k | d) & ~u
            gen[bi], kill[bi] = g, k
        live_in = [0] * n
        live_out = [0] * n
        order = list(reversed(self.cfg.rpo())) + [b for b in self.cfg.unreachable]
        g = self.cfg.graph
        changed = True
        while changed:
            changed = False
            for bi in order:
                out = 0
                for s in g.successors(bi):
                    if s != EXIT:
                        out |= live_in[s]
                if out != live_out[bi]:
                    live_out[bi] = out
                new_in = gen[bi] | (out & ~kill[bi])
                if new_in != live_in[bi]:
                    live_in[bi] = new_in
                    changed = True
        self._live_in, self._live_out = live_in, live_out
        self.entry_defined = frozenset(self.abi.entry_units()) if kernel.is_kernel else None
        entry_live = self.to_set(live_in[0]) if n else frozenset()
        if self.entry_defined is None:
            self.undefined_at_entry = []
        else:
            self.undefined_at_entry = sorted(entry_live - self.entry_defined, key=_unit_key)
        self._masks = {f: self._file_mask(f) for f in ("v", "a", "s")}
        self._compute_pressure()

    # -- construction ----------------------------------------------------------------------------
    def _bit(self, u) -> int:
        i = self._uidx.get(u)
        if i is None:
            i = self._uidx[u] = len(self.units)
            self.units.append(u)
        return 1 << i

    def _bits(self, us) -> int:
        m = 0
        for u in us:
            m |= self._bit(u)
        return m

    def _file_mask(self, f: str) -> int:
        m = 0
        for i, u in enumerate(self.units):
            if len(u) == 2 and u[0] == f:
                m |= 1 << i
        return m

    def _use_def(self, inst, idx_modes: frozenset) -> tuple[int, int]:
        fx = facts(inst)
        if self.exec_aware:
            u, k = may_use_kill(inst)
            uses, defs = list(u), list(k)
        else:
            uses, defs = list(fx.uses), list(fx.defs)
        if inst.opcode.startswith(_INDEXED_ALWAYS):
            idx_ops = list(inst.operands)
        elif idx_modes and fx.valu:
            idx_ops = [o for i, o in enumerate(inst.operands)
                       if _MODE_OF_POS.get(i) in idx_modes]
        else:
            idx_ops = []
        for o in idx_ops:
            for u in reg_units(o)[:1]:
                if len(u) == 2 and u[0] in ("v", "s"):
                    file_ = u[0]
                    uses.extend((file_, j) for j in range(u[1], REG_FILES[file_]))
                    defs = [d for d in defs if not (len(d) == 2 and d[0] == file_ and d[1] >= u[1])]
        return self._bits(uses), self._bits(defs)

    def _gpr_idx_mode(self) -> list[bool]:
        """Per block: may GPR-index mode be on at block entry (forward may-analysis)."""
        blocks = self.cfg.blocks
        n = len(blocks)
        out_state = []
        for b in blocks:
            st = None
            for inst in b.instructions:
                if inst.opcode.startswith("s_set_gpr_idx_on"):
                    st = True
                elif inst.opcode.startswith("s_set_gpr_idx_off"):
                    st = False
            out_state.append(st)
        on = [False] * n
        if not any(s is True for s in out_state):
            return on
        changed = True
        while changed:
            changed = False
            for bi in range(n):
                o = out_state[bi] if out_state[bi] is not None else on[bi]
                if not o:
                    continue
                for s in self.cfg.graph.successors(bi):
                    if s != EXIT and not on[s]:
                        on[s] = True
                        changed = True
        return on

    def _compute_pressure(self) -> None:
        best = {f: -1 for f in self._masks}
        where = {f: None for f in self._masks}
        self._pressure_blocks: list[list[dict]] | None = None
        for bi in range(len(self.cfg.blocks)):
            sets = self._block_sets(bi)
            wr = self._wr[bi]
            for ii in range(len(wr) - 1, -1, -1):
                # live across the instruction: out | defs (defs occupy registers too)
                across = sets[ii + 1] | wr[ii]
                for f, m in self._masks.items():
                    c = (across & m).bit_count()
                    if c > best[f] or (c == best[f] and where[f] is not None and
                                       (bi, ii) < where[f]):
                        best[f], where[f] = c, (bi, ii)
        self.max_pressure = {f: max(0, c) for f, c in best.items()}
        self.max_pressure_at = where

    # -- queries ---------------------------------------------------------------------------------
    def to_set(self, bits: int) -> frozenset:
        """Bit set -> frozenset of units."""
        out = []
        i = 0
        while bits:
            if bits & 1:
                out.append(self.units[i])
            bits >>= 1
            i += 1
        return frozenset(out)

    def live_in(self, b: int) -> frozenset:
        """Units live on entry to block ``b``."""
        return self.to_set(self._live_in[b])

    def live_out(self, b: int) -> frozenset:
        """Units live on exit from block ``b``."""
        return self.to_set(self._live_out[b])

    def _scan(self, bi: int, out: int) -> list[int]:
        """Bit sets live before each instruction of block ``bi`` (index 0 first) and after
        its last one, given ``out`` live after it.

        Must-liveness: every write kills.  EXEC-aware may-liveness: VGPR/AGPR writes
        never kill what is live after the block or across an EXEC write, but a read by
        a per-lane instruction (:func:`lane_effects`) that a full per-lane write of the
        register precedes in the block, with no EXEC write in between, reads only lanes
        that write set, so it does not make the register live before that write (the
        lanes it reads are exactly the active ones, which the write filled; CDNA3 ISA
        guide, "EXEC mask").  Two sets are carried backwards: ``strong`` (live in every
        lane) and ``loc`` (read only per lane in the current EXEC epoch)."""
        rows = self._ud[bi]
        res = [0] * (len(rows) + 1)
        res[-1] = out
        if not self.exec_aware:
            live = out
            for ii in range(len(rows) - 1, -1, -1):
                u, d = rows[ii]
                live = (live & ~d) | u
                res[ii] = live
            return res
        lane = self._lane[bi]
        strong, loc = out, 0
        for ii in range(len(rows) - 1, -1, -1):
            u, d = rows[ii]
            pl_use, full, xw = lane[ii]
            if xw:
                strong |= loc
                loc = 0
            strong &= ~d
            loc &= ~(d | full)
            strong |= u & ~pl_use
            loc |= pl_use
            res[ii] = strong | loc
        return res

    def _block_sets(self, bi: int) -> list[int]:
        """Bit sets live before each instruction of block ``bi`` plus live-out at the end
        (computed once per block, then cached)."""
        cache = self.__dict__.setdefault("_sets_cache", {})
        hit = cache.get(bi)
        if hit is None:
            hit = cache[bi] = self._scan(bi, self._live_out[bi])
        return hit

    def live_before(self, inst) -> frozenset:
        """Units live immediately before ``inst``."""
        bi, ii = self.cfg.position(inst)
        return self.to_set(self._block_sets(bi)[ii])

    def live_after(self, inst) -> frozenset:
        """Units live immediately after ``inst``."""
        bi, ii = self.cfg.position(inst)
        return self.to_set(self._block_sets(bi)[ii + 1])

    def is_live_after(self, inst, unit) -> bool:
        """Whether ``unit`` is live immediately after ``inst``."""
        i = self._uidx.get(unit)
        if i is None:
            return False
        bi, ii = self.cfg.position(inst)
        return bool(self._block_sets(bi)[ii + 1] >> i & 1)

    def pressure(self) -> list[dict]:
        """For every instruction in layout order: ``{"block", "index", "v", "a", "s"}``,
        the number of live units of each file across the instruction (live-after plus
        its defs)."""
        out = []
        for bi in range(len(self.cfg.blocks)):
            sets = self._block_sets(bi)
            for ii, w in enumerate(self._wr[bi]):
                across = sets[ii + 1] | w
                out.append({"block": bi, "index": ii,
                            **{f: (across & m).bit_count() for f, m in self._masks.items()}})
        return out

    def to_json(self) -> dict:
        """Live-in/out per block, entry facts and maximum pressure as JSON data."""
        name = self.cfg.block_name
        return {
            "blocks": [{"name": name(b), "live_in": _fmt(self.live_in(b)),
                        "live_out": _fmt(self.live_out(b))} for b in range(len(self.cfg.blocks))],
            "undefined_at_entry": [_unit_str(u) for u in self.undefined_at_entry],
            "max_pressure": self.max_pressure,
            "max_pressure_at": {f: (None if w is None else
                                    {"block": name(w[0]), "index": w[1],
                                     "instruction": self.cfg.blocks[w[0]].instructions[w[1]].text()})
                                for f, w in self.max_pressure_at.items()},
        }


class MayLiveness(Liveness):
    """EXEC-aware may-liveness (:attr:`Liveness.exec_aware`), the liveness of the passes.

    Same queries as :class:`Liveness`; a unit is live where some path may read
    its current value in some lane.  Uses and kills per instruction are
    :func:`may_use_kill`: a VGPR/AGPR write never ends a live range (lanes
    inactive in EXEC keep the older value; LLVM's liveness, :class:`Liveness`,
    treats it as a full write), SGPR and special-register writes do when they
    are full; ``uses_all`` instructions (``s_movrel*``, ``v_movrel*``, opcodes
    not in the ISA table) and calls use every unit.  Register pressure counts
    every unit an instruction may write as occupied across it.
    """

    name = "liveness-may"
    exec_aware = True


def _unit_key(u) -> tuple:
    return (u[0], u[1] if len(u) > 1 else -1)


def _unit_str(u) -> str:
    return f"{u[0]}{u[1]}" if len(u) == 2 else u[0]


def _fmt(units) -> list[str]:
    """Compact sorted printable form of a unit set, ranges merged: ``v[0:3]``, ``s5``, ``vcc_lo``."""
    by: dict = {}
    other = []
    for u in units:
        if len(u) == 2:
            by.setdefault(u[0], []).append(u[1])
        else:
            other.append(u[0])
    out = []
    for f in sorted(by):
        xs = sorted(by[f])
        start = prev = xs[0]
        for x in xs[1:] + [None]:
            if x is not None and x == prev + 1:
                prev = x
                continue
            out.append(f"{f}{start}" if start == prev else f"{f}[{start}:{prev}]")
            if x is not None:
                start = prev = x
    return out + sorted(other)


format_units = _fmt
unit_str = _unit_str

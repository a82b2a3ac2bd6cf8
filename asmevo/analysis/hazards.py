"""Data hazards that need wait states on gfx940/gfx942 (no hardware interlock).

The rules are those LLVM's ``GCNHazardRecognizer`` enforces for gfx94x
(``llvm/lib/Target/AMDGPU/GCNHazardRecognizer.cpp``, predicates in
``GCNSubtarget.h``), tabulated in ISA_NOTES section 7, rows 1-28; each is a
:class:`HazardRule` record in :data:`RULES` with its wait-state count and source.

Counting (``getWaitStatesSince``): a wait state is one instruction issued
between producer and consumer; ``s_nop N`` provides N+1.  The producer is the
*nearest* earlier instruction that matches the rule (an intervening write of the
same register by another kind of instruction does not end the search, as in
LLVM).  Across block boundaries every predecessor is searched and the minimum
over all paths taken (including loop back edges into the consumer's own block);
the kernel entry provides unlimited wait states.

Rule 12 (dst-sel forwarding) follows LLVM main, which is stricter than LLVM 19:
``getDstSelForwardingOperand`` picks the forwarded VGPR destination of the producer and
``consumesDstSelForwardingOperand`` matches a VALU consumer with *any* operand that
overlaps it, definitions included (a write-after-write: an SDWA ``UNUSED_PRESERVE`` or
``op_sel`` write keeps the other half of the register, so it reads the forwarded value;
upstream test ``llvm/test/CodeGen/AMDGPU/dst-sel-hazard.mir``, gfx942 ``HAZARD`` checks).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from ..ir.operands import Func, Imm, Reg, base_of, reg_units
from . import Analysis
from ._isa import facts, is_nop
from .cfg import CFG
from .waitcnt import is_memory_write, is_undecodable

#: Wait states assumed needed next to an undecodable word (it may be any producer and any
#: consumer): the largest count of any rule, an XDL MFMA of 16 passes + 3 (rules 22-24).
UNDECODABLE_WAIT_STATES = 19


@dataclass(frozen=True)
class HazardRule:
    """One row of the gfx940 hazard table.

    ``wait_states`` is the count (an int) or a description when it depends on the
    producer (MFMA pass count, DGEMM shape).  ``source`` names the LLVM check.
    """

    id: int
    producer: str
    consumer: str
    wait_states: object
    source: str


_SRC = "llvm/lib/Target/AMDGPU/GCNHazardRecognizer.cpp "
#: ISA_NOTES section 7, rows 1-28.
RULES: dict[int, HazardRule] = {r.id: r for r in [
    HazardRule(1, "VALU writes SGPR/VCC/EXEC/M0", "VMEM/FLAT reads it", 5,
               _SRC + "checkVMEMHazards (hasVMEMReadSGPRVALUDefHazard)"),
    HazardRule(2, "VALU writes VCC", "v_div_fmas_f32/f64", 4, _SRC + "checkDivFMasHazards"),
    HazardRule(3, "s_setreg", "s_getreg of the same HW register", 2, _SRC + "checkGetRegHazards"),
    HazardRule(4, "s_setreg", "s_setreg of the same HW register", 2,
               _SRC + "checkSetRegHazards (getSetRegWaitStates)"),
    HazardRule(5, "s_setreg HW_REG_TRAPSTS", "s_rfe_b64", 1, _SRC + "checkRFEHazards"),
    HazardRule(6, "VALU writes SGPR", "v_readlane/v_writelane lane select (src1)", 4,
               _SRC + "checkRWLaneHazards"),
    HazardRule(7, "any instruction writes VGPR", "DPP reads it", 2, _SRC + "checkDPPHazards"),
    HazardRule(8, "VALU writes EXEC", "DPP", 5, _SRC + "checkDPPHazards"),
    HazardRule(9, "SALU writes M0", "s_movrel*, ds_*_addtid, s_sendmsg*, s_ttracedata, GDS, "
               "LDS-DMA, LDS_DIRECT", 1, _SRC + "checkReadM0Hazards"),
    HazardRule(10, "VMEM/FLAT store with more than 64 bits of data", "VALU writes that data VGPR",
               "2; 1 for MUBUF/MTBUF with an SGPR soffset (PITFALLS BR-17)",
               _SRC + "checkVALUHazardsHelper (has12DWordStoreHazard)"),
    HazardRule(11, "TRANS VALU writes VGPR", "non-TRANS VALU reads it", 1,
               _SRC + "checkVALUHazards (hasTransForwardingHazard)"),
    HazardRule(12, "VALU with SDWA dst_sel != DWORD or op_sel dst bit writes VGPR",
               "VALU reads or writes it (RAW and WAW)", 1,
               _SRC + "checkVALUHazards (hasDstSelForwardingHazard, "
               "getDstSelForwardingOperand / consumesDstSelForwardingOperand)"),
    HazardRule(13, "VALU writes SGPR or VCC", "VALU reads it", 2,
               _SRC + "checkVALUHazards (hasVDecCoExecHazard)"),
    HazardRule(14, "VALU writes EXEC", "v_readlane/v_readfirstlane/v_writelane", 4,
               _SRC + "checkVALUHazards (hasVDecCoExecHazard)"),
    HazardRule(15, "VALU writes VGPR", "v_readlane/v_readfirstlane reads it as src0", 1,
               _SRC + "checkVALUHazards (hasVDecCoExecHazard)"),
    HazardRule(16, "non-MFMA VALU writes EXEC", "MFMA", 4, _SRC + "checkMAIHazards90A"),
    HazardRule(17, "non-MFMA, non-DOT VALU writes VGPR", "MFMA reads it", 2,
               _SRC + "checkMAIHazards90A"),
    HazardRule(18, "XDL MFMA writes VGPR/AGPR", "MFMA reads an overlapping, not identical, "
               "register as SrcC", "passes + 1", _SRC + "GFX940_XDL_N_PassWritesVGPROverlappedSMFMASrcCWaitStates"),
    HazardRule(19, "non-XDL MFMA writes VGPR/AGPR", "MFMA reads an overlapping, not identical, "
               "register as SrcC", "passes; 0 if the reader is XDL",
               _SRC + "GFX940_SMFMA_N_PassWritesVGPROverlappedSMFMASrcCWaitStates"),
    HazardRule(20, "MFMA writes a register", "MFMA reads exactly it as SrcC",
               "0; 2 for a 2-pass writer; f64 4x4x4 -> f64 4x4x4: 4", _SRC + "checkMAIHazards90A"),
    HazardRule(21, "DGEMM writes VGPR/AGPR", "non-XDL MFMA reads an overlapping register as SrcC",
               "v_mfma_f64_16x16x4: 9; v_mfma_f64_4x4x4: 4", _SRC + "checkMAIHazards90A"),
    HazardRule(22, "MFMA writes VGPR/AGPR", "MFMA reads it as SrcA/B",
               "XDL passes + 3; SMFMA passes + 2; f64 16x16x4: 11; f64 4x4x4: 6",
               _SRC + "GFX940_XDL/SMFMA_N_PassWritesVGPROverlappedSrcABWaitStates"),
    HazardRule(23, "MFMA writes VGPR/AGPR", "VALU/VMEM/DS/FLAT reads it",
               "XDL passes + 3; SMFMA passes + 2; DGEMM 4x4: VALU 6, memory 9; 16x16: VALU 11, "
               "memory 18", _SRC + "checkMAIVALUHazards"),
    HazardRule(24, "MFMA writes VGPR/AGPR", "VALU/VMEM/DS/FLAT writes it (WAW)",
               "XDL passes + 3; SMFMA passes + 2; DGEMM 4x4: 6; 16x16: 11",
               _SRC + "checkMAIVALUHazards"),
    HazardRule(25, "XDL MFMA reads a register as SrcC", "VALU/VMEM/DS/FLAT overwrites it (WAR)",
               "2-pass 1, 4-pass 3, 8-pass 7, 16-pass 15", _SRC + "checkMAIVALUHazards"),
    HazardRule(26, "DOT writes VGPR", "same DOT reads it as SrcA/B; other VALU reads or writes it",
               3, _SRC + "checkMAIVALUHazards"),
    HazardRule(27, "DGEMM", "v_fma_f64 / v_fmac_f64", 2,
               _SRC + "checkMAIVALUHazards (DMFMAToFMA64WaitStates)"),
    HazardRule(28, "SMEM (or VMEM) soft clause member writes a register",
               "a later member of the same clause reads it, or a store joins it (XNACK on)", 1,
               _SRC + "checkSoftClauseHazards"),
]}


@dataclass(frozen=True)
class Hazard:
    """A consumer with fewer wait states after its producer than rule ``rule`` requires."""

    inst: object
    block: int
    index: int
    producer: object
    rule: int
    required: int
    available: int
    unit: tuple | None = None

    def to_json(self) -> dict:
        """Plain data for reports."""
        u = self.unit
        return {"block": self.block, "index": self.index, "instruction": self.inst.text(),
                "producer": self.producer.text() if self.producer is not None else None,
                "rule": self.rule, "description": f"{RULES[self.rule].producer} -> "
                                                  f"{RULES[self.rule].consumer}",
                "required": self.required, "available": self.available,
                "register": (None if u is None else f"{u[0]}{u[1]}" if len(u) == 2 else u[0]),
                "source": RULES[self.rule].source}


# ---------------------------------------------------------------------------------------------
# instruction predicates


def _vec(u) -> bool:
    return len(u) == 2 and u[0] in ("v", "a")


def _sgpr_like(u) -> bool:
    return (len(u) == 2 and u[0] in ("s", "ttmp")) or (len(u) == 1 and u[0] not in (
        "exec_lo", "exec_hi", "scc", "lds_dma", "mem_write"))


_EXEC = (("exec_lo",), ("exec_hi",))
_VCC = (("vcc_lo",), ("vcc_hi",))
_M0 = ("m0",)


def _writes(fx) -> frozenset:
    return frozenset(fx.defs) | frozenset(fx.partial)


def _hwreg(inst):
    for o in inst.operands:
        if isinstance(o, Func) and o.name == "hwreg" and o.args:
            return str(o.args[0])
        if isinstance(o, Imm) and isinstance(o.value, int) and inst.opcode.startswith("s_getreg"):
            return str(o.value & 0x3F)
    # s_setreg_imm32_b32 hwreg(...), imm / s_setreg_b32 hwreg(...), sN
    return None


def _is_setreg(op: str) -> bool:
    return op.startswith("s_setreg")


def _mfma_ops(inst):
    """(dst, [srcA, srcB, (idx)], srcC) operands of an MFMA (SMFMAC: srcC is the tied dst)."""
    ops = [base_of(o) for o in inst.operands]
    dst = ops[0] if ops else None
    if inst.opcode.startswith("v_smfmac"):
        return dst, ops[1:], dst
    return dst, ops[1:3], (ops[3] if len(ops) > 3 else None)


def _units_of(op) -> frozenset:
    return frozenset(reg_units(op)) if op is not None else frozenset()


def _store_data(inst, fx):
    """The data operand of a VMEM/FLAT store or atomic, or ``None``."""
    op = inst.opcode
    if not (fx.vmem or fx.flat) or not ("_store" in op or "_atomic" in op):
        return None
    ops = inst.operands
    if op.startswith(("buffer_", "tbuffer_")):
        return ops[0] if ops else None
    rtn = bool(fx.defs)
    i = 2 if rtn else 1
    return ops[i] if len(ops) > i else None


def _mubuf_sgpr_soffset(inst) -> bool:
    if not inst.opcode.startswith(("buffer_", "tbuffer_")) or len(inst.operands) < 4:
        return False
    so = base_of(inst.operands[3])
    return isinstance(so, Reg) and so.file in ("s", "ttmp")


#: VOP3 byte-select conversions whose ``op_sel[2]`` (src2 OP_SEL_0) picks the destination
#: byte pair: LLVM ``getDstSelForwardingOperand`` "Type 3" (FP8 dst-sel instructions).
_FP8_DST_SEL = ("v_cvt_sr_fp8_f32", "v_cvt_sr_bf8_f32")


def _dst_sel_forwarding(inst, fx) -> bool:
    """Whether ``inst`` writes its VGPR destination through the partial-destination
    forwarding path (rule 12 producer), after LLVM ``getDstSelForwardingOperand``
    (GCNHazardRecognizer.cpp): SDWA with ``dst_sel`` other than DWORD; a VOP3 ``op_sel``
    destination bit (the element after the sources: ``op_sel:[0,0,1]`` for two sources,
    ``op_sel:[0,0,0,1]`` for three; llvm-mc encodes both as VOP3 bit 14); the byte
    select of ``v_cvt_sr_{fp8,bf8}_f32`` (``op_sel[2]`` or ``op_sel[3]``).

    VOP3P: LLVM tests ``src0_modifiers & SISrcMods::DST_OP_SEL`` on every instruction with
    an ``op_sel`` operand, and for VOP3P that bit is ``OP_SEL_1``, i.e. ``op_sel_hi[0]``, set by
    default on packed instructions.  So LLVM 19 (``llc -mcpu=gfx942``) puts ``s_nop 0``
    between ``v_pk_mul_f32 v[0:1], ...`` and a VALU reading ``v[0:1]`` (also ``v_pk_*_f16``,
    ``v_pk_mov_b32``, ``v_fma_mix_f32 ... op_sel_hi:[1,..]``), and none when ``op_sel_hi[0]``
    is 0.  Whether the hardware needs it is not documented; asmevo follows LLVM (the
    stricter reading: a deleted LLVM ``s_nop`` must not be accepted on a guess).  Defaults as
    llvm-mc encodes them: ``op_sel_hi`` all ones for packed and dot instructions, zeros for
    ``v_fma_mix``/``v_mad_mix``."""
    if not fx.valu:
        return False
    if fx.sdwa:
        return str(inst.mod("dst_sel", "DWORD")).upper() != "DWORD"
    info = inst.info
    if (info is not None and info.encoding == "VOP3P" and "op_sel_hi" in (info.modifiers or ())
            and not fx.mfma):
        hi = inst.mod("op_sel_hi")
        if isinstance(hi, tuple) and hi:
            return bool(hi[0])
        return not inst.opcode.startswith(("v_fma_mix", "v_mad_mix"))
    sel = inst.mod("op_sel")
    if not isinstance(sel, tuple) or inst.opcode.startswith(
            ("v_pk_", "v_dot", "v_fma_mix", "v_mad_mix")) or fx.mfma:
        return False
    nsrc = max(len(inst.operands) - 1, 0)
    return any(bool(x) for x in sel[nsrc:])


def _m0_reader(inst, fx) -> bool:
    op = inst.opcode
    return (op.startswith(("s_movrel", "s_sendmsg", "s_ttracedata")) or "addtid" in op
            or fx.gds or fx.lds_dma
            or any(getattr(base_of(o), "name", "") in ("lds_direct", "src_lds_direct")
                   for o in inst.operands))


# ---------------------------------------------------------------------------------------------


class _Pre:
    """Per-instruction sets the rules search for (precomputed once per distinct instruction)."""

    __slots__ = ("fx", "wr", "valu_wr", "nonmfma_valu_wr", "legacy_wr", "salu_wr", "mdst",
                 "msrcc_xdl", "dot_defs", "trans_defs", "dsel_wr", "store_data", "store_req",
                 "setreg", "dgemm_any", "m0_reader")

    def __init__(self, inst, fx):
        self.fx = fx
        wr = _writes(fx)
        self.wr = wr
        self.valu_wr = wr if fx.valu else frozenset()
        self.nonmfma_valu_wr = wr if fx.valu and not fx.mfma else frozenset()
        self.legacy_wr = wr if fx.valu and not fx.mfma and not fx.dot else frozenset()
        self.salu_wr = wr if fx.salu else frozenset()
        self.mdst = self.msrcc_xdl = frozenset()
        if fx.mfma:
            dst, _, srcc = _mfma_ops(inst)
            self.mdst = _units_of(dst)
            if fx.xdl and not fx.dgemm:
                self.msrcc_xdl = _units_of(srcc)
        self.dot_defs = frozenset(fx.defs) if fx.dot else frozenset()
        self.trans_defs = frozenset(fx.defs) if fx.trans else frozenset()
        # LLVM forwards only the VGPR destination (``vdst``), not a carry-out SGPR
        self.dsel_wr = (frozenset(u for u in wr if _vec(u)) if _dst_sel_forwarding(inst, fx)
                        else frozenset())
        self.store_data = frozenset()
        self.store_req = 0
        d = _store_data(inst, fx)
        if d is not None:
            du = _units_of(d)
            if len(du) > 2:
                self.store_data = du
                self.store_req = 1 if _mubuf_sgpr_soffset(inst) else 2
        hw = _hwreg(inst) if _is_setreg(inst.opcode) else None
        self.setreg = frozenset({hw, "*"}) if hw is not None else frozenset()
        self.dgemm_any = frozenset({"*"}) if fx.dgemm else frozenset()
        self.m0_reader = _m0_reader(inst, fx)


class HazardAnalysis(Analysis):
    """Hazards of one kernel (see module docstring and :data:`RULES`).

    Attributes:
        violations: list of :class:`Hazard` (consumer, producer, rule, required vs
            available wait states), in layout order.
        xnack: whether XNACK may be on (target id without ``xnack-``): enables rule 28.
    """

    name = "hazards"

    def __init__(self, kernel, manager=None):
        super().__init__(kernel, manager)
        self.cfg = self.dep(CFG)
        blocks = self.cfg.blocks
        cache: dict = {}
        self._pre = []
        for b in blocks:
            row = []
            for i in b.instructions:
                k = i.key()
                p = cache.get(k)
                if p is None:
                    p = cache[k] = _Pre(i, facts(i))
                row.append(p)
            self._pre.append(row)
        self._ws = [[(is_nop(i) or 1) for i in b.instructions] for b in blocks]
        self._prefix = []
        for row in self._ws:
            acc = [0]
            for w in row:
                acc.append(acc[-1] + w)
            self._prefix.append(acc)
        self._aidx: dict = {}
        self.has_mfma = any(p.fx.mfma or p.fx.dot for row in self._pre for p in row)
        self.lookback = 19 if self.has_mfma else 5
        tgt = getattr(self.module, "target", None) or ""
        self.xnack = "xnack-" not in tgt
        self.violations: list[Hazard] = []
        #: positions of undecodable words (``.long``, :func:`asmevo.analysis.waitcnt.is_undecodable`):
        #: each may be any producer or consumer, so the hazards near them are undecided and
        #: :meth:`required_nops` answers :data:`UNDECODABLE_WAIT_STATES` there
        self.undecodable = [(bi, ii) for bi, b in enumerate(blocks)
                            for ii, i in enumerate(b.instructions) if is_undecodable(i)]
        self._by_inst: dict[int, list[Hazard]] = {}
        self._nop_run: dict[int, int] = {}
        for bi, b in enumerate(blocks):
            run = 0
            for ii, inst in enumerate(b.instructions):
                self._nop_run[id(inst)] = run
                hz = self._check(bi, ii)
                if hz:
                    self.violations.extend(hz)
                    self._by_inst[id(inst)] = hz
                run = run + self._ws[bi][ii] if inst.opcode == "s_nop" else 0

    # -- search --------------------------------------------------------------------------------
    def _windows(self, bi: int, ii: int, limit: int) -> list[list]:
        """Backward search paths from the instruction before ``(bi, ii)``: each a list of
        segments ``(block, hi, lo, base)`` covering instructions ``hi`` down to ``lo`` whose
        wait-state distance to the consumer is ``base + prefix[hi+1] - prefix[j+1]`` (< limit).
        Every predecessor is followed (the consumer's own block again through a loop back
        edge); a block is entered again only at a smaller distance than before, so the
        minimum over all paths is found (LLVM visits each block once, which can miss a
        shorter second path)."""
        out = []
        best: dict[int, int] = {}  # block -> smallest distance at which its end was entered
        stack = [(bi, ii - 1, 0, [])]
        while stack:
            b, hi, base, segs = stack.pop()
            pre = self._prefix[b]
            if hi >= 0:
                top = pre[hi + 1]
                # smallest j with base + top - pre[j+1] < limit  <=>  pre[j+1] > base + top - limit
                lo = bisect.bisect_right(pre, base + top - limit, 1, hi + 2) - 1
                segs = segs + [(b, hi, lo, base)]
                if lo > 0:
                    out.append(segs)
                    continue
                base = base + top
            if base >= limit:
                out.append(segs)
                continue
            preds = [p for p in self.cfg.graph.predecessors(b) if base < best.get(p, limit)]
            if not preds:
                out.append(segs)
                continue
            for p in preds:
                best[p] = base
                stack.append((p, len(self._pre[p]) - 1, base, segs))
        return out

    def _attr_index(self, b: int, attr: str) -> list[int]:
        key = (b, attr)
        idx = self._aidx.get(key)
        if idx is None:
            idx = self._aidx[key] = [j for j, p in enumerate(self._pre[b]) if getattr(p, attr)]
        return idx

    def _hits(self, windows, units, attr: str):
        """Per search path, for each of ``units`` the nearest instruction whose ``attr`` set
        contains it: yields ``(pre, inst, wait states, hit units)``."""
        if not units:
            return
        units = frozenset(units)
        blocks = self.cfg.blocks
        for segs in windows:
            remaining = units
            for b, hi, lo, base in segs:
                idx = self._attr_index(b, attr)
                if not idx:
                    continue
                k = bisect.bisect_right(idx, hi) - 1
                pre = self._prefix[b]
                top = pre[hi + 1]
                while k >= 0 and idx[k] >= lo:
                    j = idx[k]
                    p = self._pre[b][j]
                    hit = getattr(p, attr) & remaining
                    if hit:
                        yield p, blocks[b].instructions[j], base + top - pre[j + 1], hit
                        remaining = remaining - hit
                        if not remaining:
                            break
                    k -= 1
                if not remaining:
                    break

    # -- rules ---------------------------------------------------------------------------------
    def _check(self, bi: int, ii: int, *, keep_all: bool = False, extra: int = 0) -> list[Hazard]:
        inst = self.cfg.blocks[bi].instructions[ii]
        cp = self._pre[bi][ii]
        cf = cp.fx
        op = inst.opcode
        if op == "s_nop" or not (cf.valu or cf.vmem or cf.flat or cf.ds or cf.smem
                                 or op.startswith(("s_setreg", "s_getreg", "s_rfe", "s_movrel",
                                                   "s_sendmsg", "s_ttracedata"))):
            return []
        windows = self._windows(bi, ii, self.lookback + extra)
        found: list[tuple] = []  # (rule, producer, required, available, unit)

        hits = self._hits

        def need(rule, units, attr, req=None, reqf=None):
            for pre, p, ws, hit in hits(windows, units, attr):
                r = reqf(pre, p, hit) if reqf is not None else req
                if r and (ws < r or keep_all):
                    found.append((rule, p, r, ws, min(hit, key=str)))

        cexpl = cf.explicit_uses
        cwr = cp.wr
        vec_uses = [u for u in cexpl if _vec(u)]
        # 1: VALU writes SGPR -> VMEM/FLAT reads it
        if cf.vmem or cf.flat:
            need(1, [u for u in cf.uses if not _vec(u) and u[0] not in (
                "scc", "lds_dma", "mem_write")], "valu_wr", 5)
            if self.xnack:
                found.extend(self._soft_clause(bi, ii, vmem=True, skip_nops=extra > 0))
        if cf.smem and self.xnack:
            found.extend(self._soft_clause(bi, ii, vmem=False, skip_nops=extra > 0))
        if cf.valu:
            # 2: VALU writes VCC -> v_div_fmas
            if op.startswith("v_div_fmas"):
                need(2, _VCC, "valu_wr", 4)
            # 6: lane select SGPR of v_readlane/v_writelane
            if op.startswith(("v_readlane", "v_writelane")) and len(inst.operands) > 2:
                need(6, [u for u in reg_units(inst.operands[2]) if _sgpr_like(u)], "valu_wr", 4)
            # 7/8: DPP
            if cf.dpp:
                need(7, vec_uses, "wr", 2)
                need(8, _EXEC, "valu_wr", 5)
            # 10: wide store data overwritten by VALU
            need(10, [u for u in cwr if _vec(u)], "store_data",
                 reqf=lambda pre, p, hit: pre.store_req)
            # 11: TRANS forwarding
            if not cf.trans:
                need(11, cexpl, "trans_defs", 1)
            # 12: dst_sel forwarding: every operand that overlaps the forwarded destination,
            # read or written (consumesDstSelForwardingOperand: a WAW, e.g. an SDWA
            # UNUSED_PRESERVE or op_sel write that keeps the other half, reads it too)
            need(12, [u for u in (*cf.uses, *cwr) if _vec(u)], "dsel_wr", 1)
            # 13: VALU writes SGPR/VCC -> VALU reads it
            sg = [u for u in cexpl if _sgpr_like(u)]
            if any(u in cf.uses for u in _VCC):
                sg += list(_VCC)
            need(13, sg, "valu_wr", 2)
            # 14/15: readlane family
            if op.startswith(("v_readlane", "v_readfirstlane", "v_writelane")):
                need(14, _EXEC, "valu_wr", 4)
            if op.startswith(("v_readlane", "v_readfirstlane")) and len(inst.operands) > 1:
                need(15, reg_units(inst.operands[1]), "valu_wr", 1)
            # 27: DGEMM -> v_fma_f64 / v_fmac_f64
            if op.startswith(("v_fma_f64", "v_fmac_f64")):
                need(27, ("*",), "dgemm_any", 2)
        if cf.mfma:
            self._mfma_consumer(inst, cf, windows, need, found, keep_all)
        elif (cf.valu or cf.vmem or cf.flat or cf.ds) and self.has_mfma:
            self._mai_valu_consumer(inst, cf, cp, vec_uses, need)
        # 9: SALU writes M0
        if cp.m0_reader:
            need(9, (_M0,), "salu_wr", 1)
        # 3/4/5: s_setreg / s_getreg / s_rfe
        if op.startswith("s_getreg") or _is_setreg(op):
            need(3 if op.startswith("s_getreg") else 4, (_hwreg(inst),), "setreg", 2)
        if op == "s_rfe_b64":
            need(5, ("HW_REG_TRAPSTS",), "setreg", 1)
        out = []
        seen = set()
        for rule, p, req, ws, unit in found:
            key = (rule, id(p), unit)
            if key in seen:
                continue
            seen.add(key)
            out.append(Hazard(inst, bi, ii, p, rule, req, ws, unit))
        return out

    def _mfma_consumer(self, inst, cf, windows, need, found, keep_all) -> None:
        """Rules 16-22 (checkMAIHazards90A): the consumer is an MFMA."""
        need(16, _EXEC, "nonmfma_valu_wr", 4)
        dst, srcab, srcc = _mfma_ops(inst)
        uses = [(o, False) for o in srcab if isinstance(o, Reg)]
        if isinstance(srcc, Reg):
            uses.append((srcc, True))
        need(17, [u for o, _ in uses for u in reg_units(o)], "legacy_wr", 2)
        for reg, is_c in uses:
            for pre, p, ws, hit in self._hits(windows, reg_units(reg), "mdst"):
                pf = pre.fx
                full = _mfma_ops(p)[0] == reg
                f64_16 = pf.dgemm and "16x16" in p.opcode
                f64_4 = pf.dgemm and "4x4" in p.opcode
                if is_c:
                    if full:
                        rule = 20
                        if f64_4 and cf.dgemm and "4x4" in inst.opcode:
                            r = 4
                        else:
                            r = 2 if pf.passes == 2 else 0
                    elif pf.dgemm:
                        rule = 21
                        r = 0 if cf.xdl else (9 if f64_16 else 4)
                    else:
                        rule = 18 if pf.xdl else 19
                        if cf.xdl and not pf.xdl:
                            r = 0
                        else:
                            r = pf.passes + 1 if pf.xdl else pf.passes
                else:
                    rule = 22
                    r = 11 if f64_16 else 6 if f64_4 else (
                        pf.passes + 3 if pf.xdl else pf.passes + 2)
                if r and (ws < r or keep_all):
                    found.append((rule, p, r, ws, min(hit, key=str)))

    def _mai_valu_consumer(self, inst, cf, cp, vec_uses, need) -> None:
        """Rules 23-26 (checkMAIVALUHazards): the consumer is a VALU or memory op."""
        mem = cf.vmem or cf.flat or cf.ds

        def req23(pre, p, hit):
            pf = pre.fx
            if pf.dgemm:
                if "4x4" in p.opcode:
                    return 9 if mem else 6
                return 18 if mem else 11
            return pf.passes + 3 if pf.xdl else pf.passes + 2
        need(23, vec_uses, "mdst", reqf=req23)
        # SrcC of a DOT: src2, or the tied destination of v_dot2c/v_dot4c/v_dot8c
        if len(inst.operands) > 3:
            srcc = frozenset(reg_units(inst.operands[3]))
        elif cf.dot and inst.operands:
            srcc = frozenset(reg_units(inst.operands[0]))
        else:
            srcc = frozenset()
        if cf.valu:
            # the same DOT opcode reading the register as SrcC (accumulation) needs no wait
            need(26, vec_uses, "dot_defs", reqf=lambda pre, p, hit: 0 if (
                p.opcode == inst.opcode and hit <= srcc) else 3)
        vdefs = [u for u in cp.wr if _vec(u)]

        def req24(pre, p, hit):
            pf = pre.fx
            if pf.dgemm:
                return 6 if "4x4" in p.opcode else 11
            return pf.passes + 3 if pf.xdl else pf.passes + 2
        need(24, vdefs, "mdst", reqf=req24)
        if cf.valu:
            need(26, vdefs, "dot_defs", reqf=lambda pre, p, hit: 3 if p.opcode != inst.opcode
                 else 0)
        need(25, vdefs, "msrcc_xdl",
             reqf=lambda pre, p, hit: {2: 1, 4: 3, 8: 7}.get(pre.fx.passes, 15))

    def _soft_clause(self, bi: int, ii: int, vmem: bool, skip_nops: bool = False) -> list[tuple]:
        """Rule 28: XNACK replay of a soft clause (consecutive SMEM, or consecutive VMEM/FLAT,
        instructions in one block) must not read a register written inside it.  A non-clause
        instruction (an ``s_nop``) in between breaks the clause; ``skip_nops`` ignores the
        ``s_nop`` run right before the consumer (for :meth:`required_nops`)."""
        insts = self.cfg.blocks[bi].instructions
        pres = self._pre[bi]
        cf = pres[ii].fx
        defs: set = set()
        uses: set = set()
        first = None
        j = ii - 1
        avail = 0  # wait states of the skipped nop run (it is what breaks the clause)
        while skip_nops and j >= 0 and insts[j].opcode == "s_nop":
            avail += self._ws[bi][j]
            j -= 1
        while j >= 0:
            f = pres[j].fx
            if not ((f.vmem or f.flat) if vmem else f.smem):
                break
            defs |= pres[j].wr
            uses |= set(f.uses)
            first = insts[j]
            j -= 1
        if not defs:
            return []
        if is_memory_write(insts[ii], cf):  # LLVM: MEM->mayStore() (stores and atomics)
            return [(28, first, 1, avail, None)]
        defs |= pres[ii].wr
        uses |= set(cf.uses)
        common = defs & uses
        if common:
            return [(28, first, 1, avail, sorted(common, key=str)[0])]
        return []

    # -- queries -------------------------------------------------------------------------------
    def hazards_at(self, inst) -> list[Hazard]:
        """Violations whose consumer is ``inst``."""
        return list(self._by_inst.get(id(inst), ()))

    def required_nops(self, inst) -> int:
        """Wait states that the run of ``s_nop`` immediately before ``inst`` must provide
        so that every hazard of ``inst`` is covered, given all other instructions (0 if
        none is needed).  A nop-trim pass may shrink that run to this many wait states
        (``s_nop N`` gives N+1, at most 8 per ``s_nop``) as far as ``inst`` is concerned;
        the same nops also separate later consumers from their producers, so after a
        change the pass must recompute (invalidate) and check :attr:`violations`.

        Raises:
            KeyError: ``inst`` is not in the kernel the analysis was built for."""
        bi, ii = self.cfg.position(inst)
        run = self._nop_run.get(id(inst), 0)
        if self._near_undecodable(bi, ii, run):
            return UNDECODABLE_WAIT_STATES
        need = 0
        for h in self._check(bi, ii, keep_all=True, extra=run):
            need = max(need, h.required - (h.available - run))
        return max(0, need)

    def _near_undecodable(self, bi: int, ii: int, run: int = 0) -> bool:
        """Whether ``(bi, ii)`` is an undecodable word, or one lies within
        :data:`UNDECODABLE_WAIT_STATES` wait states before it (plus ``run``) on some path:
        such a word may be any producer or consumer of every rule (issue 14)."""
        if not self.undecodable:
            return False
        if is_undecodable(self.cfg.blocks[bi].instructions[ii]):
            return True
        for path in self._windows(bi, ii, UNDECODABLE_WAIT_STATES + run):
            for b, hi, lo, _ in path:
                if any(is_undecodable(i) for i in self.cfg.blocks[b].instructions[lo:hi + 1]):
                    return True
        return False

    def to_json(self) -> dict:
        """Violations and the rule table as plain data."""
        return {"violations": [h.to_json() for h in self.violations],
                "rules": [{"id": r.id, "producer": r.producer, "consumer": r.consumer,
                           "wait_states": r.wait_states, "source": r.source}
                          for r in RULES.values()]}

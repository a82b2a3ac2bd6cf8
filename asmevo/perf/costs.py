"""Instruction cost classes: what one gfx942 instruction costs the compute unit.

For each instruction (:func:`cost_of`, cached by instruction value and machine):

* ``category``: the sequencer's issue category (TIMING_FACTS.md s2, rocprofiler-compute
  "Scheduler" [A]): ``valu`` (MFMA included), ``vmem`` (MUBUF/MTBUF/GLOBAL/SCRATCH/FLAT),
  ``salu`` (SALU and SMEM share one), ``lds``, ``branch``, or ``internal`` (s_nop,
  s_waitcnt, s_barrier, s_setprio, s_sleep, s_endpgm...: no functional unit);
* ``unit``: the functional unit it occupies: ``valu``, ``mfma``, ``vmem``, ``smem``,
  ``salu``, ``lds``, ``branch`` or ``none``;
* ``occupancy``: clk that unit stays busy for a wave64 (VALU 4 = one pass; trans 16,
  quarter rate [L]; f64 and packed f32 4, full rate [A]; MFMA passes x 4 [A]);
* ``latency``: clk from issue until a dependent instruction may issue.  ALU results
  only; memory results are waited for with ``s_waitcnt`` and their latency comes from
  the memory model (:mod:`asmevo.perf.memory`); ``latency`` holds the nominal hit
  latency (LDS, sL1, vL1) for static estimates;
* ``counters``: ``vmcnt``/``lgkmcnt`` it increments (ISA table, as
  :mod:`asmevo.analysis.waitcnt`);
* MFMA: ``passes``, ``xdl``, ``dgemm``, ``smfmac`` and ``shape`` (e.g. ``"f16_32x32x8"``);
* ``nop_states``: wait states an ``s_nop N`` supplies (N+1), one issue slot each;
* ``waitcnt``: ``(vmcnt, lgkmcnt)`` of an ``s_waitcnt`` (None otherwise).

Dependent-issue wait states after an MFMA (:func:`mfma_read_ready`) follow
GCNHazardRecognizer's gfx940 rules (TIMING_FACTS.md s4 [L]); the static check that a
program supplies its hazard nops stays :meth:`asmevo.analysis.hazards.HazardAnalysis.required_nops`
(:func:`required_wait_states` calls it).  One wait state is one issue slot = 4 clk [I].
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..analysis._isa import facts
from ..ir.operands import reg_units
from ..isa import lookup
from .machine import MI300X, Machine

CATEGORIES = ("valu", "vmem", "salu", "lds", "branch", "internal")
UNITS = ("valu", "mfma", "vmem", "smem", "salu", "lds", "branch", "none")

_INTERNAL = re.compile(r"^s_(nop|waitcnt|barrier|setprio|sleep|endpgm|sethalt|icache_inv|"
                       r"trap|ttracedata|incperflevel|decperflevel|code_end|wakeup)")
_BRANCH = re.compile(r"^s_(branch|cbranch|setpc|swappc|call|rfe)")
_SHAPE = re.compile(r"(\d+x\d+x\d+)")


@dataclass(frozen=True, slots=True)
class Cost:
    """What one instruction costs (units in the module docstring)."""

    category: str
    unit: str
    occupancy: int
    latency: int
    counters: tuple = ()
    passes: int = 0
    xdl: bool = False
    dgemm: bool = False
    smfmac: bool = False
    shape: str = ""
    trans: bool = False
    nop_states: int = 0
    waitcnt: tuple | None = None
    barrier: bool = False
    endpgm: bool = False
    mem_kind: str = ""       # load, store, atomic, cache ("" for non-memory)
    mem_space: str = ""      # global, flat, scratch, buffer, lds, constant
    mem_bytes: int = 0       # bytes per lane (per wave for SMEM)

    @property
    def is_mfma(self) -> bool:
        return self.passes > 0


_CACHE: dict = {}


def _mfma_shape(op: str) -> str:
    m = _SHAPE.search(op)
    shape = m.group(1) if m else "?"
    tail = op.split(shape, 1)[1] if m else op
    ty = tail.strip("_").split("_")[-1] if tail.strip("_") else op.split("_")[2]
    if ty in ("1k",):
        ty = "bf16"
    return f"{ty}_{shape}"


def cost_of(inst, machine: Machine = MI300X) -> Cost:
    """The :class:`Cost` of ``inst`` on ``machine`` (cached per instruction value)."""
    try:
        key = (inst.key(), id(machine))
    except TypeError:
        key = None
    if key is not None:
        c = _CACHE.get(key)
        if c is not None:
            return c
    c = _compute(inst, machine)
    if key is not None:
        if len(_CACHE) > 200_000:
            _CACHE.clear()
        _CACHE[key] = c
    return c


def _compute(inst, m: Machine) -> Cost:
    op = inst.opcode
    info = lookup(op)
    fx = facts(inst)
    pass_clk = int(m["issue.pass_clk"])
    slot = int(m["issue.wave_slot_clk"])
    counters = tuple(info.counters) if info is not None else ()
    mem = info.mem if info is not None else None
    mk = (mem.kind, mem.space, int(mem.bytes or 0)) if mem is not None else ("", "", 0)
    if op.startswith("s_"):
        if op == "s_nop":
            n = 0
            for o in inst.operands:
                v = getattr(o, "value", None)
                if isinstance(v, int):
                    n = v & 0xF
            return Cost("internal", "none", 0, slot * (n + 1), nop_states=n + 1)
        if op == "s_sleep":     # about 64 x N clk (CDNA3 ISA guide, S_SLEEP) [A]
            n = 0
            for o in inst.operands:
                v = getattr(o, "value", None)
                if isinstance(v, int):
                    n = v & 0x7F
            return Cost("internal", "none", 0, max(slot, 64 * n), nop_states=max(1, 16 * n))
        if op == "s_waitcnt":
            from ..analysis.waitcnt import parse_waitcnt
            vm, lg, _ = parse_waitcnt(inst)
            return Cost("internal", "none", 0, int(m["issue.waitcnt_clk"]), waitcnt=(vm, lg))
        if op.startswith("s_waitcnt_"):     # s_waitcnt_vscnt etc.: no counter on gfx942
            return Cost("internal", "none", 0, slot)
        if op == "s_barrier":
            return Cost("internal", "none", 0, slot, barrier=True)
        if op == "s_endpgm":
            return Cost("internal", "none", 0, slot, endpgm=True)
        if _INTERNAL.match(op):
            return Cost("internal", "none", 0, slot)
        if fx.smem:
            return Cost("salu", "smem", slot, int(m["latency.smem_hit"]), counters or ("lgkmcnt",),
                        mem_kind=mk[0] or "load", mem_space=mk[1] or "constant", mem_bytes=mk[2])
        if _BRANCH.match(op):
            return Cost("branch", "branch", int(m["issue.branch_clk"]), int(m["issue.branch_clk"]))
        return Cost("salu", "salu", slot, int(m["issue.salu_clk"]), counters)
    if fx.mfma:
        passes = fx.passes or (info.passes if info is not None else 0) or 8
        b = op
        return Cost("valu", "mfma", passes * pass_clk, passes * pass_clk, passes=passes,
                    xdl=bool(fx.xdl), dgemm=bool(fx.dgemm), smfmac=b.startswith("v_smfmac"),
                    shape=_mfma_shape(b))
    if op.startswith("v_"):
        if fx.trans:
            occ = int(m["issue.trans_clk"])
            return Cost("valu", "valu", occ, occ, trans=True)
        occ = int(m["issue.valu_clk"])
        return Cost("valu", "valu", occ, occ)
    if fx.ds:
        return Cost("lds", "lds", slot, int(m["latency.lds"]), counters or ("lgkmcnt",),
                    mem_kind=mk[0] or ("store" if fx.store else "load"), mem_space="lds",
                    mem_bytes=mk[2] or 4)
    if fx.vmem or fx.flat:
        kind = mk[0] or ("store" if fx.store else "load")
        lat = int(m["latency.store_ack"]) if kind == "store" else int(m["latency.l1_hit"])
        return Cost("vmem", "vmem", slot, lat, counters or ("vmcnt",), mem_kind=kind,
                    mem_space=mk[1] or ("flat" if fx.flat else "global"), mem_bytes=mk[2] or 4)
    return Cost("internal", "none", 0, slot)


def mfma_read_ready(prod: Cost, consumer: str, machine: Machine = MI300X) -> int:
    """clk after an MFMA's issue before ``consumer`` may issue when it reads the MFMA's
    result: ``"srcc"`` (same accumulator, exact overlap), ``"srcab"`` (SrcA/B of an MFMA, or
    a partial SrcC overlap), ``"valu"`` or ``"mem"`` (VMEM/LDS/export).  N wait states
    between two instructions put them (N + 1) issue slots apart.  Rules: GCNHazardRecognizer
    gfx940 (TIMING_FACTS.md s4) [L]."""
    p = prod.passes
    ws = int(machine["issue.wait_state_clk"])
    if consumer == "srcc":
        if p == 2:
            return ws * (int(machine["mfma.dep_srcc_4x4"]) + 1)
        return p * ws
    if prod.dgemm:
        n = {4: (6, 9), 8: (11, 18)}.get(p, (p + 3, p + 10))
        need = n[1] if consumer == "mem" else n[0]
    elif prod.xdl:
        need = p + int(machine["mfma.dep_srcab_xdl"])
    else:
        need = p + int(machine["mfma.dep_srcab_nonxdl"])
    return ws * (need + 1)


def reg_ids(units) -> tuple:
    """Integer ids of register units (v0..511 -> 0.., a -> 512.., s -> 1024.., ttmp and
    specials above) for fast scoreboards."""
    out = []
    for u in units:
        f = u[0]
        if f == "v":
            out.append(u[1])
        elif f == "a":
            out.append(512 + u[1])
        elif f == "s":
            out.append(1024 + u[1])
        elif f == "ttmp":
            out.append(1200 + u[1])
        else:
            out.append(_SPECIAL.setdefault(f, 1300 + len(_SPECIAL)))
    return tuple(out)


_SPECIAL: dict = {}


def operand_ids(op) -> tuple:
    """Register ids (:func:`reg_ids`) of one operand."""
    try:
        return reg_ids(reg_units(op))
    except Exception:   # noqa: BLE001 - operands without registers
        return ()


def required_wait_states(hazards, inst) -> int:
    """Hazard wait states the ``s_nop`` run before ``inst`` must supply: a thin alias of
    :meth:`asmevo.analysis.hazards.HazardAnalysis.required_nops` (``hazards`` is the
    kernel's HazardAnalysis, e.g. ``AnalysisManager().get(HazardAnalysis, kernel)``)."""
    return hazards.required_nops(inst)

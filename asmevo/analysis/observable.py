"""Observable liveness: which register units (and which lanes of a VGPR) may still
change what a kernel does, used to confirm window counterexamples.

A window counterexample (:func:`asmevo.verify.equiv.check_kernels`) is a difference
in the state right after a window.  It is only a kernel-level difference if some later
instruction can turn it into something observable.  Plain liveness ("some path reads
it before writing it") is not enough for that: a SGPR-spill VGPR copied whole into an
AGPR and copied back is "read", yet nothing observable ever depends on the lanes the
candidate stopped using (``sgpr-spill-promote`` on ``vadd_f32_O0``).  This module
computes *observable liveness*, the strong-liveness (faint-variable) refinement of
:class:`asmevo.analysis.liveness.MayLiveness`:

* **Roots.**  An instruction with side effects (:attr:`asmevo.analysis._isa.Effects.side_effects`:
  every memory access -- loads too, their addresses may fault --, branches, messages,
  barriers, waits, mode and hardware-register accesses) reads its uses observably.
  ``s_endpgm`` reads nothing, so nothing is live at the kernel's end: the only output of
  a kernel is memory.
* **Pure instructions** (VALU, SALU without side effects) read their uses observably
  only when one of the units they may write (``defs_may``, SCC included) is observably
  live after them; otherwise their result is never observed and neither are their
  inputs.
* **Kills.**  As in :class:`~asmevo.analysis.liveness.MayLiveness`: full SGPR and
  special-register writes (``defs_must``) kill; a VGPR/AGPR write never kills what is
  live across an EXEC write or a block boundary (lanes inactive in EXEC keep their
  value), but a per-lane read (:func:`asmevo.analysis.liveness.lane_effects`) preceded in
  the same block by a full per-lane write of the register, with no EXEC write in
  between, reads only lanes that write filled, so it does not make the register live
  above that write.
* **Lanes.**  The live lanes of a VGPR/AGPR are *all* (:data:`ALL`) or a finite set of
  lane numbers.  ``v_readlane_b32 sD, vS, K`` with a constant ``K`` reads only lane ``K``
  of ``vS`` (regardless of EXEC); ``v_writelane_b32 vD, sS, K`` with a constant ``K``
  writes only lane ``K`` (regardless of EXEC): it is needed only when lane ``K`` is
  live, kills lane ``K`` from a finite lane set, and passes every other lane through.
  A lane select in a register, and every other vector read (per-lane under an unknown
  EXEC, DPP, cross-lane, MFMA), makes the register live in all lanes.
* **Giving up.**  An instruction not in the ISA table or reading registers by index
  (``uses_all``), a call or indirect jump, an undecodable word, or a CFG that cannot be
  built: :func:`observable_liveness` returns ``None`` and callers keep their previous,
  coarser rule.

Soundness (the direction the verifier relies on): when a unit, or a lane of a VGPR, is
not observably live at a point, no value it holds there can change any memory write,
load address, branch decision, message or other side effect on any path.  By induction
over the backward fixpoint: every observable effect is a root's read; a root reads a
value that was either live before it at the root, or produced by a pure instruction
whose definition was live, whose inputs were therefore made live; kills only remove a
unit where every later read (on every path through the block, before any EXEC change)
sees a later write instead.  Extra liveness only makes the verifier confirm *more*
differences as observable; :mod:`asmevo.verify.equiv` uses this analysis only to
*withhold* a confirmation, never to prove anything equivalent.
"""

from __future__ import annotations

from ..ir.operands import Imm, Reg
from ._isa import effects, is_vector_unit
from .liveness import lane_effects
from .waitcnt import is_undecodable

#: every lane of a VGPR/AGPR (or a uniform unit) is live
ALL = "all"

_CALLS = ("s_swappc_b64", "s_call_b64", "s_setpc_b64")
_EXEC = frozenset((("exec_lo",), ("exec_hi",)))


class _GiveUp(Exception):
    pass


def _const_lane(inst) -> int | None:
    """The constant lane select of ``v_readlane``/``v_writelane`` (operand 2), or None."""
    if len(inst.operands) < 3:
        return None
    o = inst.operands[2]
    if isinstance(o, Imm) and isinstance(o.value, int):
        return o.value & 63
    return None


def _vreg_unit(op):
    if isinstance(op, Reg) and op.file in ("v", "a") and op.count == 1:
        return (op.file, op.index)
    return None


def _join_lanes(a, b):
    if a is None:
        return b
    if b is None:
        return a
    if a == ALL or b == ALL:
        return ALL
    return a | b


def meet_lanes(a, b):
    """Lanes live in both ``a`` and ``b`` (None when none)."""
    if a is None or b is None:
        return None
    if a == ALL:
        return b
    if b == ALL:
        return a
    r = a & b
    return r or None


def _join(x: dict, y: dict) -> dict:
    out = dict(x)
    for u, l in y.items():
        out[u] = _join_lanes(out.get(u), l)
    return out


class ObservableLiveness:
    """Observable liveness of one kernel (see the module docstring).

    ``live_before(block, index)`` gives ``{unit: ALL | frozenset(lanes)}`` live
    immediately before instruction ``index`` of block ``block`` (``index`` may be the
    block's length: live after its last instruction)."""

    def __init__(self, kernel, cfg):
        self.kernel = kernel
        self.cfg = cfg
        self.blocks = cfg.blocks
        for b in self.blocks:
            for inst in b.instructions:
                if inst.opcode in _CALLS or is_undecodable(inst):
                    raise _GiveUp(f"'{inst.text()}'")
                e = effects(inst)
                if not e.known or e.uses_all or e.barrier_kernel:
                    raise _GiveUp(f"'{inst.text()}'")
        n = len(self.blocks)
        self._in: list[dict] = [{} for _ in range(n)]
        self._out: list[dict] = [{} for _ in range(n)]
        from ..analysis.cfg import EXIT
        g = cfg.graph
        order = list(reversed(cfg.rpo())) + [b for b in cfg.unreachable]
        changed = True
        rounds = 0
        while changed:
            rounds += 1
            if rounds > 10 * n + 200:   # lane sets only grow; this is a safety net
                raise _GiveUp("no fixpoint")
            changed = False
            for bi in order:
                out: dict = {}
                for s in g.successors(bi):
                    if s != EXIT:
                        out = _join(out, self._in[s])
                self._out[bi] = out
                new_in = self._scan(bi, out)[0]
                if new_in != self._in[bi]:
                    self._in[bi] = new_in
                    changed = True
        self._cache: dict = {}

    def _scan(self, bi: int, out: dict) -> list[dict]:
        """Live sets before each instruction of block ``bi`` and after its last one.

        Two components are carried backwards, as in
        :meth:`asmevo.analysis.liveness.Liveness._scan`: ``strong`` (unit -> lanes) and
        ``loc`` (vector units read per lane in the current EXEC epoch, all of whose
        readers a full per-lane write above may still satisfy)."""
        insts = self.blocks[bi].instructions
        res: list[dict] = [{}] * (len(insts) + 1)
        strong = dict(out)
        loc: set = set()
        res[-1] = dict(strong)
        for ii in range(len(insts) - 1, -1, -1):
            inst = insts[ii]
            e = effects(inst)
            pl, full, xw = lane_effects(inst)
            op = inst.opcode
            wl_unit = wl_lane = rl_unit = rl_lane = None
            if op.startswith("v_writelane"):
                wl_unit, wl_lane = _vreg_unit(inst.operands[0]), _const_lane(inst)
            elif op.startswith("v_readlane"):
                rl_unit, rl_lane = _vreg_unit(inst.operands[1]), _const_lane(inst)
            # needed: a root, or some unit it may write is observably live after it
            if e.side_effects:
                needed = True
            else:
                needed = False
                for u in e.defs_may:
                    if u == wl_unit and wl_lane is not None:
                        lv = strong.get(u)
                        if u in loc or lv == ALL or (lv is not None and wl_lane in lv):
                            needed = True
                    elif u in strong or u in loc:
                        needed = True
                    if needed:
                        break
            # kills
            if xw:
                for u in loc:
                    strong[u] = ALL
                loc = set()
            for u in e.defs_must:
                if not is_vector_unit(u):
                    strong.pop(u, None)
            loc -= set(full)
            if wl_unit is not None and wl_lane is not None:
                lv = strong.get(wl_unit)
                if lv is not None and lv != ALL:
                    lv = lv - {wl_lane}
                    if lv:
                        strong[wl_unit] = lv
                    else:
                        strong.pop(wl_unit)
            # uses
            if needed:
                for u in e.uses:
                    if u == wl_unit and wl_lane is not None:
                        continue   # the other lanes pass through (handled above)
                    if u == rl_unit and rl_lane is not None:
                        strong[u] = _join_lanes(strong.get(u), frozenset((rl_lane,)))
                    elif is_vector_unit(u) and pl:
                        loc.add(u)
                    else:
                        strong[u] = ALL
            snap = dict(strong)
            for u in loc:
                snap[u] = ALL
            res[ii] = snap
        # at the block's top the epoch ends: per-lane reads there are reads of every lane
        return res

    def live_before(self, bi: int, index: int) -> dict:
        rows = self._cache.get(bi)
        if rows is None:
            rows = self._cache[bi] = self._scan(bi, self._out[bi])
        return rows[index]


def observable_liveness(kernel, cfg) -> ObservableLiveness | None:
    """:class:`ObservableLiveness` of ``kernel``, or None when it cannot be computed
    (an instruction it does not understand, a call, an undecodable word, no CFG)."""
    if cfg is None:
        return None
    try:
        return ObservableLiveness(kernel, cfg)
    except _GiveUp:
        return None
    except Exception:  # noqa: BLE001 - any analysis failure: the caller keeps its old rule
        return None

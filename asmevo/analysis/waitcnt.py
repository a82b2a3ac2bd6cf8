"""Memory-counter (``s_waitcnt``) dependency tracking for gfx942.

Model (ISA_NOTES section 8; LLVM ``SIInsertWaitcnts.cpp``, pre-GFX12 paths;
CDNA3 ISA guide "Data dependency resolution"):

* counters: ``vmcnt`` 0..63, ``lgkmcnt`` 0..15, ``expcnt`` 0..7;
* **vmcnt** counts every MUBUF/MTBUF/global/scratch load, store and atomic
  (gfx9 has no ``vscnt``), ``buffer_inv``/``buffer_wbl2``, and LDS-DMA loads
  (``buffer_load_* ... lds``, ``global_load_lds_*``).  VMEM results return in
  order, so ``vmcnt(N)`` completes every access with at least N younger vmcnt
  events;
* **lgkmcnt** counts DS/GDS, SMEM and ``s_sendmsg``; SMEM returns out of
  order, and a mix of event kinds is out of order, so while SMEM (or a mix)
  is pending only ``lgkmcnt(0)`` identifies a result (``counterOutOfOrder``);
* **FLAT** (``flat_*``) counts on both vmcnt and lgkmcnt (it may address LDS);
  while one is pending only a zero count of either counter is safe
  (``setPendingFlat``; ``hasFlatLgkmVMemCountInOrder`` is false on GFX9);
* **expcnt**: GFX9 counts exports and GDS data locks (GDS_GPR_LOCK) on it, but gfx942 has
  no exports and no ``gds`` modifier (llvm-mc: "gds modifier is not supported on this GPU"),
  so nothing increments it; ``expcnt(N)`` is parsed and never needed;
* LDS-DMA writes LDS, tracked as the pseudo unit ``("lds_dma",)``; a later DS
  instruction that reads LDS uses it (so must wait vmcnt);
* a read **or overwrite** of a register whose producing access may still be in
  flight needs a wait, except a VMEM (non-FLAT) load overwriting the result of
  an older VMEM load (VMEM writes VGPRs in order, ``hasVmemWriteVgprInOrder``);
* kernel exit (``s_endpgm``) reads nothing: stores need no wait;
* a call (``s_swappc_b64``, ``s_call_b64``) returns with every counter at zero (the callee
  waits before returning, ``callWaitsOnFunctionReturn``); its own operands are checked;
* an **undecodable word** (:func:`is_undecodable`: a word llvm-objdump prints as ``.long``
  because LLVM cannot decode it for gfx942) may be any instruction: it is an event on
  vmcnt and lgkmcnt of an unknown, out-of-order kind whose results are every register
  (pseudo unit ``("unknown",)``, read by every later instruction that names a register),
  memory and LDS; it may read anything pending and is a memory-order point.  It completes
  nothing (it may not be a wait) and reports no violation itself (nothing is known to be
  wrong), so :meth:`WaitcntAnalysis.required` keeps every wait that completes its effects
  or that completes something before it;
* **memory-order points** (:func:`is_order_point`): what is in flight at one is given per
  access by :meth:`WaitcntAnalysis.order_point_pending` (the verifier checks that a wait
  the original has before such a point stays before it).

The analysis is a forward dataflow over the CFG to a fixpoint: per counter,
each pending register unit carries its distance (number of younger events
on that counter, capped at the counter maximum); at joins the union is taken
with the minimum distance (the strongest requirement over all paths).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.operands import Func, FuncList, Imm
from . import Analysis
from ._isa import facts
from .cfg import CFG, EXIT

VM, LGKM, EXP = 0, 1, 2
#: counter names in result dictionaries
NAMES = ("vmcnt", "lgkmcnt", "expcnt")
#: largest encodable count per counter on gfx942 (s_waitcnt simm16 field widths)
MAX = (63, 15, 7)
LDS_DMA = ("lds_dma",)
#: calls: LLVM's callees wait for every counter before returning (SIInsertWaitcnts
#: ``callWaitsOnFunctionReturn``), so nothing is pending after one
CALLS = ("s_swappc_b64", "s_call_b64")
#: pseudo unit: the youngest pending memory write (store, atomic, cache write-back) on a counter
MEM_WRITE = ("mem_write",)
#: pseudo unit: every register an undecodable word may write when it completes
UNKNOWN = ("unknown",)
#: tag of the per-access pseudo units of :meth:`WaitcntAnalysis.order_point_pending`
ACCESS = "access"


def is_undecodable(inst) -> bool:
    """Whether ``inst`` is a word LLVM could not decode: the disassembler keeps it as a data
    directive (``.long 0x...``, opcode starting with ``.``), or it is a ``raw`` instruction
    whose mnemonic the ISA table does not know.  Such a word may be any instruction (read
    or write any register, count on any counter, order memory); every analysis must treat
    it so (issue 14)."""
    op = inst.opcode
    if op.startswith("."):
        return True
    if getattr(inst, "raw", False):
        try:
            return inst.info is None
        except Exception:  # noqa: BLE001 - no ISA entry at all
            return True
    return False

_NOT_LDS_READ = ("ds_write", "ds_store", "ds_swizzle", "ds_permute", "ds_bpermute", "ds_nop",
                 "ds_gws", "ds_barrier", "ds_append", "ds_consume")


def parse_waitcnt(inst) -> tuple[int, int, int]:
    """Counts ``(vmcnt, lgkmcnt, expcnt)`` of an ``s_waitcnt``; an omitted counter is its maximum
    (no wait).  Accepts ``vmcnt(N) lgkmcnt(M)`` forms and a raw simm16 (ISA_NOTES section 8:
    vmcnt bits 3:0 and 15:14, expcnt 6:4, lgkmcnt 11:8)."""
    vm, lg, ex = MAX
    for o in inst.operands:
        items = o.items if isinstance(o, FuncList) else (o,)
        for f in items:
            if isinstance(f, Func) and f.args:
                n = f.args[0]
                if not isinstance(n, int):
                    continue
                nm = f.name.replace("_sat", "")
                if nm == "vmcnt":
                    vm = min(n, MAX[VM])
                elif nm == "lgkmcnt":
                    lg = min(n, MAX[LGKM])
                elif nm == "expcnt":
                    ex = min(n, MAX[EXP])
            elif isinstance(f, Imm) and isinstance(f.value, int):
                v = f.value & 0xFFFF
                vm = (v & 0xF) | ((v >> 14) & 3) << 4
                ex = (v >> 4) & 7
                lg = (v >> 8) & 0xF
    return vm, lg, ex


def format_waitcnt(counts) -> str:
    """``s_waitcnt`` operand text for ``(vmcnt, lgkmcnt, expcnt)``; counters at their maximum
    are omitted (all at maximum: ``vmcnt(63) expcnt(7) lgkmcnt(15)``, a wait for nothing)."""
    parts = [f"{NAMES[c]}({counts[c]})" for c in (VM, EXP, LGKM) if counts[c] < MAX[c]]
    return " ".join(parts) if parts else "vmcnt(63) expcnt(7) lgkmcnt(15)"


def make_waitcnt(counts: tuple[int, int, int]):
    """An ``s_waitcnt`` Instruction for ``(vmcnt, lgkmcnt, expcnt)``; ``None`` when every
    counter is at its maximum (a wait for nothing)."""
    if all(counts[c] >= MAX[c] for c in range(3)):
        return None
    from ..frontend.asm_parser import parse_instruction
    return parse_instruction(f"s_waitcnt {format_waitcnt(counts)}")


@dataclass(frozen=True)
class Event:
    """How one instruction affects the counters.

    ``counters``: the counters it increments; ``kinds``: per counter the event
    kind (``"vmem"``, ``"flat"``, ``"smem"``, ``"lds"``, ``"gds"``, ``"msg"``);
    ``results``: register units written when the access completes.
    """

    counters: tuple = ()
    kinds: tuple = ()
    results: tuple = ()


def event_of(inst) -> Event:
    """The counter event of ``inst`` (empty for non-memory instructions; an undecodable word
    counts on vmcnt and lgkmcnt with kind ``"unknown"``, see the module docstring)."""
    if is_undecodable(inst):
        return Event((VM, LGKM), ("unknown", "unknown"), (UNKNOWN, MEM_WRITE, LDS_DMA))
    fx = facts(inst)
    res = tuple(fx.defs) + tuple(fx.partial)
    if fx.lds_dma:
        res = res + (LDS_DMA,)
    if is_memory_write(inst, fx):
        res = res + (MEM_WRITE,)
    if fx.flat:
        return Event((VM, LGKM), ("flat", "flat"), res)
    if fx.vmem:
        return Event((VM,), ("vmem",), res)
    if fx.smem:
        return Event((LGKM,), ("smem",), res)
    if fx.ds:
        return Event((LGKM,), ("gds" if fx.gds else "lds",), res)
    if fx.sendmsg:
        return Event((LGKM,), ("msg",), ())
    return Event()


_CACHE_OPS = ("buffer_wbl2", "buffer_inv", "buffer_wbinvl1", "buffer_wbinvl1_vol", "s_dcache_")


def is_memory_write(inst, fx=None) -> bool:
    """Stores, atomics and cache write-back/invalidate (ops whose completion others may
    observe)."""
    fx = fx or facts(inst)
    if not fx.mem:
        return False
    op = inst.opcode
    if op.startswith(_CACHE_OPS) or "atomic" in op or "_store" in op or "_write" in op:
        return True
    if fx.ds and ("_add_" in op or "_sub_" in op or "_inc_" in op or "_dec_" in op or op.startswith(
            ("ds_and", "ds_or", "ds_xor", "ds_min", "ds_max", "ds_mskor", "ds_cmpst", "ds_wrxchg",
             "ds_append", "ds_consume", "ds_gws", "ds_add", "ds_sub", "ds_inc", "ds_dec",
             "ds_rsub", "ds_cond"))):
        return True
    return False


def is_order_point(inst, fx=None) -> bool:
    """Instructions after which other waves/agents may observe this wave's memory accesses:
    ``s_barrier``, ``s_sendmsg*``, memory writes and cache maintenance (AMDGPUUsage
    "Memory Model GFX942": release/acquire sequences wait before these).  A wait that
    completes accesses before such a point is kept by :meth:`WaitcntAnalysis.required`,
    and the verifier requires such a wait to stay before the same point.

    Also an undecodable word (:func:`is_undecodable`), which may be any of them.  Not order
    points: ``s_endpgm`` (the wave ends; its outstanding stores still complete, LLVM emits no
    wait before it, see the module docstring), ``s_sleep``/``s_nop``/``s_setprio`` (no memory
    effect), and plain loads (their results are register dependencies)."""
    op = inst.opcode
    if op in ("s_barrier", "s_sendmsg", "s_sendmsghalt", "s_icache_inv"):
        return True
    if is_undecodable(inst):  # it may be any of these
        return True
    return is_memory_write(inst, fx)


def _ooo(c: int, kinds) -> bool:
    """Whether counter ``c`` may decrement out of order with these pending kinds."""
    if not kinds:
        return False
    if "flat" in kinds or "unknown" in kinds:
        return True
    if c == LGKM and "smem" in kinds:
        return True
    return len(kinds) > 1


@dataclass(frozen=True)
class Violation:
    """A register read/overwrite whose producing memory access may still be in flight.

    ``needed`` is the largest count of ``counter`` that would make it safe
    (0 when the counter is out of order).  ``producer`` is the memory
    instruction (one of them, on some path) that writes ``unit``.
    """

    inst: object
    block: int
    index: int
    unit: tuple
    counter: str
    needed: int
    producer: object = None

    @property
    def kind(self) -> str:
        """``"lds"`` for a DS access while an LDS-DMA load may still write LDS (no address
        information: possibly a different LDS range), else ``"register"``."""
        return "lds" if self.unit == LDS_DMA else "register"

    def to_json(self) -> dict:
        """Plain data for reports."""
        u = self.unit
        return {"block": self.block, "index": self.index, "instruction": self.inst.text(),
                "kind": self.kind,
                "register": f"{u[0]}{u[1]}" if len(u) == 2 else u[0], "counter": self.counter,
                "needed": self.needed,
                "producer": self.producer.text() if self.producer is not None else None}


class _State:
    """Scoreboard in score form: per counter ``ub`` and unit -> score of its producing event."""

    __slots__ = ("ub", "ent", "kinds", "src")

    def __init__(self):
        self.ub = [0, 0, 0]
        self.ent = [{}, {}, {}]
        self.kinds = [{}, {}, {}]
        self.src = {}  # unit -> producing instruction (for messages)

    @staticmethod
    def from_dist(dist) -> "_State":
        st = _State()
        ent_d, kind_d, src = dist
        for c in range(3):
            st.ent[c] = {u: -d for u, d in ent_d[c].items()}
            st.kinds[c] = {k: -d for k, d in kind_d[c].items()}
        st.src = dict(src)
        return st

    def dist(self, c: int, score: int) -> int:
        return min(self.ub[c] - score, MAX[c])

    def to_dist(self):
        ent_d = tuple({u: self.dist(c, s) for u, s in self.ent[c].items()} for c in range(3))
        kind_d = tuple({k: self.dist(c, s) for k, s in self.kinds[c].items()} for c in range(3))
        live = set().union(*(e.keys() for e in ent_d))
        return ent_d, kind_d, {u: p for u, p in self.src.items() if u in live}

    def ooo(self, c: int) -> bool:
        return _ooo(c, self.kinds[c])

    def wait(self, c: int, n: int) -> None:
        """Apply ``<counter>(n)``: in order, entries with distance >= n complete; out of
        order, only n == 0 completes anything."""
        if n >= MAX[c] and not self.ent[c] and not self.kinds[c]:
            return
        if n == 0:
            self.ent[c].clear()
            self.kinds[c].clear()
            return
        if self.ooo(c):
            return
        ub, mx = self.ub[c], MAX[c]
        self.ent[c] = {u: s for u, s in self.ent[c].items() if min(ub - s, mx) < n}
        self.kinds[c] = {k: s for k, s in self.kinds[c].items() if min(ub - s, mx) < n}


def _join_dist(a, b):
    if a is None:
        return b
    ent = []
    kinds = []
    for c in range(3):
        e = dict(a[0][c])
        for u, d in b[0][c].items():
            if u not in e or d < e[u]:
                e[u] = d
        ent.append(e)
        k = dict(a[1][c])
        for u, d in b[1][c].items():
            if u not in k or d < k[u]:
                k[u] = d
        kinds.append(k)
    src = dict(b[2])
    src.update(a[2])
    return tuple(ent), tuple(kinds), src


_EMPTY = (({}, {}, {}), ({}, {}, {}), {})


class WaitcntAnalysis(Analysis):
    """Waitcnt dependency analysis of one kernel (see module docstring).

    Attributes:
        violations: list of :class:`Violation`, in layout order.
        waitcnts: every ``s_waitcnt`` instruction, in layout order.

    Methods :meth:`required` and :meth:`slack` give, for each ``s_waitcnt``,
    the weakest counts that still cover every later use (what a wait-relaxing
    pass may write instead).
    """

    name = "waitcnt"

    def __init__(self, kernel, manager=None):
        super().__init__(kernel, manager)
        self.cfg = self.dep(CFG)
        blocks = self.cfg.blocks
        n = len(blocks)
        self._facts = [[(facts(i), self._event(i)) for i in b.instructions] for b in blocks]
        self._touch = [[self._touched(i, f) for i, (f, _) in zip(b.instructions, row)]
                       for b, row in zip(blocks, self._facts)]
        self.entry_state: list = [None] * n
        self.exit_state: list = [None] * n
        if n:
            self.entry_state[0] = _EMPTY
        order = self.cfg.rpo()
        rank = {b: i for i, b in enumerate(order)}
        work = set(order[:1])
        g = self.cfg.graph
        while work:
            bi = min(work, key=rank.__getitem__)
            work.discard(bi)
            st = _State.from_dist(self.entry_state[bi])
            self._run_block(bi, st, None)
            out = st.to_dist()
            self.exit_state[bi] = out
            for s in g.successors(bi):
                if s == EXIT:
                    continue
                new = _join_dist(self.entry_state[s], out)
                if new != self.entry_state[s]:
                    self.entry_state[s] = new
                    work.add(s)
        # final pass: violations and the state before every s_waitcnt
        self.violations: list[Violation] = []
        self._before: dict[int, tuple] = {}
        self._flat_pending_at: set[int] = set()  # VMEM loads issued while a FLAT is pending
        self.waitcnts = []
        for bi in range(n):
            if self.entry_state[bi] is None:
                continue
            st = _State.from_dist(self.entry_state[bi])
            self._run_block(bi, st, self.violations)
        self.waitcnts = [i for b in blocks for i in b.instructions if i.opcode == "s_waitcnt"]
        self._required: dict[int, dict] = {}
        #: keep waits that complete accesses before a memory-order point (see
        #: :func:`is_order_point`); set to False to get register dependencies only
        self.memory_order = True
        self._order_pending: dict | None = None
        #: positions ``(block, index)`` of undecodable words (:func:`is_undecodable`)
        self.undecodable = [(bi, ii) for bi, b in enumerate(blocks)
                            for ii, i in enumerate(b.instructions) if is_undecodable(i)]

    # -- transfer ------------------------------------------------------------------------------
    @staticmethod
    def _event(inst) -> Event:
        return event_of(inst)

    @staticmethod
    def _touched(inst, fx) -> tuple[tuple, frozenset]:
        """(units read or written, units only written by a VMEM load)."""
        t = list(fx.uses) + list(fx.defs) + list(fx.partial)
        if fx.ds and not inst.opcode.startswith(_NOT_LDS_READ):
            t.append(LDS_DMA)
        waw_ok = frozenset(fx.defs) - frozenset(fx.uses) if fx.vmem and not fx.lds_dma else \
            frozenset()
        return tuple(dict.fromkeys(t)), waw_ok

    def _run_block(self, bi: int, st: _State, viol: list | None, probe=None) -> None:
        blk = self.cfg.blocks[bi]
        for ii, inst in enumerate(blk.instructions):
            if probe is not None:
                probe(ii, st)
            if inst.opcode == "s_waitcnt":
                if viol is not None:
                    self._before[id(inst)] = st.to_dist()
                counts = parse_waitcnt(inst)
                for c in range(3):
                    st.wait(c, counts[c])
                continue
            fx, ev = self._facts[bi][ii]
            touched, waw_ok = self._touch[bi][ii]
            if viol is not None and waw_ok and "flat" in st.kinds[VM]:
                self._flat_pending_at.add(id(inst))
            for c in (VM, LGKM):
                ent = st.ent[c]
                if not ent:
                    continue
                need = None
                for u in touched:
                    s = ent.get(u)
                    if s is None:
                        continue
                    if c == VM and u in waw_ok and "flat" not in st.kinds[VM]:
                        continue
                    d = 0 if st.ooo(c) else st.dist(c, s)
                    if viol is not None:
                        viol.append(Violation(inst, bi, ii, u, NAMES[c], d, st.src.get(u)))
                    need = d if need is None else min(need, d)
                if need is not None:  # continue as if the missing wait were there
                    st.wait(c, need)
            if inst.opcode in CALLS:  # the callee waits for everything before returning
                for c in range(3):
                    st.wait(c, 0)
                continue
            if ev.counters:
                for c, k in zip(ev.counters, ev.kinds):
                    st.ub[c] += 1
                    sc = st.ub[c]
                    st.kinds[c][k] = sc
                    for u in ev.results:
                        st.ent[c][u] = sc
                for u in ev.results:
                    st.src[u] = inst
        if probe is not None:
            probe(len(blk.instructions), st)

    def idle_counters(self, block: int, start: int, end: int) -> set[str]:
        """Counter names (``"vmcnt"``...) with nothing outstanding at every point from just
        before instruction ``start`` to just before instruction ``end`` of block ``block``
        (indices into the block; ``end`` may be its length).  A wait for such a counter
        anywhere in that range completes nothing, so it has no effect.  An unreachable
        block gives every counter."""
        if self.entry_state[block] is None:
            return set(NAMES)
        busy: set[int] = set()

        def probe(ii: int, st: _State) -> None:
            if start <= ii <= end:
                busy.update(c for c in range(3) if st.kinds[c] or st.ent[c])

        self._run_block(block, _State.from_dist(self.entry_state[block]), None, probe)
        return {NAMES[c] for c in range(3) if c not in busy}

    # -- queries -------------------------------------------------------------------------------
    def pending_before(self, inst) -> dict[str, dict]:
        """For an ``s_waitcnt``: counter name -> {unit: distance} pending just before it."""
        ent_d, _, _ = self._before[id(inst)]
        return {NAMES[c]: dict(ent_d[c]) for c in range(3)}

    def required(self, inst) -> dict[str, int]:
        """Weakest counts for the ``s_waitcnt`` ``inst`` that keep every later use covered.

        Returns ``{"vmcnt": n, "lgkmcnt": n, "expcnt": n}``; a counter at its
        maximum (63/15/7) needs no wait.  Computed by following the accesses the
        wait completes (those with distance >= its count) forward until another wait
        completes them, recording the distance of each one that some instruction
        reads or overwrites first, or that is still pending at a memory-order point
        (:func:`is_order_point`: ``s_barrier``, stores, atomics, cache operations,
        ``s_sendmsg``) when :attr:`memory_order` is true (the default).  Other waits
        are kept as they are, so after changing one wait the analysis must be recomputed
        (two redundant copies of a wait are each "removable" alone).  It never fixes an
        existing violation: accesses still pending after the wait are not considered.
        Not modelled: acquire ordering between two loads without an intervening cache
        invalidate.

        Raises:
            KeyError: ``inst`` is not an ``s_waitcnt`` of this kernel or is unreachable.
        """
        key = id(inst)
        r = self._required.get(key)
        if r is None:
            r = self._required[key] = self._compute_required(inst)
        return dict(r)

    def slack(self, inst) -> dict[str, int]:
        """``required(inst)`` minus the current counts (how much each count may grow)."""
        cur = parse_waitcnt(inst)
        req = self.required(inst)
        return {NAMES[c]: req[NAMES[c]] - min(cur[c], req[NAMES[c]]) for c in range(3)}

    def _compute_required(self, w) -> dict[str, int]:
        ent_d, kind_d, _ = self._before[id(w)]
        counts = parse_waitcnt(w)
        res = {}
        for c in (VM, LGKM, EXP):
            ooo = _ooo(c, kind_d[c])
            covered = {u: d for u, d in ent_d[c].items()
                       if counts[c] == 0 or (not ooo and d >= counts[c])}
            if not covered:
                res[NAMES[c]] = MAX[c]
                continue
            dem = self._demands(w, c, covered, {k: d for k, d in kind_d[c].items()
                                                if counts[c] == 0 or (not ooo and d >= counts[c])})
            if not dem:
                res[NAMES[c]] = MAX[c]
            elif ooo:
                res[NAMES[c]] = 0
            else:
                res[NAMES[c]] = min(covered[u] for u in dem)
        return res

    def _demands(self, w, c: int, covered: dict, res_kinds: dict) -> set:
        """Units of ``covered`` (completed by ``w`` on counter ``c``) that some later
        instruction needs before another wait completes them."""
        bi0, ii0 = self.cfg.position(w)
        demanded: set = set()
        # propagation state: unit -> current distance; plus resurrected kinds -> distance
        start = (dict(covered), dict(res_kinds))
        entry: dict[int, tuple] = {}
        work = [(bi0, ii0 + 1, start)]
        g = self.cfg.graph
        while work:
            bi, ii, (alive, kinds) = work.pop()
            alive = {u: d for u, d in alive.items() if u not in demanded}
            if not alive:
                continue
            blk = self.cfg.blocks[bi]
            j = ii
            while j < len(blk.instructions) and alive:
                inst = blk.instructions[j]
                if inst is w:  # the wait being relaxed completes nothing it resurrected
                    j += 1
                    continue
                if inst.opcode == "s_waitcnt":
                    n2 = parse_waitcnt(inst)[c]
                    ent2, kd2, _ = self._before[id(inst)]
                    gk = set(kd2[c])
                    if n2 == 0:
                        alive = {}
                        break
                    if n2 < MAX[c]:
                        if _ooo(c, gk):
                            pass  # nothing completes anyway
                        elif _ooo(c, gk | set(kinds)):
                            # the resurrected accesses make this wait imprecise: it completes
                            # none of them, and if it was meant to complete other accesses,
                            # those must stay identifiable, so the resurrected ones are needed
                            if any(d >= n2 for d in ent2[c].values()):
                                demanded |= set(alive)
                                alive = {}
                                break
                        else:
                            alive = {u: d for u, d in alive.items() if d < n2}
                            kinds = {k: d for k, d in kinds.items() if d < n2}
                    j += 1
                    continue
                fx, ev = self._facts[bi][j]
                touched, waw_ok = self._touch[bi][j]
                if inst.opcode in CALLS:
                    for u in touched:
                        if u in alive:
                            demanded.add(u)
                    alive = {}
                    break
                if self.memory_order and is_order_point(inst, fx):
                    demanded |= set(alive)
                    alive = {}
                    break
                if is_undecodable(inst):  # may read anything (also without memory_order)
                    demanded |= set(alive)
                    alive = {}
                    break
                if UNKNOWN in alive and touched:  # may read what an undecodable word wrote
                    demanded.add(UNKNOWN)
                    del alive[UNKNOWN]
                for u in touched:
                    if u in alive:
                        if c == VM and u in waw_ok and "flat" not in kinds and \
                                id(inst) not in self._flat_pending_at:
                            del alive[u]  # in-order VMEM overwrite: the new load owns it
                            continue
                        demanded.add(u)
                        del alive[u]
                if c in ev.counters:
                    mx = MAX[c]
                    alive = {u: min(d + 1, mx) for u, d in alive.items()}
                    kinds = {k: min(d + 1, mx) for k, d in kinds.items()}
                    for u in ev.results:  # a new access to the unit replaces the old one
                        alive.pop(u, None)
                j += 1
            if not alive or j < len(blk.instructions):
                continue
            for s in g.successors(bi):
                if s == EXIT:
                    continue
                old = entry.get(s)
                if old is None:
                    new = (dict(alive), dict(kinds))
                else:
                    na = dict(old[0])
                    for u, d in alive.items():
                        if u not in na or d < na[u]:
                            na[u] = d
                    nk = dict(old[1])
                    for k, d in kinds.items():
                        if k not in nk or d < nk[k]:
                            nk[k] = d
                    new = (na, nk)
                if new != old:
                    entry[s] = new
                    work.append((s, 0, new))
        return demanded

    def order_point_pending(self) -> dict[int, tuple]:
        """What may be in flight at each memory-order point (:func:`is_order_point`).

        Returns ``{id(P): (P, {id(access): (access, counter name)})}`` for every reachable
        order point ``P`` (keyed by identity: equal instructions are distinct accesses): the memory instructions (loads, stores, atomics, LDS-DMA, undecodable words)
        that some path may leave incomplete just before ``P``, each with the (first) counter
        it is pending on.  Computed like the main analysis, on a scoreboard that gives every
        access a pseudo unit ``("access", id(inst))`` of its own (the main scoreboard keeps
        only the youngest write per unit), so waits complete accesses exactly as
        :meth:`required` assumes (in order: distance >= count; out of order: count 0 only).
        """
        if self._order_pending is not None:
            return self._order_pending
        acc = _AccessScoreboard(self.kernel, self.manager)
        byid = {id(i): i for b in acc.cfg.blocks for i in b.instructions}
        out: dict[int, tuple] = {}
        for bi, blk in enumerate(acc.cfg.blocks):
            if acc.entry_state[bi] is None:
                continue
            insts = blk.instructions
            points = {ii for ii, (fx, _) in enumerate(acc._facts[bi])
                      if is_order_point(insts[ii], fx)}
            if not points:
                continue

            def probe(ii: int, st: _State, insts=insts, points=points) -> None:
                if ii not in points:
                    return
                pend: dict = {}
                for c in range(3):
                    for u in st.ent[c]:
                        if u[0] == ACCESS and u[1] not in pend:
                            pend[u[1]] = (byid[u[1]], NAMES[c])
                out[id(insts[ii])] = (insts[ii], pend)

            acc._run_block(bi, _State.from_dist(acc.entry_state[bi]), None, probe)
        self._order_pending = out
        return out

    def to_json(self) -> dict:
        """Violations and, for every ``s_waitcnt``, its counts and the weakest safe counts."""
        waits = []
        for w in self.waitcnts:
            if id(w) not in self._before:
                continue
            bi, ii = self.cfg.position(w)
            cur = parse_waitcnt(w)
            req = self.required(w)
            waits.append({"block": bi, "index": ii, "instruction": w.text(),
                          "current": {NAMES[c]: cur[c] for c in range(3)}, "required": req,
                          "removable": all(req[NAMES[c]] >= MAX[c] for c in range(3)),
                          "weakest": format_waitcnt(tuple(req[NAMES[c]] for c in range(3)))})
        return {"violations": [v.to_json() for v in self.violations], "waitcnts": waits}


class _AccessScoreboard(WaitcntAnalysis):
    """:class:`WaitcntAnalysis` whose events also produce a pseudo unit per access,
    ``(ACCESS, id(inst))``, so that what is in flight can be told access by access
    (:meth:`WaitcntAnalysis.order_point_pending`).  The pseudo units are never read or
    written by an instruction, so violations and waits are unchanged."""

    @staticmethod
    def _event(inst) -> Event:
        ev = event_of(inst)
        if ev.counters:
            ev = Event(ev.counters, ev.kinds, ev.results + ((ACCESS, id(inst)),))
        return ev

"""Static timing estimate of a kernel with no harness: one wave over the CFG, ACO-style.

For kernels that cannot be run (most AITer code objects), this gives the same
:class:`~asmevo.perf.profile.Profile` as the trace-driven model, with
``source="model-static"``.  Every figure is an estimate of the model :data:`MODEL`; every
latency, rate and size is read from the machine description
(:mod:`asmevo.perf.machine`, keys named below); the only numbers in this file are the
*static policy* (:data:`POLICY`): loop and branch weights and the expected cache level of
a load, which a static model must assume because it sees no trip counts and no addresses.

Design (after Mesa ACO ``aco_statistics.cpp`` ``BlockCycleEstimator``; summarised in
``LOOP_AND_MODEL_ANCHORS.md`` section 3):

* **one wave, in order, per block**: each block is simulated in reverse post-order; its
  entry state is the max-join of its already-simulated predecessors' exit states.  As in
  ACO a first pass ignores back edges; unlike ACO, loop bodies are then simulated a second
  time with the back edges' exit states from the first pass joined in, and that second
  pass gives their clk (``POLICY["loop_steady_state"]``): a wait at the top of a loop pays
  for the loads the previous iteration left outstanding.  Times are clk from the block's
  start.
* **issue**: one instruction per wave per issue slot (``issue.wave_slot_clk``).  An
  instruction issues when (in this order of attribution) its ``s_waitcnt`` counters have
  dropped (``vmcnt``/``lgkmcnt``), its source registers are ready (``dependency``; MFMA
  results read by VALU/memory or as SrcA/B: ``passes + mfma.dep_srcab_*`` wait states;
  same-accumulator SrcC: ``passes``), and its pipe is free (``pipe``: VALU
  ``issue.valu_clk``, transcendentals ``issue.trans_clk``, the MFMA pipe ``passes x
  issue.pass_clk``, VALU held off by an XDL MFMA for ``mfma.coexec_delay_clk`` (SMFMAC
  ``mfma.smfmac_coexec_delay_clk``) and by a non-XDL (f32/f64) MFMA for its whole
  passes, the LDS port ``bytes / bw.lds_bytes_per_clk_port``, the vL1 ``bytes /
  bw.vl1_bytes_per_clk_cu`` for a VMEM instruction).  ``s_nop N`` costs
  ``(N+1) x issue.wait_state_clk`` (``hazard``); an ``s_barrier`` one slot (``barrier``:
  a single wave cannot see the others); ``s_endpgm`` waits for every counter.
* **counters** (ACO's deques): each memory instruction pushes its completion time on
  ``vmcnt`` (VMEM, FLAT; in order) and/or ``lgkmcnt`` (DS in order, SMEM out of order);
  ``s_waitcnt vmcnt(N)`` waits for all but the N youngest, an out-of-order lgkm wait for
  all (only ``lgkmcnt(0)`` is meaningful then); an instruction that would exceed the
  counter maximum (``counters.*_max``) first waits for the oldest.  Completion times:
  loads ``POLICY["load_l2_fraction"]`` x ``latency.l2_hit`` + the rest x ``latency.hbm``;
  stores ``latency.store_ack``; atomics ``latency.atomic``; SMEM ``latency.smem_hit``;
  DS ``latency.lds`` plus its port time; FLAT as a VMEM load.
* **weights** (ACO): a block in a loop nest of depth d runs ``8`` (d = 1), ``8 x 4``
  (d = 2), ``8 x 4 x 2^(d-2)`` (d > 2) times, capped at ``POLICY["max_weight"]``; each
  enclosing conditional region (a conditional branch block that dominates the block
  which does not post-dominate it) multiplies by 0.5 (uniform: SCC/VCC branches) or
  0.75 (divergent: ``s_cbranch_execz/execnz``).  Unreachable blocks weigh 0.
* **occupancy and throughput** (ACO): the wave's weighted latency ``L`` (clk) and its
  weighted use ``U_r`` of each per-SIMD resource r (VALU, MFMA, scalar, LDS port,
  memory bandwidth: a memory instruction's bytes x (``(1 - hbm_byte_fraction) /
  bw.l2_bytes_per_clk_cu`` + ``hbm_byte_fraction / bw.hbm_bytes_per_clk_cu``) x
  ``simds_per_cu``, with ``POLICY["hbm_byte_fraction"]`` 0 by default) give
  ``parallelism = min(occupancy, L / U_r)`` and ``inv_throughput = L / parallelism``
  clk per wave per SIMD; occupancy (waves per SIMD) and its limit come from
  :class:`~asmevo.analysis.regbudget.RegisterBudget`.
* **cycles**: the clk for one SIMD to run ``W`` waves, ``max(L, W x inv_throughput)``, where
  ``W`` = waves per SIMD of the launch when one is given (its workgroups spread over
  ``cus x simds_per_cu`` SIMDs), else ``waves_per_simd`` (one full CU's worth of waves).
  So a lower occupancy makes a latency-bound kernel slower, not a throughput-bound one.

Rows (:class:`~asmevo.perf.profile.InstructionRow`) are per wave: ``hits`` is the
block weight (expected executions, may be fractional), ``latency`` the clk from the
instruction's first issue attempt to the next instruction's, times ``hits``; ``stall``
the part blocked by waits, dependencies, pipes, nops and barriers; ``idle`` 0 (a single
wave has no other wave to wait for).

Instruction classes, pipe occupancy, ALU latencies, MFMA passes and dependent-issue wait
states come from :mod:`asmevo.perf.costs` (:func:`~asmevo.perf.costs.cost_of`,
:func:`~asmevo.perf.costs.mfma_read_ready`), which reads the same machine description;
register roles from :func:`asmevo.analysis._isa.facts`.

What this leaves out (see docs/perf.md): other waves' contention for a pipe beyond the
throughput bound, real trip counts and branch outcomes, cache behaviour from addresses,
LDS bank conflicts, instruction-cache misses, barrier skew between waves.
"""

from __future__ import annotations

from collections import deque

from ..analysis._isa import facts
from ..ir.operands import reg_units
from .profile import InstructionRow, KernelProfile, Profile

#: the model's name and version (every figure printed names it); 1.1: steady-state loop
#: pass, vL1 pipe time, the binding resource named only when throughput sets the clk;
#: 1.2: the bandwidth bound charges bytes at the L2 share (POLICY["hbm_byte_fraction"])
MODEL = {"name": "asmevo-static", "version": "1.2"}

#: static policy: assumptions a model without trip counts and addresses must make
#: (not machine parameters; docs/perf.md "Static estimate").
POLICY = {
    # ACO aco_statistics.cpp: loops run 8 times, the second nesting level 4 more, each
    # deeper level 2 more; uniform branches 50/50, a divergent region 75%
    "loop_weights": (8.0, 4.0, 2.0),
    "max_weight": 4096.0,
    "uniform_branch": 0.5,
    "divergent_branch": 0.75,
    # no addresses are known: half the loads are taken to hit L2, half to go to HBM
    "load_l2_fraction": 0.5,
    # the bandwidth bound: the part of the bytes charged at the per-CU HBM share, the rest
    # at the per-CU L2 share (every byte a load moves crosses the L2 -> L1 path).  0: how
    # much of the traffic reaches HBM depends on reuse across workgroups, which only the
    # addresses show (the trace-driven model sees them); a static bound that guessed it
    # would hide every latency edit of a tiled GEMM or attention kernel behind a bandwidth
    # limit it may not have
    "hbm_byte_fraction": 0.0,
    # simulate loop bodies a second time from the join of their entry and their back edges
    # (ACO simulates once, ignoring back edges): a wait at the top of a loop then pays for
    # what the previous iteration left outstanding (software-pipelined loads)
    "loop_steady_state": True,
}

# resources of the throughput bound (per SIMD)
_RES = ("valu", "mfma", "scalar", "lds", "membw")
_RES_CLASS = {"valu": "valu", "mfma": "mfma", "scalar": "scalar", "lds": "lds",
              "membw": "memory-bandwidth"}

class _Params:
    """The machine values the estimate reads, once per machine (clk, bytes)."""

    def __init__(self, m):
        g = m.__getitem__
        self.slot = float(g("issue.wave_slot_clk"))
        self.pass_clk = float(g("issue.pass_clk"))
        self.ws = float(g("issue.wait_state_clk"))
        self.coexec = float(g("mfma.coexec_delay_clk"))
        self.coexec_sm = float(g("mfma.smfmac_coexec_delay_clk"))
        self.store = float(g("latency.store_ack"))
        self.atomic = float(g("latency.atomic"))
        f = POLICY["load_l2_fraction"]
        self.load = f * float(g("latency.l2_hit")) + (1 - f) * float(g("latency.hbm"))
        self.lds_port = float(g("bw.lds_bytes_per_clk_port"))
        self.vl1_bw = float(g("bw.vl1_bytes_per_clk_cu"))
        simds = float(g("simds_per_cu"))
        # clk of one SIMD's share of the CU's memory bandwidth per byte
        h = POLICY["hbm_byte_fraction"]
        self.membw_per_byte = simds * ((1 - h) / float(g("bw.l2_bytes_per_clk_cu"))
                                       + h / float(g("bw.hbm_bytes_per_clk_cu")))
        self.lds_per_byte_cu = simds / float(g("bw.lds_bytes_per_clk_cu"))
        self.vm_max = int(g("counters.vmcnt_max"))
        self.lgkm_max = int(g("counters.lgkmcnt_max"))
        self.wave = int(g("wave_size"))
        self.simds = int(simds)
        self.cus = int(g("cus"))
        self.max_waves = int(g("waves_per_simd"))
        self.clock_mhz = float(g("clock_mhz"))


# instruction kinds (small ints for speed)
K_VALU, K_TRANS, K_MFMA, K_SALU, K_SMEM, K_VMEM, K_FLAT, K_DS, K_BRANCH, K_WAIT, K_NOP, \
    K_BARRIER, K_END, K_OTHER = range(14)


class _Cost:
    """Per-instruction-value decoded cost (cached by ``Instruction.key()``), built from
    :func:`asmevo.perf.costs.cost_of` plus register roles from the analyses' facts."""

    __slots__ = ("kind", "uses", "defs", "srcc", "srcab", "passes", "xdl", "smfmac", "vm",
                 "lgkm", "lat_vm", "lat_lgkm", "lds_clk", "bytes", "wait", "nop_clk", "ooo",
                 "occ", "lat", "cost", "reader")


def _decode(inst, P: _Params, machine) -> _Cost:
    from .costs import cost_of
    k = cost_of(inst, machine)
    c = _Cost()
    op = inst.opcode
    fx = facts(inst)
    c.cost = k
    c.uses = tuple(u for u in fx.uses if len(u) == 2 or u[0] in ("vcc_lo", "vcc_hi", "scc",
                                                                    "exec_lo", "exec_hi", "m0"))
    c.defs = tuple(fx.defs) + tuple(fx.partial)
    c.srcc = frozenset()
    c.srcab = frozenset()
    c.passes = k.passes
    c.xdl = k.xdl
    c.smfmac = k.smfmac
    c.vm = "vmcnt" in k.counters
    c.lgkm = "lgkmcnt" in k.counters
    c.lat_vm = c.lat_lgkm = 0.0
    c.lds_clk = 0.0
    c.bytes = 0
    c.wait = None
    c.nop_clk = 0.0
    c.ooo = False
    c.occ = float(k.occupancy)
    c.lat = float(k.latency)
    # how this instruction reads an MFMA result (costs.mfma_read_ready's consumer kinds)
    c.reader = "mem" if k.unit in ("vmem", "lds") else "valu"
    if k.waitcnt is not None:
        c.kind = K_WAIT
        c.wait = (int(k.waitcnt[0]), int(k.waitcnt[1]))
        c.uses = ()
        return c
    if k.nop_states:
        c.kind = K_NOP
        c.nop_clk = k.nop_states * P.ws
        c.uses = ()
        return c
    if k.barrier:
        c.kind = K_BARRIER
        return c
    if k.endpgm:
        c.kind = K_END
        c.wait = (0, 0)
        return c
    if k.unit == "mfma":
        c.kind = K_MFMA
        c.passes = k.passes or 8
        if len(inst.operands) >= 4:
            c.srcc = frozenset(reg_units(inst.operands[3]))
            c.srcab = frozenset(reg_units(inst.operands[1])) | frozenset(
                reg_units(inst.operands[2]))
        return c
    if k.unit == "valu":
        c.kind = K_TRANS if k.trans else K_VALU
        return c
    c.bytes = int(k.mem_bytes or 4) * P.wave
    if k.unit == "lds":
        c.kind = K_DS
        c.lgkm = True
        c.lds_clk = c.bytes / P.lds_port
        c.lat_lgkm = c.lat + c.lds_clk
        return c
    if k.unit == "vmem":
        c.kind = K_FLAT if fx.flat else K_VMEM
        c.vm = True
        if k.mem_kind == "atomic":
            c.lat_vm = P.atomic
        elif k.mem_kind in ("store", "cache"):
            c.lat_vm = P.store
        else:
            c.lat_vm = P.load
        if c.lgkm:
            c.lat_lgkm = c.lat_vm
        return c
    if k.unit == "smem":
        c.kind = K_SMEM
        c.lgkm = True
        c.ooo = True
        c.lat_lgkm = c.lat
        return c
    if k.unit == "branch":
        c.kind = K_BRANCH
        return c
    if fx.sendmsg:
        c.kind = K_SALU
        c.lgkm = True
        c.ooo = True
        c.lat_lgkm = P.slot
        return c
    c.kind = K_SALU if k.unit == "salu" else K_OTHER
    return c


class _State:
    """A wave's scoreboard at a point of a block (times in clk from the block start).

    Every time carried in from another block also carries a weight (``rw``, ``fw``, the
    third element of ``mfma`` values, the second of queue entries; None: set in the current
    block): the least weight (expected executions) of the blocks on the path that brought
    it, from the block that set it to the one it leaves.  A stall on such a time is counted
    at ``min(that weight, this block's weight)``: it happens at most as often as the path
    that causes it (a load before a loop, waited for inside it, stalls once, not once per
    iteration; a load in a conditional block stalls the join only when that block ran), so
    that time added on a path never lowers the estimate by more than it adds."""

    __slots__ = ("t", "ready", "rw", "mfma", "valu_free", "mfma_free", "lds_free", "vmem_free",
                 "fw", "vm", "lgkm", "lgkm_ooo")

    def __init__(self):
        self.t = 0.0
        self.ready: dict = {}      # unit -> clk its value is usable (non-memory producers)
        self.rw: dict = {}         # unit -> setter weight (carried entries only)
        self.mfma: dict = {}       # MFMA dst unit -> (issue clk, costs.Cost, setter weight)
        self.valu_free = 0.0
        self.mfma_free = 0.0
        self.lds_free = 0.0
        self.vmem_free = 0.0
        self.fw: dict = {}         # pipe name -> setter weight (carried only)
        self.vm: deque = deque()    # (completion clk, setter weight), oldest first
        self.lgkm: deque = deque()
        self.lgkm_ooo = False

    def exit_relative(self, w: float) -> "_State":
        """This state seen from the start of a successor block (times minus ``t``); ``w`` is
        the weight of the block it leaves (the setter of what it set itself)."""
        s = _State()
        t = self.t
        rw = self.rw
        s.ready = {u: v - t for u, v in self.ready.items() if v > t}
        s.rw = {u: min(rw.get(u, w), w) for u in s.ready}
        s.mfma = {u: (v[0] - t, v[1], w if v[2] is None else min(v[2], w))
                  for u, v in self.mfma.items()
                  if v[0] + MFMA_HORIZON_PASSES * v[1].passes * 4 > t}
        s.valu_free = max(0.0, self.valu_free - t)
        s.mfma_free = max(0.0, self.mfma_free - t)
        s.lds_free = max(0.0, self.lds_free - t)
        s.vmem_free = max(0.0, self.vmem_free - t)
        s.fw = {n: min(self.fw.get(n, w), w) for n in ("valu", "mfma", "lds", "vmem")}
        s.vm = deque((v - t, w if vw is None else min(vw, w)) for v, vw in self.vm)
        s.lgkm = deque((v - t, w if vw is None else min(vw, w)) for v, vw in self.lgkm)
        s.lgkm_ooo = self.lgkm_ooo
        return s

    def join(self, o: "_State") -> None:
        """Max-join with ``o`` (both relative to the same block start); a joined time keeps
        the setter weight of the side it came from."""
        for u, v in o.ready.items():
            if v > self.ready.get(u, -1e30):
                self.ready[u] = v
                self.rw[u] = o.rw.get(u)
        for u, v in o.mfma.items():
            x = self.mfma.get(u)
            if x is None or v[0] > x[0]:
                self.mfma[u] = v
        for n in ("valu", "mfma", "lds", "vmem"):
            a, b = getattr(self, n + "_free"), getattr(o, n + "_free")
            if b > a:
                setattr(self, n + "_free", b)
                self.fw[n] = o.fw.get(n)
        self.vm = _join_queue(self.vm, o.vm)
        self.lgkm = _join_queue(self.lgkm, o.lgkm)
        self.lgkm_ooo = self.lgkm_ooo or o.lgkm_ooo


def _join_queue(a: deque, b: deque) -> deque:
    """ACO ``join_queue``: align the youngest entries, keep the later one, keep the
    longer history."""
    la, lb = list(a), list(b)
    n = max(len(la), len(lb))
    out = []
    for k in range(1, n + 1):
        x = la[-k] if k <= len(la) else None
        y = lb[-k] if k <= len(lb) else None
        out.append(x if y is None else y if x is None else (y if y[0] > x[0] else x))
    out.reverse()
    return deque(out)


def _retire(q: deque, keep: int, t: float) -> tuple:
    """Wait until at most ``keep`` entries of ``q`` are outstanding; returns the clk that
    takes (>= ``t``) and the setter weight of the entry that sets it (None: this block or
    no wait), and drops the retired entries."""
    done = t
    dw = None
    while len(q) > keep:
        v, vw = q.popleft()
        if v > done:
            done, dw = v, vw
    return done, dw


def _f(we, w: float) -> float:
    """Share of a stall on a time set with weight ``we`` counted in a block of weight ``w``."""
    if we is None or w <= 0 or we >= w:
        return 1.0
    return we / w


#: an MFMA result older than this many times its pass count no longer delays a reader
#: (pruned at block boundaries; the longest rule, DGEMM -> memory, is under 3 x passes)
MFMA_HORIZON_PASSES = 4

_READY_CACHE: dict = {}


def _mfma_ready(prod, consumer: str, machine) -> float:
    """clk after an MFMA's issue before ``consumer`` may issue (costs.mfma_read_ready)."""
    key = (prod, consumer, id(machine))
    v = _READY_CACHE.get(key)
    if v is None:
        from .costs import mfma_read_ready
        v = _READY_CACHE[key] = float(mfma_read_ready(prod, consumer, machine))
    return v


class _BlockResult:
    __slots__ = ("cost", "rows", "use")

    def __init__(self, n):
        self.cost = 0.0
        self.rows = [None] * n  # (latency, stall, causes dict)
        self.use = dict.fromkeys(_RES, 0.0)


def _simulate(insts, costs, st: _State, P: _Params, machine, w: float = 1.0) -> _BlockResult:
    """Run ``insts`` (with their decoded ``costs``) from state ``st`` (mutated) in a block of
    weight ``w``.  Rows hold per-execution clk; a stall on a time carried in from a block of
    lower weight counts only in part (:class:`_State`), so a row's clk may be less than
    the time the wave's clock advanced."""
    res = _BlockResult(len(insts))
    use = res.use
    slot = P.slot
    total = 0.0
    for i, c in enumerate(costs):
        t0 = st.t
        t = t0
        causes = {}
        lost = 0.0  # stall clk not counted at this block's weight
        k = c.kind
        # 1. counters
        if c.wait is not None:
            vm_keep, lg_keep = c.wait
            tv, wv = _retire(st.vm, vm_keep, t)
            if st.lgkm_ooo and lg_keep < len(st.lgkm):
                lg_keep = 0
            tl, wl = _retire(st.lgkm, lg_keep, t)
            if not st.lgkm:
                st.lgkm_ooo = False
            if tv > t or tl > t:
                if tv >= tl:
                    f = _f(wv, w)
                    causes["vmcnt"] = (tv - t) * f
                    lost += (tv - t) * (1 - f)
                    t = tv
                else:
                    f = _f(wl, w)
                    causes["lgkmcnt"] = (tl - t) * f
                    lost += (tl - t) * (1 - f)
                    t = tl
        if c.vm and len(st.vm) >= P.vm_max:
            t2, w2 = _retire(st.vm, P.vm_max - 1, t)
            if t2 > t:
                f = _f(w2, w)
                causes["vmcnt"] = causes.get("vmcnt", 0.0) + (t2 - t) * f
                lost += (t2 - t) * (1 - f)
                t = t2
        if c.lgkm and len(st.lgkm) >= P.lgkm_max:
            t2, w2 = _retire(st.lgkm, P.lgkm_max - 1, t)
            if t2 > t:
                f = _f(w2, w)
                causes["lgkmcnt"] = causes.get("lgkmcnt", 0.0) + (t2 - t) * f
                lost += (t2 - t) * (1 - f)
                t = t2
        # 2. register dependencies
        if c.uses:
            ready = st.ready
            mf = st.mfma
            dep = t
            dw = None
            for u in c.uses:
                v = ready.get(u)
                vw = st.rw.get(u) if v is not None else None
                if mf:
                    x = mf.get(u)
                    if x is not None:
                        if k == K_MFMA and u in c.srcc:
                            kind = "srcc"
                        elif k == K_MFMA and u in c.srcab:
                            kind = "srcab"
                        else:
                            kind = c.reader
                        v = x[0] + _mfma_ready(x[1], kind, machine)
                        vw = x[2]
                if v is not None and v > dep:
                    dep, dw = v, vw
            if dep > t:
                f = _f(dw, w)
                causes["dependency"] = (dep - t) * f
                lost += (dep - t) * (1 - f)
                t = dep
        # 3. pipes
        pipe = None
        if k == K_VALU or k == K_TRANS:
            pipe, free = "valu", st.valu_free
        elif k == K_MFMA:
            pipe, free = "mfma", st.mfma_free
        elif k == K_DS:
            pipe, free = "lds", st.lds_free
        elif k == K_VMEM or k == K_FLAT:
            pipe, free = "vmem", st.vmem_free
        if pipe is not None and free > t:
            f = _f(st.fw.get(pipe), w)
            causes["pipe"] = (free - t) * f
            lost += (free - t) * (1 - f)
            t = free
        # 4. issue
        issue = t
        adv = slot
        if k == K_VALU or k == K_TRANS:
            st.valu_free = issue + c.occ
            st.fw.pop("valu", None)
            use["valu"] += c.occ
            r = issue + c.lat
            for u in c.defs:
                st.ready[u] = r
                st.rw.pop(u, None)
                if st.mfma:
                    st.mfma.pop(u, None)
        elif k == K_MFMA:
            busy = c.occ
            st.mfma_free = issue + busy
            st.fw.pop("mfma", None)
            use["mfma"] += busy
            if c.xdl:
                hold = P.coexec_sm if c.smfmac else P.coexec
            else:
                hold = busy  # f32/f64 MFMAs do not co-execute with VALU
            if issue + hold > st.valu_free:
                st.valu_free = issue + hold
                st.fw.pop("valu", None)
            for u in c.defs:
                st.mfma[u] = (issue, c.cost, None)
                st.ready.pop(u, None)
        elif k == K_SALU or k == K_BRANCH or k == K_OTHER:
            use["scalar"] += slot
            r = issue + c.lat
            for u in c.defs:
                st.ready[u] = r
                st.rw.pop(u, None)
        elif k == K_NOP:
            adv = c.nop_clk
            causes["hazard"] = c.nop_clk
        elif k == K_BARRIER:
            causes["barrier"] = slot
        if c.vm or c.lgkm:
            if k == K_SMEM:
                use["scalar"] += slot
            if c.vm:
                done = issue + c.lat_vm
                if st.vm and st.vm[-1][0] > done:  # VMEM returns in order
                    done = st.vm[-1][0]
                st.vm.append((done, None))
                # the vL1 takes the wave's bytes at bw.vl1_bytes_per_clk_cu
                st.vmem_free = issue + c.bytes / P.vl1_bw
                st.fw.pop("vmem", None)
                use["membw"] += c.bytes * P.membw_per_byte
                if k == K_FLAT:
                    st.lgkm.append((issue + c.lat_lgkm, None))
                    st.lgkm_ooo = True
            elif c.lgkm:
                done = issue + c.lat_lgkm
                if c.ooo:
                    st.lgkm_ooo = True
                elif st.lgkm and st.lgkm[-1][0] > done and not st.lgkm_ooo:
                    done = st.lgkm[-1][0]
                st.lgkm.append((done, None))
            if k == K_DS:
                st.lds_free = issue + c.lds_clk
                st.fw.pop("lds", None)
                use["lds"] += c.bytes * P.lds_per_byte_cu
        st.t = issue + adv
        stall = issue - t0 - lost
        if k != K_NOP:
            causes["issue"] = adv
        else:
            stall += adv
        if k == K_BARRIER:
            causes.pop("issue", None)
            stall += adv
        lat = st.t - t0 - lost
        total += lat
        res.rows[i] = (lat, stall, causes)
    res.cost = total
    return res


def _weights(cfg) -> list[float]:
    """Expected executions per wave of every block (module docstring, "weights")."""
    n = len(cfg.blocks)
    lw = POLICY["loop_weights"]
    cap = POLICY["max_weight"]
    reach = set(range(n)) - set(cfg.unreachable)
    out = []
    idom = cfg.idom
    cond = {}
    for b in range(n):
        succ = [s for s in cfg.graph.successors(b)]
        if len(succ) >= 2 and b in reach and b not in cfg.indirect_sources:
            last = cfg.blocks[b].instructions[-1].opcode if cfg.blocks[b].instructions else ""
            cond[b] = (POLICY["divergent_branch"] if last.startswith("s_cbranch_exec")
                       else POLICY["uniform_branch"])
    latches = {la for lp in cfg.loops for la in lp.latches}
    for b in range(n):
        if b not in reach:
            out.append(0.0)
            continue
        d = cfg.loop_depth(b)
        w = 1.0
        if d >= 1:
            w *= lw[0]
        if d >= 2:
            w *= lw[1]
        if d >= 3:
            w *= lw[2] ** (d - 2)
        w = min(w, cap)
        # enclosing conditional regions
        x = b
        seen = 0
        while x in idom and idom[x] != x and seen < 4096:
            x = idom[x]
            seen += 1
            f = cond.get(x)
            if f is not None and x not in latches and not cfg.postdominates(b, x):
                w *= f
        out.append(w)
    return out


def _occupancy(rb, P: _Params) -> tuple[int, str]:
    lim = rb.occupancy_limits or {}
    occ = rb.occupancy if rb.occupancy is not None else P.max_waves
    occ = max(1, min(int(occ), P.max_waves))
    if occ >= P.max_waves or not lim:
        return occ, "waves"
    return occ, min(sorted(lim), key=lambda k: lim[k])


def straight_line_cycles(insts, machine=None) -> float:
    """clk one wave takes to issue the straight-line ``insts`` from an idle state, waiting
    for what is outstanding at the end (the static model's per-block figure, used by the
    llvm-mca comparison)."""
    from .machine import load_machine
    machine = machine if machine is not None else load_machine()
    P = _Params(machine)
    costs = [_decode(i, P, machine) for i in insts]
    st = _State()
    r = _simulate(insts, costs, st, P, machine)
    end = max([st.t, st.valu_free, st.mfma_free, *st.ready.values(),
               *(v[0] + _mfma_ready(v[1], "valu", machine) for v in st.mfma.values())])
    return end


def estimate_static(module, kernel, launch=None, *, machine=None, manager=None,
                    top: int | None = None) -> Profile:
    """The static estimate of ``kernel`` (a :class:`~asmevo.ir.Kernel` or its name in
    ``module``) as a :class:`~asmevo.perf.profile.Profile` with ``source="model-static"``.

    Args:
        launch: an :class:`~asmevo.emu.launch.Launch` (only its grid and block sizes are
            read) to scale ``cycles`` to the launch; None: one CU's worth of waves.
        machine: a :class:`~asmevo.perf.machine.Machine` (default: MI300X).
        manager: an :class:`~asmevo.analysis.AnalysisManager` to reuse cached analyses.
        top: hot windows kept (all when None).
    """
    from ..analysis import AnalysisManager
    from ..analysis.cfg import CFG
    from ..analysis.regbudget import RegisterBudget
    from .machine import load_machine
    from .windows import classify, hot_windows, kernel_pcs
    if machine is None:
        machine = load_machine()
    P = _Params(machine)
    if isinstance(kernel, str):
        kernel = module.kernel(kernel)
    am = manager if manager is not None else AnalysisManager(module)
    cfg = am.get(CFG, kernel)
    rb = am.get(RegisterBudget, kernel)
    weights = _weights(cfg)
    blocks = cfg.blocks
    cache: dict = {}
    exits: dict[int, _State] = {}
    per_block: dict[int, _BlockResult] = {}
    order = cfg.rpo()
    in_rpo = set(order)
    order += [b for b in range(len(blocks)) if b not in in_rpo]  # unreachable blocks
    rpo_pos = {b: i for i, b in enumerate(order)}
    costs_of: dict[int, list] = {}
    for b in order:
        costs = []
        for inst in blocks[b].instructions:
            key = inst.key()
            c = cache.get(key)
            if c is None:
                c = cache[key] = _decode(inst, P, machine)
            costs.append(c)
        costs_of[b] = costs
    in_loop = {x for lp in cfg.loops for x in lp.blocks}
    passes = 2 if (in_loop and POLICY["loop_steady_state"]) else 1
    prev_exits: dict[int, _State] = {}
    for npass in range(passes):
        exits = {}
        for b in order:
            st = None
            for p in cfg.graph.predecessors(b):
                if p == "exit":
                    continue
                if p in exits and rpo_pos.get(p, 1 << 30) < rpo_pos[b]:
                    src = exits[p]          # forward edge: this pass
                elif npass and p in prev_exits:
                    src = prev_exits[p]     # back edge: the previous pass's iteration
                else:
                    continue
                if st is None:
                    st = src.exit_relative(weights[p])
                else:
                    st.join(src.exit_relative(weights[p]))
            if st is None:
                st = _State()
            r = _simulate(blocks[b].instructions, costs_of[b], st, P, machine, weights[b])
            exits[b] = st
            if npass == 0 or b in in_loop or b not in per_block:
                per_block[b] = r
        prev_exits = exits
    # rows
    pcs = kernel_pcs(kernel)
    rows = []
    L = 0.0
    use = dict.fromkeys(_RES, 0.0)
    idx = 0
    for b, blk in enumerate(blocks):
        w = weights[b]
        r = per_block[b]
        L += w * r.cost
        for k2 in _RES:
            use[k2] += w * r.use[k2]
        for i, inst in enumerate(blk.instructions):
            lat, stall, causes = r.rows[i]
            rows.append(InstructionRow(index=idx, pc=pcs[idx], text=inst.text(), hits=w,
                                       latency=w * lat, stall=w * stall, idle=0.0,
                                       causes={c2: w * v for c2, v in causes.items()}))
            idx += 1
    occ, limit = _occupancy(rb, P)
    par = float(occ)
    bound = None
    for r_ in _RES:
        if use[r_] > 0 and L > 0:
            p_r = L / use[r_]
            if p_r < par:
                par, bound = p_r, r_
    par = max(par, 1e-9)
    # clk per wave per SIMD: the bound resource's use, else the latency shared by the
    # resident waves (written without L / (L / U) so that equal inputs give equal clk)
    inv = use[bound] if bound is not None else (L / par if L > 0 else 0.0)
    if launch is not None:
        wg = 1
        for x in launch.grid:
            wg *= int(x)
        lanes = 1
        for x in launch.block:
            lanes *= int(x)
        waves = wg * -(-lanes // P.wave)
        wps = waves / float(P.cus * P.simds)
        basis = (f"the launch: {waves} waves over {P.cus} CUs x {P.simds} SIMDs")
    else:
        wps = float(P.max_waves)
        basis = f"one CU's worth of waves ({P.max_waves} per SIMD)"
    cycles = max(L, wps * inv)
    # bottleneck: the binding resource when the waves' throughput sets the clk, else what the
    # wave waits for (a launch with a few waves per SIMD is latency bound whatever binds)
    if bound is not None and wps * inv > L:
        bott = _RES_CLASS[bound]
    else:
        insts_all = list(kernel.instructions())
        bott = classify(insts_all, rows)
        if bott in ("memory-latency", "lds", "scalar", "barrier") and occ < P.max_waves \
                and limit != "waves" and occ <= 2:
            bott = "occupancy"
    kp = KernelProfile(kernel=kernel.name, cycles=cycles, cu_cycles=cycles,
                       microseconds=cycles / P.clock_mhz, occupancy=occ, occupancy_limit=limit,
                       bottleneck=bott, instructions=rows)
    kp.windows = hot_windows(kernel, rows, top, kernel_bottleneck=bott, cfg=cfg)
    kp.extra = {
        "wave_latency": L, "inv_throughput": inv, "parallelism": par,
        "throughput_bound": bound, "usage": use, "waves_per_simd": wps, "basis": basis,
        "rows": "per wave (hits = expected executions from the loop/branch weights)",
        "policy": {k: (list(v) if isinstance(v, tuple) else v) for k, v in POLICY.items()},
        "occupancy_limits": dict(rb.occupancy_limits or {}),
    }
    prof = Profile(model=dict(MODEL), source="model-static", estimated=True,
                   machine=getattr(machine, "name", str(machine)))
    prof.kernels[kernel.name] = kp
    return prof

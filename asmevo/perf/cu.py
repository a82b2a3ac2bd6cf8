"""The trace-driven compute-unit model: one MI300X CU replaying an emulator trace.

Input: the per-wave traces of a launch (:mod:`asmevo.emu.trace`), the kernel's
instruction costs (:mod:`asmevo.perf.costs`) and a machine description
(:mod:`asmevo.perf.machine`).  What it models (TIMING_FACTS.md sections in brackets):

* **placement** [s1]: the workgroups of the launch go round robin over the CUs
  (``cus``); the model replays the CU with the most executed wave-instructions (ties: the
  lowest CU), which is the CU that finishes last when the workgroups are alike.  On it a
  workgroup starts when all its waves fit: per SIMD at most ``occupancy`` waves (VGPR,
  AGPR and SGPR limits of :mod:`asmevo.analysis.regbudget`), LDS within 64 KiB, at most 16
  multi-wave workgroups (barriers); each wave goes to the SIMD with the fewest waves.
  Finished workgroups free their slots for the next one;
* **issue** [s2]: each clk the sequencer looks at one SIMD (round robin, clk mod 4) and
  issues, oldest wave first, at most one instruction per wave and one per category (VALU,
  VMEM, SALU/SMEM, LDS, branch; internal instructions take no category).  A wave issues at
  most once per 4 clk (``issue.wave_slot_clk``);
* **pipes**: VALU busy 4 clk per op, 16 for transcendentals (quarter rate); MFMA busy
  passes x 4 clk on the SIMD's matrix core, VALU may co-issue 4 clk after an XDL MFMA (8
  after SMFMAC) but not during an f32/f64 (non-XDL) MFMA; one VMEM instruction in the vL1
  at a time (its lines at 128 B/clk); LDS one port per SIMD pair plus the shared banks;
* **dependencies**: ALU results are ready ``latency`` clk after issue; an MFMA result is
  ready for a same-accumulator MFMA after passes x 4 clk and for SrcA/B, VALU or memory
  after the gfx940 dependent-issue wait states (:func:`asmevo.perf.costs.mfma_read_ready`).
  Memory results are not interlocked (the program's ``s_waitcnt`` covers them);
* **s_nop N** takes N+1 issue slots; **s_waitcnt** blocks until the counters drop: vmcnt
  completes in issue order, lgkmcnt in order for LDS and out of order once SMEM is
  outstanding; a counter at its maximum blocks the next memory instruction;
* **memory**: :class:`asmevo.perf.memory.CUMemory` (real lane addresses; L1/L2/MALL/HBM
  latency, bandwidth shares, LDS bank conflicts); **s_barrier** releases when every live
  wave of the workgroup has reached it.

Attribution: for each wave, the clk from the issue of one instruction to the issue of
its next (rocprofv3's ``Latency``) go to the first instruction, split by cause: ``issue``
(its own slot), ``hazard`` (s_nop slots, MFMA dependent-issue wait states), ``vmcnt`` /
``lgkmcnt`` (an s_waitcnt waiting, or a full counter), ``barrier``, ``dependency`` (the next
instruction's ALU operands), ``pipe`` (its functional unit busy), ``idle`` (ready, but
another wave or SIMD had the issue slot).  ``stall`` is every cause but issue and idle.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .costs import cost_of, mfma_read_ready, operand_ids, reg_ids
from .machine import MI300X, Machine
from .memory import CUMemory

CAT_IDS = {"valu": 0, "vmem": 1, "salu": 2, "lds": 3, "branch": 4, "internal": -1}
_CAUSE_ORDER = ("issue", "hazard", "vmcnt", "lgkmcnt", "barrier", "dependency", "pipe", "idle")
C_ISSUE, C_HAZ, C_VM, C_LGKM, C_BAR, C_DEP, C_PIPE, C_IDLE = range(8)

# unit kinds
U_NONE, U_VALU, U_MFMA, U_VMEM, U_SMEM, U_SALU, U_LDS, U_BRANCH = range(8)
_UNIT = {"none": U_NONE, "valu": U_VALU, "mfma": U_MFMA, "vmem": U_VMEM, "smem": U_SMEM,
         "salu": U_SALU, "lds": U_LDS, "branch": U_BRANCH}


class _Op:
    """Pre-decoded static facts of one instruction for the replay loop."""

    __slots__ = ("cost", "cat", "unit", "occ", "lat", "uses", "defs", "srcc", "srcab", "vm", "lgkm",
                 "wait", "nop", "barrier", "endpgm", "mfma", "trans", "kind", "size", "flat",
                 "coexec", "smem", "is_vload")


_OPS: dict = {}


def _decode(inst, m: Machine) -> _Op:
    """The :class:`_Op` of ``inst`` (cached per instruction value and machine)."""
    try:
        key = (inst.key(), id(m))
    except TypeError:
        return _decode1(inst, m)
    o = _OPS.get(key)
    if o is None:
        if len(_OPS) > 200_000:
            _OPS.clear()
        o = _OPS[key] = _decode1(inst, m)
    return o


def _decode1(inst, m: Machine) -> _Op:
    from ..analysis._isa import facts
    c = cost_of(inst, m)
    o = _Op()
    o.cost = c
    o.cat = CAT_IDS[c.category]
    o.unit = _UNIT[c.unit]
    o.occ = c.occupancy
    o.lat = c.latency
    fx = facts(inst)
    o.uses = reg_ids(u for u in fx.uses if u[0] not in ("exec_lo", "exec_hi"))
    o.defs = reg_ids(tuple(fx.defs) + tuple(fx.partial))
    o.mfma = c.passes > 0
    o.srcc = o.srcab = ()
    if o.mfma and len(inst.operands) >= 4:
        o.srcab = operand_ids(inst.operands[1]) + operand_ids(inst.operands[2])
        o.srcc = operand_ids(inst.operands[3])
    o.vm = "vmcnt" in c.counters
    o.lgkm = "lgkmcnt" in c.counters
    o.wait = c.waitcnt
    o.nop = c.nop_states
    o.barrier = c.barrier
    o.endpgm = c.endpgm
    o.trans = c.trans
    o.kind = c.mem_kind
    o.size = c.mem_bytes
    op = inst.opcode
    if c.mem_space == "lds" and ("read2" in op or "write2" in op):
        o.size = max(1, c.mem_bytes // 2)
    o.flat = c.mem_space == "flat"
    o.smem = c.unit == "smem"
    o.is_vload = c.unit == "vmem" and c.mem_kind == "load"
    if o.mfma:
        o.coexec = (int(m["mfma.smfmac_coexec_delay_clk"]) if c.smfmac else
                    int(m["mfma.coexec_delay_clk"])) if c.xdl else c.occupancy
    else:
        o.coexec = 0
    return o


class _Wave:
    __slots__ = ("tr", "simd", "wg", "pos", "n", "t_prev", "reqs", "rdy", "rdy_c", "rdy_src",
                 "vmq", "lgq", "at_barrier", "done", "age", "prev_pc", "end", "ready", "nx", "nu")

    def __init__(self, tr, simd, wg, age, t0):
        self.tr = tr
        self.simd = simd
        self.wg = wg
        self.pos = 0
        self.n = len(tr.pcs)
        self.t_prev = t0 - 4
        self.reqs = [0.0] * 8          # per cause: the clk the next issue must wait for
        self.reqs[C_ISSUE] = t0
        self.rdy = {}                  # reg id -> clk a general reader may issue
        self.rdy_c = {}                # reg id -> clk a same-accumulator MFMA may issue
        self.rdy_src = {}              # reg id -> cause of rdy (C_DEP or C_HAZ)
        self.vmq = []                  # completion clk of outstanding vmcnt ops (in order)
        self.lgq = []                  # (completion clk, is_smem) of outstanding lgkmcnt ops
        self.at_barrier = False
        self.done = False
        self.age = age
        self.prev_pc = -1
        self.end = t0
        self.ready = float("inf")     # max(reqs), inf while done or at a barrier
        self.nx = None                # the next instruction's _Op
        self.nu = 0                   # its unit code


def _prime(w, ops):
    """Set up a newly placed wave's first instruction."""
    if w.done or w.n == 0:
        w.ready = float("inf")
        return
    w.nx = ops[w.tr.pcs[0]]
    w.nu = w.nx.unit
    w.ready = max(w.reqs)


class _WG:
    __slots__ = ("waves", "live", "arrived", "lds", "multi")

    def __init__(self):
        self.waves = []
        self.live = 0
        self.arrived = []
        self.lds = 0
        self.multi = False


@dataclass
class CUResult:
    """What one CU's replay gives: ``cycles`` (clk until its last wave ends and its
    memory operations complete), per instruction index ``hits``/``latency``/``causes``
    (arrays, clk summed over waves), ``waves``, ``workgroups`` and memory ``stats``."""

    cycles: float
    hits: np.ndarray
    latency: np.ndarray
    causes: np.ndarray          # (n_insts, len(_CAUSE_ORDER))
    waves: int
    workgroups: int
    issued: int
    stats: dict = field(default_factory=dict)


def _wait_release(q: list, n: int) -> float:
    """clk when at most ``n`` of the outstanding completions ``q`` remain."""
    k = len(q)
    if k <= n:
        return 0.0
    return sorted(q)[k - n - 1]


def simulate_cu(insts, groups, *, occupancy: int, lds_per_wg: int = 0,
                machine: Machine = MI300X, memory: CUMemory | None = None,
                ops: list | None = None) -> CUResult:
    """Replay ``groups`` (``[(wg_linear, [WaveTrace...]), ...]`` in dispatch order) on one CU.

    ``insts``: the kernel's instructions (index order, as the traces' pcs);
    ``occupancy``: waves per SIMD that fit (1..8); ``lds_per_wg``: LDS bytes per workgroup.
    """
    m = machine
    if ops is None:
        ops = [_decode(i, m) for i in insts]
    nins = len(ops)
    mem = memory or CUMemory(m)
    nsimd = int(m["simds_per_cu"])
    slot = float(m["issue.wave_slot_clk"])
    wstate = float(m["issue.wait_state_clk"])
    vm_max = int(m["counters.vmcnt_max"])
    lg_max = int(m["counters.lgkmcnt_max"])
    lds_cap = int(m["lds_bytes_per_cu"])
    gran = int(m["lds_granule"])
    lds_need = -(-max(0, lds_per_wg) // gran) * gran if lds_per_wg > 0 else 0
    max_wgs = int(m["max_workgroups_per_cu"])
    occ = max(1, min(int(occupancy), int(m["waves_per_simd"])))

    hits = np.zeros(nins + 1, np.int64)
    lat = np.zeros(nins + 1, np.float64)
    causes = np.zeros((nins + 1, 8), np.float64)
    hits_l = [0] * (nins + 1)
    lat_l = [0.0] * (nins + 1)
    cz = [[0.0] * 8 for _ in range(nins + 1)]

    # per-SIMD unit state
    valu_free = [0.0] * nsimd       # VALU pipe busy until
    valu_block = [0.0] * nsimd      # VALU blocked by an MFMA until (co-exec rule)
    mfma_free = [0.0] * nsimd
    simd_waves = [[] for _ in range(nsimd)]
    pending = list(groups)
    pending.reverse()
    resident_wgs = []
    lds_used = 0
    age = 0
    issued = 0
    t = 0.0
    end_time = 0.0
    n_waves = 0
    n_wgs = 0
    mfma_pipe_lat = {}

    def admit(now):
        nonlocal lds_used, age, n_waves, n_wgs
        while pending:
            wgid, traces = pending[-1]
            nw = len(traces)
            multi = nw > 1
            if lds_used + lds_need > lds_cap and resident_wgs:
                return
            if multi and sum(1 for g in resident_wgs if g.multi) >= max_wgs:
                return
            counts = [len(s) for s in simd_waves]
            place = []
            for _ in range(nw):
                s = min(range(nsimd), key=lambda i: (counts[i], i))
                if counts[s] >= occ:
                    break
                counts[s] += 1
                place.append(s)
            if len(place) < nw:
                if resident_wgs:
                    return
                raise ValueError(f"a workgroup of {nw} waves does not fit at occupancy {occ}")
            pending.pop()
            g = _WG()
            g.lds = lds_need
            g.multi = multi
            lds_used += lds_need
            for tr, s in zip(traces, place):
                w = _Wave(tr, s, g, age, now)
                age += 1
                g.waves.append(w)
                simd_waves[s].append(w)
                if w.n == 0:
                    w.done = True
                else:
                    g.live += 1
                _prime(w, ops)
            resident_wgs.append(g)
            n_waves += nw
            n_wgs += 1
            if g.live == 0:
                _retire(g)

    def _retire(g):
        nonlocal lds_used
        resident_wgs.remove(g)
        lds_used -= g.lds
        for w in g.waves:
            simd_waves[w.simd].remove(w)

    admit(0.0)

    # per SIMD, per unit code: clk that unit is free for a wave of that SIMD
    uf = [[0.0] * 8 for _ in range(nsimd)]
    INF = float("inf")

    while True:
        # next issue opportunity: per SIMD the earliest ready wave
        best_t = INF
        for s in range(nsimd):
            ws = simd_waves[s]
            if not ws:
                continue
            ufs = uf[s]
            mn = INF
            for w in ws:
                r = w.ready
                x = ufs[w.nu]
                if x > r:
                    r = x
                if r < mn:
                    mn = r
            if mn == INF:
                continue
            if mn < t:
                mn = t
            # align to this SIMD's slot: clk % nsimd == s
            k = int(mn)
            if k < mn:
                k += 1
            k += (s - k) % nsimd
            if k < best_t:
                best_t = k
        if best_t == INF:
            if pending and not resident_wgs:
                admit(t)
                continue
            break
        t = float(best_t)
        s = int(best_t) % nsimd
        used = 0
        ufs = uf[s]
        for w in tuple(simd_waves[s]):
            if w.ready > t:
                continue
            o = w.nx
            cat = o.cat
            if cat >= 0 and used & (1 << cat):
                continue
            ur = ufs[o.unit]
            if ur > t:
                continue
            # ---- issue w's instruction pc at t -------------------------------------------
            pos = w.pos
            tr = w.tr
            pc = tr.pcs[pos]
            reqs = w.reqs
            if cat >= 0:
                used |= 1 << cat
            issued += 1
            # attribute the gap since the wave's previous issue to the previous instruction
            pp = w.prev_pc
            if pp >= 0:
                cur = w.t_prev
                row = cz[pp]
                # causes in order: issue, hazard, vmcnt, lgkmcnt, barrier, dependency (unrolled)
                r_ = reqs[0]
                if r_ > cur:
                    row[0] += r_ - cur
                    cur = r_
                r_ = reqs[1]
                if r_ > cur:
                    row[1] += r_ - cur
                    cur = r_
                r_ = reqs[2]
                if r_ > cur:
                    row[2] += r_ - cur
                    cur = r_
                r_ = reqs[3]
                if r_ > cur:
                    row[3] += r_ - cur
                    cur = r_
                r_ = reqs[4]
                if r_ > cur:
                    row[4] += r_ - cur
                    cur = r_
                r_ = reqs[5]
                if r_ > cur:
                    row[5] += r_ - cur
                    cur = r_
                if ur > cur:
                    row[C_PIPE] += ur - cur
                    cur = ur
                if t > cur:
                    row[C_IDLE] += t - cur
                lat_l[pp] += t - w.t_prev
            hits_l[pc] += 1
            # functional units
            u = o.unit
            if u == U_VALU:
                valu_free[s] = t + o.occ
                ufs[U_VALU] = max(valu_free[s], valu_block[s])
                ufs[U_MFMA] = max(mfma_free[s], valu_free[s])
            elif u == U_MFMA:
                mfma_free[s] = t + o.occ
                valu_free[s] = t + slot
                if t + o.coexec > valu_block[s]:
                    valu_block[s] = t + o.coexec
                ufs[U_VALU] = max(valu_free[s], valu_block[s])
                ufs[U_MFMA] = max(mfma_free[s], valu_free[s])
            elif u == U_SALU or u == U_SMEM or u == U_BRANCH:
                f_ = t + o.occ
                for x in uf:
                    x[u] = f_
            # results
            if o.defs and not (o.kind or o.smem):
                if o.mfma:
                    c = o.cost
                    key = id(c)
                    rr = mfma_pipe_lat.get(key)
                    if rr is None:
                        rr = mfma_pipe_lat[key] = (mfma_read_ready(c, "valu", m),
                                                   mfma_read_ready(c, "srcc", m))
                    tv, tc = t + rr[0], t + rr[1]
                    rdy, rdc, rsrc = w.rdy, w.rdy_c, w.rdy_src
                    for d in o.defs:
                        rdy[d] = tv
                        rdc[d] = tc
                        rsrc[d] = C_HAZ
                else:
                    tv = t + o.lat
                    rdy, rdc, rsrc = w.rdy, w.rdy_c, w.rdy_src
                    for d in o.defs:
                        rdy[d] = tv
                        if d in rdc:
                            del rdc[d]
                        rsrc[d] = C_DEP
            # memory
            if o.kind or o.smem:
                addrs = tr.addrs.get(pos)
                if o.smem:
                    done = mem.smem(t, addrs, o.size)
                    w.lgq.append((done, True))
                elif u == U_LDS:
                    done, busy = mem.lds(t, s, addrs, o.size, tr.execs[pos])
                    pf = mem.port_free[s >> 1]
                    uf[s & ~1][U_LDS] = pf
                    uf[s | 1][U_LDS] = pf
                    q = w.lgq
                    last = max((c for c, sm in q if not sm), default=0.0)
                    q.append((max(done, last), False))
                else:
                    is_lds = o.flat and addrs is not None and len(addrs) and \
                        int(addrs[0]) >> 32 == 0x10000
                    if is_lds:
                        done, busy = mem.lds(t, s, addrs & np.uint64(0xFFFFFFFF), o.size,
                                             tr.execs[pos])
                    else:
                        done, busy = mem.vmem(t, o.kind, addrs, o.size, tr.wg_linear)
                        f_ = t + min(busy, 64.0)
                        for x in uf:
                            x[U_VMEM] = f_
                    vq = w.vmq
                    if vq and vq[-1] > done:
                        done = vq[-1]
                    vq.append(done)
                    if o.flat:
                        w.lgq.append((done, False))
                    if done > end_time:
                        end_time = done
            # next instruction's requirements
            w.t_prev = t
            w.prev_pc = pc
            pos += 1
            w.pos = pos
            if o.endpgm or pos >= w.n:
                w.done = True
                w.ready = INF
                w.end = t + slot
                end_time = max(end_time, w.end, max(w.vmq, default=0.0))
                g = w.wg
                g.live -= 1
                _barrier_check(g, t)
                if g.live == 0:
                    _retire(g)
                    admit(t + slot)
                continue
            reqs = w.reqs = [0.0] * 8
            reqs[C_ISSUE] = t + slot
            if o.nop:
                reqs[C_HAZ] = t + wstate * o.nop
            if o.wait is not None:
                vmn, lgn = o.wait
                # prune completed
                if w.vmq:
                    w.vmq = [c for c in w.vmq if c > t]
                if w.lgq:
                    w.lgq = [x for x in w.lgq if x[0] > t]
                if w.vmq and vmn < len(w.vmq):
                    reqs[C_VM] = w.vmq[len(w.vmq) - vmn - 1]
                if w.lgq and lgn < len(w.lgq):
                    reqs[C_LGKM] = _wait_release([x[0] for x in w.lgq], lgn)
            # the next instruction's operands, and full counters
            no = ops[tr.pcs[pos]]
            w.nx = no
            w.nu = no.unit
            if no.uses or no.srcc:
                rd = w.rdy
                best = 0.0
                src = C_DEP
                if no.mfma:
                    rc = w.rdy_c
                    for r_ in no.srcc:
                        v = rc.get(r_)
                        if v is None:
                            v = rd.get(r_, 0.0)
                        if v > best:
                            best, src = v, w.rdy_src.get(r_, C_DEP)
                    for r_ in no.srcab:
                        v = rd.get(r_, 0.0)
                        if v > best:
                            best, src = v, w.rdy_src.get(r_, C_DEP)
                else:
                    for r_ in no.uses:
                        v = rd.get(r_, 0.0)
                        if v > best:
                            best, src = v, w.rdy_src.get(r_, C_DEP)
                if best > reqs[src]:
                    reqs[src] = best
            if no.vm and len(w.vmq) >= vm_max:
                w.vmq = [c for c in w.vmq if c > t]
                if len(w.vmq) >= vm_max:
                    reqs[C_VM] = max(reqs[C_VM], w.vmq[len(w.vmq) - vm_max])
            if (no.lgkm or no.smem) and len(w.lgq) >= lg_max:
                w.lgq = [x for x in w.lgq if x[0] > t]
                if len(w.lgq) >= lg_max:
                    reqs[C_LGKM] = max(reqs[C_LGKM], _wait_release([x[0] for x in w.lgq], lg_max - 1))
            w.ready = max(reqs)
            if o.barrier:
                w.at_barrier = True
                w.ready = INF
                g = w.wg
                g.arrived.append(w)
                _barrier_check(g, t)
        if t > 1e13:
            raise RuntimeError("CU model did not converge")

    for i in range(nins + 1):
        hits[i] = hits_l[i]
        lat[i] = lat_l[i]
        causes[i] = cz[i]
    cycles = max(end_time, t)
    return CUResult(cycles, hits[:nins], lat[:nins], causes[:nins], n_waves, n_wgs, issued,
                    mem.stats())


def _barrier_check(g, t):
    """Release the waves of ``g`` waiting at s_barrier when every live wave arrived."""
    if g.arrived and len(g.arrived) >= g.live:
        rel = t + 4.0
        for w in g.arrived:
            w.at_barrier = False
            if rel > w.reqs[C_BAR]:
                w.reqs[C_BAR] = rel
            w.ready = max(w.reqs)
        g.arrived = []


CAUSE_NAMES = _CAUSE_ORDER

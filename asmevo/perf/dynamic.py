"""The dynamic profile: run the launch in the emulator with a trace, replay it on the CU
model (:mod:`asmevo.perf.cu`) and fill a :class:`~asmevo.perf.profile.Profile`
(``source="model-trace"``).  Every figure is an estimate of the model.

How the launch becomes one CU's replay:

* workgroup ``i`` (linear id, x fastest) goes to CU ``i mod cus`` (round robin; with
  304 CUs a CU gets workgroups i, i + 304, ...), and XCD ``i mod 8``;
* by default only CU 0's workgroups are traced and replayed (the rest of the launch runs
  untraced, at the emulator's full speed); with ``full_trace=True`` every workgroup is
  traced and the replayed CU is the one with the most executed wave-instructions (ties:
  the lowest CU).  ``cu_cycles`` is the replayed CU's time, and ``cycles`` (the launch) is
  the same figure, since the launch ends when that CU does (no dispatch overhead is added);
* ``hits`` count every wave of the launch (scaled from the traced waves when only CU 0 was
  traced); ``latency``/``stall``/``idle``/``causes`` are the replayed CU's clk scaled by
  (waves of the launch / waves of that CU), so that they sum over the launch's waves as a
  thread trace of every CU would.
"""

from __future__ import annotations

import numpy as np

from .cu import CAUSE_NAMES, simulate_cu
from .machine import MI300X, Machine
from .memory import CUMemory
from .profile import InstructionRow, KernelProfile, Profile

MODEL = {"name": "asmevo-cu", "version": "1"}


def _pcs(kernel, insts) -> list[int]:
    try:
        from .windows import kernel_pcs
        return kernel_pcs(kernel)
    except Exception:   # noqa: BLE001 - windows.py absent or failing: addresses, else 4 B
        base = insts[0].address if insts and insts[0].address is not None else None
        out, pc = [], 0
        for i in insts:
            out.append(i.address - base if base is not None and i.address is not None else pc)
            pc += 4
        return out


def occupancy_of(kernel, lds_per_wg: int, wg_size: int, machine: Machine = MI300X, rb=None):
    """``(waves per SIMD from registers, occupancy, limiting resource, limits)``: VGPR and
    SGPR limits from :mod:`asmevo.analysis.regbudget` (``rb``: the kernel's RegisterBudget
    when the caller has it), LDS and barriers from the launch's workgroup size and LDS
    bytes."""
    from ..analysis.regbudget import RegisterBudget, occupancy_lds
    rb = rb or RegisterBudget(kernel)
    lim = dict(rb.occupancy_limits or {})
    lim.pop("lds", None)
    wpw = max(1, -(-wg_size // 64))
    maxw = int(machine["waves_per_simd"])
    simds = int(machine["simds_per_cu"])
    limits = {"waves": maxw}
    for k in ("vgpr", "sgpr"):
        if k in lim and lim[k] is not None:
            limits[k] = min(maxw, int(lim[k]))
    regs = min(limits.values())
    if lds_per_wg > 0:
        limits["lds"] = occupancy_lds(lds_per_wg, wg_size)
    if wpw > 1:
        wgs = min(int(machine["max_workgroups_per_cu"]), (maxw * simds) // wpw)
        limits["workgroup"] = max(1, min(maxw, -(-wgs * wpw // simds)))
    order = ("vgpr", "sgpr", "lds", "workgroup", "waves")
    occ = min(limits.values())
    # the 8-wave maximum binds when nothing else allows fewer (docs/perf.md: "waves")
    why = "waves" if occ >= maxw else next(k for k in order if limits.get(k) == occ)
    return regs, occ, why, limits


def _prior_lines(tracer, ops, line_shift: int) -> dict:
    """line -> first workgroup (linear id) whose vector loads touch it."""
    lines, wgs = [], []
    for tr in tracer.waves:
        pcs = tr.pcs
        mine = [a for pos, a in tr.addrs.items() if ops[pcs[pos]].is_vload]
        if mine:
            x = np.concatenate(mine)
            lines.append(x)
            wgs.append(np.full(len(x), tr.wg_linear, np.int64))
    if not lines:
        return {}
    L = (np.concatenate(lines) >> np.uint64(line_shift)).astype(np.int64)
    W = np.concatenate(wgs)
    order = np.lexsort((W, L))
    L, W = L[order], W[order]
    first = np.ones(len(L), bool)
    first[1:] = L[1:] != L[:-1]
    return dict(zip(L[first].tolist(), W[first].tolist()))


def classify(totals: dict, stats: dict, occ: int, occ_limit: str, cycles: float,
             mix: dict, machine: Machine, active_cus: int) -> str:
    """A first bottleneck class (:data:`~asmevo.perf.profile.BOTTLENECKS`) from the cause
    totals, the memory traffic and the instruction mix (clk of each unit)."""
    wait = {k: totals.get(k, 0.0) for k in ("vmcnt", "lgkmcnt", "barrier", "hazard")}
    busy = {k: totals.get(k, 0.0) for k in ("issue", "dependency", "pipe", "idle")}
    memw = wait["vmcnt"]
    if memw >= max(wait["lgkmcnt"], wait["barrier"], wait["hazard"]) and memw > 0.3 * sum(totals.values()):
        hbm = stats.get("bytes", {}).get("hbm", 0)
        cap = min(float(machine["bw.l1_fill_bytes_per_clk_max"]),
                  float(machine["bw.hbm_bytes_per_clk"]) / max(1, active_cus))
        if cycles > 0 and hbm / cycles > 0.6 * cap:
            return "memory-bandwidth"
        if occ <= 2 and occ_limit in ("vgpr", "sgpr", "lds", "workgroup"):
            return "occupancy"
        return "memory-latency"
    if wait["lgkmcnt"] > 0.3 * sum(totals.values()) and wait["lgkmcnt"] >= wait["barrier"]:
        return "lds" if mix.get("lds", 0) >= mix.get("smem", 0) else "memory-latency"
    if wait["barrier"] > 0.3 * sum(totals.values()):
        return "barrier"
    if wait["hazard"] > max(busy.values()) and mix.get("nop", 0) > mix.get("mfma", 0):
        return "hazard-nops"
    comp = {"mfma": mix.get("mfma", 0), "valu": mix.get("valu", 0), "scalar": mix.get("salu", 0),
            "lds": mix.get("lds", 0)}
    best = max(comp, key=lambda k: comp[k])
    if comp[best] == 0:
        return "memory-latency" if memw else "valu"
    return best


def profile_trace(module, kernel, tracer, launch, *, machine: Machine | None = None,
                  lds_per_wg: int | None = None, rb=None) -> KernelProfile:
    """The :class:`KernelProfile` of a traced launch (see the module docstring)."""
    m = machine or MI300X
    insts = list(kernel.instructions())
    from .cu import _decode
    ops = [_decode(i, m) for i in insts]
    block = tuple(launch.block)
    wg_size = int(np.prod(block))
    if rb is None:
        from ..analysis.regbudget import RegisterBudget
        rb = RegisterBudget(kernel)
    if lds_per_wg is None:
        lds_per_wg = lds_bytes_of(module, kernel, rb=rb)
    lds_per_wg = max(lds_per_wg, _lds_touched(tracer, ops))
    regs_occ, occ, why, limits = occupancy_of(kernel, lds_per_wg, wg_size, m, rb=rb)
    # workgroups in dispatch order
    by_wg: dict = {}
    for tr in tracer.waves:
        by_wg.setdefault(tr.wg_linear, []).append(tr)
    wg_ids = sorted(by_wg)
    n_wg = int(np.prod(tuple(launch.grid)))
    total_waves = n_wg * max(1, -(-wg_size // 64))
    cus = int(m["cus"])
    if getattr(tracer, "cu", None) is not None:       # only that CU's workgroups were traced
        cu = tracer.cu
    else:
        per_cu = {}
        for i in wg_ids:
            c = i % cus
            per_cu[c] = per_cu.get(c, 0) + sum(len(t) for t in by_wg[i])
        cu = max(sorted(per_cu), key=lambda c: per_cu[c]) if per_cu else 0
    groups = [(i, by_wg[i]) for i in wg_ids if i % cus == cu]
    active = min(cus, n_wg) or 1
    prior = _prior_lines(tracer, ops, int(m["cache.l1_line"]).bit_length() - 1)
    mem = CUMemory(m, active_cus=active, xcd=cu % int(m["xcds"]), prior=prior)
    res = simulate_cu(insts, groups, occupancy=regs_occ, lds_per_wg=lds_per_wg, machine=m,
                      memory=mem, ops=ops)
    scale = total_waves / max(1, res.waves)
    hits = np.zeros(len(insts), np.int64)
    for tr in tracer.waves:
        if tr.pcs:
            hits += np.bincount(np.asarray(tr.pcs, np.int64), minlength=len(insts))[:len(insts)]
    if len(tracer.waves) < total_waves:     # a partial trace: scale to the launch
        hits = np.rint(hits * (total_waves / max(1, len(tracer.waves)))).astype(np.int64)
    pcs = _pcs(kernel, insts)
    rows = []
    totals = {c: 0.0 for c in CAUSE_NAMES}
    for i, inst in enumerate(insts):
        cz = {c: float(res.causes[i, k] * scale) for k, c in enumerate(CAUSE_NAMES)}
        for c, v in cz.items():
            totals[c] += v
        stall = sum(v for c, v in cz.items() if c not in ("issue", "idle"))
        rows.append(InstructionRow(i, pcs[i], inst.text(), int(hits[i]),
                                   float(res.latency[i] * scale), stall, cz["idle"],
                                   {c: v for c, v in cz.items() if v}))
    mix = {"valu": 0.0, "mfma": 0.0, "salu": 0.0, "lds": 0.0, "smem": 0.0, "nop": 0.0}
    for i, o in enumerate(ops):
        h = float(hits[i])
        if not h:
            continue
        if o.mfma:
            mix["mfma"] += h * o.occ
        elif o.unit == 1:
            mix["valu"] += h * o.occ
        elif o.unit == 5:
            mix["salu"] += h * o.occ
        elif o.unit == 6:
            mix["lds"] += h * 4
        elif o.smem:
            mix["smem"] += h * 4
        elif o.nop:
            mix["nop"] += h * 4 * o.nop
    bott = classify(totals, res.stats, occ, why, res.cycles, mix, m, active)
    kp = KernelProfile(kernel.name, float(res.cycles), float(res.cycles),
                       m.microseconds(res.cycles), int(occ), why, bott, rows, [],
                       {"waves": total_waves, "workgroups": n_wg,
                        "traced_waves": len(tracer.waves),
                        "cu": cu, "cu_waves": res.waves, "cu_workgroups": res.workgroups,
                        "active_cus": active, "occupancy_limits": limits,
                        "lds_per_workgroup": lds_per_wg, "memory": res.stats,
                        "estimate": "model estimate (asmevo-cu), not a measurement"})
    try:
        from .windows import hot_windows
        kp.windows = hot_windows(kernel, rows, kernel_bottleneck=bott)
    except ImportError:
        pass
    return kp


def _lds_touched(tracer, ops) -> int:
    """Bytes of LDS the traced waves address (highest byte + 1): a workgroup holds at least
    that much, whatever the descriptor says (dynamic LDS of Triton kernels)."""
    hi = 0
    for tr in tracer.waves:
        pcs = tr.pcs
        for pos, a in tr.addrs.items():
            o = ops[pcs[pos]]
            if o.unit == 6 and len(a):      # U_LDS
                top = int(a.max()) + max(1, o.size)
                if top > hi:
                    hi = top
    return hi


_RB: dict = {}


def register_budget(kernel):
    """The kernel's :class:`~asmevo.analysis.regbudget.RegisterBudget`, cached per kernel
    content (instructions by value, descriptor bytes, metadata)."""
    from ..analysis.regbudget import RegisterBudget
    try:
        d = getattr(kernel, "descriptor", None)
        key = (kernel.name, tuple(i.key() for i in kernel.instructions()),
               d.to_bytes() if d is not None and hasattr(d, "to_bytes") else None,
               repr(getattr(kernel, "metadata", None)))
        hash(key)
    except Exception:   # noqa: BLE001 - unhashable parts: compute afresh
        return RegisterBudget(kernel)
    rb = _RB.get(key)
    if rb is None:
        if len(_RB) > 64:
            _RB.clear()
        rb = _RB[key] = RegisterBudget(kernel)
    return rb


def lds_bytes_of(module, kernel, dynamic: int | None = None, rb=None) -> int:
    """LDS bytes a workgroup holds: the descriptor's group segment (at least what the DS
    immediate offsets need) plus ``dynamic`` bytes when the launch states them."""
    from ..analysis.regbudget import RegisterBudget
    rb = rb or RegisterBudget(kernel)
    fixed = int(rb.abi.lds_bytes or 0) if rb.abi is not None else 0
    if rb.uses_lds:
        fixed = max(fixed, int(rb.lds_min_bytes or 0))
    return fixed + int(dynamic or 0)


def estimate_dynamic(module, kernel, launch, *, machine: Machine | None = None,
                     dynamic_lds: int | None = None, full_trace: bool = False) -> Profile:
    """Run ``launch`` traced and return the model's :class:`Profile`.

    ``full_trace``: trace every workgroup, replay the CU with the most executed
    instructions, with the L2-sharing map of the whole launch and exact ``hits``.  False
    (the default): trace only the workgroups of CU 0 (workgroups 0, cus, 2 cus...; the
    others run untraced, at the emulator's full speed, lockstep included) and replay CU 0;
    ``hits`` are then scaled from the traced waves, and the L2-sharing map holds CU 0's
    own loads.  For the first workgroup of a launch the two give the same cycles.
    """
    from ..emu.launch import run_kernel
    from ..emu.trace import Tracer
    m = machine or MI300X
    cus = int(m["cus"])
    if full_trace:
        tr = Tracer()
    else:
        tr = Tracer(select=lambda i: i % cus == 0)
        tr.cu = 0
    run_kernel(module, kernel.name, launch, trace=tr)
    rb = register_budget(kernel)
    kp = profile_trace(module, kernel, tr, launch, machine=m,
                       lds_per_wg=lds_bytes_of(module, kernel, dynamic_lds, rb=rb), rb=rb)
    return Profile(dict(MODEL), "model-trace", True, m.name, {kernel.name: kp})

"""Run the waves of a lockstep set as one group.

The register files of the W waves become views into shared arrays (``V``: (512, W, 64),
``A``: (256, W, 64), ``S``: (W, 128)), their LDS segments of one buffer and their scratch
one (W, 64, n) array, so every per-wave closure keeps working.  The waves at the lowest pc
run together (the *running* waves; the others wait at their pc or at a barrier):

* ``vec`` instructions (lane-independent VALU / packed / mix instructions that only write
  vector registers, MFMA) and ``mem`` ones (global loads/stores/atomics, buffer
  loads/stores/atomics) run ONCE on a :class:`BatchView` whose rows are (W*64,) lanes
  (EXEC of waves that are not running is off; MFMA, which ignores EXEC, writes the running
  waves' rows ``srun`` only), provided the SGPRs they read hold the same value in every
  running wave (buffer instructions without a data format read each wave's own V# and
  SGPR offset from ``sfile``, so they need not); otherwise once per run of consecutive
  waves with equal values (e.g. per workgroup).  Atomics handle their lanes in order, wave
  after wave, as the waves one after another;
* ``uni`` instructions (SALU, SOPC, branches, nops, scalar loads) run once on the first
  running wave when every SGPR (and SCC) they read is equal in all of them; the SGPRs/SCC
  they write are then copied to the others (once for a run of scalar ALU instructions that
  follow each other, :func:`_followers`).  SALU bitwise operations and the saveexec
  family on values that differ run as numpy over the waves;
* VOPC, LDS (read/write/read2/write2/swizzle/permute), scratch at one address and
  readlane/writelane have group forms (:mod:`asmevo.emu.lockstep_forms`);
* everything else runs wave by wave.  When the running waves' next pcs differ (a branch on
  a per-wave condition, EXEC = 0 in some waves) the group splits; the waves at the lowest
  pc run next, and waves merge again when they reach a pc where others wait.  A barrier
  completes when every wave that has not ended has reached one.  Except at a forward
  ``s_cbranch_execz`` over instructions that change nothing in a wave without lanes (an
  LDS-tree level of a reduction): the waves whose EXEC is 0 run them with the others
  instead of jumping (:func:`_ride`; their instruction counts leave the region out).

Straight runs of the fast forms (:meth:`_Group._run_fast`) -- self-loops included -- run as
one generated function per block (:mod:`asmevo.emu.lockstep_block`) when the SGPRs they read
are equal in the running waves.

Instruction counts and lane counts (popcount(EXEC) at each issue) are those of running the
waves one by one; so are all results for programs whose waves only communicate across
barriers: the group forms compute exactly the per-wave closures' values, and stores of one
instruction land in wave order.
"""

from __future__ import annotations

import numpy as np

from ..ir.operands import Special
from .executor import LANE_COUNT as lane_count
from .lockstep_forms import (_DS_KINDS, _br_batch, _cmp_batch, _ds_batch,  # noqa: F401
                             _lds_words, _sbit_batch, lds_layout, _scratch_batch, _scratch_words,
                             _snp_batch, classify, inert_without_lanes, lane_mask_reads,
                             sgpr_writes)
from .lockstep_block import blocks as _blocks, visit as _visit
from .memory import EmuError, MemoryFault
from .state import EXEC, exec_flags, lane_mask


BARRIER, ENDPGM = -1, -2
_ANY0 = np.logical_or.reduce
_MIN = np.minimum.reduce
_MAXR = np.maximum.reduce
_CAT = np.concatenate
_OFF = lane_mask(0)
_CHECK_EXEC = False     # (tests: the cached masks against the EXEC words)
_DS_SET = frozenset(_DS_KINDS)


class BatchView:
    """The W waves seen as one wave of W*64 lanes (for ``vec`` closures)."""

    __slots__ = ("v", "a", "s", "exec_mask", "exec_all", "exec_any", "mode", "scc", "sfile",
                 "srun")   # SGPR rows of the waves in view, those of the running ones


def _nonuniform(S, act, ia):
    """(frozenset of SGPR slots whose value differs between the waves ``act`` (rows ``ia``
    of ``S``, or every row when ``ia`` is None), SCC uniform?)."""
    Sa = S if ia is None else S[ia]
    d = _ANY0(Sa != Sa[0], axis=0).nonzero()[0]
    s0 = act[0].scc
    return frozenset(d.tolist()), all(wv.scc == s0 for wv in act)


def _bind(waves):
    """Make the waves' register files views of shared arrays; returns (V, A, S)."""
    W = len(waves)
    V, A, S = (getattr(waves[0], f).base for f in ("v", "a", "s"))
    if V is not None and A is not None and S is not None and V.shape[1:] == (W, 64) and \
            A.shape[1:] == (W, 64) and S.shape[0] == W and \
            all(wv.v.base is V and wv.a.base is A and wv.s.base is S for wv in waves) and \
            _at_rows(waves, V, A, S):
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


def _at_rows(waves, V, A, S):
    """Is each wave's register file its own column of the shared files (as launch makes)?"""
    pv, pa, ps = (x.__array_interface__["data"][0] for x in (V, A, S))
    sv, sa, ss = V.strides[1], A.strides[1], S.strides[0]
    for w, wv in enumerate(waves):
        if wv.v.__array_interface__["data"][0] != pv + w * sv or \
                wv.a.__array_interface__["data"][0] != pa + w * sa or \
                wv.s.__array_interface__["data"][0] != ps + w * ss or \
                wv.v.strides != V.strides[::2] or wv.s.shape != S.shape[1:]:
            return False
    return True


class _Exec:
    """EXEC of the waves running together, as one (W*64,) view: ``all`` (every lane of
    every wave active), ``mask`` (bool (W*64,), lanes of waves not running are off; None
    when ``all``), ``sel`` (indices of the active lanes, computed on demand)."""

    __slots__ = ("all", "any", "mask", "_sel", "_ent")

    def __init__(self, S, act, ia, rep=None, waves=None):
        """From the EXEC words in ``S`` (rows ``ia`` run; None: all); ``rep``: a running wave
        whose EXEC every running wave has (its cached flags stand for all of them).
        ``waves``: all the waves of the set, in row order -- the mask is then made of the
        waves' cached EXEC masks (:meth:`Wave.sync_exec` keeps them equal to the words)."""
        if ia is None and (rep.exec_all if rep is not None else
                           all(wv.exec_all for wv in act)):
            self.all, self.any, self.mask = True, True, None
        elif waves is not None:
            if ia is None:
                ent = _joined([wv.exec_mask for wv in waves])
            else:
                run = set(map(id, act))
                ent = _joined([wv.exec_mask if id(wv) in run else _OFF for wv in waves])
            m = ent[1]
            self._sel, self._ent = ent[2], ent
            self.all = False
            self.any = rep.exec_any if rep is not None else any(wv.exec_any for wv in act)
            self.mask = m
            if _CHECK_EXEC:
                w = np.unpackbits(np.ascontiguousarray(S[:, EXEC:EXEC + 2]).view(np.uint8),
                                  axis=1, bitorder="little").view(bool)
                if ia is not None:
                    keep = w[ia]
                    w[:] = False
                    w[ia] = keep
                assert np.array_equal(w.reshape(-1), m), "cached EXEC out of sync"
            return
        else:
            W = S.shape[0]
            m = np.unpackbits(np.ascontiguousarray(S[:, EXEC:EXEC + 2]).view(np.uint8),
                              axis=1, bitorder="little").view(bool)
            if ia is not None:     # lanes of the waves not running are off
                keep = m[ia]
                m[:] = False
                m[ia] = keep
            self.all = False
            self.any = rep.exec_any if rep is not None else any(wv.exec_any for wv in act)
            self.mask = m.reshape(W * 64)
        self._sel = self._ent = None

    @property
    def sel(self):
        """The indices of the active lanes (read-only)."""
        if self._sel is None:
            self._sel = np.flatnonzero(self.mask)
            self._sel.setflags(write=False)
            if self._ent is not None:
                self._ent[2] = self._sel
        return self._sel


#: the waves' cached EXEC masks (each wave's from :func:`lane_mask`, often the same few) ->
#: (their concatenation, its active lanes or None): both read-only, each kept with the
#: masks it was made of (their ids are the key, so they stay alive while cached)
_JOINED: dict = {}


def _joined(masks):
    """The entry ``[masks, their (W*64,) concatenation in row order, its active lanes or
    None until :attr:`_Exec.sel` computes them]`` of the waves' ``masks``."""
    key = tuple(map(id, masks))
    hit = _JOINED.get(key)
    if hit is not None:
        return hit
    m = _CAT(masks)
    m.setflags(write=False)
    if len(_JOINED) >= 1024:
        _JOINED.clear()
    hit = _JOINED[key] = [masks, m, None]
    return hit


def _sync_exec(act, S, ia):
    """Each wave's cached EXEC (:meth:`Wave.sync_exec`) after its EXEC words changed."""
    rows = S[:, EXEC:EXEC + 2] if ia is None else S[ia, EXEC:EXEC + 2]
    for wv, e in zip(act, np.ascontiguousarray(rows).view(np.uint64)[:, 0].tolist()):
        wv.exec_mask, wv.exec_all, wv.exec_any, wv.exec_n = exec_flags(e)


def run_lockstep(prog, waves, limit: int, fallback, shared=None) -> None:
    """Run the ``waves`` of a lockstep set (all at the same pc) to ``s_endpgm``.

    The waves at the lowest pc run together (:meth:`_Group.run_together`) until they diverge, reach
    a pc where other waves wait, a barrier or the end; waves at a barrier wait until every
    wave that has not ended reaches one.  ``fallback(prog, waves, limit)`` runs waves one at
    a time until a barrier (returns the waves at the barrier); it is used only for waves in
    different floating-point modes or in s_set_gpr_idx mode.  ``shared``: ``(V, A, S,
    lds)`` when the caller made the waves' register files columns of ``V``/``A``/``S`` and
    knows their LDS layout (:func:`lds_layout`); None: found from the waves.  Raises EmuError
    like :meth:`Program.run_wave`."""
    W = len(waves)
    if shared is None:
        V, A, S = _bind(waves)
        lds = None
    else:
        V, A, S, lds = shared
    g = _Group(prog, waves, V, A, S, limit, lds)
    pos = g.pos
    waiting = []
    base = {id(wv): wv.count for wv in waves}     # counts at the last barrier (the limit
    while True:                                   # applies per barrier round, as run_wave)
        live = [wv for wv in waves if not wv.done and wv.pc != _WAIT]
        if not live:
            if not waiting:
                return
            for wv, p in waiting:       # the barrier completes
                wv.pc = p
                base[id(wv)] = wv.count
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
            if wv.count - base[id(wv)] > limit:
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

    def __init__(self, prog, waves, V, A, S, limit, lds=None):
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
        self.lds = _lds_words(waves) if lds is None else lds
        self.scratch = _scratch_words(waves)
        self.per_lane = waves[0].scratch.per_lane if self.scratch is not None else 0

    def run_together(self, act, ia, pc, others, alone):
        """Run the waves ``act`` (rows ``ia`` of the register files, None: all) from ``pc``
        while they stay at one pc; returns [(wave, pc after the barrier)] of those that
        stop at a barrier that does not complete (``alone``: no other wave is live, so a
        barrier completes at once); the others' ``pc`` / ``done`` are set."""
        prog = self.prog
        modes, writes = prog.lockstep_modes()
        fuse = _followers(prog)
        lane_ok = _lane_sgprs(prog)
        code = prog.code
        W, V, S, view = self.W, self.V, self.S, self.view
        Vf, Af = view.v, view.a
        lds, lds_seg, lds_lim = self.lds
        scratch, per_lane = self.scratch, self.per_lane
        limit = self.limit
        pos = self.pos
        self._act = act
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
        counted = 0         # instructions added to wv.count so far (before an s_memtime)

        view.sfile = S
        view.srun = slice(None) if full else ia

        waves = self.waves

        def exec_state(rep=None):
            ex = _Exec(S, act, ia, rep, waves)
            view.exec_all, view.exec_any, view.exec_mask = ex.all, ex.any, ex.mask
            return ex
        ex = exec_state()
        nu, scc_u = _nonuniform(S, act, ia)
        s0_row = S[i0]      # the first running wave's SGPRs (what vec closures read)
        lane_s = _LaneSGPRs(S)
        fast = _fast_forms(prog)
        skips = _skips(prog)
        try:
            while True:
                if scc_u and fast[pc] is not None and n < limit:
                    pc, n, mark, nu, ex, scc_u = self._run_fast(pc, n, mark, nu, act, ia, others,
                                                                ex, exec_state, alone)
                    if pc < 0:      # a branch split the group (each wave's pc is set)
                        return []
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
                    if kind in _DS_SET:
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
                                nu = nu - {other} if _MIN(rows) == _MAXR(rows) else nu | {other}
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
                            view.s = s0_row
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
                                _sync_exec(act, S, ia)
                                ex = exec_state()
                            pc += 1
                            continue
                        runs = _runs(S, ia, W, sorted(m[1] & nu))
                        if len(runs) < len(act):    # once per run of waves with equal SGPRs
                            dst, cmpx = m[2], m[3]
                            if cmpx or dst == EXEC:
                                self._count(act, n - mark)
                                mark = n
                            self._cmp_parts(m, runs, ex, w0.mode)
                            cols = ([dst, dst + 1] if dst is not None else []) + \
                                ([EXEC, EXEC + 1] if cmpx else [])
                            if cols:
                                nu = _renu(S, ia, nu, cols)
                            if cmpx or dst == EXEC:
                                _sync_exec(act, S, ia)
                                ex = exec_state()
                            pc += 1
                            continue
                        m = None
                if m is not None:
                    kind, ridx, rscc, wsl, wset, wscc, wexec, alt = m
                    same = not nu or ridx.isdisjoint(nu)    # its SGPRs equal in all waves
                    if alt is not None and alt[0] == "br" and \
                            (not same or (rscc and not scc_u)):
                        npcs = _br_batch(alt, S, act, ia)
                        p0 = npcs[0]
                        if all(p == p0 for p in npcs):
                            pc = p0
                            continue
                        if skips[pc] is not None:   # the waves with EXEC = 0 come along
                            pc = _ride(act, npcs, alt, skips[pc])
                            continue
                        for wv, p in zip(act, npcs):    # the group splits
                            wv.pc = p
                        return []
                    if alt is not None and alt[0] == "snp" and \
                            (not same or (rscc and not scc_u)):
                        _snp_batch(alt, S, act, ia)
                        if wset:
                            nu = _renu(S, ia, nu, sorted(wset))
                        if wscc:
                            s0 = w0.scc
                            scc_u = all(wv.scc == s0 for wv in rest)
                        pc += 1
                        continue
                    if alt is not None and not same:
                        if wexec:
                            self._count(act, n - mark)
                            mark = n
                        _sbit_batch(alt, S, act, ia)
                        nu = _renu(S, ia, nu, sorted(wset))
                        if wscc:
                            s0 = w0.scc
                            scc_u = all(wv.scc == s0 for wv in rest)
                        if wexec:
                            _sync_exec(act, S, ia)
                            ex = exec_state()
                        pc += 1
                        continue
                    if not same and lane_ok[pc] and (scc_u or not rscc):
                        # SGPR operands that differ between the waves: each lane reads its
                        # own wave's (a lane-independent instruction: the same values)
                        view.s = lane_s
                        view.mode = w0.mode
                        lane_count[0] = W * 64
                        try:
                            pc = code[pc](view)
                            if wset:        # carry-out masks, one per wave
                                nu = _renu(S, ia, nu, sorted(wset))
                            continue
                        except MemoryFault:
                            if kind != "mem":
                                raise
                            # nothing was written: by runs / wave by wave for the exact error
                        finally:
                            lane_count[0] = 64
                    if (kind == "vec" or kind == "mem") and not same and (scc_u or not rscc):
                        runs = _runs(S, ia, W, sorted(ridx & nu))
                        if len(runs) < len(act):
                            pc = self._run_parts(pc, runs, kind, ex, w0.mode)
                            if wset:
                                nu = _renu(S, ia, nu, sorted(wset))
                            continue
                    if same and (scc_u or not rscc):
                        if kind == "vec" or kind == "mem":
                            view.s = s0_row
                            view.mode = w0.mode
                            lane_count[0] = W * 64
                            try:
                                pc = code[pc](view)
                                if wset:        # carry-out masks, one per wave
                                    nu = _renu(S, ia, nu, sorted(wset))
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
                                if npc == pc + 1 and not wexec and fuse[npc] is not None:
                                    # the scalar instructions that follow, on the first wave
                                    # too; what they all wrote is copied once
                                    wall, wscc_all = wset, wscc
                                    while npc == pc + 1:
                                        f = fuse[npc]
                                        if f is None or (others and npc in others) or \
                                                n >= limit:
                                            break
                                        if nu and not f[0].isdisjoint(nu - wall) or \
                                                f[1] and not (scc_u or wscc_all):
                                            break
                                        pc = npc
                                        n += 1
                                        npc = code[pc](w0)
                                        wall = wall | f[2]
                                        wscc_all = wscc_all or f[3]
                                    if wall is not wset:
                                        wset, wscc = wall, wscc_all
                                        wsl = self._cols(wall)
                                if wsl is not None:
                                    if full:
                                        S[1:, wsl] = S[0, wsl]
                                    elif isinstance(wsl, slice):
                                        S[ia1, wsl] = S[i0, wsl]
                                    else:
                                        S[np.ix_(ia1, wsl)] = S[i0, wsl]
                                    if nu:
                                        nu = nu - wset
                                if wexec:       # (and SCC, in one pass over the waves)
                                    e0 = (w0.exec_mask, w0.exec_all, w0.exec_any, w0.exec_n)
                                    if wscc:
                                        s0 = w0.scc
                                        for wv in rest:
                                            wv.scc = s0
                                            wv.exec_mask, wv.exec_all, wv.exec_any, \
                                                wv.exec_n = e0
                                        scc_u = True
                                    else:
                                        for wv in rest:
                                            wv.exec_mask, wv.exec_all, wv.exec_any, \
                                                wv.exec_n = e0
                                    ex = exec_state(w0)     # every running wave has w0's EXEC
                                elif wscc:
                                    s0 = w0.scc
                                    for wv in rest:
                                        wv.scc = s0
                                    scc_u = True
                                if npc == ENDPGM:
                                    for wv in act:
                                        wv.done = True
                                    return []
                                pc = npc
                                continue
                    elif kind == "uni" and len(act) > 2:
                        # operands differ: once per set of waves with equal operands
                        groups = _groups(S, act, ia, sorted(ridx & nu), rscc)
                        if len(groups) < len(act):
                            if wexec:
                                self._count(act, n - mark)
                                mark = n
                            npcs = self._run_groups(pc, groups, m)
                            if wset:
                                nu = _renu(S, ia, nu, sorted(wset))
                            if wscc:
                                s0 = w0.scc
                                scc_u = all(wv.scc == s0 for wv in rest)
                            if wexec:
                                ex = exec_state()
                            p0 = npcs[0]
                            if all(p == p0 for p in npcs) and p0 >= 0:
                                pc = p0
                                continue
                            for wv, p in zip(act, npcs):
                                if p >= 0:
                                    wv.pc = p
                                else:
                                    wv.done = True
                            return []
                # wave by wave
                self._count(act, n - mark)
                mark = n
                cur = pc
                npcs = []
                if prog.clock is not None and cur in prog.clock:
                    # (s_memtime: each wave's count of the instructions before this one)
                    for wv in act:
                        wv.count += n - 1 - counted
                    counted = n - 1
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
                wv.count += n - counted

    def _run_fast(self, pc, n, mark, nu, act, ia, others, ex, exec_state, alone):
        """Run the instructions from ``pc`` that have a fast form (:func:`_fast_forms`) while
        the SGPRs they read are equal in the running waves ``act`` (SCC is: the caller checks)
        and no other wave waits at their pc: vector and global memory instructions once on
        the group's view, LDS ones and VOPC batched, scalar ones once on the first running
        wave (or batched over the waves when their operands differ).  What the scalar ones
        write (SGPRs, SCC) is copied to the other running waves once, at the end (EXEC and
        what is written with it at once).  Returns (pc, instructions run so far ``n``, those
        counted into the lane counts ``mark``, SGPR slots that differ ``nu``, the running
        waves' :class:`_Exec`, SCC equal in them); pc -1 when a branch split the group (the
        waves' pcs are set); stops before an
        instruction that needs the general path (or that faults: the general path runs it
        again, for the exact error)."""
        prog = self.prog
        code = prog.code
        fast = _fast_forms(prog)
        view = self.view
        S = self.S
        w0 = act[0]
        rest = act[1:]
        s0_row = S[self.pos[id(w0)]]
        view.s = s0_row
        view.mode = w0.mode
        limit = self.limit
        W = self.W
        rows = slice(None) if ia is None else ia
        rrows = slice(1, None) if ia is None else ia[1:]
        Vf, Af = view.v, view.a
        lds, lds_seg, lds_lim = self.lds
        scratch, per_lane = self.scratch, self.per_lane
        V = self.V
        dirty = frozenset()
        dscc = False
        scc_u = True            # (the caller's condition for coming here)
        lane_count[0] = W * 64
        lmr = _lm_reads(prog)
        skips = _skips(prog)
        blks = _blocks(prog, fast, _F_VEC, _F_UNI, lmr)
        try:
            while n < limit:
                b = blks[pc]
                if b is not None and b.__class__ is int:
                    b = _visit(prog, fast, pc)
                if b is not None and n + b.length <= limit and \
                        (not nu or b.reads.isdisjoint(nu)) and \
                        (not others or b.pcs.isdisjoint(others)):
                    if dirty and b.lm and not b.lm.isdisjoint(dirty):
                        # (as for one vector instruction below: the block's lane-mask reads
                        # see the first wave's scalar writes in every wave)
                        self._copy_first(act, ia, b.lm & dirty, False)
                        dirty = dirty - b.lm
                    # a compiled block (asmevo.emu.lockstep_block): the same calls as below
                    npc, k, fault = (b.full if view.exec_all and b.full is not None else
                                     b.fn)(view, w0, limit - n)
                    n += k
                    if k:
                        wk = b.wrote[min(k, b.length)]
                        if wk:
                            dirty = dirty | wk
                            if nu:
                                nu = nu - wk
                        if b.scc[min(k, b.length)]:
                            dscc = True
                    pc = npc
                    if fault:
                        break       # (nothing written) the general path runs it again
                    continue
                f = fast[pc]
                if f is None or (others and pc in others):
                    break
                form, ridx, wset, wscc, m = f
                if nu and not ridx.isdisjoint(nu):
                    # operands that differ between the waves: a scalar instruction with a
                    # batched form runs it (_br_batch, _snp_batch, _sbit_batch), as the
                    # general path does; anything else is left to the general path
                    alt = m[7] if form == _F_UNI or form == _F_UNIX else None
                    if alt is None:
                        break
                    if dirty or dscc:   # (they read every running wave's SGPRs / SCC)
                        self._copy_first(act, ia, dirty, dscc)
                        dirty, dscc = frozenset(), False
                    if alt[0] == "br":
                        npcs = _br_batch(alt, S, act, ia)
                        npc = npcs[0]
                        if any(p != npc for p in npcs):
                            if skips[pc] is not None:   # the waves with EXEC = 0 come along
                                npc = _ride(act, npcs, alt, skips[pc])
                            else:                       # the group splits
                                for wv, p in zip(act, npcs):
                                    wv.pc = p
                                n += 1
                                pc = -1
                                break
                    else:
                        wexec = m[6]
                        if wexec:
                            self._count(act, n + 1 - mark)
                            mark = n + 1
                        (_snp_batch if alt[0] == "snp" else _sbit_batch)(alt, S, act, ia)
                        if wset:
                            nu = _renu(S, ia, nu, wset)
                        if wexec:
                            _sync_exec(act, S, ia)
                            ex = exec_state()
                        npc = pc + 1
                        if wscc:
                            s0 = w0.scc
                            if any(wv.scc != s0 for wv in rest):
                                n += 1          # SCC differs now: the general path goes on
                                pc = npc
                                scc_u = False
                                break
                    n += 1
                    pc = npc
                    continue
                if form == _F_VEC:
                    if dirty:
                        lr = lmr[pc]
                        if lr and not lr.isdisjoint(dirty):
                            # a lane mask read in every wave's own row: the first wave's
                            # scalar write of it goes to the others first
                            self._copy_first(act, ia, lr & dirty, False)
                            dirty = dirty - lr
                    try:
                        npc = code[pc](view)
                    except MemoryFault:
                        break           # nothing was written
                elif form == _F_UNI:
                    try:
                        npc = code[pc](w0)
                    except MemoryFault:
                        break           # (a scalar load) nothing was written
                    if wset:
                        dirty = dirty | wset
                        if nu:
                            nu = nu - wset
                    if wscc:
                        dscc = True
                elif form == _F_DS:
                    if lds is None or not _ds_batch(m, Vf, Af, lds, lds_seg, lds_lim, ex, W):
                        break
                    npc = pc + 1
                elif form == _F_BAR:
                    if not alone:
                        break           # (the general path: the waves wait there)
                    npc = pc + 1        # every live wave is here: the barrier completes
                elif form == _F_SCR:
                    if scratch is None or not _scratch_batch(m, Vf, Af, scratch, per_lane,
                                                             s0_row, ex, W):
                        break
                    npc = pc + 1
                elif form == _F_LANE:       # v_readlane / v_writelane at one lane
                    _, ls, reg, other = m
                    lane = (int(s0_row[ls]) if ls >= 0 else -1 - ls) & 63
                    if m[0] == "rl":
                        if ia is None:
                            S[:, other] = V[reg, :, lane]
                            col = S[:, other]
                        else:
                            S[ia, other] = V[reg, ia, lane]
                            col = S[ia, other]
                        nu = nu - {other} if _MIN(col) == _MAXR(col) else nu | {other}
                        dirty = dirty - {other}     # (written in every running wave)
                    else:
                        if other >= 0:
                            if other in dirty:
                                self._copy_first(act, ia, frozenset((other,)), False)
                            val = S[:, other] if ia is None else S[ia, other]
                        else:
                            val = (-1 - other) & 0xFFFFFFFF
                        if ia is None:
                            V[reg, :, lane] = val
                        else:
                            V[reg, ia, lane] = val
                    npc = pc + 1
                elif form == _F_CMP:
                    dst, cmpx = m[2], m[3]
                    wx = cmpx or dst == EXEC
                    if wx:      # the lanes of this one at the EXEC it issues with
                        self._count(act, n + 1 - mark)
                        mark = n + 1
                    res = _cmp_batch(m[4], view, ex, W)
                    if dst is not None:
                        S[rows, dst:dst + 2] = res[rows]
                        nu = _renu(S, ia, nu, (dst, dst + 1))
                        dirty = dirty - wset
                    if wx:
                        if cmpx:
                            S[rows, EXEC:EXEC + 2] = res[rows]
                            nu = _renu(S, ia, nu, (EXEC, EXEC + 1))
                            dirty = dirty - _EXEC_SET
                        _sync_exec(act, S, ia)
                        ex = exec_state()
                    npc = pc + 1
                else:           # _F_UNIX: a scalar instruction that writes EXEC
                    self._count(act, n + 1 - mark)
                    mark = n + 1
                    npc = code[pc](w0)
                    if rest:
                        wsl = m[3]
                        if ia is None or isinstance(wsl, slice):
                            S[rrows, wsl] = s0_row[wsl]
                        else:
                            S[np.ix_(ia[1:], wsl)] = s0_row[wsl]
                        e0 = (w0.exec_mask, w0.exec_all, w0.exec_any, w0.exec_n)
                        for wv in rest:
                            wv.exec_mask, wv.exec_all, wv.exec_any, wv.exec_n = e0
                    dirty = dirty - wset
                    if nu:
                        nu = nu - wset
                    if wscc:
                        dscc = True
                    ex = exec_state(w0)     # every running wave has w0's EXEC
                n += 1
                pc = npc
        finally:
            lane_count[0] = 64
            if dirty or dscc:
                self._copy_first(act, ia, dirty, dscc)
        return pc, n, mark, nu, ex, scc_u

    def _copy_first(self, act, ia, cols, scc):
        """Copy SGPRs ``cols`` (and SCC when ``scc``) of the first running wave to the other
        running waves ``act`` (rows ``ia`` of the SGPR file; None: all)."""
        rest = act[1:]
        if not rest:
            return
        S = self.S
        if cols:
            c = self._cols(cols)
            r0 = S[self.pos[id(act[0])]]
            if ia is None:
                S[1:, c] = r0[c]
            elif isinstance(c, slice):
                S[ia[1:], c] = r0[c]
            else:
                S[np.ix_(ia[1:], c)] = r0[c]
        if scc:
            s0 = act[0].scc
            for wv in rest:
                wv.scc = s0

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
            sub.sfile = S[k0:k1]
            sub.srun = slice(None)
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

    def _cmp_parts(self, m, runs, ex, mode):
        """A VOPC (form ``m``) once per run ``(k0, k1)`` of consecutive running waves."""
        _, _, dst, cmpx, batch = m
        V, A, S = self.V, self.A, self.S
        sub = BatchView()
        sub.mode = mode
        part = _Exec.__new__(_Exec)
        for k0, k1 in runs:
            nl = (k1 - k0) * 64
            sub.v = V[:, k0:k1].reshape(V.shape[0], nl)
            sub.a = A[:, k0:k1].reshape(A.shape[0], nl)
            sub.s = S[k0]
            part.mask = None if ex.all else ex.mask[k0 * 64:k1 * 64]
            sub.exec_mask = part.mask
            sub.exec_all = ex.all
            sub.exec_any = True if ex.all else bool(part.mask.any())
            lane_count[0] = nl
            try:
                res = _cmp_batch(batch, sub, part, k1 - k0)
            finally:
                lane_count[0] = 64
            if dst is not None:
                S[k0:k1, dst:dst + 2] = res
            if cmpx:
                S[k0:k1, EXEC:EXEC + 2] = res

    def _run_groups(self, pc, groups, m):
        """Run a ``uni`` instruction (form ``m``) on the first wave of each group (waves
        whose operands are equal) and copy what it wrote to the others; the next pc of
        every running wave, in ``act`` order."""
        prog, S = self.prog, self.S
        code = prog.code
        _, _, _, wsl, _, wscc, wexec, _ = m
        nxt = {}
        for members in groups:
            rep, r0 = members[0]
            try:
                p = code[pc](rep)
            except MemoryFault as e:      # the lowest-numbered faulting wave, as wave by wave
                inst = prog.insts[pc]
                raise EmuError(f"kernel {prog.kernel.name}, {prog.where(pc)}, "
                               f"'{inst.text()}': lane {e.lane}: {e}") from None
            nxt[id(rep)] = p
            if len(members) == 1:
                continue
            rows = np.array([r for _, r in members[1:]], np.intp)
            if wsl is not None:
                if isinstance(wsl, slice):
                    S[rows, wsl] = S[r0, wsl]
                else:
                    S[np.ix_(rows, wsl)] = S[r0, wsl]
            for wv, _ in members[1:]:
                if wscc:
                    wv.scc = rep.scc
                if wexec:
                    wv.exec_mask, wv.exec_all, wv.exec_any, wv.exec_n = \
                        rep.exec_mask, rep.exec_all, rep.exec_any, rep.exec_n
                if p < 0:
                    wv.done = True
                nxt[id(wv)] = p
        return [nxt[id(wv)] for wv in self._act]

    _COLS: dict = {}

    @classmethod
    def _cols(cls, wset):
        """The SGPR columns ``wset`` as an index (a slice when contiguous, None if empty)."""
        c = cls._COLS.get(wset)
        if c is None:
            w = sorted(wset)
            if not w:
                return None
            c = slice(w[0], w[-1] + 1) if w == list(range(w[0], w[-1] + 1)) else \
                np.array(w, np.intp)
            if len(cls._COLS) < 4096:
                cls._COLS[wset] = c
        return c

    @staticmethod
    def _count(act, k):
        """Add ``k`` instructions, each at the waves' current EXEC, to their lane counts."""
        if k:
            for wv in act:
                wv.lanes += k * wv.exec_n


class _LaneSGPRs:
    """The SGPR file of a lockstep group as a VALU closure reads it (``s[i:i + 1]``,
    ``s[i:i + 2].view(uint64)``), but with one value per lane: each lane its own wave's
    (uint32 (W*64,), or the pair interleaved, uint32 (W*64*2,))."""

    __slots__ = ("S",)

    def __init__(self, S):
        self.S = S

    def __getitem__(self, k):
        return np.repeat(self.S[:, k], 64, axis=0).reshape(-1)


#: special operands whose value is not an SGPR slot's as such (read otherwise by closures)
_NOT_SLOTS = ("scc", "src_scc", "execz", "src_execz", "vccz", "src_vccz")


def _float_op(spec) -> bool:
    """Does a vector instruction combine two floating-point sources (or is it a mix)?  Given
    two NaN operands, numpy's result carries the NaN of one chosen by operand position *and*
    by whether an operand is broadcast from one element (as an SGPR read by one wave is) or
    a full array (as the per-lane SGPRs of :class:`_LaneSGPRs` are): such an instruction
    runs once per run of waves with equal SGPRs instead (each reading its SGPRs as one wave
    does).  (Packed and dot operations' b16/b32 sources hold floats when the name says so.)"""
    if spec.kind == "mix":
        return True
    packed = any(x in spec.name for x in ("f16", "f32", "f64", "bf16", "fp8", "bf8"))
    return sum(t[0] == "f" or packed and t[0] == "b" for t in spec.src) >= 2


def _lane_sgprs(prog):
    """Per pc: whether a ``vec`` / ``mem`` instruction may read SGPR operands that differ
    between the waves per lane (:class:`_LaneSGPRs`): a VALU / VOP3P / mix instruction, or a
    global load/store/atomic (its SGPR base), whose SGPR-file operands are plain registers
    (s, ttmp, vcc, exec, m0...), not a floating-point operation (:func:`_float_op`); cached
    on the program."""
    f = getattr(prog, "_lockstep_lane_sgprs", None)
    if f is None:
        from ..semantics.registry import lookup
        modes, _ = prog.lockstep_modes()
        f = []
        for inst, m in zip(prog.insts, modes):
            spec = lookup(inst.opcode)
            ok = m is not None and spec is not None and (
                m[0] == "vec" and spec.kind in ("valu", "vop3p", "mix") or
                m[0] == "mem" and spec.kind in ("vmem", "vmem_atomic") and
                spec.extra.get("seg") == "global")
            if ok and _float_op(spec):
                ok = False
            if ok:
                for op in inst.operands:
                    b = getattr(op, "base", op)
                    if isinstance(b, Special) and b.name in _NOT_SLOTS:
                        ok = False
            f.append(ok)
        f.append(False)
        prog._lockstep_lane_sgprs = f
    return f


_F_VEC, _F_UNI, _F_DS, _F_CMP, _F_UNIX, _F_BAR, _F_SCR, _F_LANE = 0, 1, 2, 3, 4, 5, 6, 7
_EXEC_SET = frozenset((EXEC, EXEC + 1))


def _fast_forms(prog):
    """Per pc: the form :meth:`_Group._run_fast` runs an instruction in, ``(form, SGPRs read,
    SGPRs written, writes SCC, lockstep form)``, or None (the general path of
    :meth:`_Group.run_together`): ``_F_VEC`` a ``vec``/``mem`` instruction that writes no SGPR
    and reads neither SCC nor each wave's own SGPRs (buffer instructions); ``_F_UNI`` a
    ``uni`` instruction (not one that ends the wave); ``_F_UNIX`` a scalar ALU one of those
    that writes EXEC; ``_F_DS`` an LDS form; ``_F_CMP`` a VOPC; ``_F_BAR`` s_barrier (when no
    other wave is live); ``_F_SCR`` a scratch access at one address; ``_F_LANE``
    v_readlane / v_writelane at one lane.  Cached on the program."""
    f = getattr(prog, "_lockstep_fast", None)
    if f is None:
        from ..semantics.registry import lookup
        modes, _ = prog.lockstep_modes()
        f = []
        for inst, m in zip(prog.insts, modes):
            spec = lookup(inst.opcode)
            form = None
            if m is None or spec is None:
                pass
            elif m[0] in _DS_SET:
                form = (_F_DS, frozenset(), frozenset(), False, m)
            elif m[0] == "barrier":
                form = (_F_BAR, frozenset(), frozenset(), False, m)
            elif m[0] == "scr":
                form = (_F_SCR, m[1], frozenset(), False, m)
            elif m[0] in ("rl", "wl"):
                # (the lane select must be equal in the running waves, as in the general path)
                form = (_F_LANE, frozenset((m[1],)) if m[1] >= 0 else frozenset(),
                        frozenset(), False, m)
            elif m[0] == "cmp":
                dst = m[2]
                form = (_F_CMP, m[1], frozenset(() if dst is None else (dst, dst + 1)), False, m)
            elif m[0] in ("vec", "mem"):
                if not m[4] and not m[2] and not m[6] and \
                        spec.kind not in ("mubuf", "mubuf_atomic"):
                    form = (_F_VEC, m[1], m[4], False, m)
            elif m[0] == "uni":
                if m[6]:
                    if spec.kind in ("salu", "sopc"):
                        form = (_F_UNIX, m[1], m[4], m[5], m)
                elif spec.kind in ("salu", "sopc", "branch", "nop", "smem"):
                    form = (_F_UNI, m[1], m[4], m[5], m)
            f.append(form)
        f.append(None)
        prog._lockstep_fast = f
    return f


def _skips(prog):
    """Per pc: for a forward ``s_cbranch_execz`` over a region of instructions that change
    nothing in a wave whose EXEC is 0 (:func:`asmevo.emu.lockstep_forms.inert_without_lanes`;
    no branch among them), the region's length; else None.  Cached on the program."""
    f = getattr(prog, "_lockstep_skips", None)
    if f is None:
        f = [None] * (len(prog.insts) + 1)
        for pc, c in enumerate(prog.code[:len(prog.insts)]):
            b = getattr(c, "branch", None)
            if b is None or b[0] != "s_cbranch_execz" or not pc < b[2] < b[1] <= len(prog.insts):
                continue
            if all(inert_without_lanes(prog.insts[i]) and
                   getattr(prog.code[i], "branch", None) is None for i in range(b[2], b[1])):
                f[pc] = b[1] - b[2]
        prog._lockstep_skips = f
    return f


def _ride(act, npcs, alt, length):
    """At a forward ``s_cbranch_execz`` (``alt``: ("br", name, target, next)) over a region of
    ``length`` instructions that change nothing where EXEC is 0 (:func:`_skips`), where some
    running waves jump (EXEC = 0) and others do not (``npcs``): every wave goes on with the
    region, the jumping ones doing nothing in it -- what one wave at a time gives, without
    splitting the group.  Their instruction counts are lowered by ``length`` now: they
    execute the region's instructions in the group, counted as everyone's, but would not
    have (their lane counts add popcount(EXEC) = 0 there).  Returns the next pc."""
    t = alt[2]
    for wv, p in zip(act, npcs):
        if p == t:
            wv.count -= length
    return alt[3]


def _lm_reads(prog):
    """Per pc: the SGPR slots a vector instruction reads as lane masks, per wave
    (:func:`asmevo.emu.lockstep_forms.lane_mask_reads`; empty for others); cached on the
    program."""
    f = getattr(prog, "_lockstep_lm_reads", None)
    if f is None:
        f = [lane_mask_reads(inst) for inst in prog.insts] + [frozenset()]
        prog._lockstep_lm_reads = f
    return f


def _followers(prog):
    """Per pc: (SGPRs read, reads SCC, SGPRs written, writes SCC) of a scalar ALU / compare /
    nop instruction that can run on the first wave right after another one (it neither
    writes EXEC nor faults), else None; cached on the program."""
    f = getattr(prog, "_lockstep_followers", None)
    if f is None:
        from ..semantics.registry import lookup
        modes, _ = prog.lockstep_modes()
        f = []
        for inst, m in zip(prog.insts, modes):
            spec = lookup(inst.opcode)
            if m is None or m[0] != "uni" or m[6] or spec is None or \
                    spec.kind not in ("salu", "sopc", "nop"):
                f.append(None)
            else:
                f.append((m[1], m[2], m[4], m[5]))
        f.append(None)
        prog._lockstep_followers = f
    return f


def _groups(S, act, ia, cols, rscc):
    """The running waves grouped by the values of SGPRs ``cols`` (and SCC when ``rscc``):
    lists of (wave, row of S), in the order of each group's first wave."""
    rows = list(range(len(act))) if ia is None else ia.tolist()
    vals = S[rows][:, cols].tolist()
    out = {}
    for wv, r, v in zip(act, rows, vals):
        key = (tuple(v), wv.scc) if rscc else tuple(v)
        out.setdefault(key, []).append((wv, r))
    return list(out.values())


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
    cols = sorted(cols)
    c0, c1 = cols[0], cols[-1] + 1
    if c1 - c0 == len(cols):        # contiguous: a slice, no gather
        blk = S[:, c0:c1] if ia is None else S[ia, c0:c1]
    else:
        blk = S[:, cols] if ia is None else S[np.ix_(ia, cols)]
    ne = blk != blk[0]
    if not np.count_nonzero(ne):    # the usual case: equal in every running wave
        return nu.difference(cols) if nu else nu
    diff = {c for c, d in zip(cols, _ANY0(ne, axis=0).tolist()) if d}
    return (nu - set(cols)) | diff

"""Memory hierarchy of one compute unit for the trace-driven model (:mod:`asmevo.perf.cu`).

Fed by the real lane addresses of the emulator trace (:mod:`asmevo.emu.trace`):

* **vector memory** (global/flat/buffer/scratch): the active lanes' byte ranges are
  coalesced into 128-B lines (``cache.l1_line``).  The vL1D (32 KiB per CU, LRU,
  write-no-allocate [M]) processes ``line`` bytes per clk at ``bw.vl1_bytes_per_clk_cu``
  (128 B/clk [A]); a line that misses goes to the L2 (per-CU share of the XCD's
  2048 B/clk, at most ``bw.l1_fill_bytes_per_clk_max``), and an L2 miss to the Infinity
  Cache or HBM (per-CU share of 5.3 TB/s).  Latencies (issue to data): L1 hit 116, L2 hit
  288, MALL 500, HBM 900 clk [M/I]; stores are acknowledged 208 clk after issue [M];
  atomics are performed at the L2 (288 clk [I]).  Each level is a FIFO server: a line
  starts its transfer when the link is free, so latency holds for an idle machine and
  the bandwidth caps the rate of a busy one;
* **L2 sharing**: the L2 of the simulated CU holds its share of 4 MiB (the XCD's L2 over
  the busy CUs of the XCD); lines first fetched by *another* CU's workgroup earlier in
  the launch (``prior``: line -> first workgroup) count as L2 hits when that workgroup is
  on the same XCD (workgroups go round robin over the 8 XCDs [A: ROCm workload.rst]) and
  as Infinity Cache hits otherwise;
* **scalar memory**: 64-B lines in a 16 KiB sL1 (LRU): hit 48 clk, miss 48 + 124 [M];
* **LDS**: latency 51 clk [M]; each SIMD pair has one 64 B/clk port [A]; the 32 banks x 4 B
  serve one 128-B group of lanes per clk, and within a group every bank serialises the
  distinct dwords it holds (same-address reads broadcast) [A]; the wave's data time
  beyond the conflict-free minimum adds to its latency.

Everything is deterministic and in clk.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from .machine import MI300X, Machine

L1, L2, MALL, HBM = 0, 1, 2, 3
LEVELS = ("l1", "l2", "mall", "hbm")


class LRU:
    """A fully associative LRU set of line numbers with ``capacity`` lines."""

    __slots__ = ("cap", "d")

    def __init__(self, capacity: int):
        self.cap = max(1, int(capacity))
        self.d = OrderedDict()

    def hit(self, line: int, insert: bool = True) -> bool:
        d = self.d
        if line in d:
            d.move_to_end(line)
            return True
        if insert:
            d[line] = None
            if len(d) > self.cap:
                d.popitem(last=False)
        return False

    def insert(self, line: int) -> None:
        self.hit(line, True)


_BANKS: dict = {}


def _bank_cycles(dw: np.ndarray, ndw: int, per: int) -> int:
    if ndw > 1:
        dw = (dw[:, None] + np.arange(ndw)).ravel()
    g = np.arange(len(dw)) // per
    key = np.unique((g << 40) | dw)
    gb = (key >> 40) * per + (key & 0xFFFFFFFFFF) % per
    counts = np.bincount(gb)
    ng = int(g[-1]) + 1 if len(g) else 0
    if len(counts) < ng * per:
        counts = np.pad(counts, (0, ng * per - len(counts)))
    return int(counts.reshape(ng, per).max(axis=1).sum()) if ng else 0


class CUMemory:
    """The memory system as one CU sees it.

    ``active_cus``: CUs busy during the launch (bandwidth shares); ``xcd``: the XCD of the
    simulated CU; ``prior``: optional dict line -> linear id of the first workgroup that
    touches it (see module docstring).
    """

    def __init__(self, machine: Machine = MI300X, active_cus: int = 304, xcd: int = 0,
                 prior: dict | None = None):
        m = machine
        self.m = m
        self.line = int(m["cache.l1_line"])
        self.shift = self.line.bit_length() - 1
        cus = int(m["cus"])
        xcds = int(m["xcds"])
        active = max(1, min(cus, int(active_cus)))
        per_xcd = max(1, -(-active // xcds))
        self.l1 = LRU(int(m["cache.l1_bytes"]) // self.line)
        self.l2 = LRU(int(m["cache.l2_bytes"]) // per_xcd // int(m["cache.l2_line"]))
        self.mall = LRU(int(m["cache.mall_bytes"]) // active // int(m["cache.l2_line"]))
        self.sl1 = LRU(int(m["cache.sl1_bytes"]) // int(m["cache.sl1_line"]))
        self.sshift = int(m["cache.sl1_line"]).bit_length() - 1
        l2_bw = min(float(m["bw.l1_fill_bytes_per_clk_max"]), float(m["bw.l2_bytes_per_clk_xcd"]) / per_xcd)
        hbm_bw = min(l2_bw, float(m["bw.hbm_bytes_per_clk"]) / active)
        self.l1_clk = self.line / float(m["bw.vl1_bytes_per_clk_cu"])   # clk per line in vL1
        self.l2_clk = self.line / l2_bw
        self.hbm_clk = self.line / hbm_bw
        self.lat = (int(m["latency.l1_hit"]), int(m["latency.l2_hit"]), int(m["latency.mall_hit"]),
                    int(m["latency.hbm"]))
        self.store_ack = int(m["latency.store_ack"])
        self.atomic_lat = int(m["latency.atomic"])
        self.smem_hit = int(m["latency.smem_hit"])
        self.smem_miss = self.smem_hit + int(m["latency.smem_miss_penalty"])
        self.lds_lat = int(m["latency.lds"])
        self.lds_port_bpc = float(m["bw.lds_bytes_per_clk_port"])
        self.banks = int(m["bw.lds_banks"])
        self.xcds = xcds
        self.xcd = xcd
        self.prior = prior or {}
        self.l1_free = 0.0
        self.l2_free = 0.0
        self.hbm_free = 0.0
        self.port_free = [0.0, 0.0]
        self.bank_free = 0.0
        #: lines served per level, bytes moved per level
        self.hits = [0, 0, 0, 0]
        self.bytes = {"l1": 0, "l2": 0, "hbm": 0, "lds": 0, "smem": 0}

    # -- vector memory ------------------------------------------------------------------
    def lines_of(self, addrs: np.ndarray, size: int) -> np.ndarray:
        """Sorted distinct line numbers touched by lanes at ``addrs`` of ``size`` bytes."""
        sh = self.shift
        n = len(addrs)
        if n == 1 or n > 1 and int(addrs[-1]) - int(addrs[0]) == (n - 1) * size and \
                (np.diff(addrs.astype(np.int64)) == size).all():    # coalesced: a range
            lo = int(addrs[0]) >> sh
            hi = (int(addrs[-1]) + max(size, 1) - 1) >> sh
            return np.arange(lo, hi + 1, dtype=np.uint64)
        sh = np.uint64(sh)
        a = addrs >> sh
        if size > 1:
            b = (addrs + np.uint64(size - 1)) >> sh
            if not np.array_equal(a, b):
                a = np.concatenate([a, b])
        return np.unique(a)

    def vmem(self, t: float, kind: str, addrs, size: int, wg: int = 0) -> tuple[float, float]:
        """A vector memory instruction issued at ``t``: ``(completion clk, clk the vL1/TA
        path stays busy)``.  ``kind``: load, store or atomic; ``addrs``: active lanes'
        byte addresses (None: one line per 4 active lanes is assumed by the caller)."""
        if addrs is None or len(addrs) == 0:
            return t + (self.store_ack if kind == "store" else self.lat[L1]), 4.0
        lines = self.lines_of(addrs, size).tolist()
        n = len(lines)
        busy = max(4.0, n * self.l1_clk)
        start = max(t, self.l1_free)
        self.l1_free = start + busy
        done = start
        lat = self.lat
        if kind == "store" or kind == "atomic":
            self.bytes["l2"] += n * self.line
            for k, ln in enumerate(lines):
                tk = start + k * self.l1_clk
                s2 = max(tk, self.l2_free)
                self.l2_free = s2 + self.l2_clk
                if not self.l2.hit(ln):
                    # write-back of a new dirty line / fetch for an atomic: HBM time
                    s3 = max(s2, self.hbm_free)
                    self.hbm_free = s3 + self.hbm_clk
                    self.bytes["hbm"] += self.line
                    s2 = s3
                fin = s2 + (self.store_ack if kind == "store" else self.atomic_lat)
                if fin > done:
                    done = fin
            return done, busy
        l1, l2, mall = self.l1, self.l2, self.mall
        prior = self.prior
        self.bytes["l1"] += n * self.line
        for k, ln in enumerate(lines):
            tk = start + k * self.l1_clk
            if l1.hit(ln):
                self.hits[L1] += 1
                fin = tk + lat[L1]
            else:
                s2 = max(tk, self.l2_free)
                self.l2_free = s2 + self.l2_clk
                self.bytes["l2"] += self.line
                if l2.hit(ln):
                    self.hits[L2] += 1
                    fin = s2 + lat[L2]
                else:
                    p = prior.get(ln)
                    if p is not None and p < wg:
                        lvl = L2 if p % self.xcds == self.xcd else MALL
                        mall.insert(ln)
                    elif mall.hit(ln):
                        lvl = MALL
                    else:
                        lvl = HBM
                    if lvl == HBM:
                        s2 = max(s2, self.hbm_free)
                        self.hbm_free = s2 + self.hbm_clk
                        self.bytes["hbm"] += self.line
                    self.hits[lvl] += 1
                    fin = s2 + lat[lvl]
            if fin > done:
                done = fin
        return done, busy

    # -- scalar memory ------------------------------------------------------------------
    def smem(self, t: float, addrs, size: int) -> float:
        """An SMEM load of ``size`` bytes issued at ``t``: its completion clk."""
        if addrs is None or len(addrs) == 0:
            return t + self.smem_hit
        a = int(addrs[0])
        sh = self.sshift
        worst = self.smem_hit
        self.bytes["smem"] += size
        for ln in range(a >> sh, ((a + max(size, 1) - 1) >> sh) + 1):
            if not self.sl1.hit(ln):
                worst = self.smem_miss
        return t + worst

    # -- LDS ----------------------------------------------------------------------------
    def bank_cycles(self, addrs: np.ndarray, size: int) -> int:
        """clk the 32 banks need for one wave's access: lanes in groups of 128 B, each
        group taking the largest number of distinct dwords any bank holds (cached per
        access pattern: a shift by a multiple of 128 B keeps the banks)."""
        ndw = max(1, size // 4)
        n = len(addrs)
        per = self.banks
        if n and int(addrs[-1]) - int(addrs[0]) == (n - 1) * 4 * ndw and \
                (n == 1 or (np.diff(addrs.astype(np.int64)) == 4 * ndw).all()):
            return -(-(n * ndw) // per)          # consecutive dwords: conflict-free
        a = addrs.astype(np.int64)
        base = int(a.min()) & ~(4 * per - 1)
        key = ((a - base) >> 2).tobytes() + bytes((ndw,))
        c = _BANKS.get(key)
        if c is None:
            c = _bank_cycles((a - base) >> 2, ndw, per)
            if len(_BANKS) > 65536:
                _BANKS.clear()
            _BANKS[key] = c
        return c

    def lds(self, t: float, simd: int, addrs, size: int, nlanes: int) -> tuple[float, float]:
        """An LDS instruction of SIMD ``simd`` issued at ``t``: ``(completion clk, clk its
        port stays busy)``.  ``size``: bytes per lane per address."""
        n = len(addrs) if addrs is not None else nlanes
        data = n * max(size, 1)
        port_t = max(1.0, data / self.lds_port_bpc)
        ideal = -(-(n * max(1, size // 4)) // self.banks)
        bank_t = self.bank_cycles(addrs, size) if addrs is not None and n else ideal
        p = simd >> 1
        start = max(t, self.port_free[p], self.bank_free)
        busy = max(port_t, float(bank_t))
        self.port_free[p] = start + busy
        self.bank_free = start + bank_t
        self.bytes["lds"] += data
        extra = max(0.0, busy - 4.0)
        return start + self.lds_lat + extra, busy

    def stats(self) -> dict:
        return {"lines": dict(zip(LEVELS, self.hits)), "bytes": dict(self.bytes)}

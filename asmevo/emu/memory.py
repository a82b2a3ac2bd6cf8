"""Emulated memory: a 64-bit global address space of named buffers, plus LDS and scratch.

Global buffers are placed at distinct 256-byte-aligned, non-zero addresses with
unmapped guard gaps between them.  Every access is checked: a lane that touches
bytes outside any mapped buffer raises :class:`MemoryFault`, which the executor
turns into an :class:`EmuError` naming kernel, pc, instruction, lane and address.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

from ..errors import AsmevoError

BASE = 0x1_0000_0000          # first buffer address (above 4 GiB: exercises 64-bit math)
ALIGN = 256
GUARD = 0x1000                # unmapped bytes after every buffer


class EmuError(AsmevoError):
    """The emulated program did something that cannot be emulated (bad address,
    instruction without semantics, runaway loop)."""


class MemoryFault(Exception):
    """An access outside every mapped region (internal; converted to EmuError)."""

    def __init__(self, lane: int, addr: int, size: int, space: str, near: str = ""):
        # (no lane here: every caller prefixes "lane N: ", which named it twice)
        super().__init__(f"{space} access of {size} bytes at {addr:#x} is outside "
                         f"every mapped buffer{near}")
        self.lane, self.addr, self.size, self.space = lane, addr, size, space


_MAX = np.maximum.reduce
_BOR = np.bitwise_or.reduce
_THREE = np.uint64(3)
_TWO = np.uint64(2)
_LIMITS: dict = {}     # region size -> Region.limit (sizes repeat from run to run)
_ARANGE = {k: np.arange(k, dtype=np.int64) for k in range(1, 17)}


class Region:
    """One mapped buffer: ``name``, base ``addr`` (bytes), ``data`` (np.uint8, owned,
    ``size`` bytes; the storage is padded to a multiple of 4 so ``words`` can view it).
    ``data`` itself becomes the storage when it is a writable uint8 array that owns its
    memory and whose size is a multiple of 4 (the copy :meth:`GlobalMemory.map` makes)."""

    def __init__(self, name: str, addr: int, data: np.ndarray, writable: bool = True):
        self.name = name
        self.addr = addr
        self.size = int(data.size)
        if self.size % 4 == 0 and data.dtype == np.uint8 and data.base is None and \
                data.flags.c_contiguous and data.flags.writeable:
            store = data        # a copy the caller owns (GlobalMemory.map): no second one
        else:
            store = np.zeros((self.size + 3) // 4 * 4, np.uint8)
            store[:self.size] = data
        self._store = store
        self.data = store[:self.size]
        self.words = store.view(np.uint32)
        self.words_f32 = store.view(np.float32)     # (float32 lanes gathered as such)
        self.writable = writable
        self.watch = False
        self.base64 = np.uint64(addr)
        lim = _LIMITS.get(self.size)
        if lim is None:
            lim = {k: np.uint64(self.size - k) for k in (1, 2, 4, 8, 12, 16, 32, 64)
                   if self.size >= k}
            if len(_LIMITS) < 1024:
                _LIMITS[self.size] = lim
        self.limit = lim    # access size -> highest valid offset (shared: read-only)

    @property
    def end(self) -> int:
        return self.addr + self.size


class GlobalMemory:
    """Sparse 64-bit global address space made of :class:`Region` s."""

    def __init__(self):
        self.regions: list[Region] = []
        self._next = BASE
        self._bases = np.zeros(0, np.uint64)
        self._last = None
        self._base_list: list = []
        self._ends = np.zeros(0, np.uint64)
        self.writes_outside: list[tuple[str, int, int]] = []  # (region, offset, size) for non-output

    def map(self, name: str, data: bytes | np.ndarray, *, writable: bool = True) -> int:
        """Map a copy of ``data`` (or a zero-filled buffer if ``data`` is an int size) and
        return its address (256-byte aligned, never 0)."""
        if isinstance(data, int):
            arr = np.zeros(max(data, 1), np.uint8)
        else:
            arr = np.frombuffer(bytes(data), np.uint8).copy() if not isinstance(data, np.ndarray) \
                else np.ascontiguousarray(data).view(np.uint8).reshape(-1).copy()
            if arr.size == 0:
                arr = np.zeros(1, np.uint8)
        addr = self._next
        r = Region(name, addr, arr, writable)
        self.regions.append(r)
        self._next = (addr + arr.size + GUARD + ALIGN - 1) // ALIGN * ALIGN
        self._base_list.append(addr)        # addresses only grow: the list stays sorted
        self._bases = self._ends = None     # rebuilt by _locate when needed
        return addr

    def region(self, name: str) -> Region:
        for r in self.regions:
            if r.name == name:
                return r
        raise KeyError(name)

    def _locate(self, addrs: np.ndarray, size: int, lanes: np.ndarray):
        """Region index per address; raises MemoryFault on the first bad lane."""
        if self._bases is None:
            self._bases = np.array(self._base_list, np.uint64)
            self._ends = np.array([r.end for r in self.regions], np.uint64)
        idx = np.searchsorted(self._bases, addrs, side="right").astype(np.int64) - 1
        ok = idx >= 0
        ends = self._ends
        safe = np.where(ok, idx, 0)
        ok &= (addrs + np.uint64(size) <= ends[safe]) if len(self.regions) else False
        if not np.all(ok):
            bad = int(np.argmin(ok))
            addr = int(addrs[bad])
            raise MemoryFault(int(lanes[bad]), addr, size, "global",
                              self.nearest(addr, size, addrs))
        return safe

    def nearest(self, addr: int, size: int, addrs: np.ndarray | None = None) -> str:
        """``; ...`` naming the buffer an out-of-bounds access is nearest to and by how much it
        misses (a harness buffer whose ``count`` is too small for the launch's grid, most
        often), or "" when no buffer is mapped.  ``addrs``: the addresses of every active lane
        of the faulting access; the size the buffer needs is the highest end address among
        those in the buffer or in the unmapped gap after it (not only the faulting lane's,
        which is the lowest-numbered one and would have the user raise "count" by one lane)."""
        if not self.regions:
            return ""
        k, r = min(enumerate(self.regions), key=lambda kr: (addr - kr[1].end)
                   if addr >= kr[1].end else (kr[1].addr - addr if addr < kr[1].addr else 0))
        what = "the harness buffer" if not r.name.startswith("__") else "the launch's"
        span = f"{what} '{r.name}' ({r.size} bytes at {r.addr:#x}..{r.end:#x})"
        if addr >= r.addr:
            past = addr + size - r.end
            top = addr + size
            if addrs is not None and addrs.size:
                stop = self.regions[k + 1].addr if k + 1 < len(self.regions) else r.end + GUARD
                a = np.asarray(addrs, np.uint64)
                near = a[(a >= np.uint64(r.addr)) & (a < np.uint64(stop))]
                if near.size:
                    top = max(top, int(near.max()) + size)
            reach = ""
            if top != addr + size:
                reach = f"; the active lanes of this wave end at byte offset {top - r.addr}"
            return (f"; it ends {past} byte(s) past the end of {span}, at byte offset "
                    f"{addr - r.addr}{reach}; expected the buffer to hold at least {top - r.addr}"
                    " bytes for this launch (its \"count\"), or a launch that stays inside it")
        return f"; it starts {r.addr - addr} byte(s) before {span}"

    def _single(self, addrs, size):
        """(region, offsets) when every address lies in one region (the last used, else the
        first address's), else None."""
        if not addrs.size:
            return None
        r = self._last
        if r is not None:
            lim = r.limit.get(size)
            if lim is not None:
                off = addrs - r.base64
                if _MAX(off) <= lim:    # (an address below the base wraps to a huge offset)
                    return r, off
        k = bisect.bisect_right(self._base_list, int(addrs[0])) - 1
        if k < 0:
            return None
        r = self.regions[k]
        lim = r.limit.get(size)
        if lim is None:
            return None
        off = addrs - r.base64
        if _MAX(off) > lim:
            return None
        self._last = r
        return r, off

    def read_words(self, addrs: np.ndarray, ndw: int, lanes: np.ndarray) -> np.ndarray:
        """``ndw`` dwords at each address -> uint32 (n, ndw); fast when 4-byte aligned."""
        hit = self._single(addrs, 4 * ndw)
        if hit is not None:
            r, off = hit
            if not _BOR(off) & _THREE:     # every address 4-byte aligned
                # (offsets < 2**63: an index without a copy; off is this call's own array)
                w = np.right_shift(off, _TWO, out=off).view(np.int64)
                if ndw == 1:
                    return r.words[w][:, None]
                return r.words[w[:, None] + _ARANGE[ndw]]
        return np.ascontiguousarray(self.read(addrs, 4 * ndw, lanes)).view("<u4")

    def write_words(self, addrs: np.ndarray, words: np.ndarray, lanes: np.ndarray) -> None:
        """Store uint32 (n, ndw) at ``addrs``; fast when 4-byte aligned."""
        ndw = words.shape[1]
        hit = self._single(addrs, 4 * ndw)
        if hit is not None:
            r, off = hit
            if r.writable and not r.watch and not _BOR(off) & _THREE:
                w = np.right_shift(off, _TWO, out=off).view(np.int64)
                if ndw == 1:
                    r.words[w] = words[:, 0]
                else:
                    r.words[w[:, None] + _ARANGE[ndw]] = words
                return
        self.write(addrs, np.ascontiguousarray(words).view(np.uint8).reshape(len(addrs), 4 * ndw),
                   lanes)

    def read(self, addrs: np.ndarray, size: int, lanes: np.ndarray) -> np.ndarray:
        """Bytes at ``addrs`` (uint64, one per active lane) -> uint8 array (n, size)."""
        if addrs.size == 0:
            return np.zeros((0, size), np.uint8)
        idx = self._locate(addrs, size, lanes)
        out = np.empty((addrs.size, size), np.uint8)
        ar = np.arange(size)
        for ri in np.unique(idx):
            r = self.regions[ri]
            self._last = r
            sel = idx == ri
            off = (addrs[sel] - np.uint64(r.addr)).astype(np.int64)
            out[sel] = r.data[off[:, None] + ar]
        return out

    def write(self, addrs: np.ndarray, data: np.ndarray, lanes: np.ndarray) -> None:
        """Store ``data`` (uint8 (n, size)) at ``addrs``; later lanes win on overlap."""
        if addrs.size == 0:
            return
        size = data.shape[1]
        idx = self._locate(addrs, size, lanes)
        ar = np.arange(size)
        for ri in np.unique(idx):
            r = self.regions[ri]
            self._last = r
            if not r.writable:
                raise MemoryFault(int(lanes[np.argmax(idx == ri)]), int(addrs[idx == ri][0]), size,
                                  f"store to read-only region {r.name}:")
            sel = idx == ri
            off = (addrs[sel] - np.uint64(r.addr)).astype(np.int64)
            r.data[off[:, None] + ar] = data[sel]
            if r.name.startswith("__"):
                pass
            self.on_write(r, off, size)

    def on_write(self, region: Region, offsets: np.ndarray, size: int) -> None:
        """Hook: record writes to regions that are not declared outputs."""
        if getattr(region, "watch", False):
            for o in offsets[:16]:
                self.writes_outside.append((region.name, int(o), size))

    def read_scalar(self, addr: int, size: int) -> bytes:
        """``size`` bytes at one address (SMEM)."""
        k = bisect.bisect_right(self._base_list, addr) - 1
        if k >= 0:
            r = self.regions[k]
            off = addr - r.addr
            if off + size <= r.size:
                return r.data[off:off + size].tobytes()
        raise MemoryFault(0, addr, size, "scalar")


class LocalMemory:
    """Per-lane-addressed flat byte array (LDS of a workgroup)."""

    def __init__(self, size: int, space: str, store=None):
        """``store``: optional zeroed uint8 array of (size + 3) // 4 * 4 bytes to use (a
        segment of one buffer holding the LDS of several workgroups, for lockstep runs)."""
        size = max(size, 0)
        self._store = store if store is not None else np.zeros((size + 3) // 4 * 4, np.uint8)
        self.data = self._store[:size]
        self.words = self._store.view(np.uint32)
        self.space = space

    def check(self, offs: np.ndarray, size: int, lanes: np.ndarray) -> None:
        bad = (offs < 0) | (offs + size > self.data.size)
        if np.count_nonzero(bad):
            i = int(np.argmax(bad))
            raise MemoryFault(int(lanes[i]), int(offs[i]), size, self.space)

    def read(self, offs: np.ndarray, size: int, lanes: np.ndarray) -> np.ndarray:
        offs = offs.astype(np.int64)
        self.check(offs, size, lanes)
        return self.data[offs[:, None] + np.arange(size)]

    def write(self, offs: np.ndarray, data: np.ndarray, lanes: np.ndarray) -> None:
        offs = offs.astype(np.int64)
        size = data.shape[1]
        self.check(offs, size, lanes)
        self.data[offs[:, None] + np.arange(size)] = data

    def word_index(self, offs: np.ndarray, ndw: int):
        """Dword index array for uint32 byte offsets ``offs`` when all are 4-byte aligned and
        in range (fast path), else None."""
        lim = self.data.size - 4 * ndw
        if lim < 0 or np.count_nonzero((offs & np.uint32(3)) | (offs > np.uint32(lim))):
            return None
        return offs >> np.uint32(2)

    def read_words(self, offs: np.ndarray, ndw: int, lanes: np.ndarray) -> np.ndarray:
        """uint32 (n, ndw) at byte offsets ``offs`` (fast when 4-byte aligned)."""
        offs = offs.astype(np.int64)
        self.check(offs, 4 * ndw, lanes)
        if np.count_nonzero(offs & 3):
            return np.ascontiguousarray(self.data[offs[:, None] + np.arange(4 * ndw)]).view("<u4")
        w = offs >> 2
        if ndw == 1:
            return self.words[w][:, None]
        return self.words[w[:, None] + np.arange(ndw)]

    def write_words(self, offs: np.ndarray, words: np.ndarray, lanes: np.ndarray) -> None:
        """Store uint32 (n, ndw) at byte offsets ``offs``; later lanes win on overlap."""
        offs = offs.astype(np.int64)
        ndw = words.shape[1]
        self.check(offs, 4 * ndw, lanes)
        if np.count_nonzero(offs & 3):
            self.data[offs[:, None] + np.arange(4 * ndw)] = \
                np.ascontiguousarray(words).view(np.uint8).reshape(len(offs), 4 * ndw)
            return
        w = offs >> 2
        if ndw == 1:
            self.words[w] = words[:, 0]
        else:   # dword by dword, lanes in order in each (as the full-EXEC and lockstep paths)
            self.words[w[None, :] + np.arange(ndw)[:, None]] = words.T


class ScratchMemory:
    """Private (scratch) memory of one wave: ``per_lane`` bytes for each of 64 lanes.

    Scratch addresses (``scratch_*`` offsets, or flat addresses in the private
    aperture) are per-lane byte offsets into that lane's private segment."""

    def __init__(self, per_lane: int):
        self.per_lane = per_lane
        cols = (max(per_lane, 0) + 3) // 4 * 4
        self._store = np.zeros((64, cols), np.uint8)
        self.data = self._store
        self.words = self._store.view(np.uint32)   # (64, cols / 4)

    def _check(self, offs, size, lanes):
        bad = (offs < 0) | (offs + size > self.per_lane)
        if np.count_nonzero(bad):
            i = int(np.argmax(bad))
            raise MemoryFault(int(lanes[i]), int(offs[i]), size, "scratch")

    def read(self, offs: np.ndarray, size: int, lanes: np.ndarray) -> np.ndarray:
        offs = offs.astype(np.int64)
        self._check(offs, size, lanes)
        return self.data[lanes[:, None], offs[:, None] + np.arange(size)]

    def write(self, offs: np.ndarray, data: np.ndarray, lanes: np.ndarray) -> None:
        offs = offs.astype(np.int64)
        self._check(offs, data.shape[1], lanes)
        self.data[lanes[:, None], offs[:, None] + np.arange(data.shape[1])] = data

    def read_words_uniform(self, off: int, ndw: int) -> np.ndarray:
        """uint32 (64, ndw) at the same 4-byte-aligned offset in every lane."""
        if off < 0 or off + 4 * ndw > self.per_lane:
            raise MemoryFault(0, off, 4 * ndw, "scratch")
        return self.words[:, off >> 2:(off >> 2) + ndw]

    def write_words_uniform(self, off: int, words: np.ndarray, mask) -> None:
        """Store uint32 (ndw, 64) rows at a uniform aligned offset for lanes in ``mask``."""
        ndw = words.shape[0]
        if off < 0 or off + 4 * ndw > self.per_lane:
            raise MemoryFault(0, off, 4 * ndw, "scratch")
        dst = self.words[:, off >> 2:(off >> 2) + ndw]
        if mask is None:
            dst[...] = words.T
        else:
            np.copyto(dst, words.T, where=mask[:, None])

"""Execution traces for the timing model: what each wave executed, in order.

``run_kernel(module, name, launch, trace=Tracer())`` runs the launch one wave at a time
(no lockstep), round-robin between ``s_barrier`` s as the plain non-lockstep run does, and
records per wave (:class:`WaveTrace`):

* ``pcs``: the instruction index (``Kernel.instructions()`` order) of every executed
  instruction, in order;
* ``execs``: the EXEC population (active lanes, 0..64) at each;
* ``addrs``: for memory instructions, ``{position in pcs: uint64 array}`` of the active
  lanes' byte addresses, computed from the wave's registers *before* the instruction
  runs: global/flat/buffer byte addresses (buffer: V# base + soffset + index * stride +
  offset), scratch offsets mapped to a per-wave interleaved address (lane-minor dwords,
  as the hardware swizzles private memory), SMEM byte addresses (one per wave), LDS byte
  offsets (``ds_read2``/``ds_write2``: both addresses of every lane, first then second).
  Flat addresses keep their aperture (high 32 bits ``SHARED_APERTURE_HI`` = LDS).

Runs without a tracer take none of this path (one ``if`` per launch in
:mod:`asmevo.emu.launch`); a traced run gives the same outputs as an untraced one.
"""

from __future__ import annotations

import numpy as np

from ..ir.operands import Imm, Reg, Special, base_of
from .executor import BARRIER, ENDPGM
from .memory import EmuError, MemoryFault
from .state import EXEC

#: base of the synthetic scratch address space (above any mapped region)
SCRATCH_BASE = 1 << 46
_LANES = np.arange(64, dtype=np.int64)


class WaveTrace:
    """The trace of one wave: workgroup id, wave index in it, and the lists above."""

    __slots__ = ("wg", "wg_linear", "wave", "pcs", "execs", "addrs")

    def __init__(self, wg, wg_linear, wave):
        self.wg = wg
        self.wg_linear = wg_linear
        self.wave = wave
        self.pcs = []
        self.execs = []
        self.addrs = {}

    def __len__(self) -> int:
        return len(self.pcs)


class Tracer:
    """Collects :class:`WaveTrace` s of a launch (``waves``, in dispatch order).

    ``addresses``: record lane addresses of memory instructions (default True);
    ``select``: ``f(linear workgroup id) -> bool``, the workgroups to trace (None: all);
    the others run as in an untraced launch (lockstep included), in the same order."""

    def __init__(self, addresses: bool = True, select=None):
        self.addresses = addresses
        self.select = select
        #: the CU whose workgroups ``select`` picks, when a caller sets it (asmevo.perf)
        self.cu = None
        self.waves: list[WaveTrace] = []
        self.kernel = None
        self.grid = None
        self.block = None
        self.insts = None
        self._probes = None

    # -- called by asmevo.emu.launch --------------------------------------------------------
    def wants(self, wgid) -> bool:
        """Whether workgroup ``wgid`` (x, y, z) is traced."""
        if self.select is None:
            return True
        gx, gy, _ = self.grid
        return bool(self.select(wgid[0] + gx * (wgid[1] + gy * wgid[2])))

    def begin(self, prog, grid, block) -> None:
        self.kernel = prog.kernel
        self.insts = prog.insts
        self.grid, self.block = tuple(grid), tuple(block)
        # one probe per instruction (None for non-memory ones), and one for the end
        probes = getattr(prog, "_trace_probes", None)    # kept with the compiled Program
        if probes is None or len(probes) != len(prog.insts) + 1:
            probes = [_probe(i) for i in prog.insts] + [None]
            try:
                prog._trace_probes = probes
            except AttributeError:
                pass
        self._probes = probes
        self._none = [None] * (len(prog.insts) + 1)

    def run_group(self, prog, waves, limit: int) -> None:
        """Run the waves of one workgroup round-robin between barriers, recording."""
        gx, gy, _ = self.grid
        traces = []
        for wv in waves:
            i, j, k = wv.group.id
            t = WaveTrace(wv.group.id, i + gx * (j + gy * k), wv.index)
            self.waves.append(t)
            traces.append(t)
        live = list(zip(waves, traces))
        while live:
            nxt = []
            for wv, t in live:
                r = self._run_wave(prog, wv, t, limit)
                if r == BARRIER:
                    nxt.append((wv, t))
                elif r != ENDPGM:
                    raise EmuError(f"kernel {prog.kernel.name}: wave stopped unexpectedly")
            live = nxt

    # -- the recording interpreter loop ------------------------------------------------------
    def _run_wave(self, prog, wv, t, limit):
        code = prog.code
        pcs, execs, addrs = t.pcs, t.execs, t.addrs
        app, eapp = pcs.append, execs.append
        probes = self._probes if self.addresses else self._none
        s = wv.s
        pc = wv.pc
        base = len(pcs)
        clock = prog.clock
        n = 0
        done = 0    # (as Program.run_wave: the count before an s_memtime)
        ln = 0
        try:
            while pc >= 0:
                pc_cur = pc
                if clock is not None and pc in clock:
                    wv.count += n - done
                    done = n
                p = probes[pc]
                if p is not None and wv.exec_any:
                    try:
                        a = p(wv)
                    except Exception:   # noqa: BLE001 - a malformed form: no addresses
                        a = None
                    if a is not None:
                        addrs[base + n] = a
                app(pc)
                e = 64 if wv.exec_all else (s.item(EXEC) | (s.item(EXEC + 1) << 32)).bit_count()
                eapp(e)
                ln += e
                pc = code[pc](wv)
                n += 1
                if n > limit:
                    raise prog.runaway(limit, pc_cur)
        except MemoryFault as e:
            raise prog.fault(pc_cur, e) from None
        finally:
            wv.count += n - done
            wv.lanes += ln
        if pc == ENDPGM:
            wv.done = True
        return pc


# ------------------------------------------------------------------------------ probes
def _ops_by_name(inst):
    from ..isa import lookup
    info = lookup(inst.opcode)
    if info is None:
        return None, {}
    names = info.operands
    if info.rtn_operands is not None and len(inst.operands) == len(info.rtn_operands) and \
            len(info.rtn_operands) != len(info.operands):
        names = info.rtn_operands
    return info, {o.name: op for o, op in zip(names, inst.operands)}


def _vreg(op):
    b = base_of(op) if op is not None else None
    if isinstance(b, Reg) and b.file in ("v", "a"):
        return b
    return None


def _sidx(op):
    from .executor import _sgpr_index
    if op is None:
        return None
    return _sgpr_index(op)


def _active(wv):
    return _LANES if wv.exec_all else _LANES[wv.exec_mask]


def _sval(wv, op) -> int:
    """A scalar operand's value (SGPR, constant), 0 for ``off``/unknown."""
    b = base_of(op) if op is not None else None
    if isinstance(b, Imm):
        return int(b.value) & 0xFFFFFFFF if isinstance(b.value, int) else 0
    i = _sidx(b)
    return int(wv.s[i]) if i is not None else 0


def _probe(inst):
    """A closure ``wave -> uint64 addresses of the active lanes`` for a memory
    instruction, or None."""
    op = inst.opcode
    info, o = _ops_by_name(inst)
    if info is None or info.mem is None and not info.is_ds:
        return None
    fam = info.family
    off = inst.mod("offset", 0)
    off = int(off) if isinstance(off, int) else 0
    if fam == "SMEM":
        bi = _sidx(o.get("sbase"))
        if bi is None:
            return None
        offop = o.get("offset")
        buf = op.startswith("s_buffer")

        def smem(wv):
            base = int(wv.s[bi]) | (int(wv.s[bi + 1]) & (0xFFFF if buf else 0xFFFFFFFF)) << 32
            v = _sval(wv, offop)
            if isinstance(base_of(offop), Imm) and v & 0x80000000 and not buf:
                v -= 1 << 32
            return np.array([(base + v + off) & ~3 & ((1 << 64) - 1)], np.uint64)
        return smem
    if fam == "DS":
        v = _vreg(o.get("addr"))
        if v is None:
            return None
        if op.startswith(("ds_swizzle", "ds_permute", "ds_bpermute", "ds_append", "ds_consume",
                          "ds_gws", "ds_nop")):
            return None
        if "read2" in op or "write2" in op:
            size = info.mem.bytes // 2 if info.mem and info.mem.bytes else 4
            st = size * (64 if "st64" in op else 1)
            o0 = int(inst.mod("offset0", 0) or 0) * st
            o1 = int(inst.mod("offset1", 0) or 0) * st

            def ds2(wv):
                a = wv.v[v.index][_active(wv)].astype(np.uint64)
                return np.concatenate([a + np.uint64(o0), a + np.uint64(o1)])
            return ds2

        def ds(wv):
            return wv.v[v.index][_active(wv)].astype(np.uint64) + np.uint64(off)
        return ds
    if fam in ("MUBUF", "MTBUF"):
        ri = _sidx(o.get("srsrc"))
        if ri is None:
            return None
        vr = _vreg(o.get("vaddr"))
        so = o.get("soffset")
        offen, idxen = inst.has_mod("offen"), inst.has_mod("idxen")

        def buf(wv):
            r = wv.s[ri:ri + 4]
            base = int(r[0]) | ((int(r[1]) & 0xFFFF) << 32)
            stride = (int(r[1]) >> 16) & 0x3FFF
            lanes = _active(wv)
            idx = np.zeros(len(lanes), np.int64)
            vo = np.zeros(len(lanes), np.int64)
            if vr is not None and (offen or idxen):
                x = wv.v[vr.index][lanes].astype(np.int64)
                if offen and idxen:
                    idx, vo = x, wv.v[vr.index + 1][lanes].astype(np.int64)
                elif idxen:
                    idx = x
                else:
                    vo = x
            if (int(r[3]) >> 23) & 1:
                idx = idx + lanes
            a = base + _sval(wv, so) + idx * stride + vo + off
            return (a & ((1 << 63) - 1)).astype(np.uint64)
        return buf
    if fam in ("GLOBAL", "FLAT", "SCRATCH"):
        vaddr = base_of(o.get("vaddr")) if o.get("vaddr") is not None else None
        saddr = base_of(o.get("saddr")) if o.get("saddr") is not None else None
        v_off = vaddr is None or (isinstance(vaddr, Special) and vaddr.name == "off")
        s_off = saddr is None or (isinstance(saddr, Special) and saddr.name == "off")
        vr = None if v_off else _vreg(vaddr)
        if fam == "SCRATCH":
            si = None if s_off else _sidx(saddr)

            def scratch(wv):
                lanes = _active(wv)
                a = np.full(len(lanes), off, np.int64)
                if vr is not None:
                    a += wv.v[vr.index][lanes].astype(np.int64)
                if si is not None:
                    a += int(wv.s[si])
                # lane-interleaved dwords: (wave, dword offset, lane)
                i, j, k = wv.group.id
                w = (((i + (j << 12) + (k << 20)) << 4) + wv.index) << 22
                return (SCRATCH_BASE + w + (a >> 2) * 256 + lanes * 4 + (a & 3)).astype(np.uint64)
            return scratch
        if vr is None:
            return None
        if s_off:
            def flat(wv):
                lanes = _active(wv)
                lo = wv.v[vr.index][lanes].astype(np.uint64)
                hi = wv.v[vr.index + 1][lanes].astype(np.uint64)
                return (lo | (hi << np.uint64(32))) + np.uint64(off & ((1 << 64) - 1))
            return flat
        si = _sidx(saddr)
        if si is None:
            return None

        def glob(wv):
            lanes = _active(wv)
            base = int(wv.s[si]) | (int(wv.s[si + 1]) << 32)
            return (wv.v[vr.index][lanes].astype(np.uint64) + np.uint64(base)) + \
                np.uint64(off & ((1 << 64) - 1))
        return glob
    return None

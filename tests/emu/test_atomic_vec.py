"""Atomics at distinct addresses are applied for every lane at once (exec_mem._atomic_vec);
the registers and memory must equal the lane-by-lane path, for every global and buffer
atomic, 32 and 64 bits, with and without return, partial EXEC, out-of-range buffer lanes,
and colliding addresses (which keep the lane-by-lane order)."""

import numpy as np
import pytest

from asmevo.emu import exec_mem, exec_mubuf
from asmevo.emu.executor import Program
from asmevo.emu.launch import _run_group
from asmevo.emu.memory import GlobalMemory
from asmevo.emu.state import Wave, Workgroup
from asmevo.semantics.registry import all_specs
from tests.emu.conftest import build_kernel

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
LANES = np.arange(64)
NAMES = sorted(n for n, s in all_specs().items()
               if (s.kind == "vmem_atomic" and n.startswith("global_atomic_")) or
               s.kind == "mubuf_atomic")


def _line(name, ret):
    s = all_specs()[name]
    size = 8 if name.endswith("_x2") or s.extra["op"].endswith("f64") else 4
    nd = size // 4 * (2 if "cmpswap" in name else 1)
    data = f"v[10:{10 + nd - 1}]" if nd > 1 else "v10"
    if name.startswith("global"):
        dst = (f"v[20:{20 + size // 4 - 1}], " if size == 8 else "v20, ") if ret else ""
        return f"{name} {dst}v[2:3], {data}, off{' glc' if ret else ''}"
    return f"{name} {data}, v0, s[4:7], 0 offen{' glc' if ret else ''}"


def _run(line, vec, collide, partial, monkeypatch):
    if not vec:
        monkeypatch.setattr(exec_mem, "_atomic_vec", lambda *a: None)
        monkeypatch.setattr(exec_mubuf, "_atomic_vec", lambda *a: None)
    else:
        monkeypatch.undo()
    rng = np.random.default_rng(17)
    mem = GlobalMemory()
    init = rng.integers(0, 1 << 32, 1024, dtype=np.uint64).astype(np.uint32)
    init[::7] = 0
    base = mem.map("buf", init.view(np.uint8))
    perm = rng.permutation(64)
    off = (perm % 16 if collide else perm) * 8          # 8-byte slots: 32 and 64 bits
    wv = Wave(Workgroup((0, 0, 0), 0), 0)
    a = base + off
    wv.v[0] = off + 8 * (LANES % 5 == 4) * 4096      # buffer lanes past num_records
    wv.v[2] = a & 0xFFFFFFFF
    wv.v[3] = a >> 32
    wv.v[10:14] = rng.integers(0, 1 << 32, (4, 64), dtype=np.uint64).astype(np.uint32)
    wv.v[10:14, ::3] = init[(off // 4)[::3]]             # equal operands (cmpswap hits)
    wv.v[10, 1::4] = 0
    wv.s[4], wv.s[5] = base & 0xFFFFFFFF, base >> 32
    wv.s[6] = 4096
    wv.set_exec((LANES % 6) != 1 if partial else np.ones(64, bool))
    prog = Program(build_kernel([line, "s_endpgm"]), mem)
    with np.errstate(all="ignore"):
        _run_group(prog, [wv], 1000)
    return wv.v[:24].copy(), mem.region("buf").data.copy()


@pytest.mark.parametrize("name", NAMES)
def test_vectorised_atomic_equals_lane_by_lane(name, monkeypatch):
    for ret in (True, False):
        for collide, partial in ((False, False), (False, True), (True, False)):
            line = _line(name, ret)
            va, ma = _run(line, True, collide, partial, monkeypatch)
            vb, mb = _run(line, False, collide, partial, monkeypatch)
            monkeypatch.undo()
            assert np.array_equal(va, vb), line
            assert np.array_equal(ma, mb), line


def test_distinct_addresses_take_the_vector_path(monkeypatch):
    seen = []
    orig = exec_mem._atomic_vec

    def spy(*a):
        r = orig(*a)
        seen.append(r is not None)
        return r
    monkeypatch.setattr(exec_mem, "_atomic_vec", spy)
    mem = GlobalMemory()
    base = mem.map("buf", np.zeros(1024, np.uint8))
    wv = Wave(Workgroup((0, 0, 0), 0), 0)
    a = base + LANES * 4
    wv.v[2], wv.v[3] = a & 0xFFFFFFFF, a >> 32
    wv.v[10] = LANES
    wv.set_exec(np.ones(64, bool))
    prog = Program(build_kernel(["global_atomic_add v20, v[2:3], v10, off glc", "s_endpgm"]),
                   mem)
    _run_group(prog, [wv], 1000)
    assert seen == [True]
    assert np.array_equal(mem.region("buf").words[:64], LANES)

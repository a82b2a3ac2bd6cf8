"""The emulator trace (asmevo.emu.trace): opt-in, and a traced run gives the same outputs."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from asmevo.emu import harness as H
from asmevo.emu.launch import run_kernel
from asmevo.emu.trace import Tracer
from asmevo.frontend.loader import load

NAMES = ["vadd_f32", "transpose_lds", "sgemm_tiled", "histogram_atomic", "mfma_16x16x16_f16",
         "scan_inclusive_i32_O0", "gather_scatter_f32"]


def _run(corpus_dir, name, trace=None):
    h = H.load_harness(str(corpus_dir / "manifest.json"), name)
    m = load(os.path.join(h["_dir"], h["code_object"]))
    with np.errstate(all="ignore"):
        r = run_kernel(m, h["kernel"], H.make_launch(h, H.make_inputs(h, 0)), trace=trace)
    return m, h, r


@pytest.mark.corpus
@pytest.mark.parametrize("name", NAMES)
def test_traced_run_gives_identical_outputs(corpus_dir, name):
    _, _, plain = _run(corpus_dir, name)
    tr = Tracer()
    m, h, traced = _run(corpus_dir, name, tr)
    assert plain.outputs.keys() == traced.outputs.keys()
    for k in plain.outputs:
        assert np.array_equal(plain.outputs[k].view(np.uint8), traced.outputs[k].view(np.uint8)), k
    assert traced.instructions == plain.instructions
    assert sum(len(w) for w in tr.waves) == plain.instructions
    assert len(tr.waves) == plain.waves
    n = len(list(m.kernel(h["kernel"]).instructions()))
    for w in tr.waves:
        assert len(w.pcs) == len(w.execs)
        assert all(0 <= p < n for p in w.pcs) and all(0 <= e <= 64 for e in w.execs)
        for pos, a in w.addrs.items():
            assert a.dtype == np.uint64 and 0 <= pos < len(w.pcs)


@pytest.mark.corpus
def test_trace_addresses_are_the_buffers(corpus_dir):
    """Global load addresses of vadd_f32 fall inside the input buffers it reads."""
    tr = Tracer()
    m, h, r = _run(corpus_dir, "vadd_f32", tr)
    lo = min(r.buffer_addresses.values())
    seen = 0
    k = m.kernel(h["kernel"])
    insts = list(k.instructions())
    for w in tr.waves:
        for pos, a in w.addrs.items():
            if insts[w.pcs[pos]].opcode.startswith("global_"):
                assert (a >= lo).all()
                seen += 1
    assert seen > 0


def test_untraced_run_takes_no_trace_path(monkeypatch):
    """Without a tracer the recording loop is never entered."""
    from planted_kernels import run_text_kernel
    called = []
    monkeypatch.setattr(Tracer, "run_group", lambda *a, **k: called.append(1))
    out = run_text_kernel("global_store_dword v1, v0, s[4:5]\n", np.zeros(64, np.uint32))
    assert not called and out[:4].tolist() == [0, 1, 2, 3]


@pytest.mark.corpus
@pytest.mark.parametrize("name", ["vadd_f32", "histogram_atomic", "softmax_row"])
def test_partial_trace_gives_identical_outputs(corpus_dir, name):
    """Tracing only some workgroups (the others run untraced, lockstep included) changes
    nothing in the outputs."""
    _, _, plain = _run(corpus_dir, name)
    tr = Tracer(select=lambda i: i % 3 == 1)
    _, _, part = _run(corpus_dir, name, tr)
    for k in plain.outputs:
        assert np.array_equal(plain.outputs[k].view(np.uint8), part.outputs[k].view(np.uint8)), k
    assert part.instructions == plain.instructions
    assert tr.waves and all(w.wg_linear % 3 == 1 for w in tr.waves)

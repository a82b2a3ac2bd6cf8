"""The launch a HIP device would pass (kernarg bytes, buffer addresses, grid, block, dynamic
LDS) is byte-identical to the emulator's, for every harness of the shared corpus."""

from __future__ import annotations

import json

import pytest

from asmevo.device.hip import HipDevice
from asmevo.emu.harness import load_harness, make_inputs, make_launch
from asmevo.emu.launch import prepare_launch
from asmevo.emu.memory import GlobalMemory
from asmevo.frontend.loader import load
from fake_hip import FakeHip


def _entries(corpus):
    for man in (corpus / "manifest.json", corpus / "triton" / "manifest.json"):
        if man.exists():
            for e in json.loads(man.read_text()):
                yield man, e


@pytest.mark.corpus
def test_kernarg_identical_for_every_corpus_harness(corpus_dir):
    n = 0
    for man, e in _entries(corpus_dir):
        h = load_harness(str(man), e["name"])
        m = load(str(man.parent / e["code_object"]))
        # the emulator's placement
        mem = GlobalMemory()
        emu = prepare_launch(m, e["kernel"], make_launch(h, make_inputs(h, 3)),
                             lambda name, d: mem.map(name, d))
        fake = FakeHip()
        ld = HipDevice(0, binding=fake).load(m, image=b"x")
        ld.run(e["kernel"], make_launch(h, make_inputs(h, 3)))
        got = fake.launches[-1]
        assert got["kernarg"] == emu.kernarg, e["name"]
        assert got["grid"] == emu.grid and got["block"] == emu.block, e["name"]
        assert got["shmem"] == emu.dynamic_lds, e["name"]
        n += 1
    assert n >= 40

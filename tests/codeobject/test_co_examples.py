"""The shipped example (examples/vadd_f32.*) works without ../shared."""

from __future__ import annotations

import json
import pathlib
import re

import numpy as np

from asmevo.frontend.codeobject import read_code_object
from asmevo.frontend.descriptor import DIRECTIVE_FIELDS
from asmevo.tools.roundtrip import roundtrip

EX = pathlib.Path(__file__).resolve().parents[2] / "examples"


def test_example_roundtrip():
    checks = roundtrip(str(EX / "vadd_f32.co"))
    assert all(c.ok for c in checks), [c.line() for c in checks]


def test_example_descriptor_matches_clang_s():
    kd = read_code_object(EX / "vadd_f32.co").kernels[0].descriptor
    text = (EX / "vadd_f32.s").read_text()
    fields = {m.group(1): int(m.group(2)) for m in re.finditer(r"(\.amdhsa_\w+)\s+(\d+)", text)}
    n = 0
    for directive, attr in DIRECTIVE_FIELDS.items():
        if directive in fields:
            assert getattr(kd, attr) == fields[directive], directive
            n += 1
    assert n >= 30
    assert kd.accum_offset_vgprs == fields[".amdhsa_accum_offset"] == 8


def test_example_harness_and_reference():
    entry = json.loads((EX / "vadd_f32.json").read_text())
    assert entry["code_object"] == "vadd_f32.co" and entry["kernel"] == "vadd_f32"
    mod, fn = entry["reference"].split(":")
    ns: dict = {}
    exec(compile((EX / mod).read_text(), str(EX / mod), "exec"), ns)
    a = np.arange(1000, dtype=np.float32)
    out = ns[fn](a=a, b=a, c=np.zeros_like(a), n=900)
    assert np.array_equal(out["c"][:900], 2 * a[:900]) and not out["c"][900:].any()
    md = read_code_object(EX / "vadd_f32.co").kernels[0].metadata
    assert [x["name"] for x in entry["args"]] == ["a", "b", "c", "n"]
    assert [a.offset for a in md.args] == [0, 8, 16, 24]
    assert list(md.reqd_workgroup_size) == entry["block"]

"""A harness whose buffer dtype contradicts the metadata's pointee type is bad input.

A newcomer gave ``dtype: float64`` for vadd_f32's ``float*`` arguments: asmevo ran the kernel
and reported ``MISMATCH c: 1000 of 1000``, which reads like a kernel bug.  Now the launch is
refused with one message naming the argument, both types and both element sizes."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

from asmevo.emu.launch import _pointee_bytes

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name,size", [("float*", 4), ("double*", 8), ("const float*", 4),
                                       ("half*", 2), ("uint*", 4), ("long*", 8),
                                       ("float4*", None), ("char*", None), ("void*", None),
                                       ("struct S*", None), ("float", None), (None, None)])
def test_pointee_bytes(name, size):
    assert _pointee_bytes(name) == size


def test_float64_for_a_float_pointer_exits_2(tmp_path, llvm_mc):
    h = json.loads((ROOT / "examples" / "vadd_f32.json").read_text())
    for a in h["args"]:
        if a.get("dtype") == "float32":
            a["dtype"] = "float64"
    p = tmp_path / "h64.json"
    p.write_text(json.dumps(h))
    r = subprocess.run([sys.executable, "-m", "asmevo", "run", str(ROOT / "examples" / "vadd_f32.co"),
                        "--harness", str(p)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2, r.stderr
    assert "float64" in r.stderr and "'float*'" in r.stderr and "Traceback" not in r.stderr

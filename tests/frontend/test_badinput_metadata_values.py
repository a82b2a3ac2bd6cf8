"""Metadata values of the wrong type (issue 15): ``.amdgpu_metadata`` YAML in assembly and
the NT_AMDGPU_METADATA note of a code object.  llvm-mc rejects them ("invalid HSA
metadata"); asmevo used to crash on some (``internal error: ValueError`` / ``TypeError``) and
accept others.  Now: exit 2, located at the value (file:line:column, or the note's byte
offset), never an internal error."""

from __future__ import annotations

import pathlib

import pytest

from asmevo.cli import main as cli_main

EX = pathlib.Path(__file__).resolve().parents[2] / "examples"
SRC = (EX / "vadd_f32.s").read_text()
LINES = SRC.split("\n")


def _line_of(text: str) -> int:
    return next(n for n, ln in enumerate(LINES, 1) if text in ln)


CASES = [  # (id, old, new, line holding the bad value, words)
    ("kernarg-size-string", ".kernarg_segment_size: 28", ".kernarg_segment_size: abc",
     ".kernarg_segment_size", ".kernarg_segment_size is 'abc'"),
    ("args-int", "    .args:\n", "    .args: 5\n    .unused:\n", "    .args:", ".args is 5"),
    ("offset-string", ".offset:         24", ".offset:         x", ".offset:         24",
     ".offset is 'x'"),
    ("reqd-strings", "      - 256\n      - 1\n      - 1\n", "      - a\n      - b\n      - c\n",
     "      - 256", ".reqd_workgroup_size is ['a', 'b', 'c']"),
    ("sgpr-list", ".sgpr_count:     14", ".sgpr_count:     [1]", ".sgpr_count", ".sgpr_count is [1]"),
    ("version-string", "amdhsa.version:\n  - 1\n  - 2", "amdhsa.version: x", "amdhsa.version:",
     "amdhsa.version is 'x'"),
    ("wavefront-float", ".wavefront_size: 64", ".wavefront_size: 1e999", ".wavefront_size",
     "floating-point"),
    ("name-list", ".name:           vadd_f32", ".name:           [1, 2]",
     ".name:           vadd_f32", ".name is [1, 2]"),
]


@pytest.mark.parametrize("old,new,at,words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
@pytest.mark.parametrize("cmd", ["analyze", "run"])
def test_bad_yaml_metadata_value(tmp_path, capsys, cmd, old, new, at, words):
    assert old in SRC
    p = tmp_path / "bad.s"
    p.write_text(SRC.replace(old, new, 1))
    argv = [cmd, str(p)] + (["--harness", str(EX / "vadd_f32.json")] if cmd == "run" else [])
    rc = cli_main(argv)
    out, err = capsys.readouterr()
    assert rc == 2, err
    line = _line_of(at) if at != "      - 256" else _line_of(".reqd_workgroup_size") + 1
    assert f"{p}:{line}:" in err and "invalid .amdgpu_metadata" in err and words in err
    assert "internal error" not in err and "Traceback" not in out + err


def test_bad_note_metadata_value(tmp_path, capsys):
    data = bytearray((EX / "vadd_f32.co").read_bytes())
    key = b"\xab.sgpr_count"  # fixstr of 11 bytes, then the value 14 (positive fixint)
    i = data.index(key) + len(key)
    assert data[i] == 14
    data[i] = 0xC3  # msgpack true: same size, wrong type
    p = tmp_path / "bad.co"
    p.write_bytes(data)
    for cmd in ("dis", "analyze"):
        rc = cli_main([cmd, str(p)])
        out, err = capsys.readouterr()
        assert rc == 2, err
        assert f"{p}: byte offset" in err and ".sgpr_count is True" in err
        assert "internal error" not in err


@pytest.mark.parametrize("value", ["-1", "0x1ffffffff"])
def test_descriptor_value_out_of_range(tmp_path, capsys, value):
    """Found by fuzzing: a negative ``.amdhsa_private_segment_fixed_size`` reached the
    emulator's dispatch packet (struct.error, an internal error); llvm-mc says "value out of
    range"."""
    p = tmp_path / "kd.s"
    old = ".amdhsa_private_segment_fixed_size 0"
    p.write_text(SRC.replace(old, f".amdhsa_private_segment_fixed_size {value}"))
    line = _line_of(old)
    for argv in (["run", str(p), "--harness", str(EX / "vadd_f32.json")], ["analyze", str(p)]):
        rc = cli_main(argv)
        err = capsys.readouterr().err
        assert rc == 2, err
        assert f"{p}:{line}:38: error:" in err and "value out of range" in err
        assert "internal error" not in err


@pytest.mark.parametrize("old,new,col", [
    (".amdhsa_user_sgpr_count 2", ".amdhsa_user_sgpr_count 255", 27),
    (".amdhsa_exception_fp_ieee_underflow 0", ".amdhsa_exception_fp_ieee_underflow 255", 39),
])
def test_descriptor_field_wider_than_its_bits(tmp_path, capsys, old, new, col):
    """Found by fuzzing: ``.amdhsa_user_sgpr_count 255`` (a 5-bit field) crashed the
    emulator's wave setup (IndexError)."""
    p = tmp_path / "kd.s"
    p.write_text(SRC.replace(old, new))
    rc = cli_main(["run", str(p), "--harness", str(EX / "vadd_f32.json")])
    err = capsys.readouterr().err
    assert rc == 2 and f"{p}:{_line_of(old)}:{col}: error:" in err and "out of range" in err
    assert "internal error" not in err

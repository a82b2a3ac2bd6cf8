"""A harness that does not fit the kernel (newcomer test): ``asmevo verify`` said "the
original faults on the harness inputs (trial 0): error: kernel vadd_f32 has 4 explicit
arguments (?, ?, ?, ?); the harness gives 2" -- placeholders for the arguments of a code
object built without argument names, no harness file, and "faults" for what is bad input.
Every command taking a harness now checks the entry's launch against the kernel's metadata
before any work (:func:`asmevo.emu.harness.checked_entry` with ``fits=True``): one line
naming the harness file, the entry, the code object and what the metadata expects; exit 2.
A buffer too small for the launch still faults in the emulator; the fault now says which
buffer the access missed and by how much."""

from __future__ import annotations

import json
import pathlib

import pytest

from asmevo.cli import main
from asmevo.tools.opt import main as opt_main

EX = pathlib.Path(__file__).resolve().parents[2] / "examples"
CO = EX / "vadd_f32.co"


def _entry() -> dict:
    return json.loads((EX / "vadd_f32.json").read_text())


def _harness(tmp_path, e) -> pathlib.Path:
    p = tmp_path / "h.json"
    p.write_text(json.dumps(e))
    return p


def _one_line(err: str, prog: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{prog}: "), err
    assert "Traceback" not in err and "internal error" not in err
    return lines[0]


def _run(tmp_path, cmd, h, capsys):
    """(exit status, the one error line) of ``cmd`` over the example with harness ``h``."""
    if cmd == "opt":
        rc = opt_main(["--passes=dce", str(CO), "-o", str(tmp_path / "o.co"), "--verify=diff",
                       "--harness", str(h)])
        assert not (tmp_path / "o.co").exists()
        return rc, _one_line(capsys.readouterr().err, "asmevo-opt")
    args = {"run": ["run", str(CO)], "verify": ["verify", str(CO), str(CO)],
            "profile": ["profile", str(CO)],
            "evolve": ["evolve", str(CO), "--out", str(tmp_path / "run"), "--budget", "1",
                       "--quiet"]}[cmd]
    rc = main([*args, "--harness", str(h)])
    out, err = capsys.readouterr()
    assert out == ""
    return rc, _one_line(err, f"asmevo {cmd}")


CMDS = ["run", "verify", "profile", "evolve", "opt"]


@pytest.mark.parametrize("cmd", CMDS)
def test_another_kernels_harness_names_every_argument(tmp_path, capsys, cmd):
    """relu_f32's two arguments against vadd_f32's four (the code object has no argument
    names: value kind and kernarg offset stand for them, never '?')."""
    e = _entry()
    e.update(name="relu_f32", args=[dict(e["args"][0], name="x"), dict(e["args"][2], name="y")])
    h = _harness(tmp_path, e)
    rc, line = _run(tmp_path, cmd, h, capsys)
    assert rc == 2
    assert "?" not in line and "faults" not in line, line
    assert line.split(": ", 1)[1].startswith(
        f"{h}: error: kernel vadd_f32 has 4 explicit arguments (global_buffer at kernarg offset "
        "0, global_buffer at kernarg offset 8, global_buffer at kernarg offset 16, by_value at "
        "kernarg offset 24); the harness gives 2 (x, y); expected one harness argument per "
        "kernel argument, in order"), line
    assert f"(entry 'relu_f32' of this harness, against kernel vadd_f32 of {CO})" in line, line
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("cmd", CMDS)
def test_wrong_block_says_the_block_expected(tmp_path, capsys, cmd):
    e = _entry()
    e.update(block=[128, 1, 1], grid=[8, 1, 1])
    h = _harness(tmp_path, e)
    rc, line = _run(tmp_path, cmd, h, capsys)
    assert rc == 2 and line.split(": ", 1)[1].startswith(f"{h}: error: "), line
    assert ("kernel vadd_f32 requires workgroup size (256, 1, 1), the launch gives (128, 1, 1); "
            'expected "block": [256, 1, 1]') in line, line


@pytest.mark.parametrize("cmd", CMDS)
def test_wrong_scalar_size_names_the_argument(tmp_path, capsys, cmd):
    e = _entry()
    e["args"][3]["dtype"] = "int64"
    h = _harness(tmp_path, e)
    rc, line = _run(tmp_path, cmd, h, capsys)
    assert rc == 2 and f"{h}: error: " in line
    assert ("argument #3 (n in the harness, by_value at kernarg offset 24 in the metadata) is a "
            "scalar of dtype int64 (8 bytes) in the harness but 4 bytes in the metadata") in line


@pytest.mark.parametrize("cmd", ["run", "verify"])
def test_buffer_too_small_names_the_buffer_it_missed(tmp_path, capsys, cmd):
    """A fault, not a mismatch the metadata shows: the message says which buffer the first
    faulting access missed, its size and the size the access needed."""
    e = _entry()
    e["args"][0]["count"] = 10
    h = _harness(tmp_path, e)
    rc, line = _run(tmp_path, cmd, h, capsys)
    assert rc == 2 and "?" not in line
    assert ("lane 10: global access of 4 bytes at 0x100000028 is outside every mapped buffer; "
            "it ends 4 byte(s) past the end of the harness buffer 'a' (40 bytes at "
            "0x100000000..0x100000028), at byte offset 40; the active lanes of this wave end at "
            "byte offset 256; expected the buffer to hold at least 256 bytes for this launch "
            '(its "count")') in line, line
    assert line.count("lane 10") == 1, line
    if cmd == "verify":   # the harness named once, as the location; no second "error:"
        assert line.startswith(f"asmevo verify: {h}: error: the original faults on the "
                               "harness inputs (trial 0): kernel vadd_f32"), line
        assert line.count("error:") == 1, line


@pytest.mark.parametrize("cmd", ["run", "verify"])
def test_buffer_too_small_asks_for_what_the_whole_wave_needs(tmp_path, capsys, cmd):
    """Newcomer finding: ``n`` raised to 1024 (the grid's 4 x 256 work-items) with buffers of
    1000 floats: the fault asked for 4004 bytes (the first faulting lane, 40, of wave 15), and
    a user who raised "count" to 1001 faulted again.  The size asked for is now the highest
    end over the faulting instruction's active lanes (items 1000-1023: 4096 bytes), the lane
    is named once, and a buffer of that size runs."""
    e = _entry()
    e["args"][3]["value"] = 1024
    h = _harness(tmp_path, e)
    rc, line = _run(tmp_path, cmd, h, capsys)
    assert rc == 2, line
    assert ("'global_load_dword v6, v[4:5], off': lane 40: global access of 4 bytes at "
            "0x100000fa0 is outside every mapped buffer; it ends 4 byte(s) past the end of the "
            "harness buffer 'a' (4000 bytes at 0x100000000..0x100000fa0), at byte offset 4000; "
            "the active lanes of this wave end at byte offset 4096; expected the buffer to hold "
            'at least 4096 bytes for this launch (its "count")') in line, line
    assert "(lane" not in line and line.count("lane 40") == 1, line
    # one lane more (what the old message asked for) still faults, asking for the same 4096
    e["args"][0]["count"] = 1001
    rc, line = _run(tmp_path, cmd, _harness(tmp_path, e), capsys)
    assert rc == 2 and "lane 41: " in line and "at least 4096 bytes" in line, line
    # what it asks for is enough
    for a in e["args"][:3]:
        a["count"] = 4096 // 4
    assert main(["run", str(CO), "--harness", str(_harness(tmp_path, e))]) == 0
    assert "error" not in capsys.readouterr().err

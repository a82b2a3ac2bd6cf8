"""Findings of a newcomer's session (2026-12-02) on ``asmevo run``, ``asmevo dis`` and the
emulate/parse benchmarks: each test states the behaviour the fix gives (each failed before)."""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import re
import shutil

import numpy as np
import pytest

from asmevo.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
EX = ROOT / "examples"


def _bench(name):
    """A benchmark script as a module, loaded by path (benchmarks/ is not on sys.path)."""
    spec = importlib.util.spec_from_file_location(f"_bench_nc_{name}", ROOT / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_run_line_names_wave_instructions_and_emulator_wall_time(tmp_path, capsys):
    """The count beside the lane-instructions is wave-instructions, and the seconds are the
    emulator's wall time, said so (not something a reader takes for a GPU time)."""
    for f in ("vadd_f32.co", "vadd_f32.json", "ref.py"):
        shutil.copy(EX / f, tmp_path / f)
    rc = main(["run", str(tmp_path / "vadd_f32.co"), "--harness", str(tmp_path / "vadd_f32.json")])
    out = capsys.readouterr().out
    assert rc == 0
    m = re.search(r"(\d+) waves, (\d+) wave-instructions \((\d+) lane-instructions\), "
                  r"emulated in [0-9.]+ s wall \([0-9.]+ M lane-inst/s; not a GPU time", out)
    assert m, out
    assert int(m.group(3)) <= 64 * int(m.group(2))


def test_dis_of_binary_non_elf_names_its_bytes(tmp_path, capsys):
    """``asmevo dis`` of binary data that is not ELF says so (as for a .co file), instead of
    suggesting 'asmevo asm for assembly text'; text still gets that hint."""
    b = tmp_path / "x.bin"
    b.write_bytes(bytes([1, 0x37, 0x80, 0x12]) + bytes(range(256)) * 4)
    rc = main(["dis", str(b)])
    err = capsys.readouterr().err
    assert rc == 2
    assert "not an ELF file" in err and "got 01 37 80 12" in err and "asmevo asm" not in err, err
    assert "Traceback" not in err
    t = tmp_path / "x.s"
    t.write_text("\ts_endpgm\n")
    rc = main(["dis", str(t)])
    err = capsys.readouterr().err
    assert rc == 2 and "use 'asmevo asm' for assembly text" in err, err


def test_emulate_bench_refuses_unknown_kernels_and_zero_repeats(tmp_path, capsys):
    """benchmarks/emulate.py: a misspelt kernel name is an error (exit 2, named), not dropped
    in silence (all names misspelt: a ZeroDivisionError traceback); --repeat 0 is refused
    (it printed nan); every option has a help text."""
    emu = _bench("emulate")
    (tmp_path / "manifest.json").write_text(json.dumps([]))
    assert emu.main(["--corpus", str(tmp_path), "--kernels", "vadd_f3"]) == 2
    assert "unknown kernel name(s): vadd_f3" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        emu.main(["--corpus", str(tmp_path), "--repeat", "0"])
    assert e.value.code == 2
    capsys.readouterr()
    with pytest.raises(SystemExit):
        emu.main(["--help"])
    out = capsys.readouterr().out
    for opt in ("--kernels", "--repeat", "--ref", "--modes", "--corpus"):
        line = next(ln for ln in out.splitlines() if ln.strip().startswith(opt))
        assert len(line.split()) > 2, (opt, out)     # the option, its metavar and a help text
    assert "new/X" in out and "faster" in out


def test_parse_bench_options_and_instruction_count(tmp_path, capsys):
    """benchmarks/parse.py: --runs 0 and --no-e2e with --e2e-only are refused (exit 2; they
    gave a StatisticsError traceback and an empty run); the end-to-end header counts
    instructions, not the .amdhsa_kernel block's fields."""
    parse = _bench("parse")
    for argv in (["--runs", "0"], ["--no-e2e", "--e2e-only"], [str(tmp_path / "missing.co")]):
        with pytest.raises(SystemExit) as e:
            parse.main(argv)
        assert e.value.code == 2, argv
    capsys.readouterr()
    assert main(["dis", str(EX / "vadd_f32.co")]) == 0
    text = capsys.readouterr().out
    assert ".amdhsa_next_free_vgpr" in text
    from asmevo.frontend.loader import load
    want = sum(k.num_instructions() for k in load(str(EX / "vadd_f32.co")).kernels)
    assert parse._instruction_lines(text) == want


def test_parse_bench_removes_its_temporary_directory_on_failure(tmp_path, monkeypatch):
    """benchmarks/parse.py's end-to-end part removes its temporary directory when a command
    fails (it stayed in /tmp as asmevo-bench-*)."""
    import subprocess
    import tempfile
    parse = _bench("parse")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    bad = tmp_path / "bad.co"
    bad.write_bytes(b"\x7fELF" + bytes(60))
    with pytest.raises(subprocess.CalledProcessError):
        parse.end_to_end(bad, 1)
    assert os.listdir(tmp) == []


def test_benchmarks_refuse_a_ref_without_asmevo(tmp_path, capsys):
    """--ref DIR without an asmevo package: exit 2 naming it (both scripts ran the installed
    asmevo as 'ref' and printed a ratio of this checkout against itself)."""
    emu, parse = _bench("emulate"), _bench("parse")
    (tmp_path / "manifest.json").write_text(json.dumps([]))
    missing = str(tmp_path / "nothing")
    assert emu.main(["--corpus", str(tmp_path), "--kernels", "vadd_64k", "--ref", missing]) == 2
    assert "no asmevo package there" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        parse.main(["--ref", missing])
    assert e.value.code == 2
    assert "no asmevo package there" in capsys.readouterr().err


def test_run_help_says_what_is_printed(capsys):
    """``asmevo run --help`` says what the counts are and that the seconds are not a GPU time."""
    assert main(["run", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "popcount(EXEC)" in out and "wave-instructions" in out and "not a GPU time" in out, out

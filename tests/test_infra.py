"""Tests of the small shared infrastructure: errors, tool lookup, safe output, IR basics."""

import os
import subprocess
import sys

import pytest

from asmevo.errors import AsmevoError, ToolNotFoundError
from asmevo.fileio import write_output
from asmevo.ir import Imm, Instruction, Reg, Special, Src, reg_units
from asmevo import llvm


def test_error_location_format():
    e = AsmevoError("unknown mnemonic 'v_foo'", file="k.s", line=3, column=5)
    assert str(e) == "k.s:3:5: error: unknown mnemonic 'v_foo'"
    e = AsmevoError("truncated ELF header", file="k.co", offset=0x40)
    assert str(e) == "k.co: byte offset 0x40: error: truncated ELF header"


def test_write_output_refuses_input(tmp_path):
    p = tmp_path / "in.s"
    p.write_text("x")
    with pytest.raises(AsmevoError):
        write_output(str(p), "y", inputs=(str(p),))
    assert p.read_text() == "x"
    out = tmp_path / "out.s"
    write_output(str(out), "hello", inputs=(str(p),))
    assert out.read_text() == "hello"
    assert [f for f in os.listdir(tmp_path) if f.endswith(".tmp")] == []


def test_find_tool_env_override_missing(monkeypatch, tmp_path):
    llvm.find_tool.cache_clear()
    monkeypatch.setenv("ASMEVO_LLVM_BIN", str(tmp_path))
    monkeypatch.setattr(llvm, "_VERSIONS", ())
    monkeypatch.setattr(llvm, "_candidate_dirs", lambda: [str(tmp_path)])
    with pytest.raises(ToolNotFoundError) as ei:
        llvm.find_tool("llvm-nonexistent-tool")
    assert "apt-get install llvm-19 lld-19" in str(ei.value)
    llvm.find_tool.cache_clear()


def test_reg_units_split_ranges_and_specials():
    assert reg_units(Reg("v", 4, 3)) == (("v", 4), ("v", 5), ("v", 6))
    assert reg_units(Special("vcc")) == (("vcc_lo",), ("vcc_hi",))
    assert reg_units(Src(Reg("s", 2), neg=True)) == (("s", 2),)
    assert reg_units(Imm(5)) == ()
    assert reg_units(Special("off")) == ()


def test_instruction_text_and_evolve():
    i = Instruction("v_add_f32_e64", [Reg("v", 0), Src(Reg("v", 1), neg=True, abs=True), Imm(0.5, "0.5")],
                    [("clamp", True)], encoding=b"\0" * 8, address=0x100)
    assert i.text() == "v_add_f32_e64 v0, -|v1|, 0.5 clamp"
    j = i.evolve(operands=[Reg("v", 2)] + i.operands[1:])
    assert j.encoding is None and j.address is None
    assert j.text().startswith("v_add_f32_e64 v2,")
    assert i == i.copy() and i != j


def test_cli_without_command_exits_2():
    r = subprocess.run([sys.executable, "-m", "asmevo.cli"], capture_output=True, text=True)
    assert r.returncode == 2

"""A kernel symbol whose value lies outside .text is a CodeObjectError at the byte offset of
its symbol table entry, for every tool (was a KeyError traceback in the disassembler)."""

from __future__ import annotations

import pytest
from elftools.elf.elffile import ELFFile

from asmevo.cli import main as cli_main
from asmevo.errors import CodeObjectError
from asmevo.frontend.codeobject import read_code_object
from asmevo.tools.opt import main as opt_main

pytestmark = pytest.mark.corpus


def _oob(corpus_dir, tmp_path, value=0x99999):
    """vadd_f32.co with the ``vadd_f32`` symbol's st_value set to ``value``; returns the path
    and the file offset of that symbol table entry (found with pyelftools, an independent
    reader)."""
    src = corpus_dir / "vadd_f32.co"
    data = bytearray(src.read_bytes())
    with open(src, "rb") as f:
        symtab = ELFFile(f).get_section_by_name(".symtab")
        idx = next(i for i, s in enumerate(symtab.iter_symbols()) if s.name == "vadd_f32")
        entry = symtab["sh_offset"] + idx * symtab["sh_entsize"]
    data[entry + 8:entry + 16] = value.to_bytes(8, "little")  # Elf64_Sym.st_value
    p = tmp_path / "sym_value_oob.co"
    p.write_bytes(bytes(data))
    return p, entry


def test_reader_reports_symbol_entry_offset(corpus_dir, tmp_path):
    p, entry = _oob(corpus_dir, tmp_path)
    with pytest.raises(CodeObjectError) as ei:
        read_code_object(str(p))
    assert ei.value.offset == entry
    assert "'vadd_f32'" in ei.value.message and "outside .text" in ei.value.message


@pytest.mark.parametrize("cmd", ["dis", "analyze", "roundtrip"])
def test_tools_exit_2(corpus_dir, tmp_path, capsys, cmd):
    p, entry = _oob(corpus_dir, tmp_path)
    assert cli_main([cmd, str(p)]) == 2
    err = capsys.readouterr().err
    assert f"{p}: byte offset {entry:#x}: error: symbol 'vadd_f32'" in err
    assert "Traceback" not in err and "KeyError" not in err


def test_opt_exit_2_no_output(corpus_dir, tmp_path, capsys):
    p, entry = _oob(corpus_dir, tmp_path)
    out = tmp_path / "o.s"
    assert opt_main(["--passes=dce", str(p), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"byte offset {entry:#x}" in err and "internal error" not in err
    assert not out.exists()

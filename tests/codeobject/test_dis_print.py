"""``asmevo dis``'s own printing (:func:`asmevo.frontend.disasm.disassemble_and_print`: one
line per listing text, printed while llvm-mc runs the check) gives print_module's text."""

from __future__ import annotations

import pytest

from asmevo.frontend.disasm import disassemble, disassemble_and_print
from asmevo.frontend.objdump import StartedObjdump
from asmevo.ir.printer import print_module
from tests.codeobject.test_co_roundtrip import _KERNEL_SRC  # v_mov_b32 with a literal, as .long


def _code_objects(root):
    return sorted(p for p in root.rglob("*") if p.suffix in (".co", ".hsaco"))


@pytest.mark.corpus
def test_dis_text_is_print_module_text(corpus_dir):
    files = _code_objects(corpus_dir)
    assert files
    for p in files:
        module, text = disassemble_and_print(str(p), listing=StartedObjdump(str(p)))
        assert text == print_module(module), p
        assert text == print_module(disassemble(str(p))), p


def test_dis_text_of_a_repaired_module(tmp_path):
    """A module the check changes (an instruction made raw) is printed again."""
    from asmevo.backend.assemble import assemble_bytes
    path = tmp_path / "lit.co"  # v_mov_b32 with the literal 1.0, which llvm-mc would fold
    path.write_bytes(assemble_bytes(_KERNEL_SRC))
    module, text = disassemble_and_print(str(path))
    assert ".long\t0x7e0002ff, 0x3f800000" in text
    assert text == print_module(module) == print_module(disassemble(str(path)))




@pytest.mark.corpus
def test_dis_error_after_the_listing_started_ends_the_tool(tmp_path, corpus_dir):
    """``asmevo dis`` starts llvm-objdump (its listing comes through a pipe) before reading
    the code object; when the reading fails, the command ends at once (the tool, blocked on a
    full pipe, is ended by closing it) with the error and status 2."""
    import os
    import subprocess
    import sys

    from asmevo.frontend.elf import read_elf
    src = max(_code_objects(corpus_dir), key=lambda p: p.stat().st_size)  # a listing of MBs
    data = bytearray(src.read_bytes())
    note = next(s for s in read_elf(bytes(data)).sections if s.type_number == 7)
    data[note.offset + 12 + 8] = 0xC1  # the metadata's first MessagePack byte: never valid
    bad = tmp_path / "bad.co"
    bad.write_bytes(bytes(data))
    env = dict(os.environ, PYTHONPATH=str(__import__("pathlib").Path(__file__).resolve().parents[2]))
    p = subprocess.run([sys.executable, "-m", "asmevo", "dis", str(bad)], capture_output=True,
                       text=True, timeout=60, env=env, cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert "NT_AMDGPU_METADATA is not valid MessagePack" in p.stderr

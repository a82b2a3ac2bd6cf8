"""``asmevo dis``'s own printing (:func:`asmevo.frontend.disasm.disassemble_and_print`: one
line per listing text, printed while llvm-mc runs the check) gives print_module's text."""

from __future__ import annotations

import pytest

from asmevo.frontend.disasm import disassemble, disassemble_and_print
from asmevo.frontend.objdump import StartedObjdump
from asmevo.ir.printer import print_module


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
    path.write_bytes(assemble_bytes(_LITERAL_KERNEL))
    module, text = disassemble_and_print(str(path))
    assert ".long\t0x7e0002ff, 0x3f800000" in text
    assert text == print_module(module) == print_module(disassemble(str(path)))


_LITERAL_KERNEL = """\t.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
\t.amdhsa_code_object_version 5
\t.text
\t.globl k
\t.p2align 8
\t.type k,@function
k:
\t.long 0x7e0002ff, 0x3f800000
\tv_add_f32_e32 v0, 2.0, v0
\ts_endpgm
\t.section .rodata,"a",@progbits
\t.p2align 6
\t.amdhsa_kernel k
\t\t.amdhsa_next_free_vgpr 1
\t\t.amdhsa_next_free_sgpr 0
\t\t.amdhsa_accum_offset 4
\t.end_amdhsa_kernel
"""

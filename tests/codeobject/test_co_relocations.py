"""A rebuild never drops a code object's dynamic relocations (adversary round 2, WA-3).

The disassembler prints a pointer table in ``.data.rel.ro`` as the file's bytes (zeros: the
loader fills it from ``.rela.dyn``), so llvm-mc + ld.lld would build a code object without
the table's ``R_AMDGPU_RELATIVE64``.  Such a rebuild is refused with the relocation named; an
in-place patch (every change the same size) keeps the file's relocations.
"""

from __future__ import annotations

import pathlib
import subprocess

import pytest

from corpus_paths import require_tool

from asmevo.backend.rebuild import write_code_object
from asmevo.errors import AsmevoError
from asmevo.frontend.asm_parser import parse_instruction
from asmevo.frontend.loader import load
from asmevo.frontend.relocs import dynamic_relocations
from reloc_table import vadd_with_pointer_table

def _grown(path: pathlib.Path, kernel: str):
    m = load(str(path))
    m.kernel(kernel).blocks[0].instructions.insert(0, parse_instruction("s_nop 0"))
    return m


def _refused(co: pathlib.Path, kernel: str, tmp_path: pathlib.Path) -> None:
    assert dynamic_relocations(co.read_bytes())
    out = tmp_path / "out.co"
    with pytest.raises(AsmevoError, match="dynamic relocations.*R_AMDGPU_RELATIVE64 at tab"):
        write_code_object(_grown(co, kernel), str(out))
    assert not out.exists()


def test_rebuild_that_drops_relocations_is_refused(tmp_path, llvm_mc):
    co = vadd_with_pointer_table(tmp_path / "k0.co")
    _refused(co, "vadd_f32", tmp_path)


def test_patch_in_place_keeps_relocations(tmp_path, llvm_mc):
    co = vadd_with_pointer_table(tmp_path / "k0.co")
    m = load(str(co))
    out = tmp_path / "same.co"
    assert write_code_object(m, str(out)) == "patched"
    assert dynamic_relocations(out.read_bytes()) == dynamic_relocations(co.read_bytes())


def test_clang_pointer_table_rebuild_is_refused(tmp_path):
    clang = require_tool("clang")   # skips only when clang is not installed
    src = tmp_path / "k.cl"
    src.write_text("__constant int vals[4] = {11, 22, 33, 44};\n"
                   "__constant int *__constant tab[2] = {&vals[0], &vals[2]};\n"
                   "__kernel __attribute__((reqd_work_group_size(64,1,1))) void kk(__global int *out, int sel) {\n"
                   "  int i = __builtin_amdgcn_workitem_id_x();\n"
                   "  out[i] = tab[sel & 1][i & 1] + i;\n}\n")
    co = tmp_path / "k.co"
    subprocess.run([clang, "-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx942",
                    "-O3", "-nogpulib", "-o", str(co), str(src)], check=True)
    _refused(co, "kk", tmp_path)

"""examples/vadd_f32.s with a pointer table appended, for the dynamic-relocation tests.

``tab`` (``.data.rel.ro``) holds two pointers into ``vals`` (``.rodata.tbl``); linked as a
shared object (as the backend links), each pointer becomes an ``R_AMDGPU_RELATIVE64``
dynamic relocation.  No clang needed: llvm-mc and ld.lld only.
"""

from __future__ import annotations

import pathlib

from asmevo.backend.assemble import assemble

EX = pathlib.Path(__file__).resolve().parent.parent / "examples"

TABLE = """
	.section .rodata.tbl,"a",@progbits
	.p2align 3
vals:
	.long 11, 22, 33, 44
	.size vals, 16
	.section .data.rel.ro,"aw",@progbits
	.p2align 3
tab:
	.quad vals
	.quad {second}
	.size tab, 16
"""


def vadd_with_pointer_table(out: pathlib.Path, second: str = "vals+8") -> pathlib.Path:
    """Assemble and link vadd_f32 plus the table, its second entry ``second`` (an
    expression such as ``vals+8``, or ``0`` for no relocation), into ``out``."""
    assemble((EX / "vadd_f32.s").read_text() + TABLE.format(second=second), str(out))
    return out

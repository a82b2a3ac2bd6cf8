"""Dynamic relocations are data the kernel reads (adversary round 2, WA-3).

A pointer table in ``.data.rel.ro`` holds zeros in the file; the loader writes the pointers
from ``.rela.dyn`` (``R_AMDGPU_RELATIVE64``).  A candidate that drops or changes one has the
same data bytes, so the ABI check compares the relocations themselves.  The code objects
are built here from assembly by llvm-mc + ld.lld (the backend), no clang needed.
"""

from __future__ import annotations

import pathlib

import pytest

from asmevo.verify import verify
from reloc_table import vadd_with_pointer_table

def _co(tmp_path: pathlib.Path, name: str, second: str) -> str:
    return str(vadd_with_pointer_table(tmp_path / f"{name}.co", second))


@pytest.mark.parametrize("second, what", [
    ("0", "dropped"),            # the rebuild's bug: the pointer printed as zeros
    ("vals+4", "other target"),  # same relocation count, another address
])
def test_changed_dynamic_relocation_is_rejected(tmp_path, llvm_mc, second, what):
    k0 = _co(tmp_path, "k0", "vals+8")
    cand = _co(tmp_path, "cand", second)
    assert (pathlib.Path(k0).read_bytes() != pathlib.Path(cand).read_bytes())
    v = verify(k0, cand, level="z3")
    assert v.status.value == "rejected-abi", v.text()
    assert any(e.kind == "relocation" and "R_AMDGPU_RELATIVE64 at tab+0x8 (vals+0x8)" in e.message
               for e in v.evidence), v.text()


def test_same_dynamic_relocations_are_accepted(tmp_path, llvm_mc):
    k0 = _co(tmp_path, "k0", "vals+8")
    cand = _co(tmp_path, "cand", "vals+8")
    v = verify(k0, cand, level="z3")
    assert v.outcome == "accepted", v.text()

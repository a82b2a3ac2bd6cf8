"""Changed code outside any kernel (no kernel descriptor) must never verify as accepted.

Assembly text without ``.amdhsa_kernel`` assembles into a code object whose functions are
not kernels; the static and z3 layers check kernels only, so a change there is unknown.
"""

import pytest

from asmevo.verify import verify

SRC = """\
\t.text
\t.globl\tk
\t.type\tk,@function
k:
\tglobal_load_dword v1, v[4:5], off
\ts_waitcnt vmcnt(0)
\tv_add_f32_e32 v1, v1, v1
\tglobal_store_dword v[4:5], v1, off
\ts_endpgm
"""


@pytest.mark.parametrize("level", ["static", "z3"])
def test_changed_function_without_descriptor_is_not_accepted(tmp_path, level, llvm_mc):
    a = tmp_path / "a.s"
    b = tmp_path / "b.s"
    a.write_text(SRC)
    b.write_text(SRC.replace("\ts_waitcnt vmcnt(0)\n", ""))
    v = verify(str(a), str(b), level=level)
    assert v.outcome != "accepted"
    assert v.exit_status in (1, 3)


def test_unchanged_function_without_descriptor_is_accepted(tmp_path, llvm_mc):
    a = tmp_path / "a.s"
    a.write_text(SRC)
    v = verify(str(a), str(a), level="static")
    assert v.outcome == "accepted"

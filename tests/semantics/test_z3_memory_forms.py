"""The z3 backend refuses the memory forms it does not model (d16 halves, format buffers).

Found by the adversarial round on the loop normalisation (2026-12-01): ``_ds`` read
``ds_read_u16_d16`` as a whole-register ``ds_read_u16`` (the instruction keeps the
destination's high half), ``ds_write_b16_d16_hi`` as a store of the low half, and ``_mubuf``
ignored ``d16_hi`` and the format conversions, so ``check_windows`` called a window and its
d16 twin "identical terms" -- a wrong accept.  Now each raises :class:`Unsupported` (verdict
unknown); the window checker's answer is never ``equivalent`` for such a pair.
"""

from __future__ import annotations

import pytest

from asmevo.frontend.asm_parser import parse_instruction as P
from asmevo.semantics import Unsupported
from asmevo.semantics.z3backend import symexec
from asmevo.verify.equiv import check_windows

REFUSED = [
    "ds_read_u16_d16 v6, v7",
    "ds_read_u16_d16_hi v6, v7",
    "ds_read_u8_d16 v6, v7",
    "ds_write_b16_d16_hi v7, v6",
    "ds_write_b8_d16_hi v7, v6",
    "buffer_load_short_d16 v1, v0, s[4:7], 0 offen",
    "buffer_load_ubyte_d16_hi v1, v0, s[4:7], 0 offen",
    "buffer_store_short_d16_hi v1, v0, s[4:7], 0 offen",
    "buffer_store_byte_d16_hi v1, v0, s[4:7], 0 offen",
    "buffer_load_format_x v1, v0, s[4:7], 0 offen",
    "tbuffer_load_format_x v1, v0, s[4:7], 0 format:[BUF_FMT_32_FLOAT] offen",
]


@pytest.mark.parametrize("text", REFUSED)
def test_unmodelled_memory_forms_are_refused(text):
    with pytest.raises(Unsupported):
        symexec([P(text)])


@pytest.mark.parametrize("text", ["ds_read_u16 v6, v7", "ds_write_b16 v7, v6",
                                  "buffer_load_ushort v1, v0, s[4:7], 0 offen",
                                  "buffer_store_short v1, v0, s[4:7], 0 offen",
                                  "global_store_short_d16_hi v[2:3], v1, off"])
def test_the_plain_forms_are_still_modelled(text):
    symexec([P(text)])


@pytest.mark.parametrize("a,b", [("ds_read_u16 v6, v7", "ds_read_u16_d16 v6, v7"),
                                 ("ds_write_b16 v7, v6", "ds_write_b16_d16_hi v7, v6")])
def test_a_d16_twin_is_never_proved_equivalent(a, b):
    r = check_windows([P(a)], [P(b)])
    assert not r.equivalent

"""A VGPR named at or above ACCUM_OFFSET is an AGPR (adversarial finding, session 7: a wrong
``accepted``).

On gfx90a/gfx942 the VGPR file is unified: ``aN`` is unified register ``ACCUM_OFFSET + N``,
so with ACCUM_OFFSET 12 the names ``v12`` and ``a0`` are one register.  The static layer
allows such an alias where the original has it (hand-written kernels rely on it), but the
z3 terms, the relational proof and the emulator keep the two names apart.  The original
(``tests/adversarial_inputs/unified_alias_vadd.s``) writes ``a0``, reads it back into v7 and
only then writes v12 -- correct on hardware.  The candidate also writes ``v12 = 0`` between
``a0``'s write and read: on hardware every lane then reads and stores element 0.  The
verifier said ``accepted`` (the relational proof: v12 is overwritten before any read; the
window variant by the window proof alone).  Now such kernels' windows are
``unknown-unsupported``."""

from __future__ import annotations

import pathlib

import pytest

from asmevo.backend.assemble import assemble
from asmevo.verify import verify

ROOT = pathlib.Path(__file__).resolve().parents[2]
K0 = ROOT / "tests" / "adversarial_inputs" / "unified_alias_vadd.s"
HARNESS = ROOT / "examples" / "vadd_f32.json"
WRITE = "\tv_accvgpr_write_b32 a0, v8\n"
SHIFT = "\tv_lshlrev_b32_e32 v12, 2, v7\n"

EDITS = {
    # the zeroing write in another window than the rest: decided by the relational proof
    "relational": [(WRITE, WRITE + "\tv_mov_b32_e32 v12, 0\n")],
    # one window: decided by the window proof
    "window": [(WRITE, WRITE + "\tv_mov_b32_e32 v12, 0\n"),
               (SHIFT, "\tv_lshl_add_u32 v12, v7, 2, 0\n")],
}


@pytest.mark.parametrize("name", sorted(EDITS))
def test_write_to_an_aliased_vgpr_is_not_accepted(tmp_path, name):
    text = K0.read_text()
    assert ".amdhsa_accum_offset 12" in text and text.count(WRITE) == 1
    cand = text
    for a, b in EDITS[name]:
        assert cand.count(a) == 1
        cand = cand.replace(a, b)
    k0, c = tmp_path / "k0.co", tmp_path / "c.co"
    assemble(text, str(k0))
    assemble(cand, str(c))
    for level in ("z3", "all"):
        v = verify(str(k0), str(c), harness=str(HARNESS) if level == "all" else None,
                   level=level, trials=4)
        assert not v.accepted, (level, v.text())
        assert "v12 and a0" in v.text(), v.text()

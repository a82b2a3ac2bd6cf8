"""A VGPR named at or above ACCUM_OFFSET is an AGPR (adversarial finding, session 7: a wrong
``accepted``).

On gfx90a/gfx942 the VGPR file is unified: ``aN`` is unified register ``ACCUM_OFFSET + N``,
so with ACCUM_OFFSET 12 the names ``v12`` and ``a0`` are one register.  The static layer
allows such an alias where the original has it (hand-written kernels rely on it), but the
z3 terms, the relational proof and the emulator keep the two names apart.  The original
(:func:`_original`: ``examples/vadd_f32.s`` with the body below, ACCUM_OFFSET 12 and 4 AGPRs)
writes ``a0``, reads it back into v7 and only then writes v12 -- correct on hardware.  The candidate also writes ``v12 = 0`` between
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
HARNESS = ROOT / "examples" / "vadd_f32.json"
WRITE = "\tv_accvgpr_write_b32 a0, v8\n"
SHIFT = "\tv_lshlrev_b32_e32 v12, 2, v7\n"
#: the original's body: c[gid] = a[gid] with gid passed through a0 (vadd_f32's arguments)
BODY = ["s_load_dword s3, s[0:1], 0x18", "s_load_dwordx4 s[4:7], s[0:1], 0x0",
        "s_load_dwordx2 s[8:9], s[0:1], 0x10", "v_lshl_or_b32 v8, s2, 8, v0",
        "s_waitcnt lgkmcnt(0)", "v_cmp_gt_i32_e32 vcc, s3, v8",
        "s_and_saveexec_b64 s[2:3], vcc", "s_cbranch_execz .LEND", WRITE.strip(), "s_nop 1",
        "v_accvgpr_read_b32 v7, a0", SHIFT.strip(), "global_load_dword v5, v12, s[4:5]",
        "s_waitcnt vmcnt(0)", "global_store_dword v12, v5, s[8:9]", ".LEND:"]
#: vadd_f32's register counts -> the original's (16 unified VGPRs: v0..v11, a0..a3)
COUNTS = [(".amdhsa_next_free_vgpr 8", ".amdhsa_next_free_vgpr 16"),
          (".amdhsa_next_free_sgpr 8", ".amdhsa_next_free_sgpr 24"),
          (".amdhsa_accum_offset 8", ".amdhsa_accum_offset 12"),
          (".agpr_count:     0", ".agpr_count:     4"),
          (".vgpr_count:     8", ".vgpr_count:     16"),
          (".sgpr_count:     14", ".sgpr_count:     30")]


def _original() -> str:
    text = (ROOT / "examples" / "vadd_f32.s").read_text()
    head, rest = text.split("\ts_load_dword s3, s[0:1], 0x18\n")
    _, tail = rest.split("\ts_endpgm\n")
    text = head + "".join(f"\t{x}\n" if not x.endswith(":") else f"{x}\n" for x in BODY) + \
        "\ts_endpgm\n" + tail
    for a, b in COUNTS:
        assert text.count(a) == 1, a
        text = text.replace(a, b)
    return text

EDITS = {
    # the zeroing write in another window than the rest: decided by the relational proof
    "relational": [(WRITE, WRITE + "\tv_mov_b32_e32 v12, 0\n")],
    # one window: decided by the window proof
    "window": [(WRITE, WRITE + "\tv_mov_b32_e32 v12, 0\n"),
               (SHIFT, "\tv_lshl_add_u32 v12, v7, 2, 0\n")],
}


@pytest.mark.parametrize("name", sorted(EDITS))
def test_write_to_an_aliased_vgpr_is_not_accepted(tmp_path, name):
    text = _original()
    assert text.count(WRITE) == 1
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

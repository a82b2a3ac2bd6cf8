"""Adversarial round 4: wrong ``accepted`` verdicts from instruction semantics that both
backends (or one of them) got wrong.  Each test verifies the reproduction, an edit of
``examples/vadd_f32.s`` whose ``v_add_f32_e32 v2, v6, v7`` is replaced by other lines in
the original and in the candidate (:data:`EDITS`; the SMEM case, a larger edit, and the
z3 windows are files in ``tests/adversarial_inputs/round4/``), with the harness
``examples/vadd_f32.json``, and asserts it is no longer accepted.  Instruction-level tests
with LLVM as the oracle: ``tests/semantics/test_round4_semantics.py``.

Reproduction: ``python tests/verify/test_adversarial_round4.py DIR`` writes every pair as
``DIR/NAME_orig.s`` and ``DIR/NAME_cand.s``; then::

    asmevo verify DIR/NAME_orig.s DIR/NAME_cand.s --harness examples/vadd_f32.json
"""

from __future__ import annotations

import pathlib
import sys

import pytest

from asmevo.verify import check_windows, verify
from asmevo.verify.equiv import parse_units

ROOT = pathlib.Path(__file__).resolve().parents[2]
INPUTS = ROOT / "tests" / "adversarial_inputs" / "round4"
VADD_HARNESS = ROOT / "examples" / "vadd_f32.json"
VADD_ADD = "\tv_add_f32_e32 v2, v6, v7\n"
_SDWA = "dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD"

#: name -> (lines in place of vadd_f32's add in the original, the same in the candidate)
EDITS = {
    "bfe": (["v_bfe_i32 v2, v6, 20, 20"], ["v_mov_b32_e32 v2, 0"]),
    "pk_inline": (["v_pk_add_u16 v2, v6, 1"], ["v_pk_add_u16 v2, v6, 1 op_sel_hi:[1,0]"]),
    "pk_clamp": (["v_pk_add_u16 v2, v6, v7 clamp"], ["v_pk_add_u16 v2, v6, v7"]),
    "mad_f16": (["v_mad_f16 v2, v6, v7, v6"],
                ["v_mul_f16_e32 v3, v6, v7", "v_add_f16_e32 v2, v3, v6"]),
    "mac_f16": (["v_mac_f16_e32 v2, v6, v7"],
                ["v_mul_f16_e32 v3, v6, v7", "v_add_f16_e32 v2, v3, v2"]),
    "sdwa_clamp": ([f"v_add_f32_sdwa v2, v6, v7 clamp {_SDWA}"], ["v_add_f32_e32 v2, v6, v7"]),
    "sdwa_omod": ([f"v_add_f32_sdwa v2, v6, v7 mul:2 {_SDWA}"], ["v_add_f32_e32 v2, v6, v7"]),
    "sdwa_iclamp": ([f"v_add_u32_sdwa v2, v6, v7 clamp {_SDWA}"], ["v_add_u32_e32 v2, v6, v7"]),
    "ldexp_f16": (["s_mov_b32 s4, 0x10000", "v_ldexp_f16_e64 v2, v6, s4"],
                  ["s_mov_b32 s5, 0x7fff", "v_ldexp_f16_e64 v2, v6, s5"]),
}


def write_pair(name: str, out: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    """``out/NAME_orig.s`` and ``out/NAME_cand.s`` for an entry of :data:`EDITS`."""
    text = (ROOT / "examples" / "vadd_f32.s").read_text()
    assert text.count(VADD_ADD) == 1
    paths = []
    for side, lines in zip(("orig", "cand"), EDITS[name]):
        p = out / f"{name}_{side}.s"
        p.write_text(text.replace(VADD_ADD, "".join(f"\t{x}\n" for x in lines)))
        paths.append(p)
    return paths[0], paths[1]


def _needs_llvm():
    from corpus_paths import require_tool   # skips only when llvm-mc is not installed
    require_tool("llvm-mc")


def _verify(name, tmp_path, level="all", harness=True):
    _needs_llvm()
    if name in EDITS:
        orig, cand = write_pair(name, tmp_path)
    else:
        orig, cand = INPUTS / f"{name}_orig.s", INPUTS / f"{name}_cand.s"
    return verify(str(orig), str(cand), harness=str(VADD_HARNESS) if harness else None,
                  level=level, trials=4)


def _window(name):
    from asmevo.tools.equiv import read_window
    return read_window(str(INPUTS / name))


# --------------------------------------------------------------------------- 1. bfe


def test_bfe_past_bit_31_is_not_zero(tmp_path):
    """``v_bfe_i32 v2, v6, 20, 20`` (offset + width > 32) replaced by ``v_mov_b32 v2, 0``.
    Both backends gave 0 for a field past bit 31; hardware (and LLVM: ``sbfe(x, 20, 20)`` is
    ``s_ashr_i32 x, 20``) extends the field: ``v6 >> 20`` (arithmetic).  Was ``accepted``."""
    v = _verify("bfe", tmp_path)
    assert not v.accepted, v.to_json()
    assert v.status == "rejected-counterexample", v.to_json()


def test_s_bfe_past_bit_31_is_not_zero():
    """The scalar form, as windows (``asmevo equiv``): ``s_bfe_i32 s1, s0, 0x140014`` against
    ``s_mov_b32 s1, 0`` was ``equivalent``."""
    r = check_windows(_window("s_bfe_a.s"), _window("s_bfe_b.s"), live_out=parse_units("s1"))
    assert r.status == "not equivalent", r


# --------------------------------------------------------------------------- 2. packed inline constants


def test_packed_inline_constant_has_a_zero_high_half(tmp_path):
    """``v_pk_add_u16 v2, v6, 1`` (adds <1, 0>: an inline constant is one 32-bit operand whose
    high half is 0, picked by op_sel_hi like a register's) replaced by the same with
    ``op_sel_hi:[1,0]`` (adds <1, 1>, what llc-19 emits for the splat).  Both backends gave
    the constant to both halves, so the two were equal and the candidate was ``accepted``."""
    v = _verify("pk_inline", tmp_path)
    assert not v.accepted, v.to_json()
    assert v.status == "rejected-counterexample", v.to_json()


# --------------------------------------------------------------------------- 3. clamp on packed integers


def test_dropped_clamp_of_a_packed_integer_add_is_rejected(tmp_path):
    """``v_pk_add_u16 v2, v6, v7 clamp`` (saturating: llc-19 selects ``uadd.sat`` on
    <2 x i16> as this) against the same without clamp.  Both backends ignored integer clamp
    on packed instructions; was ``accepted``."""
    v = _verify("pk_clamp", tmp_path)
    assert not v.accepted, v.to_json()
    assert v.status == "rejected-counterexample", v.to_json()


# --------------------------------------------------------------------------- 4. MAD/MAC f16


@pytest.mark.parametrize("name", ["mad_f16", "mac_f16"])
def test_mad_mac_f16_are_not_a_multiply_then_add(name, tmp_path):
    """``v_mad_f16 v2, v6, v7, v6`` / ``v_mac_f16_e32 v2, v6, v7`` replaced by
    ``v_mul_f16`` + ``v_add_f16``.  Both backends modelled MAD/MAC as an unflushed multiply
    then add (and v_mac_f16 as zeroing the high half); LLVM forms them only when f16
    denormals are flushed, and says gfx9 MAC preserves the high half.  Was ``accepted``
    (relational proof and testing); now both backends refuse them."""
    v = _verify(name, tmp_path)
    assert not v.accepted, v.to_json()
    assert v.status == "unknown-unsupported", v.to_json()


# --------------------------------------------------------------------------- 5. SMEM SGPR offset


@pytest.mark.parametrize("level", ["z3", "all"])
def test_smem_sgpr_offset_is_unsigned(level, tmp_path):
    """``s_load_dword s8, s[4:5], s3`` replaced by the explicit address ``s[4:5] + sext(s3)``.
    z3 sign-extended the SGPR offset (the emulator zero-extends, as the hardware and LLVM:
    "SGPR and literal offsets are unsigned"), so the relational proof accepted the
    candidate at levels z3 and all."""
    v = _verify("smem_soffset", tmp_path, level=level, harness=(level == "all"))
    assert not v.accepted, v.to_json()
    assert v.status == "rejected-counterexample", v.to_json()


# --------------------------------------------------------------------------- 6. SDWA clamp / omod


def test_sdwa_float_clamp_is_not_dropped_at_level_z3(tmp_path):
    """``v_add_f32_sdwa v2, v6, v7 clamp ...`` replaced by ``v_add_f32_e32 v2, v6, v7``: z3's
    SDWA path ignored clamp, so ``asmevo verify`` without a harness (level z3) accepted it
    (testing caught it at level all)."""
    v = _verify("sdwa_clamp", tmp_path, level="z3", harness=False)
    assert not v.accepted, v.to_json()
    assert v.status == "rejected-counterexample", v.to_json()


@pytest.mark.parametrize("name", ["sdwa_iclamp", "sdwa_omod"])
@pytest.mark.parametrize("level", ["z3", "all"])
def test_sdwa_integer_clamp_and_omod_are_not_accepted(name, level, tmp_path):
    """``v_add_u32_sdwa ... clamp`` (integer clamp) and ``v_add_f32_sdwa ... mul:2`` against
    the plain add: z3 ignored both and accepted at level z3.  Both backends now refuse them
    (omod: LLVM says the hardware ignores it in IEEE mode, which the emulator applied)."""
    v = _verify(name, tmp_path, level=level, harness=(level == "all"))
    assert not v.accepted, v.to_json()
    assert v.status == "unknown-unsupported", v.to_json()


# --------------------------------------------------------------------------- 7. LDS DMA in z3


def test_lds_dma_load_is_not_an_ordinary_load_in_z3():
    """``asmevo equiv`` proved ``global_load_lds_dword v2, s[0:1] offset:16`` (LDS DMA: the
    data goes to LDS at M0-based addresses, v2 is the address offset and is not written)
    equal to ``v_mov_b32 v3, 0; global_load_dword v2, v3, s[0:1] offset:16`` (writes v2):
    z3 read the LDS form as an ordinary load into v2.  It now refuses LDS DMA."""
    r = check_windows(_window("lds_dma_a.s"), _window("lds_dma_b.s"))
    assert r.status == "unknown", r
    assert "LDS DMA" in r.reason, r


# --------------------------------------------------------------------------- 8. v_ldexp_f16 exponent


def test_ldexp_f16_exponent_is_16_bits(tmp_path):
    """Near miss: ``s_mov_b32 s4, 0x10000; v_ldexp_f16 v2, v6, s4`` (exponent S1[15:0] = 0 on
    hardware: LLVM clamps an i32 exponent to 16 bits before v_ldexp_f16) against the same
    with 0x7fff.  Both backends read the whole 32-bit exponent, so the two looked alike
    (saturated), and the verdict was ``unknown-unproved``, accepted by ``--require tested``.
    The emulator now finds the difference."""
    v = _verify("ldexp_f16", tmp_path)
    assert not v.accepted, v.to_json()
    assert v.status == "rejected-output-mismatch", v.to_json()


if __name__ == "__main__":
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    out.mkdir(parents=True, exist_ok=True)
    for n in EDITS:
        print(*write_pair(n, out))

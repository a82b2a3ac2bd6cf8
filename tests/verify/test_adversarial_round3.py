"""Adversarial round 3: candidates built to be accepted although they are wrong on hardware.

Each test is one attack.  A wrong ``accepted`` that is fixed is a plain test; one that is
not fixed yet is ``xfail(strict=True)`` with the reason, so the suite stays green and the
bug stays recorded.  Inputs: ``tests/adversarial_inputs/``.
"""

from __future__ import annotations

import pathlib

import pytest

from asmevo.verify import verify

ROOT = pathlib.Path(__file__).resolve().parents[2]
INPUTS = ROOT / "tests" / "adversarial_inputs"
VADD_HARNESS = ROOT / "examples" / "vadd_f32.json"


def _needs_llvm():
    from corpus_paths import require_tool   # skips only when llvm-mc is not installed
    require_tool("llvm-mc")


# --------------------------------------------------------------------------- --entry


@pytest.mark.parametrize("level", ["static", "all"])
def test_entry_does_not_hide_a_changed_second_kernel(level):
    """A code object with two kernels (``vadd_f32`` and its copy ``vadd2``); the candidate
    computes ``a - b`` in ``vadd2``.  ``--entry vadd_f32`` (needed to pick a manifest entry)
    restricted every layer to ``vadd_f32``, so the changed ``vadd2`` was checked by nobody and
    the verdict was ``accepted`` (exit 0) at every level.

    Reproduction::

        asmevo verify tests/adversarial_inputs/two_kernels.s \\
            tests/adversarial_inputs/two_kernels_second_changed.s \\
            --harness examples/vadd_f32.json --entry vadd_f32
    """
    _needs_llvm()
    v = verify(str(INPUTS / "two_kernels.s"), str(INPUTS / "two_kernels_second_changed.s"),
               harness=str(VADD_HARNESS), entry="vadd_f32", level=level, trials=2)
    assert not v.accepted, v.to_json()
    assert "vadd2" in v.message


def test_entry_still_accepts_an_unchanged_code_object():
    _needs_llvm()
    v = verify(str(INPUTS / "two_kernels.s"), str(INPUTS / "two_kernels.s"),
               harness=str(VADD_HARNESS), entry="vadd_f32", level="static")
    assert v.accepted, v.to_json()


# --------------------------------------------------------------------------- float MODE


def test_compare_replaced_by_class_in_a_denormal_flushing_kernel():
    """K0: ``leaky_relu_f32`` compiled with ``-cl-denorms-are-zero``
    (``.amdhsa_float_denorm_mode_32 0``).  The candidate replaces ``v_cmp_lt_f32 vcc, 0, v2``
    (x > 0) with ``v_cmp_class_f32 vcc, v2, 0x380`` (+denormal, +normal, +inf).  The two
    agree when denormals are preserved (what z3 and the emulator model), so the verdict
    was ``accepted`` (abi, static, z3, diff all pass).  On hardware with f32 denormals
    flushed, the compare sees a positive denormal input as +0 (x > 0 is false: y = x*slope,
    itself flushed to 0) while the class test does not flush (true: y = x, a denormal).
    LLVM relies on the same rule: under DAZ InstCombine folds ``fcmp oeq x, 0`` into
    ``is.fpclass(x, zero|subnormal)``.

    Reproduction::

        asmevo verify tests/adversarial_inputs/leaky_relu_daz.co \\
            tests/adversarial_inputs/leaky_relu_daz_class.s \\
            --harness tests/adversarial_inputs/leaky_relu_daz.json

    Fixed (stopgap, asmevo/verify/driver.py ``_invisible_effects``): a changed kernel whose
    descriptor sets float modes other than the modelled ones and whose float instructions
    changed is ``unknown-unsupported``.  The full fix reads the descriptor's modes into both
    semantics backends (flush denormal inputs and outputs of float VALU ops except
    class/moves/cndmask).
    """
    _needs_llvm()
    v = verify(str(INPUTS / "leaky_relu_daz.co"), str(INPUTS / "leaky_relu_daz_class.s"),
               harness=str(INPUTS / "leaky_relu_daz.json"), level="all", trials=2)
    assert not v.accepted, v.to_json()
    assert v.status.value == "unknown-unsupported", v.to_json()
    assert "float modes" in v.text()


def test_denormal_flushing_kernel_with_unchanged_float_code_still_verifies():
    """The float-mode stopgap only fires when float instructions change: a needless s_nop
    added to the same DAZ kernel keeps its verdict (not every edit of an AITer kernel is
    unknown)."""
    _needs_llvm()
    from asmevo.frontend.loader import load
    from asmevo.ir.instruction import Instruction  # noqa: F401
    from asmevo.frontend.asm_parser import parse_instruction
    orig = load(str(INPUTS / "leaky_relu_daz.co"))
    cand = load(str(INPUTS / "leaky_relu_daz.co"))
    k = cand.kernels[0]
    b = k.blocks[0]
    b.instructions.insert(0, parse_instruction("s_nop 0", "<test>", 1))
    v = verify(orig, cand, harness=str(INPUTS / "leaky_relu_daz.json"), level="static")
    assert "float modes" not in v.text(), v.text()


def test_setreg_that_flushes_denormals_is_not_tested_as_equivalent():
    """``s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 2), 0`` (flush f32 denormals) inserted at
    the top of ``vadd_f32``: z3 leaves the MODE write undecided and the emulator ignored
    it (it always preserves denormals), so the verdict was ``unknown-unproved`` ("tested,
    differential testing found no difference"), which ``asmevo evolve --require tested``
    lets through.  On hardware ``a + b`` of denormal inputs is then flushed.  Fixed: the
    emulator stops on a MODE write it does not model (denormal, IEEE, DX10 clamp bits), as
    it already did for rounding modes -> ``unknown-unsupported``."""
    _needs_llvm()
    v = verify(str(ROOT / "examples" / "vadd_f32.co"), str(INPUTS / "vadd_setreg_flush.s"),
               harness=str(VADD_HARNESS), level="all", trials=2)
    assert v.status.value == "unknown-unsupported", v.to_json()


# --------------------------------------------------------------------------- cache policy


def test_dropped_cache_policy_bits_are_not_tested_equivalent():
    """K0: ``vadd_f32`` whose store is ``global_store_dword ... sc0 sc1`` (system scope:
    written through to memory other agents see while the kernel runs).  The candidate is
    the plain corpus ``vadd_f32`` (bits dropped).  z3 answers "cache-policy bits differ
    (caches are not modelled)", the relational proof the same, and the emulator, which has
    no caches, finds no difference: the verdict is ``unknown-unproved``, the status
    ``--require tested`` lets through (``asmevo/evolve/gate.py``).  On hardware the store
    may stay in the non-coherent L2 until the end-of-kernel release, so a host or peer GPU
    polling that location during the kernel does not see it (AMDGPUUsage, memory model
    GFX942: system-scope stores use sc0 sc1).

    Reproduction::

        asmevo verify tests/adversarial_inputs/vadd_store_sc0_sc1.s examples/vadd_f32.s \\
            --harness examples/vadd_f32.json

    Fixed: the driver compares the kernels' cache-policy and cache-maintenance sequences
    (and side-effect instructions) and keeps ``unknown-unsupported`` when they differ.
    """
    _needs_llvm()
    v = verify(str(INPUTS / "vadd_store_sc0_sc1.s"), str(ROOT / "examples" / "vadd_f32.co"),
               harness=str(VADD_HARNESS), level="all", trials=2)
    assert v.status.value not in ("accepted", "unknown-unproved"), v.to_json()


# --------------------------------------------------------------------------- s_sethalt


@pytest.mark.parametrize("level", ["all", "z3"])
def test_sethalt_after_the_store_is_not_accepted(level):
    """``s_sethalt 1`` inserted after ``vadd_f32``'s store was ``accepted`` at every level:
    the registry gives it kind ``nop``, the window checker drops no-ops before comparing and
    the emulator ran it as a no-op.  On hardware the wave stops issuing (CDNA3 ISA guide,
    S_SETHALT: SIMM16[0] = 1 halts the wave) and never reaches ``s_endpgm``: the dispatch
    hangs.  Fixed: the window checker reports a difference in the no-value-effect
    instructions other than nops/waits/priority/sleep as unknown (as the relational proof
    already did), and the emulator stops a wave at ``s_sethalt 1``.

    Reproduction::

        asmevo verify examples/vadd_f32.co tests/adversarial_inputs/vadd_sethalt.s \\
            --harness examples/vadd_f32.json
    """
    _needs_llvm()
    kw = {"harness": str(VADD_HARNESS), "trials": 2} if level == "all" else {}
    v = verify(str(ROOT / "examples" / "vadd_f32.co"), str(INPUTS / "vadd_sethalt.s"),
               level=level, **kw)
    assert not v.accepted, v.to_json()
    if level == "all":
        assert v.status.value == "rejected-emulation-fault", v.to_json()


def test_added_sendmsg_interrupt_is_not_tested_equivalent():
    """``s_mov_b32 m0, 0; s_nop 0; s_sendmsg sendmsg(MSG_INTERRUPT)`` added to ``vadd_f32``
    (an interrupt to the host per wave): z3 does not model ``s_sendmsg`` and the emulator runs
    it as a no-op, so the verdict was ``unknown-unproved``, which ``--require tested``
    accepts.  Fixed in the driver: side-effect instructions that differ are
    ``unknown-unsupported``."""
    _needs_llvm()
    v = verify(str(ROOT / "examples" / "vadd_f32.co"), str(INPUTS / "vadd_sendmsg.s"),
               harness=str(VADD_HARNESS), level="all", trials=2)
    assert v.status.value == "unknown-unsupported", v.to_json()


# --------------------------------------------------------------------------- approximate ops


@pytest.mark.corpus
@pytest.mark.parametrize("level,expected", [("diff", "unknown-unsupported"), ("all", "accepted")])
def test_changed_exp_input_is_not_tested_as_equivalent(corpus_dir, level, expected):
    """sigmoid_f32 -O3 with the argument of ``v_exp_f32`` computed into another register
    (``v_add_f32 v4, v3, v4`` / ``v_exp_f32 v3, v4``: the same values).  The emulator computes
    v_exp/v_rcp/v_sqrt... correctly rounded where the hardware is within about 1 ULP, so
    "differential testing found no difference" cannot stand for a change to their inputs:
    such a candidate was ``accepted`` at level diff (and would be ``unknown-unproved``, which
    ``--require tested`` takes, wherever z3 gave up).  Now it is ``unknown-unsupported`` unless
    z3 proves it, which it does here (v_exp is an uninterpreted function there)."""
    _needs_llvm()
    from asmevo.frontend.asm_parser import parse_asm
    text = (corpus_dir / "sigmoid_f32.s").read_text()
    a, b = "\tv_add_f32_e32 v3, v3, v4\n", "\tv_exp_f32_e32 v3, v3\n"
    assert text.count(a) == 1 and text.count(b) == 1
    cand = text.replace(a, "\tv_add_f32_e32 v4, v3, v4\n").replace(b, "\tv_exp_f32_e32 v3, v4\n")
    v = verify(str(corpus_dir / "sigmoid_f32.co"), parse_asm(cand, "sigmoid_f32_cand.s"),
               harness=str(corpus_dir / "manifest.json"), entry="sigmoid_f32", level=level,
               trials=2)
    assert v.status.value == expected, v.to_json()
    if expected != "accepted":
        assert "approximate instructions" in v.text()

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
    from asmevo.llvm import find_tool  # noqa: F401 - skip cleanly when LLVM is absent
    try:
        find_tool("llvm-mc")
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"llvm-mc not found: {e}")


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

"""Helpers for analysis tests: build a kernel from a few lines of gfx942 assembly."""

from __future__ import annotations

import textwrap

import pytest

from asmevo.analysis import AnalysisManager
from asmevo.frontend.asm_parser import parse_asm


def make_kernel(text: str):
    """Parse ``text`` (instructions and labels, no directives needed) into (kernel, manager)."""
    m = parse_asm(textwrap.dedent(text), "<test>")
    assert len(m.kernels) == 1
    k = m.kernels[0]
    return k, AnalysisManager(m)


@pytest.fixture
def kern():
    """The :func:`make_kernel` helper as a fixture."""
    return make_kernel

"""Shared pytest fixtures.

Tiers: tests that need the shared corpus (``../shared/corpus`` beside the
checkout, or ``$ASMEVO_CORPUS``) use the ``corpus_dir`` fixture and are skipped
when it is absent, so a clone of the project alone still passes.
"""

from __future__ import annotations

import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _corpus() -> pathlib.Path | None:
    env = os.environ.get("ASMEVO_CORPUS")
    cands = [pathlib.Path(env)] if env else []
    cands.append(ROOT.parent / "shared" / "corpus")
    for c in cands:
        if (c / "manifest.json").is_file():
            return c
    return None


CORPUS = _corpus()


@pytest.fixture(scope="session")
def corpus_dir() -> pathlib.Path:
    """The shared corpus directory; skips the test when it is absent."""
    if CORPUS is None:
        pytest.skip("../shared/corpus is absent")
    return CORPUS


def corpus_code_objects() -> list[pathlib.Path]:
    """Every code object in the corpus (clang, Triton, AITer); [] when absent."""
    if CORPUS is None:
        return []
    out = sorted(CORPUS.glob("*.co")) + sorted((CORPUS / "triton").glob("*.hsaco"))
    out += sorted((CORPUS / "aiter").rglob("*.co"))
    return out


@pytest.fixture(scope="session")
def llvm_mc() -> str:
    """Path of llvm-mc (LLVM >= 17); skips when LLVM is not installed."""
    from asmevo.errors import ToolNotFoundError
    from asmevo.llvm import find_tool
    try:
        return find_tool("llvm-mc")
    except ToolNotFoundError as e:
        pytest.skip(str(e))

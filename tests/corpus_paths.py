"""Where the shared corpus is (``../shared/corpus`` beside the checkout, or ``$ASMEVO_CORPUS``),
and the strict mode CI runs in.

A uniquely named module (not ``conftest``) so that tests in any sub-directory can
``from corpus_paths import CORPUS, corpus_code_objects, require_tool``.

Under ``CI=true`` (:data:`STRICT`) nothing a test needs may be missing: an absent corpus
fails the whole run (``conftest.pytest_sessionstart``) instead of skipping 45% of the
cases, and an LLVM tool that is not found fails the test instead of skipping it.  A bare
clone without ``CI`` still passes, with those tests skipped.
"""

from __future__ import annotations

import os
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent

#: CI=true (or 1/yes): a missing corpus or tool is an error, not a skip.
STRICT = os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def corpus_candidates() -> list[pathlib.Path]:
    """The directories searched for the corpus, in order."""
    env = os.environ.get("ASMEVO_CORPUS")
    cands = [pathlib.Path(env)] if env else []
    cands.append(ROOT.parent / "shared" / "corpus")
    return cands


def _corpus() -> pathlib.Path | None:
    for c in corpus_candidates():
        if (c / "manifest.json").is_file():
            return c
    return None


CORPUS = _corpus()


def corpus_missing_message() -> str:
    where = ", ".join(f"{c} ({'no manifest.json' if c.is_dir() else 'absent'})"
                      for c in corpus_candidates())
    return (f"the shared corpus was not found: looked for manifest.json in {where}; "
            "set ASMEVO_CORPUS to the corpus directory")


def corpus_code_objects() -> list[pathlib.Path]:
    """Every code object in the corpus (clang, Triton, AITer); [] when absent."""
    if CORPUS is None:
        return []
    out = sorted(CORPUS.glob("*.co")) + sorted((CORPUS / "triton").glob("*.hsaco"))
    out += sorted((CORPUS / "aiter").rglob("*.co"))
    return out


def require_tool(name: str) -> str:
    """Path of LLVM tool ``name`` (``asmevo.llvm.find_tool``).

    Skips the calling test only when the tool is not installed (``ToolNotFoundError``; under
    ``CI=true`` that fails the test instead).  Any other error propagates: a broken lookup
    must not turn into a skip.
    """
    import pytest

    from asmevo.errors import ToolNotFoundError
    from asmevo.llvm import find_tool
    try:
        return find_tool(name)
    except ToolNotFoundError as e:
        if STRICT:
            pytest.fail(f"CI=true: {name} is required: {e}", pytrace=False)
        pytest.skip(str(e))

"""Where the shared corpus is (``../shared/corpus`` beside the checkout, or ``$ASMEVO_CORPUS``).

A uniquely named module (not ``conftest``) so that tests in any sub-directory can
``from corpus_paths import CORPUS, corpus_code_objects``.
"""

from __future__ import annotations

import os
import pathlib

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


def corpus_code_objects() -> list[pathlib.Path]:
    """Every code object in the corpus (clang, Triton, AITer); [] when absent."""
    if CORPUS is None:
        return []
    out = sorted(CORPUS.glob("*.co")) + sorted((CORPUS / "triton").glob("*.hsaco"))
    out += sorted((CORPUS / "aiter").rglob("*.co"))
    return out

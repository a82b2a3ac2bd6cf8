"""Shared pytest fixtures.

Tiers: tests that need the shared corpus (``../shared/corpus`` beside the
checkout, or ``$ASMEVO_CORPUS``) use the ``corpus_dir`` fixture and are skipped
when it is absent, so a clone of the project alone still passes.  Helpers for
test modules live in ``corpus_paths.py`` (import it, not ``conftest``).
"""

from __future__ import annotations

import pathlib
import sys

import pytest

# Test modules are imported with --import-mode=importlib (several directories hold
# test_cli.py); put every test directory on sys.path for their sibling helper modules.
_TESTS = pathlib.Path(__file__).resolve().parent
for _d in [_TESTS, *sorted(p for p in _TESTS.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))]:
    if str(_d) not in sys.path:
        sys.path.insert(0, str(_d))
from corpus_paths import CORPUS, ROOT, corpus_code_objects  # noqa: E402,F401


@pytest.fixture(scope="session")
def corpus_dir() -> pathlib.Path:
    """The shared corpus directory; skips the test when it is absent."""
    if CORPUS is None:
        pytest.skip("../shared/corpus is absent")
    return CORPUS


@pytest.fixture(scope="session")
def llvm_mc() -> str:
    """Path of llvm-mc (LLVM >= 17); skips when LLVM is not installed."""
    from asmevo.errors import ToolNotFoundError
    from asmevo.llvm import find_tool
    try:
        return find_tool("llvm-mc")
    except ToolNotFoundError as e:
        pytest.skip(str(e))

"""Shared pytest fixtures.

Tiers: tests that need the shared corpus (``../shared/corpus`` beside the
checkout, or ``$ASMEVO_CORPUS``) use the ``corpus_dir`` fixture and are skipped
when it is absent, so a clone of the project alone still passes -- except under
``CI=true``, where a missing corpus fails the run at its start (with where it was
looked for) and a missing LLVM tool fails the test that needs it.  Helpers for
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
from corpus_paths import (CORPUS, ROOT, STRICT, corpus_code_objects,  # noqa: E402,F401
                          corpus_missing_message, require_tool)


def pytest_sessionstart(session):
    if STRICT and CORPUS is None:
        raise pytest.UsageError("CI=true: " + corpus_missing_message())


@pytest.fixture(scope="session")
def corpus_dir() -> pathlib.Path:
    """The shared corpus directory; skips the test when it is absent (fails under CI=true)."""
    if CORPUS is None:
        if STRICT:
            pytest.fail("CI=true: " + corpus_missing_message(), pytrace=False)
        pytest.skip("the shared corpus is absent (" + corpus_missing_message() + ")")
    return CORPUS


@pytest.fixture(scope="session")
def llvm_mc() -> str:
    """Path of llvm-mc (LLVM >= 17); skips only when LLVM is not installed (fails under CI=true)."""
    return require_tool("llvm-mc")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the marks (its hook names the groups)
def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (scripts/test.sh runs ``-n auto --dist loadgroup``): the tests of
    one module that share a module-scoped fixture defined in that module run on one worker,
    so its setup (e.g. test_mutation.py's mutation runs, test_device_hip.py's evolve run) is
    paid once, as in a serial run, not once per worker."""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        mod = item.nodeid.split("::", 1)[0]
        for name in getattr(info, "names_closure", ()):
            defs = info.name2fixturedefs.get(name) or ()
            if any(d.scope == "module" and d.baseid == mod for d in defs):
                item.add_marker(pytest.mark.xdist_group(mod))
                break

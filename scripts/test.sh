#!/usr/bin/env bash
# Run the asmevo test suite (installs what it needs first).
#   bash scripts/test.sh            every test, including the slow tier (the full verifier mutation
#                                   run behind docs/verify.md's figures, every corpus code object
#                                   verified against itself, whole-corpus pipeline sweeps); what CI
#                                   runs.  About 29 minutes of CPU in all (measured 1742 s, one
#                                   process), run by pytest-xdist on every core: 986 s in CI on a
#                                   clean 2-core machine (installation included); 37-43 minutes of
#                                   wall time with 2 cores shared at a load average of 5-9.
#   bash scripts/test.sh --quick    skip the tests marked slow
# Extra arguments go to pytest (paths among them replace the default 'tests').  Tests that need ../shared/corpus (or $ASMEVO_CORPUS) are skipped
# when it is absent -- except under CI=true (as .ci/run sets), where a missing corpus fails the run
# and a missing LLVM tool fails the tests that need it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
marker=()
if [ "${1:-}" = "--quick" ]; then marker=(-m "not slow"); shift; fi
# paths among the extra arguments replace the default 'tests' (bash scripts/test.sh tests/mcp)
target=(tests)
for a in "$@"; do
  if [ "${a#-}" = "$a" ] && [ -e "${a%%::*}" ]; then target=(); break; fi
done
# tests run in parallel, one pytest-xdist worker per core (-n auto; --dist loadgroup keeps the
# tests sharing a module fixture on one worker: tests/conftest.py), unless the arguments
# choose (-n N, -n 0 or -p no:xdist) or pytest-xdist is missing (then one process, as before)
par=()
if python3 -c "import xdist" 2>/dev/null; then
  par=(-n auto --dist loadgroup)
  for a in "$@"; do
    case "$a" in -n|-n*|--numprocesses*|no:xdist) par=() ;; esac
  done
fi
exec python3 -m pytest -q -p no:cacheprovider "${par[@]}" "${marker[@]}" "$@" "${target[@]}"

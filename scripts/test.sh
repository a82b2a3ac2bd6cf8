#!/usr/bin/env bash
# Run the asmevo test suite (installs what it needs first).
#   bash scripts/test.sh            every test, including the slow tier (whole-corpus sweeps,
#                                   the full mutation run); what CI runs (about 8 minutes here)
#   bash scripts/test.sh --quick    skip the tests marked slow (about 4 minutes)
# Extra arguments go to pytest. Tests that need ../shared/corpus are skipped when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
marker=()
if [ "${1:-}" = "--quick" ]; then marker=(-m "not slow"); shift; fi
exec python3 -m pytest -q -p no:cacheprovider "${marker[@]}" "$@" tests

#!/usr/bin/env bash
# Run the asmevo test suite (installs what it needs first).
#   bash scripts/test.sh            default tier (what CI runs): everything but tests marked slow
#   bash scripts/test.sh --all      also the slow tier (whole-corpus sweeps, large mutation runs)
# Extra arguments go to pytest. Tests that need ../shared/corpus are skipped when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
marker=(-m "not slow")
if [ "${1:-}" = "--all" ]; then marker=(); shift; fi
exec python3 -m pytest -q -p no:cacheprovider "${marker[@]}" "$@" tests

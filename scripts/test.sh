#!/usr/bin/env bash
# Run the asmevo test suite (installs what it needs first).
# Tests that need ../shared/corpus are skipped when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec python3 -m pytest -q -p no:cacheprovider "$@" tests

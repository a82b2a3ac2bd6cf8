#!/usr/bin/env bash
# Install what asmevo needs on a fresh Debian/Ubuntu machine (idempotent):
#   - LLVM 17+ tools (llvm-mc, llvm-objdump, ld.lld) from Debian packages when none is found,
#     and clang (used by some tests as an oracle: kernels compiled for gfx942/gfx90a);
#   - the asmevo package (editable) with its test dependencies and the optional extras the
#     tests exercise (mcp: the MCP server; ray: the Ray executor tier).
set -euo pipefail
cd "$(dirname "$0")/.."
have_llvm() {
  for d in "${ASMEVO_LLVM_BIN:-}" /opt/rocm/llvm/bin /usr/lib/llvm-{22,21,20,19,18,17}/bin; do
    [ -n "$d" ] && [ -x "$d/llvm-mc" ] && [ -x "$d/llvm-objdump" ] && [ -x "$d/ld.lld" ] \
      && { [ -n "${ASMEVO_NO_CLANG:-}" ] || [ -x "$d/clang" ]; } && return 0
  done
  return 1
}
if ! have_llvm; then
  echo "setup: installing llvm-19, lld-19 and clang-19 from Debian packages" >&2
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq llvm-19 lld-19 clang-19 >/dev/null
fi
if ! python3 -c "import asmevo, lark, elftools, msgpack, networkx, z3, numpy, yaml, pytest, xdist, hypothesis, jsonschema, rich, matplotlib, mcp.server, ray" 2>/dev/null \
   || [ "$(python3 -c 'import asmevo,os;print(os.path.dirname(asmevo.__file__))' 2>/dev/null)" != "$PWD/asmevo" ]; then
  echo "setup: pip install -e .[test,mcp,ray]" >&2
  # editable_mode=compat: the checkout goes on sys.path through a plain .pth line; the default
  # editable install imports a finder module (pathlib, importlib.util, ...) at every Python
  # start, some 20 ms of each asmevo command (benchmarks/parse.py, issue 16)
  python3 -m pip install -q --disable-pip-version-check --config-settings editable_mode=compat \
    -e ".[test,mcp,ray]" 2>&1 | grep -v "Running pip as the 'root' user" || true
fi

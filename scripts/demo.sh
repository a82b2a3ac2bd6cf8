#!/usr/bin/env bash
# The main job on the bundled example kernels (examples/, gfx942, clang):
#   1. where the time goes: asmevo profile of vadd_f32 (-O3) with its harness (timing-model
#      estimate, hot windows);
#   2. asmevo evolve on the -O0 build of the same kernel (spill code through scratch and VGPR
#      lanes): passes, legal moves and crossover, every candidate verified against K0 before
#      it is timed; the winner re-verified with new seeds and checked against numpy;
#      out/evolve_O0/ holds best.co, best.diff, report.md, trajectory.png and the lineage;
#   3. an independent check of the winner: asmevo verify against K0 and a run against numpy;
#   4. dis + asm round trip of the -O3 kernel (identical .text, descriptors and metadata).
# Installs what it needs first (scripts/setup.sh). Speed-ups are estimates of asmevo's
# timing model of an MI300X compute unit: there is no GPU here.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p out
ex=examples/vadd_f32
set -x
asmevo profile "$ex.co" --harness "$ex.json" --top 3
rm -rf out/evolve_O0
asmevo evolve "${ex}_O0.co" --harness "${ex}_O0.json" --out out/evolve_O0 --budget 12 --seed 0
# the final check's z3 budget (10 s per window), so the receipt is reproduced as it was given
asmevo verify "${ex}_O0.co" out/evolve_O0/best.co --harness "${ex}_O0.json" --level all --timeout 10000
asmevo run out/evolve_O0/best.co --harness "${ex}_O0.json" --check
asmevo roundtrip "$ex.co"

#!/usr/bin/env bash
# The main job: compile a model shipped in testdata/ and run it, printing each step.
# (Grows with the project: ge-atc → .om → ge-run once lowering and the runtime land.)
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=${1:-testdata/models/demo_block.air}
echo "==> building ge-opt and ge-run (release)"
cargo build --release -q -p ge-driver --bin ge-opt --bin ge-run
BIN=target/release
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

echo "==> model: $MODEL"
echo "==> ops: $($BIN/ge-opt "$MODEL" | grep -c ' = \|graph.return') (incl. returns)"
PIPE='builtin.module(symbol-dce,graph.func(strip-debuginfo))'
echo "==> optimising with --pass-pipeline='$PIPE'"
$BIN/ge-opt "$MODEL" --pass-pipeline="$PIPE" --timing -o "$OUT/opt.air"
echo "==> optimised IR:"
cat "$OUT/opt.air"
echo "==> running @main with the reference interpreter (B=2, seeded random inputs)"
$BIN/ge-run --interpret "$MODEL" --random-inputs --seed 1 --bind B=2 --output "$OUT/before.npy"
$BIN/ge-run --interpret "$OUT/opt.air" --random-inputs --seed 1 --bind B=2 --expect "$OUT/before.npy"
echo "==> the optimised model computes the same result as the original"

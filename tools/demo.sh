#!/usr/bin/env bash
# The main job: convert a model shipped in testdata/ to an offline model with
# ge-atc (import, graph optimisation, lowering, .om), run it on the CPU runtime
# with ge-run and check the result, printing each step.
#
#   tools/demo.sh                         # the small ONNX CNN in testdata/onnx
#   tools/demo.sh MODEL.onnx [IN.npy OUT.npy]
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=${1:-testdata/onnx/small_cnn.onnx}
IN=${2:-${MODEL%.onnx}.in0.npy}
WANT=${3:-${MODEL%.onnx}.out0.npy}
echo "==> building ge-atc and ge-run (release)"
cargo build --release -q -p ge-driver --bin ge-atc --bin ge-run
BIN=target/release
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

echo
echo "==> ge-atc --model=$MODEL --framework=5 --output=$OUT/model"
$BIN/ge-atc --model="$MODEL" --framework=5 --output="$OUT/model" --op_compiler_cache_dir="$OUT/cache"
echo
echo "==> the same conversion again is served from the compile cache"
$BIN/ge-atc --model="$MODEL" --framework=5 --output="$OUT/model" --op_compiler_cache_dir="$OUT/cache" | head -1
if [[ -f "$IN" && -f "$WANT" ]]; then
  echo
  echo "==> ge-run on $IN, checked against $WANT (computed by ONNX's reference evaluator)"
  $BIN/ge-run "$OUT/model.om" --info --input "$IN" --expect "$WANT" --iterations 200 --warmup 20
else
  echo
  echo "==> ge-run with seeded random inputs"
  $BIN/ge-run "$OUT/model.om" --info --random-inputs --iterations 200 --warmup 20
fi
echo
echo "==> the compiled model computes what the reference computes"

#!/usr/bin/env bash
# Seed corpora for the cargo-fuzz targets in fuzz/ from the repository's own
# test files (fuzz/corpus/ is not committed: .gitignore). Files larger than
# the -max_len each target is run with (fuzz/README.md, docs/security.md) are
# left out: libFuzzer would only cut them.
#
#   tools/fuzz_seeds.sh            # every target
#   tools/fuzz_seeds.sh air_run    # one target
set -euo pipefail
cd "$(dirname "$0")/.."

seed() { # target max_len files...
  local t=$1 max=$2
  shift 2
  mkdir -p "fuzz/corpus/$t"
  local n=0
  for f in "$@"; do
    [[ -f $f ]] || continue
    (($(stat -c %s "$f") <= max)) || continue
    # One name per source path, so a rerun replaces rather than adds.
    cp "$f" "fuzz/corpus/$t/$(echo "$f" | tr / _)"
    n=$((n + 1))
  done
  echo "fuzz/corpus/$t: $n seeds (<= $max bytes)"
}

want() { [[ $# -eq 0 ]] || [[ " ${TARGETS[*]} " == *" $1 "* ]]; }
TARGETS=("$@")

# .air through parse and the whole tool chain: the lit tests' .air files
# (runtime inputs first: they compile and run).
if [[ $# -eq 0 ]] || want air_run; then
  seed air_run 4096 lit-tests/runtime/Inputs/*.air lit-tests/*/*.air
fi
if [[ $# -eq 0 ]] || want parse_air; then
  seed parse_air 4096 lit-tests/*/*.air lit-tests/mlir-fidelity/*.mlir
fi
# ONNX models of the test set (and the conformance cases when generated).
if [[ $# -eq 0 ]] || want onnx_run; then
  seed onnx_run 8192 testdata/onnx/*.onnx $(find tools/conformance/cases -name '*.onnx' 2>/dev/null | head -500)
fi
# om_runtime's input is a list of edits to built-in seed models (the bytes
# are read by runtime/tests/suite/om_mutator): a few edit lists of each length.
if [[ $# -eq 0 ]] || want om_runtime; then
  mkdir -p fuzz/corpus/om_runtime
  for n in 1 4 16 64 128; do
    head -c "$n" /dev/urandom > "fuzz/corpus/om_runtime/random-$n"
  done
  echo "fuzz/corpus/om_runtime: 5 seeds (random edit lists)"
fi

#!/usr/bin/env bash
# Build the C API (capi/: libge_capi), compile the C and C++ examples in
# examples/c/ against include/ge/ with the system's cc and c++, and run them:
# each checks its outputs against expected values and exits non-zero on a
# wrong result. Usage: tools/capi-examples.sh [--no-build] [--release]
set -euo pipefail
cd "$(dirname "$0")/.."

profile=debug
build=1
for a in "$@"; do
    case "$a" in
        --no-build) build=0 ;;
        --release) profile=release ;;
        *) echo "usage: $0 [--no-build] [--release]" >&2; exit 2 ;;
    esac
done
if [ "$build" = 1 ]; then
    flag=""
    [ "$profile" = release ] && flag=--release
    cargo build -q -p ge-capi $flag
fi
lib="$PWD/target/$profile"
[ -f "$lib/libge_capi.so" ] || { echo "no $lib/libge_capi.so: build ge-capi first" >&2; exit 1; }

out="$(mktemp -d "${TMPDIR:-/tmp}/ge-capi-examples.XXXXXX")"
trap 'rm -rf "$out"' EXIT
CC="${CC:-cc}"
CXX="${CXX:-c++}"
cflags=(-Iinclude -Wall -Wextra -Werror -O1)
ldflags=(-L"$lib" -lge_capi -Wl,-rpath,"$lib" -lm)

"$CC" -std=c99 -pedantic "${cflags[@]}" examples/c/es_build.c -o "$out/es_build" "${ldflags[@]}"
"$CC" -std=c99 -pedantic "${cflags[@]}" examples/c/run_om.c -o "$out/run_om" "${ldflags[@]}"
"$CC" -std=c99 -pedantic "${cflags[@]}" examples/c/tf_trace.c -o "$out/tf_trace" "${ldflags[@]}"
"$CXX" -std=c++17 "${cflags[@]}" examples/c/onnx_cpp.cpp -o "$out/onnx_cpp" "${ldflags[@]}"
# The static library too (it needs the system libraries Rust's std uses).
"$CC" -std=c99 -pedantic "${cflags[@]}" examples/c/es_build.c -o "$out/es_build_static" \
    "$lib/libge_capi.a" -lpthread -ldl -lm

# A build, compile and run through ge.h (also writes es_build.om).
"$out/es_build" "$out/es_build.om"
"$out/es_build_static" >/dev/null
# The C++ wrapper: ONNX -> .om with ge-atc options -> run, against onnx.reference's output.
cnn=testdata/onnx/small_cnn
"$out/onnx_cpp" $cnn.onnx $cnn.in0.npy $cnn.out0.npy "$out/small_cnn.om"
# Load and run the .om the C++ example wrote.
"$out/run_om" "$out/small_cnn.om" $cnn.in0.npy $cnn.out0.npy
# TensorFlow: a frozen GraphDef and a SavedModel imported with ge-atc options, a traced run.
tf=testdata/tf
"$out/tf_trace" $tf/small_cnn.pb $tf/small_cnn.in0.npy $tf/small_cnn.out0.npy \
    $tf/ops/ResourceGather/saved_model $tf/ops/ResourceGather/out0.npy "$out/tf_trace.json"
grep -q '"traceEvents"' "$out/tf_trace.json"
if "$out/tf_trace" $tf/small_cnn.pb $tf/small_cnn.in0.npy $tf/small_cnn.in0.npy \
    $tf/ops/ResourceGather/saved_model $tf/ops/ResourceGather/out0.npy "$out/t.json" >/dev/null 2>&1; then
    echo "capi-examples: tf_trace accepted a wrong expected output" >&2
    exit 1
fi
# A wrong expectation must fail (the check can fail): compare with the input instead.
if "$out/run_om" "$out/small_cnn.om" $cnn.in0.npy $cnn.in0.npy >/dev/null 2>&1; then
    echo "capi-examples: run_om accepted a wrong expected output" >&2
    exit 1
fi
echo "capi-examples: ok"

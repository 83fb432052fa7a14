#!/usr/bin/env bash
# Run every test of ge: formatting, lints, unit/snapshot/property tests, lit tests.
# Needs only the Rust toolchain and Python 3 with pip; test tools are installed
# (pinned) into ./.venv. Set GE_INSTALL_MLIR=1 to also apt-install LLVM/MLIR 22
# and CBC (as CI does) so the mlir-opt round-trip tests run, the MLIR bridge (cargo
# feature ge-driver/mlir: --export-mlir, --import-mlir, ge-mlir-crosscheck) and
# eqsat's ILP extractor (ge-rewrites/ilp) are built and tested. Without them those
# parts are simply left out.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

MLIR_PKGS=(mlir-22-tools libmlir-22-dev llvm-22-dev libclang1-22 libclang-common-22-dev libpolly-22-dev libzstd-dev
  coinor-libcbc-dev)
if [[ "${GE_INSTALL_MLIR:-0}" == 1 ]] && ! dpkg -s "${MLIR_PKGS[@]}" >/dev/null 2>&1; then
  step "installing LLVM/MLIR 22 and CBC (Debian: ${MLIR_PKGS[*]})"
  SUDO=""; [[ $(id -u) != 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${MLIR_PKGS[@]}" >/dev/null
fi

# The MLIR bridge needs LLVM/MLIR 22's development files (melior 0.27 → mlir-sys 220).
FEATURES=()
if [[ -f /usr/lib/llvm-22/lib/cmake/mlir/MLIRConfig.cmake || -f /usr/lib/llvm-22/include/mlir-c/IR.h ]]; then
  export MLIR_SYS_220_PREFIX="${MLIR_SYS_220_PREFIX:-/usr/lib/llvm-22}"
  export TABLEGEN_220_PREFIX="${TABLEGEN_220_PREFIX:-/usr/lib/llvm-22}"
  FEATURES=(--features ge-driver/mlir)
  step "LLVM/MLIR 22 found: building with the MLIR bridge (${FEATURES[*]})"
fi
# ILP extraction for eqsat needs CBC (Debian coinor-libcbc-dev).
if [[ -f /usr/include/coin/CbcModel.hpp ]]; then
  if [[ ${#FEATURES[@]} -eq 0 ]]; then FEATURES=(--features ge-rewrites/ilp); else FEATURES[1]+=",ge-rewrites/ilp"; fi
  step "CBC found: building eqsat's ILP extractor (${FEATURES[*]})"
fi

# CI installs MLIR and CBC: then the features they enable must really be built
# and detected by lit (lit-tests/lit.cfg.py stops on a missing one), never
# silently skipped.
if [[ "${GE_INSTALL_MLIR:-0}" == 1 ]]; then
  if [[ "${FEATURES[*]-}" != *ge-driver/mlir* || "${FEATURES[*]-}" != *ge-rewrites/ilp* ]]; then
    echo "error: GE_INSTALL_MLIR=1 but the build features are '${FEATURES[*]-}':" \
         "LLVM/MLIR 22 (MLIRConfig.cmake) or CBC (CbcModel.hpp) was not found after installing" >&2
    exit 1
  fi
  export GE_REQUIRE_LIT_FEATURES="mlir-opt mlir-bridge ilp"
fi

step "test tools (.venv: $(grep -v '^#' tools/requirements-test.txt | tr '\n' ' '))"
[[ -x .venv/bin/lit ]] || python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -r tools/requirements-test.txt

step "cargo fmt --check"
cargo fmt --all -- --check

step "function sizes (tools/long_functions.py --check: none over 120 lines without a reason)"
python3 tools/long_functions.py --check >/dev/null

step "TF diagnostics (tools/tf/diag_coverage.py --strict: each one has a lit test or a reason it is unreachable)"
python3 tools/tf/diag_coverage.py --strict

step "crate boundaries (the runtime links no compiler)"
tools/check-deps.sh

step "one integration-test binary per crate (tests/suite/: each binary links the compiler)"
# Allowed apart: the runtime's tests of process-wide state (runtime/tests/suite/main.rs says why).
stray=$(ls -- */tests/*.rs 2>/dev/null \
  | grep -v -E '^runtime/tests/(conv_tiles|packed_conv|winograd|worker_threads|run_allocations)\.rs$' || true)
if [[ -n $stray ]]; then
  echo "error: make these modules of their crate's tests/suite/main.rs:" $stray >&2
  exit 1
fi

step "cargo clippy"
cargo clippy --workspace --all-targets ${FEATURES[@]+"${FEATURES[@]}"} --quiet -- -D warnings

step "fuzz targets compile (fuzz/ is outside the workspace; cargo-fuzz builds it with nightly + libFuzzer)"
cargo check --manifest-path fuzz/Cargo.toml --target-dir target --bins --quiet

step "cargo build (binaries for lit)"
cargo build --workspace --bins ${FEATURES[@]+"${FEATURES[@]}"} --quiet

step "generated files current (tools/regen.sh --check; es.pyi is checked with the Python package below)"
tools/regen.sh --check --no-python

step "unit, snapshot and property tests"
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace ${FEATURES[@]+"${FEATURES[@]}"} --no-fail-fast
  cargo test --workspace --doc ${FEATURES[@]+"${FEATURES[@]}"} --quiet
else
  cargo test --workspace ${FEATURES[@]+"${FEATURES[@]}"} --quiet
fi

step "C API (libge_capi; examples/c built with cc/c++ and run, outputs checked)"
tools/capi-examples.sh

step "lit tests"
.venv/bin/lit -sv lit-tests

step "Python package (pip install ./python into .venv, pytest python/tests)"
# The wheel is built with cargo's dev profile (the dependencies the steps above
# built are reused); a user's `pip install ./python` builds the release profile.
.venv/bin/pip install -q --disable-pip-version-check -r python/requirements-test.txt
PATH="$PWD/.venv/bin:$PATH" .venv/bin/pip install -q --disable-pip-version-check --no-build-isolation \
  --config-settings=build-args="--profile dev" ./python
.venv/bin/python python/tools/gen_stubs.py --check
.venv/bin/python -m pytest -q python/tests

step "ONNX conformance (every case vs tools/conformance/expected.tsv)"
tools/conformance/run.sh --check

# ASan over the runtime's unsafe kernels (tools/sanitize.sh): ~10.5 min of CPU
# (a second, instrumented debug build; its 27 tests take ~30 s), so ~6 min on
# CI's 2 cores. Needs the nightly toolchain; skipped (said so) without it.
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  step "AddressSanitizer (tools/sanitize.sh)"
  tools/sanitize.sh
else
  step "AddressSanitizer skipped: no nightly toolchain (rustup toolchain install nightly)"
fi

# CI's disk is finite (a full one kills the linker with SIGBUS mid-build): say
# what this run left in target/, so growth shows in the log before it fails.
step "all tests passed (target/ holds $(du -sh target 2>/dev/null | cut -f1))"

#!/usr/bin/env bash
# Run every test of ge: formatting, lints, unit/snapshot/property tests, lit tests.
# Needs only the Rust toolchain and Python 3 with pip; test tools are installed
# (pinned) into ./.venv. Set GE_INSTALL_MLIR=1 to also apt-install mlir-22-tools
# (as CI does) so the mlir-opt round-trip tests run.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

if [[ "${GE_INSTALL_MLIR:-0}" == 1 ]] && ! command -v mlir-opt-22 >/dev/null; then
  step "installing mlir-22-tools (Debian)"
  SUDO=""; [[ $(id -u) != 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq mlir-22-tools >/dev/null
fi

step "test tools (.venv: $(tr '\n' ' ' < tools/requirements-test.txt | sed 's/#[^=]*\.venv[^ ]*//'))"
[[ -x .venv/bin/lit ]] || python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -r tools/requirements-test.txt

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy"
cargo clippy --workspace --all-targets --quiet -- -D warnings

step "cargo build (binaries for lit)"
cargo build --workspace --bins --quiet

step "unit, snapshot and property tests"
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace --no-fail-fast
  cargo test --workspace --doc --quiet
else
  cargo test --workspace --quiet
fi

step "lit tests"
.venv/bin/lit -sv lit-tests

step "ONNX conformance (pass rate vs tools/conformance/baseline.txt)"
tools/conformance/run.sh --check

step "all tests passed"

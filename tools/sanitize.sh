#!/usr/bin/env bash
# AddressSanitizer over the runtime's unsafe code: the kernels' unit tests,
# the kernel tests that run compiled models (conv tiles, depthwise, GEMV,
# split matmul, max pool, mixed dtypes, transdata), the executor's smoke
# tests and the hostile-.om property test. Rust's default global allocator
# is the system allocator (malloc), which ASan intercepts: every arena,
# scratch buffer and tensor is checked. Needs the nightly toolchain
# (`rustup toolchain install nightly`); builds into target/asan.
#
# A step of tools/test-all.sh where nightly is installed (~10.5 min of CPU:
# docs/security.md has the measured run). By hand:
#
#   tools/sanitize.sh                 # every test named above
#   tools/sanitize.sh hostile_om      # one test module (or binary)
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET=$(rustc +nightly -vV | sed -n 's/^host: //p')
export RUSTFLAGS="-Zsanitizer=address ${RUSTFLAGS:-}"
export RUSTDOCFLAGS="-Zsanitizer=address"
# Leaks are not what this run looks for (stream workers live as long as
# the model's context pool); out-of-bounds and use-after-free are.
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:${ASAN_OPTIONS:-}"

# Names are modules of the runtime's `suite` test binary, or test binaries
# of their own (runtime/tests/NAME.rs).
TESTS=(smoke conv_tiles depthwise gemv matmul_split max_pool mixed_dtypes transdata hostile_om)
if [[ $# -gt 0 ]]; then TESTS=("$@"); fi
BINARIES=() MODULES=()
for t in "${TESTS[@]}"; do
  if [[ -f runtime/tests/$t.rs ]]; then BINARIES+=(--test "$t"); else MODULES+=("$t::"); fi
done

asan_test() { cargo +nightly test -p ge-runtime --target "$TARGET" --target-dir target/asan "$@"; }
asan_test --lib ${BINARIES[@]+"${BINARIES[@]}"}
if [[ ${#MODULES[@]} -gt 0 ]]; then asan_test --test suite -- "${MODULES[@]}"; fi

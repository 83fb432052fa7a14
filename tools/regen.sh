#!/usr/bin/env bash
# Regenerate every checked-in file that is generated from the op declarations
# (and the C API's sources), so that a new op's commit is its declaration, its
# kernel, its tests and what this one command writes:
#
#   capi/src/es_ops.rs, include/ge/ge.h   the C ES functions and the header (ge-capi-gen)
#   capi/abi-0.txt, capi/src/lib.rs       new ge.h declarations promised under the next
#                                         minor version, GE_API_VERSION_MINOR bumped to it
#   docs/dialects/*.md                    the dialect reference (ge-docgen)
#   */tests/snapshots/*.snap              the insta snapshots (op definitions, printer,
#                                         diagnostics)
#   python/ge/es.pyi                      the ES builder's Python stubs (gen_stubs.py,
#                                         through the `ge` package built into ./.venv)
#
# Usage: tools/regen.sh            write them (prints what changed)
#        tools/regen.sh --check    write nothing; exit 1 naming every stale file (CI)
#        tools/regen.sh --no-python  either mode without the Python stubs (they need
#                                  the Python package built: a few minutes)
#
# Not generated, so not here: lit-tests/driver/list-ops.air checks a sample of
# ops with CHECK lines (a new op does not make it stale); the ONNX conformance
# table (tools/conformance/run.sh --update-expected) and the zoo models
# (ge-zoo) come from their own data, not from the declarations.
set -euo pipefail
cd "$(dirname "$0")/.."

CHECK=0
PYTHON=1
for a in "$@"; do
  case "$a" in
    --check) CHECK=1 ;;
    --no-python) PYTHON=0 ;;
    *) echo "usage: tools/regen.sh [--check] [--no-python]" >&2; exit 2 ;;
  esac
done
FLAG=()
[[ $CHECK == 1 ]] && FLAG=(--check)
STALE=()
step() { printf '==> %s\n' "$*"; }

step "C API: capi/src/es_ops.rs, include/ge/ge.h, capi/abi-0.txt (ge-capi-gen)"
cargo run -q -p ge-capi --features generate --bin ge-capi-gen -- ${FLAG[@]+"${FLAG[@]}"} || STALE+=("C API")

step "dialect docs: docs/dialects/*.md (ge-docgen)"
cargo run -q -p ge-driver --bin ge-docgen -- ${FLAG[@]+"${FLAG[@]}"} docs/dialects || STALE+=("docs/dialects")

step "insta snapshots"
# The test targets that take snapshots (every test file that uses insta).
mapfile -t SNAP_TESTS < <(grep -rl --include='*.rs' -e 'insta::' -- */tests | sort)
for f in "${SNAP_TESTS[@]}"; do
  crate_dir=${f%%/*}
  pkg=$(sed -n 's/^name = "\(.*\)"/\1/p' "$crate_dir/Cargo.toml" | head -1)
  # A crate's integration tests are modules of one binary, tests/suite/main.rs.
  module=$(basename "$f" .rs)
  test=(--test suite -- "$module::")
  [[ $f == */tests/suite/* ]] || test=(--test "$module")
  if [[ $CHECK == 1 ]]; then
    # A stale snapshot fails its test and writes nothing (INSTA_UPDATE=no).
    INSTA_UPDATE=no cargo test -q -p "$pkg" "${test[@]}" || STALE+=("$f's snapshots")
  else
    # Every snapshot as the code now makes it.
    INSTA_UPDATE=always INSTA_FORCE_PASS=1 cargo test -q -p "$pkg" "${test[@]}" >/dev/null \
      || STALE+=("$f's snapshots")
  fi
done

if [[ $PYTHON == 1 ]]; then
  step "Python stubs: python/ge/es.pyi (the ge package built into .venv, gen_stubs.py)"
  [[ -x .venv/bin/python ]] || python3 -m venv .venv
  # The build backend and numpy at the versions python/requirements-test.txt pins.
  .venv/bin/pip install -q --disable-pip-version-check \
    $(grep -E '^(maturin|numpy)==' python/requirements-test.txt)
  PATH="$PWD/.venv/bin:$PATH" .venv/bin/pip install -q --disable-pip-version-check --no-build-isolation \
    --config-settings=build-args="--profile dev" ./python
  .venv/bin/python python/tools/gen_stubs.py ${FLAG[@]+"${FLAG[@]}"} || STALE+=("python/ge/es.pyi")
fi

if [[ $CHECK == 1 ]]; then
  if [[ ${#STALE[@]} -gt 0 ]]; then
    echo "error: stale generated files (${STALE[*]}): run tools/regen.sh and commit what it writes" >&2
    exit 1
  fi
  echo "generated files are current"
else
  if [[ ${#STALE[@]} -gt 0 ]]; then
    echo "error: could not regenerate: ${STALE[*]}" >&2
    exit 1
  fi
  git status --short -- capi include docs/dialects '*.snap' python/ge/es.pyi
fi

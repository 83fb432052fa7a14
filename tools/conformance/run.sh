#!/usr/bin/env bash
# ONNX conformance: install the pinned `onnx` into ./.venv, write its backend node
# tests to tools/conformance/cases (git-ignored), run every case through import and
# the executor with ge-conformance, and fail if the pass rate drops below
# tools/conformance/baseline.txt.
#
#   tools/conformance/run.sh            # also rewrites docs/conformance.md
#   tools/conformance/run.sh --check    # CI: check the baseline, leave the docs alone
#   tools/conformance/run.sh -v         # extra flags go to ge-conformance
set -euo pipefail
cd "$(dirname "$0")/../.."

report=(--report docs/conformance.md)
extra=()
for a in "$@"; do
  case "$a" in
    --check) report=() ;;
    *) extra+=("$a") ;;
  esac
done

[[ -x .venv/bin/python ]] || python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -r tools/conformance/requirements.txt
.venv/bin/python tools/conformance/generate.py tools/conformance/cases
cargo build -q -p ge-driver --bin ge-conformance
target/debug/ge-conformance tools/conformance/cases --baseline tools/conformance/baseline.txt \
  "${report[@]}" "${extra[@]}"

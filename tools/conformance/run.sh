#!/usr/bin/env bash
# ONNX conformance: install the pinned `onnx` into ./.venv, write its backend node
# tests to tools/conformance/cases (git-ignored), run every case through import and
# the executor with ge-conformance, and compare each case's status with
# tools/conformance/expected.tsv (pass > pass-interp > unsupported > fail): any
# case that got worse fails the run; improvements are listed with a reminder.
#
#   tools/conformance/run.sh                    # also rewrites docs/conformance.md
#   tools/conformance/run.sh --check            # CI: check expected.tsv, leave the docs alone
#   tools/conformance/run.sh --update-expected  # record this run in expected.tsv (and the docs)
#   tools/conformance/run.sh -v                 # extra flags go to ge-conformance
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
target/debug/ge-conformance tools/conformance/cases --expected tools/conformance/expected.tsv \
  ${report[@]+"${report[@]}"} ${extra[@]+"${extra[@]}"}

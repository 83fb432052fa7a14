#!/usr/bin/env bash
# ONNX conformance: install the pinned `onnx` into ./.venv, write its backend tests
# (the node tests and the pytorch-converted, pytorch-operator and simple suites) to
# tools/conformance/cases (git-ignored), run every case through import and the
# executor with ge-conformance, and compare each case's status with
# tools/conformance/expected.tsv (pass > pass-interp > checked-random > unsupported > fail;
# checked-random: the outputs of random ops, which no implementation can reproduce, have
# the right element type, shape and value set — counted apart, never as a pass): any
# case that got worse fails the run; improvements are listed with a reminder.
#
# The report mode (no --check) also installs the pinned onnxruntime into ./.venv,
# runs the same cases on it (tools/conformance/onnxruntime_status.py, rewriting the
# checked-in tools/conformance/onnxruntime.tsv) and shows its result beside ge's.
#
#   tools/conformance/run.sh                    # also rewrites docs/conformance.md
#   tools/conformance/run.sh --check            # CI: check expected.tsv, leave the docs alone
#   tools/conformance/run.sh --update-expected  # record this run in expected.tsv (and the docs)
#   tools/conformance/run.sh -v                 # extra flags go to ge-conformance
set -euo pipefail
cd "$(dirname "$0")/../.."

report=(--report docs/conformance.md --onnxruntime tools/conformance/onnxruntime.tsv)
check=0
extra=()
for a in "$@"; do
  case "$a" in
    --check) report=(); check=1 ;;
    *) extra+=("$a") ;;
  esac
done

[[ -x .venv/bin/python ]] || python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -r tools/conformance/requirements.txt
.venv/bin/python tools/conformance/generate.py tools/conformance/cases
if [[ $check == 0 ]]; then
  .venv/bin/pip install -q --disable-pip-version-check -r tools/conformance/requirements-onnxruntime.txt
  .venv/bin/python tools/conformance/onnxruntime_status.py tools/conformance/cases tools/conformance/onnxruntime.tsv
fi
cargo build -q -p ge-driver --bin ge-conformance
# The page's TensorFlow section (from tools/models/tf/run.py --markdown) is not
# this generator's: kept as it is when the ONNX part is rewritten.
tf_section=""
if [[ ${#report[@]} -gt 0 && -f docs/conformance.md ]]; then
  tf_section=$(sed -n '/^# TensorFlow model set/,$p' docs/conformance.md)
fi
rc=0
target/debug/ge-conformance tools/conformance/cases --expected tools/conformance/expected.tsv \
  ${report[@]+"${report[@]}"} ${extra[@]+"${extra[@]}"} || rc=$?
if [[ -n "$tf_section" ]]; then
  printf '\n%s\n' "$tf_section" >> docs/conformance.md
fi
exit $rc

#!/usr/bin/env bash
# Architecture invariant (docs/architecture.md): the runtime and the crates it
# reads models with (ge-om, ge-soc) link no compiler — their normal and build
# dependencies contain none of ge-compile, ge-lowering, ge-rewrites, egg.
# Usage: tools/check-deps.sh [CRATE...] (default: ge-runtime ge-om ge-soc).
# `tools/check-deps.sh ge-driver` fails, as it should (the check can fail).
set -euo pipefail
cd "$(dirname "$0")/.."

forbidden='^(ge-compile|ge-lowering|ge-rewrites|egg) '
crates=("$@")
[[ $# -gt 0 ]] || crates=(ge-runtime ge-om ge-soc)
status=0
for c in "${crates[@]}"; do
  tree=$(cargo tree -p "$c" -e normal,build --prefix none)
  if found=$(grep -E "$forbidden" <<<"$tree" | cut -d' ' -f1 | sort -u | tr '\n' ' '); [[ -n "$found" ]]; then
    echo "error: $c depends on the compiler: ${found% }" >&2
    status=1
  else
    echo "$c: no compiler crate among its dependencies"
  fi
done
exit $status

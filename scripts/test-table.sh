#!/usr/bin/env bash
# Usage: scripts/test-table.sh [--write]
#
# docs/testing.md's table of tests, made from scripts/test.sh --list (each
# test, its tier, the comment above it) and the kept test runs' times
# (docs/runs/tests/TIMESTAMP/SUITE-times.txt, as .ci/run keeps them in
# results/.ci/TIMESTAMP). Prints it; --write puts it into docs/testing.md,
# with the table of kept runs there and README's line on the newest CI run.
# Keep a CI run first: cp -r results/.ci/TIMESTAMP docs/runs/tests/ (or a
# named group's run: TEST_TIMES=docs/runs/tests/TIMESTAMP/groups-times.txt).
set -euo pipefail

# shellcheck disable=SC2034 # read by die/log in scripts/lib/common.sh
PROG="test-table"
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

usage() { sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}"; }

main() {
  local mode=()
  case "${1:-}" in
    "") ;;
    --write) mode=(--write docs/testing.md README.md) ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1': use --write to update docs/testing.md and README.md, or nothing to print the table" ;;
  esac
  require_docker
  "${LAB_ROOT}/scripts/test.sh" --list \
    | docker run --rm -i --network none --user "$(id -u):$(id -g)" -v "${LAB_ROOT}:/lab" -w /lab \
      "$(env_value NODE_IMAGE)" node tests/lib/test-table.mjs - docs/runs/tests "${mode[@]}"
}

main "$@"

#!/usr/bin/env bash
# Usage: scripts/figures.sh [--check] [FILE...]
#
# Writes the measured figures of README.md, docs/results.md and lessons/*.md
# (or the FILEs named) from the kept runs' summary.json: each figure is a
# link to its run's report whose title names it, and each generated table
# sits between "<!-- figures: ... -->" and "<!-- /figures -->" (how to write
# them: docs/results.md, "Generated figures"). Run it after keeping a run or
# re-reporting the kept ones (scripts/keep-run.sh --refresh). --check writes
# nothing and exits 1 where a file is not what the kept runs give; both exit
# 1 on a measured figure typed by hand, one line each.
set -euo pipefail

# shellcheck disable=SC2034 # read by die/log in scripts/lib/common.sh
PROG="figures"
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

usage() { sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}"; }

main() {
  case "${1:-}" in
    -h | --help) usage; exit 0 ;;
  esac
  cd "${LAB_ROOT}"
  require_node_image
  labctl figures "$@"
}

main "$@"

#!/usr/bin/env bash
# Usage: scripts/keep-run.sh [--partial] results/SCENARIO/TIMESTAMP...
#        scripts/keep-run.sh --check|--refresh [docs/runs/SCENARIO/TIMESTAMP...]
#
# Keeps a finished run as a reference run in git: docs/runs/SCENARIO/TIMESTAMP/
# (results/ is git-ignored, so a run README or docs cite must live there for a
# fresh clone to open it). A kept run holds report.md, summary.json,
# summary.csv, chart.svg (and chart-time.svg), run.env and versions.env as
# they are, and the raw evidence the report is built from in one archive,
# evidence.tar.br (read it with: brotli -dc evidence.tar.br | tar -x). A file larger than
# KEEP_MAX_BYTES (default 262144) is left out and named, with its size and
# sha256, in the archive's LEFT-OUT.txt. The kept outputs are re-reported from
# the archive, so re-reporting a kept run gives them again; the run's own are
# named if they differ (reported by other code, or reading a file left out).
# Refuses a folder that is not a finished run (no report.md, or an INCOMPLETE
# file: --partial keeps such a run too, its INCOMPLETE file with it, when
# what it measured before it stopped is the evidence) and a destination that
# exists: nothing is overwritten. Then: git add docs/runs/SCENARIO/TIMESTAMP.
#
# --check re-reports kept runs (all of them by default) from their archives
# and fails naming each output that differs; --refresh re-reports them in
# place, when the report's code changed on purpose.
set -euo pipefail

# shellcheck disable=SC2034 # read by die/log in scripts/lib/common.sh
PROG="keep-run"
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

readonly KEEP_MAX_BYTES="${KEEP_MAX_BYTES:-262144}"
partial=0

usage() { sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}"; }

# run_folder ARG: the run's path relative to the checkout, or die saying why.
run_folder() {
  local run="${1%/}" abs
  abs="$(cd "${run}" 2>/dev/null && pwd)" || die "${run}: no such folder; give a run folder such as results/maxconn-sweep/20261122T032208Z"
  run="${abs#"${LAB_ROOT}/"}"
  [[ "${run}" =~ ^results/[a-z0-9-]+/[0-9]{8}T[0-9]{6}Z$ ]] || die "${1}: not a run folder of this checkout; give results/SCENARIO/TIMESTAMP"
  [[ -f "${abs}/report.md" ]] || die "${run}: not a finished run (no report.md); keep a run that ended"
  [[ ${partial} -eq 1 || ! -f "${abs}/INCOMPLETE" ]] || die "${run}: marked INCOMPLETE ($(head -1 "${abs}/INCOMPLETE")); keep a run that ended, or say --partial"
  [[ ! -e "${LAB_ROOT}/docs/runs/${run#results/}" ]] || die "docs/runs/${run#results/} exists: a kept run is never overwritten"
  echo "${run}"
}

# keep RUN: RUN (results/S/T) kept as docs/runs/S/T.
keep() {
  local run="$1" dest="docs/runs/${1#results/}"
  mkdir -p "${LAB_ROOT}/$(dirname "${dest}")"
  log "keeping ${run}: archiving its evidence and re-reporting it from the archive (a large run takes a minute)"
  labctl kept pack "${run}" "${dest}" --max-bytes "${KEEP_MAX_BYTES}" || die "could not keep ${run} (above)"
  chmod -R a+rX "${LAB_ROOT}/${dest}"
  log "${dest}: git add it to publish it"
}

main() {
  local action=keep
  case "${1:-}" in
    -h | --help) usage; exit 0 ;;
    --partial) partial=1; shift ;;
    --check | --refresh) action="${1#--}"; shift ;;
  esac
  cd "${LAB_ROOT}"
  if [[ "${action}" != keep ]]; then
    require_node_image
    log "re-reporting kept runs from their archives (${*:-all of docs/runs}; about a second each)"
    labctl kept "${action}" "$@"
    return $?
  fi
  [[ $# -gt 0 ]] || die "name at least one run folder, e.g. results/maxconn-sweep/20261122T032208Z"
  [[ "$1" != -* ]] || die "unknown option $1: scripts/keep-run.sh [--partial] results/SCENARIO/TIMESTAMP..."
  [[ "${KEEP_MAX_BYTES}" =~ ^[1-9][0-9]*$ ]] || die "KEEP_MAX_BYTES=${KEEP_MAX_BYTES}: give a size in bytes, e.g. 262144"
  local runs=() arg
  # Every folder is checked before any is kept: nothing half done.
  for arg in "$@"; do runs+=("$(run_folder "${arg}")"); done
  [[ $(printf '%s\n' "${runs[@]}" | sort -u | wc -l) -eq ${#runs[@]} ]] || die "a run folder is named twice; name each once"
  require_node_image
  for arg in "${runs[@]}"; do keep "${arg}"; done
}

main "$@"

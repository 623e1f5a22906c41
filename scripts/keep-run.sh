#!/usr/bin/env bash
# Usage: scripts/keep-run.sh [--partial] results/SCENARIO/TIMESTAMP...
#
# Keeps a finished run as a reference run in git: copies it to
# docs/runs/SCENARIO/TIMESTAMP/ (results/ is git-ignored, so a run README or
# docs cite must live there for a fresh clone to open it). Every file up to
# KEEP_MAX_BYTES (default 262144) is kept as it is: the plan, configs and the
# small raw evidence; the run's report.md, chart.svg, chart-time.svg,
# summary.json, summary.csv and run.env whatever their size. A larger file is
# left out and listed in LEFT-OUT.txt with its size and sha256, so the copy
# says what the full run held. Refuses a folder that is not a finished
# run (no report.md, or an INCOMPLETE file: --partial keeps such a run too,
# its INCOMPLETE file with it, when what it measured before it stopped is
# the evidence) and a destination that exists: nothing is overwritten.
# Then: git add docs/runs/SCENARIO/TIMESTAMP.
set -euo pipefail

# shellcheck disable=SC2034 # read by die/log in scripts/lib/common.sh
PROG="keep-run"
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

readonly KEEP_MAX_BYTES="${KEEP_MAX_BYTES:-262144}"
# What README and docs link to, kept whatever its size (a 42-step ceiling
# run's report.md is 371 KB).
readonly ALWAYS_KEPT="report.md chart.svg chart-time.svg summary.json summary.csv run.env"
staging="" partial=0

usage() { sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}"; }

# shellcheck disable=SC2329 # run by the EXIT trap
cleanup() { [[ -z "${staging}" ]] || rm -rf "${staging}"; }

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

# keep RUN: copy RUN (results/S/T) to docs/runs/S/T, the large files listed.
keep() {
  local run="$1" dest="${LAB_ROOT}/docs/runs/${1#results/}" file size kept=0 left=0
  staging="$(mktemp -d "${LAB_ROOT}/docs/.keep-run.XXXXXX")"
  while IFS= read -r -d '' file; do
    size=$(stat -c %s "${LAB_ROOT}/${run}/${file}")
    if ((size > KEEP_MAX_BYTES)) && [[ " ${ALWAYS_KEPT} " != *" ${file} "* ]]; then
      printf '%s\t%s bytes\tsha256 %s\n' "${file}" "${size}" "$(sha256sum <"${LAB_ROOT}/${run}/${file}" | cut -d' ' -f1)" >>"${staging}/LEFT-OUT.txt"
      left=$((left + 1))
    else
      mkdir -p "${staging}/$(dirname "${file}")"
      cp -p "${LAB_ROOT}/${run}/${file}" "${staging}/${file}"
      kept=$((kept + 1))
    fi
  done < <(cd "${LAB_ROOT}/${run}" && find . -type f -printf '%P\0' | sort -z)
  if ((left > 0)); then
    { printf '# Files of %s larger than %s bytes, left out of git (the run that made them kept them)\n' "${run}" "${KEEP_MAX_BYTES}"; sort "${staging}/LEFT-OUT.txt"; } >"${staging}/LEFT-OUT.tmp"
    mv "${staging}/LEFT-OUT.tmp" "${staging}/LEFT-OUT.txt"
  fi
  chmod -R a+rX "${staging}"
  mkdir -p "$(dirname "${dest}")"
  mv "${staging}" "${dest}"
  staging=""
  log "${run} → ${dest#"${LAB_ROOT}/"}: ${kept} files kept, ${left} left out (LEFT-OUT.txt); git add it to publish it"
}

main() {
  case "${1:-}" in
    -h | --help) usage; exit 0 ;;
    --partial) partial=1; shift ;;
  esac
  [[ $# -gt 0 ]] || die "name at least one run folder, e.g. results/maxconn-sweep/20261122T032208Z"
  [[ "$1" != -* ]] || die "unknown option $1: scripts/keep-run.sh [--partial] results/SCENARIO/TIMESTAMP..."

  [[ "${KEEP_MAX_BYTES}" =~ ^[1-9][0-9]*$ ]] || die "KEEP_MAX_BYTES=${KEEP_MAX_BYTES}: give a size in bytes, e.g. 262144"
  trap cleanup EXIT
  local runs=() arg
  # Every folder is checked before any is copied: nothing half done.
  for arg in "$@"; do runs+=("$(run_folder "${arg}")"); done
  [[ $(printf '%s\n' "${runs[@]}" | sort -u | wc -l) -eq ${#runs[@]} ]] || die "a run folder is named twice; name each once"
  for arg in "${runs[@]}"; do keep "${arg}"; done
}

main "$@"

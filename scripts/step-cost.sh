#!/usr/bin/env bash
# Usage: scripts/step-cost.sh SCENARIO [OPTIONS...]
#
# What the runner itself costs a step: runs scripts/scenario.sh SCENARIO
# OPTIONS on the running lab (one host, not --swarm) with every docker CLI
# call timed by a shim first on PATH, then prints each step's wall time, its
# load tool's time (the runner waiting for the replicas), the difference (the
# runner's fixed cost: applying the config, the evidence before and after,
# starting and removing the tool) and the docker calls, by the engine's
# "step-cost" (scripts/labctl/run/step-cost.mjs). The calls' log and that table
# are kept in results/step-cost/<UTC timestamp>/ (docker-calls.log,
# step-cost.txt, scenario.log with the run's folder), never overwritten.
# The shim adds ~3 ms to each call. Exit: the scenario's.
set -euo pipefail

PROG="step-cost"
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

usage() { sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}"; }
shim_dir=""
cleanup() { [[ -z "${shim_dir}" ]] || rm -rf "${shim_dir}"; return 0; }

# write_shim DIR LOG: DIR/docker, the real docker CLI timed, one
# "START_MS DURATION_MS ARGS" line per call appended to LOG.
write_shim() {
  local real
  real=$(command -v docker) || die "no docker on PATH"
  # shellcheck disable=SC2016 # expanded by the shim
  printf '#!/bin/sh\nstart=$(date +%%s%%3N)\n"%s" "$@"\nrc=$?\nprintf "%%s %%s %%s\\n" "$start" "$(($(date +%%s%%3N) - start))" "$(printf "%%s" "$*" | tr "\\n" " ")" >>"%s"\nexit $rc\n' \
    "${real}" "$2" >"$1/docker"
  chmod +x "$1/docker"
}

main() {
  local dir base n=1 rc=0
  case "${1:-}" in
    "" | -h | --help) usage; exit 0 ;;
  esac
  [[ " $* " != *" --swarm "* ]] || die "--swarm: step-cost times this host's docker calls; a Swarm run's go to its nodes' engines (run it on one host)"
  [[ "$(date +%s%3N)" =~ ^[0-9]+$ ]] || die "this date cannot print milliseconds (date +%s%3N, GNU coreutils): run it on Linux or in WSL"
  labctl_or_host_node plan "$1" --check "${@:2}" || exit 2
  base="${LAB_ROOT}/results/step-cost/$(date -u +%Y%m%dT%H%M%SZ)" dir="${base}"
  mkdir -p "${LAB_ROOT}/results/step-cost"
  until mkdir "${dir}" 2>/dev/null; do n=$((n + 1)) dir="${base}-${n}"; done
  shim_dir=$(mktemp -d)
  trap cleanup EXIT
  write_shim "${shim_dir}" "${dir}/docker-calls.log"
  : >"${dir}/docker-calls.log"
  log "scripts/scenario.sh $* with each docker call timed into ${dir#"${LAB_ROOT}/"}/docker-calls.log"
  # tee ignores Ctrl-C: the scenario's cleanup still writes after it.
  PATH="${shim_dir}:${PATH}" "${LAB_ROOT}/scripts/scenario.sh" "$@" 2>&1 | tee -i "${dir}/scenario.log" || rc=${PIPESTATUS[0]}
  if [[ ${rc} -ne 0 && ${rc} -ne 3 && ${rc} -ne 130 ]] && ! grep -q 'candidate\.cfg' "${dir}/docker-calls.log"; then
    # Refused before its first step (no lab, a target that cannot fit): nothing to keep.
    rm -rf "${dir}"
    rmdir "${LAB_ROOT}/results/step-cost" 2>/dev/null || true
    return "${rc}"
  fi
  labctl step-cost "${dir#"${LAB_ROOT}/"}/docker-calls.log" | tee "${dir}/step-cost.txt"
  log "kept in ${dir#"${LAB_ROOT}/"}/ (docker-calls.log, step-cost.txt, scenario.log)"
  return "${rc}"
}

main "$@"

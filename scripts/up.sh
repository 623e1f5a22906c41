#!/usr/bin/env bash
# Usage: scripts/up.sh
#
# Starts the lab: "docker compose up -d --wait" of the default services, once
# this machine can run them. First the open files: where dockerd may give a
# container fewer than .env's HAPROXY_NOFILE and NOFILE, they are lowered to
# its limit, with one line saying so, as scripts/scenario.sh and the tests do
# (one set in the environment stops here, with the fix). Then the checks
# whose failure would stop compose with Docker's own error (scripts/doctor.sh
# --before-up: the engine, Compose, the default services' images, the open
# files, ports, the checkout): a failed one stops here, before anything
# starts, with one line saying what is wrong and its fix. Without Grafana
# when its image is absent and no registry has it (offline.env has no
# stand-in): one line says so, and where the charts are instead (each
# scenario run writes its own).
# Then the lab's addresses. Images and settings as compose sees them: .env (or
# COMPOSE_ENV_FILES=.env,offline.env), overridden by the environment.
# Exit: 0 the lab is up and healthy; 1 a check failed (one line each, on
# stderr) or compose did (its output, then one line).
set -euo pipefail

PROG="up"
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

usage() { sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}"; }

# checked: scripts/doctor.sh --before-up's report; on a failed check, each
# failure's line ("up: CHECK: what; fix: ...") on stderr and exit 1.
checked() {
  local report rc=0 failures
  report=$("${LAB_ROOT}/scripts/doctor.sh" --before-up) || rc=$?
  [[ ${rc} -ne 0 ]] || { echo "${report}"; return 0; }
  failures=$(sed -n "s/^FAIL /${PROG}: /p" <<<"${report}")
  [[ -n "${failures}" ]] || die "scripts/doctor.sh --before-up stopped (exit ${rc}) before its report: run it to see why"
  echo "${failures}" >&2
  exit 1
}

# addresses GRAFANA: where the lab answers (the ports as compose sees them);
# GRAFANA 0: where the charts are instead.
addresses() {
  local http https stats prometheus grafana
  http=$(env_value HAPROXY_HTTP_PORT) https=$(env_value HAPROXY_HTTPS_PORT) stats=$(env_value HAPROXY_STATS_PORT)
  prometheus=$(env_value PROMETHEUS_PORT) grafana=$(env_value GRAFANA_PORT)
  echo "  the app through HAProxy  http://127.0.0.1:${http}/fast (TLS: https://localhost:${https}/fast)"
  echo "  HAProxy stats            http://127.0.0.1:${stats}/stats"
  echo "  Prometheus               http://127.0.0.1:${prometheus}"
  if [[ "$1" -eq 1 ]]; then
    echo "  Grafana                  http://127.0.0.1:${grafana} (the \"HAProxy lab\" dashboard)"
  else
    echo "  charts (no Grafana)      results/<scenario>/<timestamp>/chart.svg and report.md, one folder per run"
  fi
  echo "next: scripts/scenario.sh list, then scripts/scenario.sh maxconn-sweep (the first experiment, ~4 min)"
}

main() {
  local report services=() grafana=1
  case "${1:-}" in
    "") ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument '$1': scripts/up.sh takes none (scripts/up.sh --help)" ;;
  esac
  fit_nofile
  log "checking this machine (scripts/doctor.sh --before-up)"
  report=$(checked)
  # Warnings do not stop the lab: shown as they are, Grafana's said here.
  sed -n '/^warn /{/^warn image GRAFANA_IMAGE: /!p;}' <<<"${report}"
  if grep -q '^warn image GRAFANA_IMAGE: ' <<<"${report}"; then
    grafana=0
    mapfile -t services < <(compose config --services | grep -vx grafana)
    [[ ${#services[@]} -gt 0 ]] || die "docker compose config listed no services: run 'docker compose config' and fix what it says"
    log "without Grafana: $(env_value GRAFANA_IMAGE) is not on this machine, no registry has it and offline.env has no stand-in; the charts instead: each scenario run writes results/<scenario>/<timestamp>/chart.svg and report.md"
  fi
  log "starting the lab: docker compose up -d --wait${services[*]:+ ${services[*]}}"
  compose up -d --wait ${services[@]+"${services[@]}"} \
    || die "docker compose up failed (its output above): scripts/doctor.sh checks the rest of this machine"
  log "the lab is up:"
  addresses "${grafana}"
}

main "$@"; exit

#!/usr/bin/env bash
# Usage: scripts/offline-images.sh [--rebuild] [--suite SUITE]
#
# Builds stand-ins for the lab's images (all but Grafana) from Debian packages,
# for machines that reach no container registry (this project's CI). The image
# names and version lines come from offline.env; use them with:
#   export COMPOSE_ENV_FILES=.env,offline.env
#
#   --rebuild       rebuild the Debian base image even if it exists
#   --suite SUITE   Debian suite for the base image (default: forky, the suite
#                   with the same haproxy/node/prometheus lines as the official images)
#
# Cached: a second run with everything built takes seconds (docker layer cache).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readonly ROOT
readonly OFFLINE_DIR="${ROOT}/scripts/offline"
readonly BASE_IMAGE_REPO="haproxy-lab/debian"
suite="forky"
rebuild=0
build_dir=""

die() { echo "offline-images: $*" >&2; exit 1; }
log() { printf '[offline-images %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
usage() { sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}"; }

cleanup() { [[ -n "${build_dir}" ]] && rm -rf "${build_dir}"; return 0; }
trap cleanup EXIT

# image_ref NAME: the value of NAME in offline.env (e.g. haproxy-lab/haproxy:3.2).
image_ref() {
  local ref
  ref=$(sed -n "s/^$1=//p" "${ROOT}/offline.env")
  [[ -n "${ref}" ]] || die "offline.env has no $1: restore it from git"
  echo "${ref}"
}

# build_base [SUITE]: the Debian base image of SUITE (default: --suite's).
build_base() {
  local suite="${1:-${suite}}"
  local base="${BASE_IMAGE_REPO}:${suite}"
  if [[ "${rebuild}" -eq 0 ]] && docker image inspect "${base}" >/dev/null 2>&1; then
    log "base ${base}: cached"
    return 0
  fi
  command -v mmdebstrap >/dev/null || die "mmdebstrap not found: apt-get install -y mmdebstrap"
  log "base ${base}: mmdebstrap ${suite} (about a minute)"
  # Testing suites come from a dated snapshot mirror: don't reject old Release files.
  mmdebstrap --quiet --variant=minbase --include=ca-certificates \
    --aptopt='Acquire::Check-Valid-Until "false"' \
    --aptopt='APT::Install-Recommends "false"' \
    "${suite}" - | docker import --change 'CMD ["bash"]' - "${base}" >/dev/null
}

# build_image VAR DOCKERFILE [ARG=VALUE...]: build the image named by VAR in
# offline.env; its tag is the package version line the Dockerfile pins.
# BASE_SUITE=SUITE among the args builds it on that suite's base instead.
build_image() {
  local ref version output arg args=() base_suite="${suite}"
  ref=$(image_ref "$1")
  version="${ref##*:}"
  log "$1 → ${ref} (${2})"
  for arg in "${@:3}"; do
    if [[ "${arg}" == BASE_SUITE=* ]]; then base_suite="${arg#BASE_SUITE=}"; else args+=(--build-arg "${arg}"); fi
  done
  if ! output=$(docker build \
      --build-arg "BASE_IMAGE=${BASE_IMAGE_REPO}:${base_suite}" \
      --build-arg "VERSION=${version}" "${args[@]}" \
      -f "${build_dir}/$2" -t "${ref}" "${build_dir}" 2>&1); then
    printf '%s\n' "${output}" | tail -n 25 >&2
    die "building ${ref} failed (output above)"
  fi
}

main() {
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --rebuild) rebuild=1 ;;
      --suite) [[ $# -ge 2 ]] || die "--suite needs a value, e.g. --suite forky"; suite="$2"; shift ;;
      -h|--help) usage; exit 0 ;;
      *) die "unknown option '$1' (try --help)" ;;
    esac
    shift
  done
  command -v docker >/dev/null || die "docker not found: install Docker first"
  docker info >/dev/null 2>&1 || die "cannot reach the Docker engine: start dockerd"

  build_dir=$(mktemp -d)
  cp "${OFFLINE_DIR}"/* "${build_dir}/"
  # The machine's CA bundle, trusted only while k6 downloads its Go modules.
  cp "${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}" "${build_dir}/build-ca.crt" 2>/dev/null \
    || : > "${build_dir}/build-ca.crt"
  # Keep the build context's timestamps stable so the layer cache hits.
  touch -d @0 "${build_dir}"/*

  local start=${SECONDS}
  build_base
  build_image HAPROXY_IMAGE haproxy.Dockerfile
  build_image NODE_IMAGE node.Dockerfile
  build_image PROMETHEUS_IMAGE prometheus.Dockerfile
  build_image HAPROXY_EXPORTER_IMAGE haproxy-exporter.Dockerfile
  build_image SHELLCHECK_IMAGE shellcheck.Dockerfile
  build_image NETPROBE_IMAGE netprobe.Dockerfile
  build_image ACTIONLINT_IMAGE actionlint.Dockerfile
  # The practice Swarm's nodes (scripts/swarm.sh practice).
  build_image DIND_IMAGE dind.Dockerfile
  docker image inspect "$(image_ref K6_IMAGE)" >/dev/null 2>&1 \
    || log "K6_IMAGE: compiling k6 from its Go module takes several minutes"
  build_image K6_IMAGE k6.Dockerfile
  # vegeta's version: .env's (compose passes the same to loadgen/vegeta/Dockerfile).
  build_image VEGETA_IMAGE vegeta.Dockerfile "NODE_IMAGE=$(image_ref NODE_IMAGE)" \
    "VEGETA_VERSION=$(sed -n 's/^VEGETA_VERSION=//p' "${ROOT}/.env")"
  build_image H2LOAD_IMAGE h2load.Dockerfile "NODE_IMAGE=$(image_ref NODE_IMAGE)"
  # The previous SSL generation (scenario.sh --versus previous): bookworm's
  # HAProxy 2.6 on OpenSSL 3.0 (the official images all run OpenSSL 3.5 now).
  build_base bookworm
  build_image HAPROXY_PREVIOUS_IMAGE haproxy.Dockerfile BASE_SUITE=bookworm
  log "done in $((SECONDS - start)) s; use: export COMPOSE_ENV_FILES=.env,offline.env"
  docker image ls --format '{{.Repository}}:{{.Tag}}\t{{.Size}}' | grep '^haproxy-lab/' | sort
}

main "$@"

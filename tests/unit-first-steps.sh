# shellcheck shell=bash
# Unit tests of the first steps on a machine that cannot run the lab yet:
# scripts/scenario.sh list, --help and bad input on this host's node with no
# Docker (or one line saying what they need), and scripts/up.sh's checks
# before compose: no docker, an open-file cap below .env's, no registry and no
# Grafana image. Docker is the fake of tests/unit-doctor.sh (doctor_fake,
# FAKE_* variables) or absent (bare_path: a PATH of the host tools only); no
# engine, registry or port of this machine is used.

# first_line_error RC LINE COMMAND...: COMMAND exits RC and writes LINE, and
# only that line, on stderr.
first_line_error() {
  local rc_expected="$1" line="$2" err rc=0
  shift 2
  err=$("$@" 2>&1 >/dev/null) || rc=$?
  assert_eq "${rc_expected}" "${rc}" "exit status of $*"
  assert_eq "${line}" "${err}" "stderr of $*"
}

# steps_setup: a temporary folder: bin/ (bare_path), docker (doctor_fake) and
# node (a host node answering --version with ${FAKE_NODE:-v20.11.0} and
# printing "host node ARGS" else).
steps_setup() {
  local dir
  dir=$(mktemp -d)
  mkdir "${dir}/bin" "${dir}/fake" "${dir}/node"
  bare_path "${dir}/bin"
  doctor_fake "${dir}/fake"
  cat >"${dir}/node/node" <<'FAKE'
#!/usr/bin/env bash
if [[ "$1" == --version ]]; then echo "${FAKE_NODE:-v20.11.0}"; exit 0; fi
echo "host node $*"
FAKE
  chmod +x "${dir}/node/node"
  echo "${dir}"
}

# results_listing: what bad input could write (a folder per scenario,
# maxconn-sweep's runs).
results_listing() { ls "${LAB_ROOT}/results" "${LAB_ROOT}/results/maxconn-sweep" 2>/dev/null || true; }

# list: the engine's (scripts/labctl/cli.mjs list), on this host's node when
# there is no docker; with neither, the one line saying to install Docker.
test_unit_first_steps_scenario_list_is_the_engines() {
  local dir
  dir=$(steps_setup)
  assert_eq "host node scripts/labctl/cli.mjs list" "$(env PATH="${dir}/node:${dir}/bin" scripts/scenario.sh list)" "list on this host's node"
  first_line_error 1 "scenario: docker not found: install Docker (with Compose v2) first" env PATH="${dir}/bin" scripts/scenario.sh list
  rm -rf "${dir}"
}

# --help, an unknown scenario, a scenario's --help and its options (the
# engine's): this host's node when it has one at least 20, else one line
# naming what is missing: docker, the engine, the node image.
test_unit_first_steps_scenario_help_and_bad_input_without_docker() {
  local dir before bare node image
  dir=$(steps_setup)
  before=$(results_listing)
  # The official image's case reads .env alone, whichever env files the suite runs with.
  bare="${dir}/bin" image=$(COMPOSE_ENV_FILES=.env env_value NODE_IMAGE)
  assert_match '^Usage: scripts/scenario.sh list' "$(env PATH="${bare}" scripts/scenario.sh --help)" "--help"
  first_line_error 1 "scenario: docker not found: install Docker (with Compose v2) first" \
    env PATH="${bare}" scripts/scenario.sh nope --help
  first_line_error 1 "scenario: docker not found: install Docker (with Compose v2) first" \
    env PATH="${bare}" scripts/scenario.sh maxconn-sweep --help
  first_line_error 1 "scenario: docker not found: install Docker (with Compose v2) first" \
    env PATH="${bare}" scripts/scenario.sh maxconn-sweep --fast
  first_line_error 1 "scenario: cannot reach the Docker engine: start Docker (or dockerd) and retry" \
    env PATH="${dir}/fake:${bare}" FAKE_ENGINE=down scripts/scenario.sh maxconn-sweep --help
  # An engine, no registry: the node image cannot come; offline, a stand-in not built.
  first_line_error 1 "scenario: the lab's node image ${image} is not on this machine and could not be pulled (no such host): with no registry, run scripts/offline-images.sh, then export COMPOSE_ENV_FILES=.env,offline.env" \
    env PATH="${dir}/fake:${bare}" COMPOSE_ENV_FILES=.env FAKE_ABSENT="${image}" FAKE_NO_REGISTRY=1 scripts/scenario.sh maxconn-sweep --help
  first_line_error 1 "scenario: the lab's node image ${image} is not on this machine and could not be pulled (no such host): with no registry, run scripts/offline-images.sh, then export COMPOSE_ENV_FILES=.env,offline.env" \
    env PATH="${dir}/fake:${bare}" COMPOSE_ENV_FILES=.env FAKE_ABSENT="${image}" FAKE_NO_REGISTRY=1 scripts/scenario.sh maxconn-sweep --quick
  image=$(COMPOSE_ENV_FILES=.env,offline.env env_value NODE_IMAGE)
  rm -f "${dir}/fake/calls"
  first_line_error 1 "scenario: the lab's node image ${image} is not built yet (an offline stand-in): run scripts/offline-images.sh" \
    env PATH="${dir}/fake:${bare}" COMPOSE_ENV_FILES=.env,offline.env FAKE_ABSENT="${image}" scripts/scenario.sh maxconn-sweep --help
  assert_eq "" "$(grep '^pull' "${dir}/fake/calls" || true)" "pulls of a stand-in (built here, never pulled)"
  # This host's node: used from 20 on, for --help and the options.
  node="${dir}/node:${bare}"
  assert_eq "host node scripts/labctl/cli.mjs describe maxconn-sweep" \
    "$(env PATH="${node}" scripts/scenario.sh maxconn-sweep --help)" "--help on this host's node"
  first_line_error 1 "scenario: docker not found: install Docker (with Compose v2) first" \
    env PATH="${node}" FAKE_NODE=v18.19.0 scripts/scenario.sh maxconn-sweep --help
  assert_eq "${before}" "$(results_listing)" "results/ and results/maxconn-sweep/ after these"
  rm -rf "${dir}"
}

# up_env DIR: up_vars, the environment scripts/up.sh runs in with DIR's fake
# docker first on PATH (env's arguments): .env's open files (none in the
# environment: the suite exports the ones it fitted), the lab's project
# holding every port (the fake's compose ps), so no port of this machine counts.
up_env() {
  local name publishers=""
  for name in HAPROXY_HTTP_PORT HAPROXY_HTTPS_PORT HAPROXY_STATS_PORT HAPROXY_METRICS_PORT PROMETHEUS_PORT GRAFANA_PORT; do
    publishers+="${publishers:+,}{\"URL\":\"127.0.0.1\",\"PublishedPort\":$(env_value "${name}"),\"Protocol\":\"tcp\"}"
  done
  up_vars=(-u HAPROXY_NOFILE -u NOFILE "PATH=$1/fake:$1/bin" COMPOSE_PROJECT_NAME=haproxy-lab
    "FAKE_PS={\"Name\":\"haproxy-lab-haproxy-1\",\"Publishers\":[${publishers}]}")
}

# compose_up_calls DIR: the "compose up" calls the fake docker got.
compose_up_calls() { sed -n "s|^compose --project-directory ${LAB_ROOT} up |up |p" "$1/fake/calls" 2>/dev/null || true; }

# No docker on PATH, the engine down, then more open files asked in the
# environment than dockerd's limit (the fake answers a bigger --ulimit as the
# real engine does: "error setting rlimit type 7"): one line with the fix,
# and compose never runs.
test_unit_first_steps_up_stops_before_compose_with_one_line() {
  local dir up_vars
  dir=$(steps_setup)
  first_line_error 1 "up: docker: no 'docker' command; fix: install Docker Engine (https://docs.docker.com/engine/install/) or Docker Desktop" \
    env PATH="${dir}/bin" scripts/up.sh
  up_env "${dir}"
  first_line_error 1 "up: docker: the Docker engine does not answer: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?; fix: start Docker: open Docker Desktop, or sudo systemctl start docker" \
    env "${up_vars[@]}" FAKE_ENGINE=down scripts/up.sh
  first_line_error 1 "up: HAPROXY_NOFILE=1048576 is more open files than Docker may give a container here (at most 20000, dockerd's own limit): export HAPROXY_NOFILE=20000, or raise dockerd's LimitNOFILE (sudo systemctl edit docker)" \
    env "${up_vars[@]}" FAKE_NOFILE_MAX=20000 HAPROXY_NOFILE=1048576 scripts/up.sh
  assert_eq "" "$(compose_up_calls "${dir}")" "compose up calls after a refusal"
  # The fix applied: the lab starts with it.
  env "${up_vars[@]}" FAKE_NOFILE_MAX=20000 HAPROXY_NOFILE=20000 NOFILE=20000 scripts/up.sh >/dev/null
  assert_eq "up -d --wait" "$(compose_up_calls "${dir}")" "compose up once the open files fit"
  assert_eq "HAPROXY_NOFILE=20000 NOFILE=20000" "$(cat "${dir}/fake/up-nofile")" "the open files compose up was given"
  first_line_error 1 "up: unknown argument '--nope': scripts/up.sh takes none (scripts/up.sh --help)" scripts/up.sh --nope
  assert_match '^Usage: scripts/up.sh' "$(scripts/up.sh --help)" "--help"
  rm -rf "${dir}"
}

# README's first command where dockerd caps open files below .env's (1,048,576;
# the fake answers a bigger --ulimit as the real engine does): scripts/up.sh
# lowers both to the cap with one line, as the runner does (fit_nofile), and
# the doctor's check and compose up get them. Under the cap, nothing is
# lowered and nothing said.
test_unit_first_steps_up_fits_the_open_files_to_dockers_limit() {
  local dir up_vars out
  dir=$(steps_setup)
  up_env "${dir}"
  out=$(env "${up_vars[@]}" FAKE_NOFILE_MAX=20000 scripts/up.sh) || fail "scripts/up.sh under a 20000 cap failed: ${out}"
  echo "${out}"
  assert_match "\[up [0-9:]+\] Docker may give a container at most 20000 open files here \(dockerd's limit\): using HAPROXY_NOFILE=20000 NOFILE=20000" \
    "$(sed -n 1p <<<"${out}")" "up.sh's first line"
  # .env's 1048576 measured once (the fit's probe); the doctor's check then
  # asks 20000, and passes.
  assert_eq "1 1" "$(grep -c -- '--ulimit nofile=1048576:1048576 ' "${dir}/fake/calls") $(grep -c -- '--ulimit nofile=20000:20000 ' "${dir}/fake/calls")" \
    "containers started asking 1048576, then 20000 open files"
  assert_eq "up -d --wait" "$(compose_up_calls "${dir}")" "compose up under the cap"
  assert_eq "HAPROXY_NOFILE=20000 NOFILE=20000" "$(cat "${dir}/fake/up-nofile")" "the open files compose up was given"
  rm -f "${dir}/fake/calls" "${dir}/fake/up-nofile"
  out=$(env "${up_vars[@]}" scripts/up.sh)
  assert_eq "" "$(grep 'open files here' <<<"${out}" || true)" "a line about open files with no cap below .env's"
  assert_eq "HAPROXY_NOFILE= NOFILE=" "$(cat "${dir}/fake/up-nofile")" "compose up's open files with no cap (.env's own)"
  rm -rf "${dir}"
}

# Online with every image: every default service, Grafana's address. Offline
# (offline.env) with no Grafana image and no registry: the default services
# but Grafana, one line saying so and where the charts are, no Grafana
# address. Compose failing: its output, then one line.
test_unit_first_steps_up_offline_leaves_grafana_out() {
  local dir up_vars out grafana
  dir=$(steps_setup)
  up_env "${dir}"
  out=$(env "${up_vars[@]}" scripts/up.sh)
  echo "${out}"
  assert_eq "up -d --wait" "$(compose_up_calls "${dir}")" "compose up with every image"
  assert_match "Grafana +http://127\.0\.0\.1:$(env_value GRAFANA_PORT) " "${out}" "Grafana's address"
  rm -f "${dir}/fake/calls"
  grafana=$(COMPOSE_ENV_FILES=.env,offline.env env_value GRAFANA_IMAGE)
  out=$(env "${up_vars[@]}" COMPOSE_ENV_FILES=.env,offline.env FAKE_ABSENT="${grafana}" FAKE_NO_REGISTRY=1 scripts/up.sh)
  echo "${out}"
  assert_eq "up -d --wait certs haproxy backend-slow backend-fast prometheus container-exporter haproxy-exporter" \
    "$(compose_up_calls "${dir}")" "compose up offline without a Grafana image"
  assert_match "\] without Grafana: ${grafana} is not on this machine, no registry has it and offline\.env has no stand-in; the charts instead: each scenario run writes results/<scenario>/<timestamp>/chart\.svg and report\.md" \
    "${out}" "the line that says Grafana is left out"
  assert_eq "" "$(grep 'Grafana  ' <<<"${out}" || true)" "a Grafana address offline"
  assert_match 'charts \(no Grafana\) +results/<scenario>/<timestamp>/chart\.svg' "${out}" "where the charts are"
  first_line_error 1 "dependency failed to start: container haproxy-lab-haproxy-1 is unhealthy
up: docker compose up failed (its output above): scripts/doctor.sh checks the rest of this machine" \
    env "${up_vars[@]}" FAKE_UP=fail scripts/up.sh
  rm -rf "${dir}"
}

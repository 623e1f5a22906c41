# shellcheck shell=bash
# Unit tests of scripts/doctor.sh: every check fed with made-up facts. A fake
# docker CLI (DOCKER=<dir>/docker; FAKE_* variables choose its answers), fake
# port probes (ports in BUSY accept) and a small checkout in a temporary
# folder: no Docker engine, registry or port of this machine is used.

# doctor_fake DIR: DIR/docker, answering as a healthy Docker host would
# (engine 27.3.1, Compose v2.29.7, 24 GiB, every image present) unless told:
#   FAKE_ENGINE=down  FAKE_COMPOSE=v1|none|old (2.20.2)|floor (Debian's 2.26.1-4)
#   FAKE_ABSENT="IMAGE ..."
#   FAKE_NO_REGISTRY=1  FAKE_NOFILE_MAX=N (dockerd's limit)  FAKE_MEMTOTAL=BYTES  FAKE_NCPU=N
#   FAKE_PS=JSON (compose ps of project FAKE_PS_PROJECT, default haproxy-lab)
#   FAKE_UP=fail (compose up fails as a container that stays unhealthy does)
# Each call is logged to DIR/calls; each compose up's open files (HAPROXY_NOFILE
# and NOFILE as its environment has them) to DIR/up-nofile.
doctor_fake() {
  cat >"$1/docker" <<'FAKE'
#!/usr/bin/env bash
echo "$*" >>"$(dirname "$0")/calls"
if [[ "$1" == compose ]]; then
  shift
  [[ "$1" != --project-directory ]] || shift 2
  case "$1" in
    version)
      case "${FAKE_COMPOSE:-v2}" in
        v2) out="Docker Compose version v2.29.7" ;;
        old) out="Docker Compose version v2.20.2" ;;
        floor) out="Docker Compose version 2.26.1-4" ;;
        v1) out="docker-compose version 1.29.2, build 5becea4c" ;;
        *) echo "docker: 'compose' is not a docker command." >&2; exit 1 ;;
      esac
      # --short: the version alone (common.sh compose_version reads it).
      [[ "${2:-}" != --short ]] || out=$(sed 's/^.*version v\{0,1\}\([^ ,]*\).*/\1/' <<<"${out}")
      echo "${out}" ;;
    ps) [[ "${COMPOSE_PROJECT_NAME:-haproxy-lab}" != "${FAKE_PS_PROJECT:-haproxy-lab}" ]] || echo "${FAKE_PS:-}" ;;
    up)
      echo "HAPROXY_NOFILE=${HAPROXY_NOFILE:-} NOFILE=${NOFILE:-}" >>"$(dirname "$0")/up-nofile"
      [[ "${FAKE_UP:-}" != fail ]] || { echo "dependency failed to start: container haproxy-lab-haproxy-1 is unhealthy" >&2; exit 1; } ;;
    config)
      # The default services (compose.yaml's without a profile).
      if [[ "$2" == --services ]]; then
        printf '%s\n' certs haproxy backend-slow backend-fast prometheus grafana container-exporter haproxy-exporter
        exit 0
      fi
      cat <<'JSON'
{
  "name": "haproxy-lab",
  "networks": {
    "lab": {
      "ipam": {}
    }
  },
  "services": {
    "backend-slow": {
      "command": [
        "node",
        "/app/server.mjs"
      ],
      "deploy": {
        "resources": {
          "limits": {
            "memory": "536870912"
          },
          "reservations": {
            "memory": "268435456"
          }
        },
        "placement": {}
      },
      "image": "node"
    },
    "haproxy": {
      "deploy": {
        "resources": {
          "limits": {
            "cpus": 2,
            "memory": "2147483648"
          }
        }
      },
      "volumes": [
        {
          "type": "bind",
          "source": "/lab/haproxy"
        }
      ]
    },
    "no-limit": {
      "image": "x"
    },
    "prometheus": {
      "deploy": {
        "resources": {
          "limits": {
            "memory": "1073741824"
          }
        }
      }
    }
  }
}
JSON
      ;;
  esac
  exit 0
fi
if [[ "$1" != version && "${FAKE_ENGINE:-up}" != up ]]; then
  echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?" >&2
  exit 1
fi
case "$1" in
  version)
    [[ "$3" == *Client* ]] && { echo 27.3.0; exit 0; }
    [[ "${FAKE_ENGINE:-up}" == up ]] || { echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?" >&2; exit 1; }
    echo 27.3.1 ;;
  info) if [[ "$*" == *NCPU* ]]; then echo "${FAKE_NCPU:-2}"; else echo "${FAKE_MEMTOTAL:-25769803776}"; fi ;;
  image)
    [[ " ${FAKE_ABSENT:-} " != *" $3 "* ]] || { echo "Error response from daemon: No such image: $3" >&2; exit 1; }
    echo '[{}]' ;;
  manifest|pull)
    [[ -z "${FAKE_NO_REGISTRY:-}" ]] || { echo 'failed to configure transport: error pinging v2 registry: Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io: no such host' >&2; exit 1; }
    echo '{}' ;;
  run)
    asked=""
    while [[ $# -gt 0 ]]; do [[ "$1" != --ulimit ]] || asked="${2#nofile=}"; shift; done
    if [[ -z "${asked}" ]]; then echo "${FAKE_NOFILE_MAX:-1048576}"; exit 0; fi
    if ((${asked%%:*} > ${FAKE_NOFILE_MAX:-1048576})); then
      echo "docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error setting rlimits for ready process: error setting rlimit type 7: operation not permitted: unknown" >&2
      exit 125
    fi
    echo "${asked%%:*}" ;;
esac
FAKE
  chmod +x "$1/docker"
}

# doctor_tree ROOT: the lab's mounted folders with a file each, and results/,
# readable by others (what a default umask gives).
doctor_tree() {
  local d
  for d in haproxy prometheus grafana/dashboards backend loadgen netprobe results; do
    mkdir -p "$1/${d}"
    [[ "${d}" == results ]] || echo "x" >"$1/${d}/file"
  done
  mv "$1/haproxy/file" "$1/haproxy/haproxy.cfg"
  chmod -R u=rwX,go=rX "$1"
}

# doctor_setup: a temporary folder with the fake docker and a checkout (lab/).
doctor_setup() {
  local dir
  dir=$(mktemp -d)
  chmod 755 "${dir}"
  doctor_fake "${dir}"
  doctor_tree "${dir}/lab"
  echo "${dir}"
}

# run_doctor DIR [VAR=VALUE...]: scripts/doctor.sh's main on DIR's fake docker
# and checkout, the lab's default ports and open files, ports in BUSY busy;
# DOCTOR_ARGS=... its options (--before-up).
run_doctor() {
  local dir="$1"
  shift
  # shellcheck disable=SC2016 # expanded by the inner bash
  env DOCKER="${dir}/docker" ROOT="${dir}/lab" COMPOSE_PROJECT_NAME=haproxy-lab \
    HAPROXY_HTTP_PORT=8080 HAPROXY_HTTPS_PORT=8443 HAPROXY_STATS_PORT=8404 HAPROXY_METRICS_PORT=8405 PROMETHEUS_PORT=9090 \
    GRAFANA_PORT=3000 HAPROXY_NOFILE=1048576 NOFILE=1048576 "$@" bash -c '
      source "$1"
      checkout_root="${ROOT}"
      port_busy() { [[ " ${BUSY:-} " == *" $1 "* ]]; }
      main ${DOCTOR_ARGS:-}' _ "${LAB_ROOT}/scripts/doctor.sh"
}

# bare_path DIR: DIR holding links to the tools the lab's scripts use on the
# host (bash and coreutils, sed, awk, grep, find), no docker and no node:
# PATH=DIR is a machine without Docker (tests/unit-first-steps.sh too).
bare_path() {
  local tool path
  for tool in bash env sed awk grep cut sort head tail paste find dirname id date tr wc mktemp cat rm ls timeout; do
    # timeout: not on a Mac (the doctor's bounded does without it).
    path=$(type -P "${tool}") || continue
    ln -sf "${path}" "$1/${tool}"
  done
}

# line_of CHECK OUTPUT: the report's line for CHECK ("" if none).
line_of() { grep -E "^(ok  |warn|FAIL) $1: " <<<"$2" || true; }

test_unit_doctor_all_good_passes() {
  local dir out rc=0 body check
  dir=$(doctor_setup)
  out=$(run_doctor "${dir}") || rc=$?
  echo "${out}"
  assert_eq 0 "${rc}" "exit status when all is well"
  body=$(sed '$d' <<<"${out}")
  assert_eq "" "$(grep -v '^ok   ' <<<"${body}" || true)" "lines that are not ok"
  assert_eq "$(wc -l <<<"${body}" | tr -d ' ') ok, 0 failed" "$(tail -n 1 <<<"${out}")" "the last line"
  for check in docker compose 'image HAPROXY_IMAGE' 'image GRAFANA_IMAGE' nofile 'port GRAFANA_PORT' memory cpus checkout results; do
    [[ -n "$(line_of "${check}" "${out}")" ]] || fail "no line for ${check}"
  done
  assert_eq "ok   docker: engine 27.3.1 reachable (client 27.3.0)" "$(line_of docker "${out}")" "docker line"
  assert_eq "ok   compose: Docker Compose 2.29.7 (the lab supports ${COMPOSE_FLOOR} and later)" "$(line_of compose "${out}")" "compose line"
  assert_match 'containers can get 1048576 open files' "$(line_of nofile "${out}")" "nofile line"
  assert_match 'Docker can use 24.0 GiB; the lessons were measured within 4.0 GiB .* the 3 default services. memory limits add up to 3.5 GiB$' \
    "$(line_of memory "${out}")" "memory line (limits only, no reservations)"
  rm -rf "${dir}"
}

test_unit_doctor_compose_v1_or_none_fails_with_the_fix() {
  local dir out rc=0 kind
  dir=$(doctor_setup)
  for kind in v1 none; do
    rc=0
    out=$(run_doctor "${dir}" FAKE_COMPOSE="${kind}") || rc=$?
    line_of compose "${out}"
    assert_eq 1 "${rc}" "exit status with compose ${kind}"
    assert_match '^FAIL compose: .*; fix: install the Compose v2 plugin: sudo apt-get install docker-compose-plugin' \
      "$(line_of compose "${out}")" "compose ${kind}"
    [[ "${kind}" != v1 ]] || assert_match "is Compose 1\.29\.2 .*v1: the lab needs Compose v2" "$(line_of compose "${out}")" "v1 named"
    [[ "${kind}" != none ]] || assert_match "no Compose v2: 'docker compose' failed: docker: 'compose' is not a docker command" \
      "$(line_of compose "${out}")" "no compose named"
  done
  rm -rf "${dir}"
}

# The floor itself passes (Debian's version string); one below fails, naming
# both versions, with the fix.
test_unit_doctor_compose_below_the_floor_fails_with_the_fix() {
  local dir out rc=0
  dir=$(doctor_setup)
  out=$(run_doctor "${dir}" FAKE_COMPOSE=floor) || rc=$?
  assert_eq "ok   compose: Docker Compose 2.26.1 (the lab supports 2.26.1 and later)" "$(line_of compose "${out}")" "compose line at the floor"
  assert_eq 0 "${rc}" "exit status at the floor"
  rc=0
  out=$(run_doctor "${dir}" FAKE_COMPOSE=old) || rc=$?
  line_of compose "${out}"
  assert_eq 1 "${rc}" "exit status below the floor"
  assert_match '^FAIL compose: Docker Compose 2\.20\.2 is older than 2\.26\.1, the oldest the lab supports .*; fix: install a newer Compose v2 plugin' \
    "$(line_of compose "${out}")" "compose line below the floor"
  rm -rf "${dir}"
}

# No docker on PATH at all: the one line that says to install it (the
# doctor's own docker function must not hide a missing command, as "command
# -v docker" would by finding the function), the rest checked without it.
test_unit_doctor_no_docker_on_path_says_install_it() {
  local dir out err rc=0
  dir=$(doctor_setup)
  mkdir "${dir}/bin"
  bare_path "${dir}/bin"
  out=$(run_doctor "${dir}" DOCKER=docker PATH="${dir}/bin" 2>"${dir}/stderr") || rc=$?
  err=$(cat "${dir}/stderr")
  echo "${out}"
  assert_eq 1 "${rc}" "exit status with no docker on PATH"
  assert_eq "FAIL docker: no 'docker' command; fix: install Docker Engine (https://docs.docker.com/engine/install/) or Docker Desktop" \
    "$(line_of docker "${out}")" "docker line"
  assert_eq "" "$(line_of compose "${out}")" "compose line (not checked without docker)"
  assert_match '^warn images, nofile, memory, cpus: not checked' "$(line_of 'images, nofile, memory, cpus' "${out}")" "skipped checks"
  assert_match '^[0-9]+ ok, 1 failed \(1 warning\)$' "$(tail -n 1 <<<"${out}")" "the last line"
  assert_eq "" "${err}" "stderr (a tool missing from PATH, or docker's own error)"
  [[ ! -e "${dir}/calls" ]] || fail "the fake docker was called: $(cat "${dir}/calls")"
  # --before-up: that line alone, nothing after it.
  rc=0
  out=$(run_doctor "${dir}" DOCKER=docker PATH="${dir}/bin" DOCTOR_ARGS=--before-up) || rc=$?
  assert_eq 1 "${rc}" "exit status with no docker on PATH, --before-up"
  assert_eq "FAIL docker: no 'docker' command; fix: install Docker Engine (https://docs.docker.com/engine/install/) or Docker Desktop
0 ok, 1 failed" "${out}" "the report before up"
  rm -rf "${dir}"
}

# --before-up (scripts/up.sh): the default services' images only, no memory;
# on a machine with no image yet, the node image pulled to measure the open
# files (the first up's "rlimit type 7" comes before any image is here); a
# failed docker or compose check ends the report.
test_unit_doctor_before_up_checks_what_stops_compose_up() {
  local dir out rc=0 node haproxy
  dir=$(doctor_setup)
  out=$(run_doctor "${dir}" DOCTOR_ARGS=--before-up) || rc=$?
  echo "${out}"
  assert_eq 0 "${rc}" "exit status when all is well"
  assert_eq "image GRAFANA_IMAGE image HAPROXY_EXPORTER_IMAGE image HAPROXY_IMAGE image NODE_IMAGE image PROMETHEUS_IMAGE" \
    "$(sed -n 's/^ok   \(image [A-Z_]*\):.*/\1/p' <<<"${out}" | sort | paste -sd' ' -)" "images checked"
  assert_eq "" "$(line_of memory "${out}")" "memory line"
  [[ -n "$(line_of nofile "${out}")" && -n "$(line_of 'port GRAFANA_PORT' "${out}")" && -n "$(line_of results "${out}")" ]] \
    || fail "no nofile, port or results line"
  # No image yet: the node image pulled, then the limit measured.
  node=$(env_value NODE_IMAGE) haproxy=$(env_value HAPROXY_IMAGE)
  rc=0
  out=$(run_doctor "${dir}" DOCTOR_ARGS=--before-up FAKE_ABSENT="${node} ${haproxy}" FAKE_NOFILE_MAX=20000) || rc=$?
  line_of nofile "${out}"
  assert_eq 1 "${rc}" "exit status with no image and dockerd's limit at 20000"
  grep -qx "pull -q ${node}" "${dir}/calls" || fail "no pull of ${node} before measuring: $(grep -E '^(pull|run)' "${dir}/calls")"
  assert_match '^FAIL nofile: .*at most 20000 here.*; fix: export HAPROXY_NOFILE=20000 NOFILE=20000 ' "$(line_of nofile "${out}")" "nofile line"
  # Without Compose v2: its line, then nothing.
  rc=0
  out=$(run_doctor "${dir}" DOCTOR_ARGS=--before-up FAKE_COMPOSE=none) || rc=$?
  assert_eq 1 "${rc}" "exit status without compose"
  assert_eq "ok docker|FAIL compose|1 ok, 1 failed" "$(cut -d: -f1 <<<"${out}" | tr -s ' ' | paste -sd'|' -)" \
    "the report before up without compose"
  rm -rf "${dir}"
}

test_unit_doctor_engine_down_fails_and_skips_what_needs_it() {
  local dir out rc=0
  dir=$(doctor_setup)
  out=$(run_doctor "${dir}" FAKE_ENGINE=down) || rc=$?
  echo "${out}"
  assert_eq 1 "${rc}" "exit status without an engine"
  assert_match '^FAIL docker: the Docker engine does not answer: Cannot connect to the Docker daemon.*; fix: start Docker' \
    "$(line_of docker "${out}")" "docker line"
  assert_match '^warn images, nofile, memory, cpus: not checked' "$(line_of 'images, nofile, memory, cpus' "${out}")" "skipped checks"
  assert_match '^ok   port HAPROXY_HTTP_PORT' "$(line_of 'port HAPROXY_HTTP_PORT' "${out}")" "ports still checked"
  rm -rf "${dir}"
}

test_unit_doctor_missing_image_not_pullable_names_offline_images() {
  local dir out rc=0 prom k6 stand_in grafana netprobe vegeta golang h2load
  dir=$(doctor_setup)
  prom=$(COMPOSE_ENV_FILES=.env env_value PROMETHEUS_IMAGE)
  k6=$(COMPOSE_ENV_FILES=.env env_value K6_IMAGE)
  # No registry: absent images fail, the registry is asked once.
  out=$(run_doctor "${dir}" COMPOSE_ENV_FILES=.env FAKE_ABSENT="${prom} ${k6}" FAKE_NO_REGISTRY=1) || rc=$?
  echo "${out}"
  assert_eq 1 "${rc}" "exit status with an image neither present nor reachable"
  assert_match "^FAIL image PROMETHEUS_IMAGE: ${prom} neither present nor reachable \(no registry: .*; fix: docker compose pull; with no registry: scripts/offline-images.sh, then export COMPOSE_ENV_FILES=\.env,offline\.env$" \
    "$(line_of 'image PROMETHEUS_IMAGE' "${out}")" "absent default image"
  assert_match "^FAIL image K6_IMAGE: .*; fix: docker pull ${k6}; with no registry: scripts/offline-images.sh" \
    "$(line_of 'image K6_IMAGE' "${out}")" "absent profile image"
  assert_eq 1 "$(grep -c '^manifest inspect' "${dir}/calls")" "registry probes when it is unreachable"
  # A registry: absent but pullable is fine.
  out=$(run_doctor "${dir}" COMPOSE_ENV_FILES=.env FAKE_ABSENT="${prom}")
  assert_match "^ok   image PROMETHEUS_IMAGE: ${prom} not present, pullable" "$(line_of 'image PROMETHEUS_IMAGE' "${out}")" "pullable"
  # vegeta's image, built by compose, not built yet: a warning; golang, its
  # build stage's image, then needed (pullable here), else not.
  vegeta=$(COMPOSE_ENV_FILES=.env env_value VEGETA_IMAGE)
  golang=$(COMPOSE_ENV_FILES=.env env_value GOLANG_IMAGE)
  out=$(run_doctor "${dir}" COMPOSE_ENV_FILES=.env FAKE_ABSENT="${vegeta} ${golang}")
  assert_match "^warn image VEGETA_IMAGE: .* not built yet .*; fix: docker compose --profile '\\*' build vegeta \\(with no registry: scripts/offline-images.sh\\)$" \
    "$(line_of 'image VEGETA_IMAGE' "${out}")" "vegeta not built"
  assert_match "^ok   image GOLANG_IMAGE: ${golang} not present, pullable" "$(line_of 'image GOLANG_IMAGE' "${out}")" "golang for building vegeta"
  # h2load's, built by compose too: a warning.
  h2load=$(COMPOSE_ENV_FILES=.env env_value H2LOAD_IMAGE)
  out=$(run_doctor "${dir}" COMPOSE_ENV_FILES=.env FAKE_ABSENT="${h2load}")
  assert_match "^warn image H2LOAD_IMAGE: .* not built yet .*; fix: docker compose --profile '\\*' build h2load \\(with no registry: scripts/offline-images.sh\\)$" \
    "$(line_of 'image H2LOAD_IMAGE' "${out}")" "h2load not built"
  out=$(run_doctor "${dir}" COMPOSE_ENV_FILES=.env FAKE_ABSENT="${golang}" FAKE_NO_REGISTRY=1 2>/dev/null || true)
  assert_match "^ok   image GOLANG_IMAGE: ${golang} not needed: VEGETA_IMAGE" "$(line_of 'image GOLANG_IMAGE' "${out}")" "golang with vegeta built"
  # Offline: a stand-in not built yet fails; Grafana (no stand-in) and netprobe (built by compose) warn.
  stand_in=$(COMPOSE_ENV_FILES=.env,offline.env env_value HAPROXY_IMAGE)
  grafana=$(COMPOSE_ENV_FILES=.env,offline.env env_value GRAFANA_IMAGE)
  netprobe=$(COMPOSE_ENV_FILES=.env,offline.env env_value NETPROBE_IMAGE)
  rc=0
  out=$(run_doctor "${dir}" COMPOSE_ENV_FILES=.env,offline.env FAKE_ABSENT="${stand_in} ${grafana} ${netprobe}" FAKE_NO_REGISTRY=1) || rc=$?
  echo "${out}"
  assert_eq 1 "${rc}" "exit status offline without the stand-ins"
  assert_match "^FAIL image HAPROXY_IMAGE: ${stand_in} not built .*; fix: scripts/offline-images.sh$" \
    "$(line_of 'image HAPROXY_IMAGE' "${out}")" "stand-in not built"
  assert_match '^warn image GRAFANA_IMAGE: .*no Grafana stand-in; fix: scripts/up.sh starts the lab without Grafana \(each scenario run still writes its chart under results/\)$' \
    "$(line_of 'image GRAFANA_IMAGE' "${out}")" "offline Grafana"
  assert_match "^warn image NETPROBE_IMAGE: .*; fix: docker compose --profile '\\*' build netprobe \\(with no registry: scripts/offline-images.sh\\)$" \
    "$(line_of 'image NETPROBE_IMAGE' "${out}")" "netprobe not built"
  rm -rf "${dir}"
}

test_unit_doctor_nofile_too_small_explains_rlimit_type_7() {
  local dir out rc=0
  dir=$(doctor_setup)
  out=$(run_doctor "${dir}" FAKE_NOFILE_MAX=20000) || rc=$?
  line_of nofile "${out}"
  assert_eq 1 "${rc}" "exit status when dockerd allows fewer files than asked"
  assert_match '^FAIL nofile: HAPROXY_NOFILE=1048576 NOFILE=1048576 asks more .*at most 20000 here.*"error setting rlimit type 7: operation not permitted".*; fix: export HAPROXY_NOFILE=20000 NOFILE=20000 \(or raise dockerd.s LimitNOFILE' \
    "$(line_of nofile "${out}")" "nofile too small"
  grep -q -- '--ulimit nofile=1048576:1048576 --entrypoint sh .* -c ulimit -n$' "${dir}/calls" \
    || fail "no measuring container with the asked limit: $(grep '^run' "${dir}/calls")"
  out=$(run_doctor "${dir}" FAKE_NOFILE_MAX=20000 HAPROXY_NOFILE=20000 NOFILE=16384)
  assert_eq "ok   nofile: containers can get 20000 open files (HAPROXY_NOFILE=20000 NOFILE=16384)" \
    "$(line_of nofile "${out}")" "nofile after the fix"
  rm -rf "${dir}"
}

test_unit_doctor_busy_port_fails_but_the_labs_own_is_ok() {
  local dir out rc=0 ps
  dir=$(doctor_setup)
  ps='{"Name":"haproxy-lab-test-haproxy-1","Project":"haproxy-lab-test","Publishers":[{"URL":"127.0.0.1","TargetPort":8080,"PublishedPort":18080,"Protocol":"tcp"},{"URL":"","TargetPort":9101,"PublishedPort":0,"Protocol":"tcp"}]}'
  out=$(run_doctor "${dir}" COMPOSE_PROJECT_NAME=haproxy-lab-test FAKE_PS_PROJECT=haproxy-lab-test FAKE_PS="${ps}" \
    HAPROXY_HTTP_PORT=18080 BUSY="18080 3000") || rc=$?
  line_of 'port [A-Z_]+' "${out}"
  assert_eq 1 "${rc}" "exit status with a busy port"
  assert_eq "ok   port HAPROXY_HTTP_PORT: 127.0.0.1:18080 held by the lab itself (project haproxy-lab-test)" \
    "$(line_of 'port HAPROXY_HTTP_PORT' "${out}")" "the lab's own port"
  assert_eq "FAIL port GRAFANA_PORT: 127.0.0.1:3000 is in use by another program; fix: export GRAFANA_PORT=13000 (any free port), or stop what listens on 3000" \
    "$(line_of 'port GRAFANA_PORT' "${out}")" "a busy port"
  assert_eq "ok   port PROMETHEUS_PORT: 127.0.0.1:9090 free" "$(line_of 'port PROMETHEUS_PORT' "${out}")" "a free port"
  # The same port held by another project (the default lab) is busy for this one.
  rc=0
  out=$(run_doctor "${dir}" COMPOSE_PROJECT_NAME=haproxy-lab-test FAKE_PS_PROJECT=haproxy-lab FAKE_PS="${ps}" \
    HAPROXY_HTTP_PORT=18080 BUSY=18080) || rc=$?
  assert_eq 1 "${rc}" "exit status with a port of another project"
  assert_match '^FAIL port HAPROXY_HTTP_PORT: 127.0.0.1:18080 is in use' "$(line_of 'port HAPROXY_HTTP_PORT' "${out}")" "another project's port"
  rm -rf "${dir}"
}

# A memory limit reserves nothing: less memory than the limits add up to, or
# than the lessons were measured in (4 GiB, a VM's 3.8 counted as 4), warns.
test_unit_doctor_too_little_memory_warns() {
  local dir out rc=0
  dir=$(doctor_setup)
  out=$(run_doctor "${dir}" FAKE_MEMTOTAL=$((2 * 1024 * 1024 * 1024))) || rc=$?
  assert_eq 0 "${rc}" "exit status with 2 GiB (a warning)"
  assert_match "^warn memory: Docker can use 2.0 GiB; the lessons were measured within 4.0 GiB \\(the largest, lesson 08, peaked at 0.6 GiB of containers' memory\\) and the 3 default services' memory limits add up to 3.5 GiB: the lab starts, .*; fix: give Docker at least 4.0 GiB " \
    "$(line_of memory "${out}")" "2 GiB"
  out=$(run_doctor "${dir}" FAKE_MEMTOTAL=$((38 * 1024 * 1024 * 1024 / 10))) || rc=$?
  assert_match '^ok   memory: Docker can use 3.8 GiB; ' "$(line_of memory "${out}")" "a VM given 4 GiB"
  out=$(run_doctor "${dir}" FAKE_MEMTOTAL=$((34 * 1024 * 1024 * 1024 / 10))) || rc=$?
  assert_match '^warn memory: Docker can use 3.4 GiB; .* add up to 3.5 GiB: the lab starts' "$(line_of memory "${out}")" "below the limits' sum"
  assert_eq 0 "${rc}" "exit status of the warnings"
  rm -rf "${dir}"
}

test_unit_doctor_fewer_cpus_than_measured_warns() {
  local dir out rc=0
  dir=$(doctor_setup)
  out=$(run_doctor "${dir}") || rc=$?
  assert_match '^ok   cpus: Docker can use 2 CPUs$' "$(line_of cpus "${out}")" "2 CPUs"
  out=$(run_doctor "${dir}" FAKE_NCPU=1) || rc=$?
  assert_eq 0 "${rc}" "exit status with 1 CPU (a warning)"
  assert_match '^warn cpus: Docker can use 1 CPU; the scenarios and lessons were measured on 2, .*; fix: give Docker 2 CPUs \(Docker Desktop: Settings > Resources > CPUs\)$' \
    "$(line_of cpus "${out}")" "1 CPU"
  rm -rf "${dir}"
}

test_unit_doctor_unreadable_checkout_fails_naming_the_path() {
  local dir out rc=0
  dir=$(doctor_setup)
  chmod 600 "${dir}/lab/haproxy/haproxy.cfg"
  out=$(run_doctor "${dir}") || rc=$?
  line_of checkout "${out}"
  assert_eq 1 "${rc}" "exit status with an unreadable config"
  assert_match '^FAIL checkout: 1 path in .* others cannot read .*: haproxy/haproxy.cfg; fix: chmod -R o\+rX haproxy$' \
    "$(line_of checkout "${out}")" "one unreadable file"
  # A checkout made with umask 077: the first paths, how many more, every folder.
  rm -rf "${dir}/lab"
  (umask 077 && doctor_tree "${dir}/lab" && chmod -R go= "${dir}/lab" && chmod 755 "${dir}/lab" "${dir}/lab/results")
  rc=0
  out=$(run_doctor "${dir}") || rc=$?
  line_of checkout "${out}"
  assert_eq 1 "${rc}" "exit status with a umask 077 checkout"
  assert_match '^FAIL checkout: 13 paths .*: backend, backend/file, grafana and 10 more; fix: chmod -R o\+rX backend grafana haproxy loadgen netprobe prometheus$' \
    "$(line_of checkout "${out}")" "umask 077 checkout"
  # results/ missing.
  rm -rf "${dir}/lab/results"
  out=$(run_doctor "${dir}") || true
  assert_match "^FAIL results: .* missing .*; fix: mkdir -p ${dir}/lab/results$" "$(line_of results "${out}")" "results/ missing"
  rm -rf "${dir}"
}

test_unit_doctor_summary_line_exit_status_and_help() {
  local dir out rc=0
  dir=$(doctor_setup)
  out=$(run_doctor "${dir}" FAKE_COMPOSE=none FAKE_NOFILE_MAX=20000) || rc=$?
  echo "${out}"
  assert_eq 1 "${rc}" "exit status with two failures"
  assert_match '^[0-9]+ ok, 2 failed$' "$(tail -n 1 <<<"${out}")" "the last line"
  assert_eq "$(grep -c '^ok   ' <<<"${out}") ok, 2 failed" "$(tail -n 1 <<<"${out}")" "ok lines counted"
  out=$(run_doctor "${dir}" FAKE_MEMTOTAL=$((2 * 1024 * 1024 * 1024)))
  assert_match '^[0-9]+ ok, 0 failed \(1 warning\)$' "$(tail -n 1 <<<"${out}")" "the last line with a warning"
  out=$(scripts/doctor.sh --help)
  assert_match '^Usage: scripts/doctor.sh \[--pull \| --before-up\]' "${out}" "--help"
  assert_fails_with "^doctor: unknown option '--nope': use --pull, --before-up or --help$" scripts/doctor.sh --nope
  assert_fails_with "^doctor: --pull and --before-up go alone: use one of them$" scripts/doctor.sh --pull --before-up
  rm -rf "${dir}"
}

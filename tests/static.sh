# shellcheck shell=bash
# Static checks: configs, scripts and dashboards, each checked by the real
# tool in a lab image (nothing is installed on the host).

test_static_compose_config_every_profile() {
  local profile
  compose config -q
  for profile in load hold '*'; do
    compose --profile "${profile}" config -q || fail "compose config with --profile ${profile}"
  done
  COMPOSE_ENV_FILES=.env,offline.env compose --profile '*' config -q
}

# The memory limits the doctor and the connection preflight read from
# "compose config": each service's own, though a service's config also lists
# what it depends on (the holder's lists a backend's 512 MiB before its own).
test_static_memory_limits_are_each_services_own() {
  local limits
  limits=$(HOLDER_MEMORY=768m BACKEND_MEMORY=256m HAPROXY_MEMORY=3g memory_limits --profile hold)
  echo "${limits}"
  assert_eq 805306368 "$(awk '$1 == "holder" { print $2 }' <<<"${limits}")" "the holder's memory limit (HOLDER_MEMORY=768m)"
  assert_eq 268435456 "$(awk '$1 == "backend-fast" { print $2 }' <<<"${limits}")" "backend-fast's (BACKEND_MEMORY=256m)"
  assert_eq 3221225472 "$(awk '$1 == "haproxy" { print $2 }' <<<"${limits}")" "HAProxy's (HAPROXY_MEMORY=3g)"
  assert_eq "" "$(memory_limits | awk '$1 == "holder"')" "the holder without its profile"
}

# HAProxy's CPU allowance (a ceiling step's HAPROXY_CPUS, HAPROXY_CPUSET):
# what compose hands Docker when set, no limit at all when not.
test_static_haproxy_cpu_allowance_is_compose_variables() {
  local limited
  limited=$(HAPROXY_CPUS=0.2 HAPROXY_CPUSET=1 compose config --format json haproxy)
  assert_eq "0.2 1" "$(in_image NODE_IMAGE node -e 'const h = JSON.parse(require("fs").readFileSync(0, "utf8")).services.haproxy;
    console.log(h.deploy.resources.limits.cpus, h.cpuset)' <<<"${limited}")" "HAProxy's cpus and cpuset with HAPROXY_CPUS=0.2 HAPROXY_CPUSET=1"
  assert_eq "undefined undefined" "$(compose config --format json haproxy | in_image NODE_IMAGE node -e 'const h = JSON.parse(require("fs").readFileSync(0, "utf8")).services.haproxy;
    console.log(h.deploy.resources.limits.cpus, h.cpuset)')" "HAProxy's cpus and cpuset by default (no limit)"
}

test_static_compose_rules() {
  # Grafana is in the default set; every profile is included here.
  compose --profile '*' config --format json \
    | in_image NODE_IMAGE node tests/lib/compose-rules.mjs
}

# swarm_published [FILES...]: "SERVICE:PORT ..." every port the Swarm stack
# publishes (compose.yaml + compose.swarm.yaml + FILES), sorted.
swarm_published() {
  local files=(-f compose.yaml -f compose.swarm.yaml) file
  for file in "$@"; do files+=(-f "${file}"); done
  # shellcheck disable=SC2016 # a template literal of node
  compose "${files[@]}" --profile '*' config --format json | in_image NODE_IMAGE node -e '
    const services = JSON.parse(require("node:fs").readFileSync(0, "utf8")).services;
    console.log(Object.entries(services).flatMap(([name, s]) => (s.ports ?? []).map((p) => `${name}:${p.target}`)).sort().join(" "))'
}

# On a Swarm a port is published on every address of its node (Swarm has no
# host_ip): only the app's ports by default, the admin interfaces only with
# SWARM_PUBLISH_ADMIN=1's file. Swarm itself cannot run in this group: the
# swarm group deploys it and reads what answers.
test_static_swarm_publishes_only_the_app_ports() {
  assert_eq "haproxy:8080 haproxy:8443" "$(swarm_published)" "ports a Swarm deploy publishes by default"
  assert_eq "grafana:3000 haproxy:8080 haproxy:8404 haproxy:8405 haproxy:8443 prometheus:9090" \
    "$(swarm_published compose.swarm-admin.yaml)" "ports a Swarm deploy publishes with SWARM_PUBLISH_ADMIN=1"
}

test_static_default_images_are_official_and_pinned() {
  local images image
  # What a user pulls: every service's image, except the ones compose builds
  # here (a service with a build:), for which the base images their
  # Dockerfiles start from (the build arguments named *_IMAGE).
  # shellcheck disable=SC2016 # a JavaScript template, not a shell expansion
  images=$(COMPOSE_ENV_FILES=.env compose --profile '*' config --format json | in_image NODE_IMAGE node -e '
    const services = Object.values(JSON.parse(require("fs").readFileSync(0, "utf8")).services);
    const images = services.flatMap((s) => (s.build
      ? Object.entries(s.build.args ?? {}).filter(([k]) => k.endsWith("_IMAGE")).map(([, v]) => v)
      : [s.image]));
    console.log([...new Set(images)].sort().join("\n"));')
  [[ -n "${images}" ]] || fail "no images listed"
  while read -r image; do
    [[ "${image}" != haproxy-lab/* ]] || fail "default env names a stand-in image: ${image}"
    assert_match '^[a-z0-9./-]+:v?[0-9]+(\.[0-9]+)+(-[a-z]+)?$' "${image}" "image pinned to a version"
  done <<<"${images}"
  echo "${images}"
}

# Every pulled image in .env says where its tag was confirmed to exist (the
# line above it), and its offline stand-in (offline.env) is on the same
# version line: the stand-in's tag is a prefix of the pin's version.
test_static_image_pins_confirmed_and_matched_by_their_stand_ins() {
  local name ref previous="" official offline n=0
  while IFS= read -r line; do
    if [[ "${line}" =~ ^([A-Z0-9_]+_IMAGE)=(.+)$ ]]; then
      name="${BASH_REMATCH[1]}" ref="${BASH_REMATCH[2]}"
      n=$((n + 1))
      if [[ "${ref}" != haproxy-lab/* ]]; then
        [[ "${previous}" == "# confirmed: "* ]] || fail "${name}=${ref}: no '# confirmed: <where>' line above it in .env"
        offline=$(sed -n "s/^${name}=//p" offline.env)
        if [[ -z "${offline}" ]]; then
          # No stand-in (Grafana): offline.env must say why, naming the variable.
          grep -q "^# .*${name}" offline.env || fail "${name}: no stand-in in offline.env and no comment there saying why"
          previous="${line}"
          continue
        fi
        official="${ref##*:}" official="${official#v}" official="${official%%-*}"
        [[ "${official}." == "${offline##*:}."* ]] \
          || fail "${name}: stand-in ${offline} is not on the version line of ${ref}"
      fi
    fi
    previous="${line}"
  done <.env
  assert_ge 8 "${n}" "images pinned in .env"
}

test_static_haproxy_configs_valid() {
  local cfg n=0 certs
  # fe_tls loads its certificates at start: made here as the certs service
  # makes them into its volume (tls/make-certs.mjs), the keys HAProxy's
  # user's alone: removed by a container too, as this user may not own them.
  certs=$(mktemp -d)
  chmod 755 "${certs}"
  docker run --rm --network none -v "${LAB_ROOT}/tls:/tls:ro" -v "${certs}:/certs" \
    "$(env_value NODE_IMAGE)" node /tls/make-certs.mjs --key-owner "$(env_value HAPROXY_USER)" /certs >/dev/null || fail "tls/make-certs.mjs"
  for cfg in haproxy/*.cfg prometheus/docker-api-gate.cfg; do
    # -dW: warnings are errors, so a config that "works" with warnings fails.
    docker run --rm --network none -v "${LAB_ROOT}:/lab:ro" -v "${certs}:/etc/haproxy-certs:ro" -w /lab \
      "$(env_value HAPROXY_IMAGE)" haproxy -dW -c -f "/lab/${cfg}" || fail "haproxy -c ${cfg}"
    n=$((n + 1))
  done
  docker run --rm --network none -v "${certs}:/certs" "$(env_value NODE_IMAGE)" sh -c 'rm -rf /certs/*'
  rm -rf "${certs}"
  assert_ge 1 "${n}" "HAProxy configs checked"
}

# The certs service gives fe_tls's keys to HAPROXY_USER (.env): the user
# HAPROXY_IMAGE runs as, read from the image.
test_static_haproxy_user_is_the_images() {
  local found
  # shellcheck disable=SC2016 # expanded by the image's shell
  found=$(docker run --rm --network none --entrypoint sh "$(env_value HAPROXY_IMAGE)" -c 'echo "$(id -u):$(id -g)"')
  assert_eq "$(env_value HAPROXY_USER)" "${found}" "HAPROXY_USER (.env) against the uid:gid $(env_value HAPROXY_IMAGE) runs as"
}

test_static_prometheus_config_valid() {
  docker run --rm --network none -v "${LAB_ROOT}/prometheus:/etc/prometheus:ro" \
    --entrypoint promtool "$(env_value PROMETHEUS_IMAGE)" check config /etc/prometheus/prometheus.yml
}

test_static_shellcheck() {
  local files
  mapfile -t files < <(cd "${LAB_ROOT}" && { git ls-files -co --exclude-standard 2>/dev/null || find . -type f; } \
    | grep -E '(\.sh$|^\.ci/run$)' | sort -u)
  assert_ge 5 "${#files[@]}" "shell scripts found"
  in_image SHELLCHECK_IMAGE -x -P SCRIPTDIR:/lab "${files[@]}"
  echo "shellcheck: ${#files[@]} files clean"
}

test_static_dashboards_lint() {
  local files
  mapfile -t files < <(cd "${LAB_ROOT}" && ls grafana/dashboards/*.json)
  assert_ge 1 "${#files[@]}" "dashboards found"
  in_image NODE_IMAGE node tests/lib/dashboards.mjs "${files[@]}"
}

test_static_prometheus_rules_valid() {
  docker run --rm --network none -v "${LAB_ROOT}/prometheus:/etc/prometheus:ro" \
    --entrypoint promtool "$(env_value PROMETHEUS_IMAGE)" check rules /etc/prometheus/rules.yml
}

# The dashboard schema is the one of the Grafana line the lab runs.
test_static_grafana_schema_matches_the_pinned_grafana() {
  local grafana schema
  grafana=$(COMPOSE_ENV_FILES=.env env_value GRAFANA_IMAGE)
  schema=$(sed -n 's/.*"@grafana\/schema": "\([^"]*\)".*/\1/p' tests/schema/package.json)
  echo "GRAFANA_IMAGE ${grafana}, @grafana/schema ${schema}"
  assert_match '^[0-9]+\.[0-9]+\.[0-9]+$' "${schema}" "@grafana/schema pinned to an exact version"
  assert_eq "$(sed -E 's/^[^:]*:v?([0-9]+\.[0-9]+).*/\1/' <<<"${grafana}")" "${schema%.*}" \
    "@grafana/schema major.minor against GRAFANA_IMAGE's"
}

# The table of load tools and compose agree, and no shell variable reaches a
# load: each tool's container gets every variable the tool reads (what a
# scenario may set, plan --check) from the file LOAD_ENV_FILE names, and none
# from compose's environment, where each is set too (tests/lib/loadtools-compose.mjs).
test_static_load_tools_match_compose() {
  local names=() shell=() name knobs rc=0
  mapfile -t names < <(in_image NODE_IMAGE node tests/lib/loadtools-compose.mjs --names)
  assert_ge 10 "${#names[@]}" "load variables in scripts/labctl/core/loadtools.mjs"
  knobs=$(mktemp)
  for name in "${names[@]}"; do
    echo "${name}=from-load-env-file" >>"${knobs}"
    shell+=("${name}=from-the-shell")
  done
  env -i PATH="${PATH}" HOME="${HOME}" ${DOCKER_HOST:+DOCKER_HOST="${DOCKER_HOST}"} \
    COMPOSE_ENV_FILES="${COMPOSE_ENV_FILES:-.env}" LOAD_ENV_FILE="${knobs}" "${shell[@]}" \
    docker compose --project-directory "${LAB_ROOT}" --profile '*' config --format json \
    | docker run --rm -i --network none -v "${LAB_ROOT}:/lab:ro" -w /lab "$(env_value NODE_IMAGE)" \
      node tests/lib/loadtools-compose.mjs || rc=$?
  rm -f "${knobs}"
  return "${rc}"
}

# The runner (bash), the engine (node), the backend and the load tools' node
# code stay readable: no function over 60 lines, each doing one thing a name can say.
test_static_no_function_over_60_lines_in_runner_or_engine() {
  local files=() file
  for file in scripts/scenario.sh scripts/lib/*.sh scripts/labctl/*.mjs scripts/labctl/*/*.mjs backend/*.mjs loadgen/*/*.mjs; do
    [[ "${file}" == */test/* ]] || files+=("${file}")
  done
  docker run --rm --network none -v "${LAB_ROOT}:/lab:ro" -w /lab "$(env_value NODE_IMAGE)" \
    node tests/lib/function-length.mjs 60 "${files[@]}"
}

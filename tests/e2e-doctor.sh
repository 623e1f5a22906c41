# shellcheck shell=bash
# End to end: scripts/doctor.sh for real on the running e2e lab (project
# haproxy-lab-test, the ports and open-file limits e2e_setup and the caller
# exported): no check fails, and the ports the lab publishes count as its own.
# Then scripts/up.sh, the quick start's first step, on the same project.

test_e2e_01a_doctor_passes_on_the_running_lab() {
  local out rc=0 check name
  e2e_up
  out=$(scripts/doctor.sh) || rc=$?
  echo "${out}"
  assert_eq 0 "${rc}" "doctor's exit status on the running lab"
  assert_eq "" "$(grep '^FAIL' <<<"${out}" || true)" "failed checks"
  for check in docker compose 'image HAPROXY_IMAGE' 'image NODE_IMAGE' 'image PROMETHEUS_IMAGE' nofile \
    'port GRAFANA_PORT' memory checkout results; do
    grep -q "^ok   ${check}: " <<<"${out}" || fail "no ok line for ${check}"
  done
  for name in HAPROXY_HTTP_PORT HAPROXY_HTTPS_PORT HAPROXY_STATS_PORT HAPROXY_METRICS_PORT PROMETHEUS_PORT; do
    assert_eq "ok   port ${name}: 127.0.0.1:$(env_value "${name}") held by the lab itself (project ${COMPOSE_PROJECT_NAME})" \
      "$(grep "^ok   port ${name}: " <<<"${out}" || true)" "${name}, published by the running lab"
  done
  assert_match '^[0-9]+ ok, 0 failed' "$(tail -n 1 <<<"${out}")" "the last line"
}

# The quick start's first step, on the e2e project (its ports, the open files
# scripts/test.sh fitted): scripts/up.sh brings every default service up
# healthy and prints where they answer; with no Grafana image (offline.env,
# no registry) it says so and where the charts are instead.
test_e2e_01b_up_starts_the_lab() {
  local out rc=0 service running
  out=$(scripts/up.sh) || rc=$?
  echo "${out}"
  assert_eq 0 "${rc}" "exit status of scripts/up.sh"
  running=$(compose ps --status running --format '{{.Service}}')
  for service in "${E2E_SERVICES[@]}"; do
    grep -qx "${service}" <<<"${running}" || fail "${service} is not running after scripts/up.sh"
  done
  assert_match "HAProxy stats +http://127\.0\.0\.1:$(env_value HAPROXY_STATS_PORT)/stats" "${out}" "the stats address"
  if docker image inspect "$(env_value GRAFANA_IMAGE)" >/dev/null 2>&1; then
    assert_match "Grafana +http://127\.0\.0\.1:$(env_value GRAFANA_PORT) " "${out}" "Grafana's address"
  else
    assert_match '\] without Grafana: .*results/<scenario>/<timestamp>/chart\.svg' "${out}" "the line that says Grafana is left out"
  fi
  # The dashboards' tests put a stand-in "grafana" on the lab network.
  compose rm -sf grafana >/dev/null 2>&1 || true
}

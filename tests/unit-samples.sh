# shellcheck shell=bash
# shellcheck disable=SC2031 # step-load.sh is sourced in subshells on purpose: its globals stay out of the suite's shell
# Unit tests of how the runner files the samplers' lines (scripts/lib/
# step-load.sh distribute_samples, progress_totals): made-up sampler
# output, a temporary step folder, no Docker.

# samples_of LINES...: runs distribute_samples on LINES in a fresh step folder
# (container haproxy, step started at 1,000,000 ms, 2 processes) and prints it.
samples_of() {
  local dir
  dir=$(mktemp -d)
  printf '%s\n' "$@" | (
    # shellcheck source=scripts/lib/step-load.sh
    source "${LAB_ROOT}/scripts/lib/step-load.sh"
    distribute_samples "${dir}" haproxy 1000000 2
  )
  echo "${dir}"
}

test_unit_samples_filed_per_process_and_summed_per_pass() {
  local dir
  dir=$(samples_of '/proc/stat 5000000 1002000' \
    'haproxy 120 118 3 900 850 1002000 897' 'haproxy-2 80 79 0 600 590 1002010 598' \
    'haproxy 130 129 0 950 900 1003000 946' 'haproxy-2 - 0 - - - 1003010 -')
  assert_eq "$(printf '%s\n' '2 120 118 3 900 1002000 897' '3 130 129 0 950 1003000 946')" "$(cat "${dir}/haproxy-samples.txt")" "haproxy-samples.txt"
  assert_eq "$(printf '%s\n' '2 80 79 0 600 1002010 598' '3 - 0 - - 1003010 -')" "$(cat "${dir}/haproxy-2-samples.txt")" "haproxy-2-samples.txt"
  assert_eq "1002000 host 5000000 ns" "$(cat "${dir}/host-cpu.txt")" "host-cpu.txt"
  # The second pass: process 2 did not answer, so the sum is unknown ("-"),
  # not 130 (a progress line that would read as connections lost).
  assert_eq "- -" "$(cat "${dir}/.progress-haproxy")" "the latest pass's totals"
  rm -rf "${dir}"
}

test_unit_samples_progress_sums_every_container() {
  local dir out
  dir=$(samples_of 'haproxy 120 118 3 900 850 1002000' 'haproxy-2 80 79 0 600 590 1002010')
  assert_eq "200 1440" "$(cat "${dir}/.progress-haproxy")" "one pass's totals (clients, hits)"
  out=$(
    source "${LAB_ROOT}/scripts/lib/step-load.sh"
    haproxy_containers() { echo haproxy; }
    progress_totals "${dir}"
    haproxy_containers() { printf '%s\n' haproxy other; }
    progress_totals "${dir}"
  )
  # A container whose sampler has not written yet makes the total unknown.
  assert_eq "$(printf '%s\n' '200 1440' '- -')" "${out}" "progress_totals with one, then two containers"
  rm -rf "${dir}"
}

# The sampler (scripts/probes/haproxy-sockets.mjs, sockets_probe's) on a
# real HAProxy, in the node image in HAProxy's network namespace: 2 clients
# on fe_main (one waiting on be_slow's server, which never answers; one
# answered 200 by be_fast's), 1 on the stats frontend, and a second
# "process" whose runtime API does not answer.
test_unit_sampler_reads_a_real_haproxy() {
  local out id
  id=$(docker run -d --network none --entrypoint bash "$(env_value HAPROXY_IMAGE)" -c "$(cat <<'SCRIPT'
set -euo pipefail
cat >/tmp/h.cfg <<'CFG'
global
  stats socket ipv4@127.0.0.1:9999 level admin
defaults
  mode http
  timeout connect 1s
  timeout client 30s
  timeout server 30s
frontend stats
  bind 127.0.0.1:8404
  stats enable
frontend fe_main
  bind 127.0.0.1:8080
  use_backend be_fast if { path /fast }
  default_backend be_slow
backend be_slow
  server s1 127.0.0.1:8081
backend be_fast
  server f1 127.0.0.1:8082
frontend never_answers
  mode tcp
  bind 127.0.0.1:8081
  tcp-request inspect-delay 30s
  tcp-request content accept if WAIT_END
  default_backend nowhere
backend nowhere
  mode tcp
frontend answers
  bind 127.0.0.1:8082
  http-request return status 200
CFG
haproxy -D -f /tmp/h.cfg
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/9999) 2>/dev/null && break; sleep 0.1; done
exec 5<>/dev/tcp/127.0.0.1/8404 6<>/dev/tcp/127.0.0.1/8080 7<>/dev/tcp/127.0.0.1/8080
printf 'GET /slow HTTP/1.1\r\nHost: x\r\n\r\n' >&6
printf 'GET /fast HTTP/1.1\r\nHost: x\r\n\r\n' >&7
read -r -t 5 status <&7
sleep 0.5
echo "answer: ${status}"
sleep 60
SCRIPT
)")
  for _ in $(seq 100); do docker logs "${id}" 2>&1 | grep -q '^answer' && break; sleep 0.1; done
  # No host line, once; backends' port 8081 (1F91), frontend 8080 (1F90), up
  # to 5000 sockets, clients on fe_main.
  out=$( (docker logs "${id}" 2>&1 | grep '^answer'
    LAB_CPUSET="" sockets_probe_in "${id}" 0 0 1F91 1F90 'be_slow|be_fast' 5000 fe_main haproxy=127.0.0.1:9999 haproxy-p2=127.0.0.1:9998 </dev/null) || true)
  docker rm -f "${id}" >/dev/null 2>&1 || true
  echo "${out}"
  assert_match '^answer: HTTP/1.1 200' "$(sed -n 1p <<<"${out}")" "be_fast's answer"
  # NAME CLIENT SERVER QUEUE CUMREQ HITS AT_MS REQS: fe_main received 2
  # requests; CumReq counts the runtime API's sessions too (the probe's, the
  # script's wait for the socket), so it is more.
  assert_match '^haproxy 2 1 0 [0-9]+ 1 [0-9]{13} 2$' "$(sed -n 2p <<<"${out}")" \
    "process 1: 2 clients (not the stats one), 1 connection to be_slow's server, 1 answer 2xx, 2 requests on fe_main"
  assert_match '^([3-9]|[1-9][0-9]+)$' "$(sed -n 2p <<<"${out}" | cut -d' ' -f5)" "process 1's CumReq: fe_main's 2 requests and at least the probe's session"
  # Its server side is 0: with a small socket table the first process's line
  # carries the container's (the kernel's count, not the processes'); "-"
  # for what did not answer, not empty fields that shift AT_MS into HITS.
  assert_match '^haproxy-p2 - 0 0 - - [0-9]{13} -$' "$(sed -n 3p <<<"${out}")" "a process that does not answer"
}

test_unit_samples_a_line_without_its_time_is_dropped() {
  local dir
  dir=$(samples_of 'haproxy 120 118 3 900 850 1002000' 'haproxy-2 80 79 0 600 590 1002010' \
    'haproxy  1 0   1003000' 'haproxy-2 - 0 - - - 1003010')
  assert_eq '2 120 118 3 900 1002000 -' "$(cat "${dir}/haproxy-samples.txt")" "haproxy-samples.txt, its line with a time only (no REQS: \"-\")"
  assert_eq "- -" "$(cat "${dir}/.progress-haproxy")" "the second pass's totals (one process without an answer)"
  rm -rf "${dir}"
}

# shellcheck shell=bash
# scripts/swarm.sh without a Swarm: bad input is one line, and a practice
# Swarm that cannot be made leaves nothing behind. (The Swarm itself:
# scripts/test.sh swarm, on demand.)

test_unit_swarm_bad_input_is_one_clear_line() {
  assert_fails_with '^swarm: no command: use deploy, status, down, practice up or practice down' scripts/swarm.sh
  assert_fails_with "^swarm: unknown command 'up': use deploy" scripts/swarm.sh up
  assert_fails_with "^swarm: practice takes up \[N\] or down, not 'sideways'$" scripts/swarm.sh practice sideways
  assert_fails_with "^swarm: practice up takes a node count from 2 to 9, not '1'$" scripts/swarm.sh practice up 1
  assert_fails_with "^swarm: --scale needs SERVICE=N, e.g. --scale backend-slow=3$" scripts/swarm.sh deploy --scale 3
  assert_fails_with "^swarm: unknown argument '--replicas' \(scripts/swarm.sh --help\)$" scripts/swarm.sh deploy --replicas 3
  assert_fails_with "^swarm: cannot reach the Docker engine of context 'no-such-context'" \
    env SWARM_CONTEXT=no-such-context scripts/swarm.sh status
}

# A node image that is no Docker engine (the node image: it exits at once)
# stops practice up with one line, and what it started is gone.
test_unit_swarm_practice_up_that_fails_removes_what_it_started() {
  local left
  [[ -z "$(docker ps -aq --filter label=haproxy-lab-practice.node)" ]] \
    || fail "a practice Swarm exists on this machine: scripts/swarm.sh practice down, then rerun"
  assert_fails_with "^swarm: practice node haproxy-lab-practice-node1 stopped: .*\(is DIND_IMAGE a dind image\?\)" \
    env DIND_IMAGE="$(env_value NODE_IMAGE)" scripts/swarm.sh practice up 2
  left=$(docker ps -aq --filter label=haproxy-lab-practice.node | xargs)
  assert_eq "" "${left}" "practice nodes left after the failed practice up"
  assert_eq "" "$(docker network ls -q --filter name=haproxy-lab-practice)" "practice network left"
  assert_eq "" "$(docker context ls -q 2>/dev/null | grep -x haproxy-lab-practice || true)" "practice context left"
}

# scripts/scenario.sh --swarm with no Swarm to run on: one line naming
# SWARM_CONTEXT, exit 1, and results/ as it was (the run folder it made
# before reading the Swarm is removed). This machine's own engine is no
# Swarm manager (the practice nodes are engines of their own).
test_unit_swarm_scenario_without_a_swarm_is_one_line_and_leaves_nothing() {
  local before
  before=$(find "${LAB_ROOT}/results" -maxdepth 2 2>/dev/null | sort)
  assert_fails_with "^scenario: cannot reach the Docker engine of context 'no-such-context': check SWARM_CONTEXT" \
    env SWARM_CONTEXT=no-such-context scripts/scenario.sh maxconn-sweep --quick --swarm
  assert_fails_with "^scenario: the engine of context 'current' is no Swarm manager: set SWARM_CONTEXT to the manager that runs HAProxy" \
    env SWARM_CONTEXT= scripts/scenario.sh maxconn-sweep --quick --swarm
  assert_eq "${before}" "$(find "${LAB_ROOT}/results" -maxdepth 2 2>/dev/null | sort)" "results/ after the refused runs"
}

# What the collector held for a run, unpacked into results/ (swarm_take_sent in
# scripts/lib/engine-swarm.sh): a replica's new file lands; a file the runner
# wrote (a planted step.env, outcome.env) stays as the runner wrote it, each
# refused with one line; nothing of the staging folder is left.
test_unit_swarm_sent_files_never_replace_the_runners() {
  local dest sent out step=run/steps/01-a
  dest=$(mktemp -d) sent=$(mktemp -d)
  mkdir -p "${dest}/${step}" "${sent}/${step}"
  echo "index=1" >"${dest}/${step}/step.env"
  echo "exit_codes=0" >"${dest}/${step}/outcome.env"
  echo "index=9" >"${sent}/${step}/step.env"
  echo "exit_codes=1" >"${sent}/${step}/outcome.env"
  echo '{"replica":1}' >"${sent}/${step}/loadgen-1.json"
  out=$(tar -C "${sent}" -cf - run | bash -c 'source "$1/scripts/lib/common.sh"; source "$1/scripts/lib/engine-swarm.sh"; PROG=scenario swarm_take_sent "$2"' bash "${LAB_ROOT}" "${dest}" 2>&1) \
    || fail "swarm_take_sent failed: ${out}"
  assert_eq "index=1" "$(cat "${dest}/${step}/step.env")" "step.env after a replica sent one"
  assert_eq "exit_codes=0" "$(cat "${dest}/${step}/outcome.env")" "outcome.env after a replica sent one"
  assert_eq '{"replica":1}' "$(cat "${dest}/${step}/loadgen-1.json")" "the replica's own file"
  assert_eq "scenario: refused ${step}/outcome.env from the collector: the run wrote that file itself
scenario: refused ${step}/step.env from the collector: the run wrote that file itself" "${out}" "what take_sent said"
  assert_eq "run" "$(ls -A "${dest}")" "what is left beside the run (no staging folder)"
  rm -rf "${dest}" "${sent}"
}

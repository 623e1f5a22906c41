# shellcheck shell=bash
# The structure of the runner (bash) and the engine (node) as rules a test
# can check: imports point one way, every shell function comes from the file
# or from what it sources, and the lab's topology has one home.

# scripts/labctl/ is split by stage (core → plan → run → evidence → report):
# an import from a later stage into an earlier one fails.
test_static_engine_imports_point_one_way() {
  in_image NODE_IMAGE node tests/lib/import-stages.mjs scripts/labctl
}

# Every shell function a script of scripts/ uses is defined in it or in a
# file it sources: a library that calls a function only its caller defines
# fails in every other script that sources it. And none is defined twice
# among the files one script loads (tests/lib/shell-functions.mjs).
test_static_shell_functions_come_from_the_file_or_what_it_sources() {
  in_image NODE_IMAGE node tests/lib/shell-functions.mjs scripts/*.sh scripts/lib/*.sh .ci/run
}

# The engines differ through scripts/lib/engine.sh's dispatch, not by one
# file defining again what another defined: the check finds a second
# definition in a library a fixture sources.
test_static_no_shell_function_defined_twice() {
  local out
  # shellcheck disable=SC2016 # a JavaScript template, not a shell expansion
  out=$(in_image NODE_IMAGE node --input-type=module -e '
    import { check } from "/lab/tests/lib/shell-functions.mjs";
    const files = { "a.sh": "source b.sh\nf() { :; }\n", "b.sh": "f() { :; }\ng() { :; }\n" };
    console.log(check(Object.keys(files), (f) => files[f] ?? null).problems.join("\n"));')
  assert_match '^f is defined twice among the files a.sh loads: a.sh:2 and b.sh:1$' "${out}" "the check on a script that defines again a function of the file it sources"
}

# common.sh holds what every script needs (the run lock, die, log) and
# sources the helpers by job; each job's file stays readable.
test_static_shell_libraries_stay_small() {
  local file lines found=""
  for file in "${LAB_ROOT}"/scripts/lib/*.sh; do
    lines=$(wc -l <"${file}")
    [[ ${lines} -lt 500 ]] || found+="${file#"${LAB_ROOT}/"}: ${lines} lines; "
  done
  assert_eq "" "${found}" "libraries of scripts/lib of 500 lines or more (split them by job)"
}

# A program the runner runs (in a container, or by sh) is a file of its own
# (scripts/probes/), which shellcheck and a reader see whole, not a string in
# a library: no multi-line single-quoted assignment in scripts/.
test_static_no_program_held_in_a_string() {
  local found
  found=$(cd "${LAB_ROOT}" && grep -nE "^[[:space:]]*(readonly |local |declare [-a-zA-Z]+ )?[A-Za-z_][A-Za-z0-9_]*='[^']*$" scripts/*.sh scripts/lib/*.sh || true)
  assert_eq "" "${found}" "assignments of a string that runs over several lines (FILE:LINE; make it a file under scripts/probes/)"
  # The check itself finds one.
  assert_eq 1 "$(printf "readonly X_SH='a=1\necho \$a'\n" | grep -cE "^[[:space:]]*(readonly |local |declare [-a-zA-Z]+ )?[A-Za-z_][A-Za-z0-9_]*='[^']*$")" "a program in a string in a fixture"
}

# topology.txt says what haproxy.cfg, compose.yaml and prometheus.yml set.
test_static_topology_matches_haproxy_cfg_and_compose() {
  compose --profile '*' config --format json | in_image NODE_IMAGE node tests/lib/topology-matches.mjs
}

# The topology's numbers have one home: no port of an instance's sockets, a
# frontend or a backend (nor its /proc/net/tcp hex form) is written in scripts/.
test_static_topology_numbers_only_in_the_table() {
  local ports=() port name found
  for name in $(haproxy_instances); do
    ports+=("$(topology_value instance "${name}" runtime_api | sed 's/.*://')" "$(topology_value instance "${name}" master_cli | sed 's/.*://')")
  done
  for name in $(topology_names backend); do ports+=("$(topology_value backend "${name}" port)"); done
  mapfile -t -O "${#ports[@]}" ports < <(frontend_ports)
  found=$(for port in $(printf '%s\n' "${ports[@]}" | sort -u); do
    grep -rnwF -e "${port}" -e "$(printf '%04X' "${port}")" "${LAB_ROOT}/scripts" || true
  done)
  echo "ports of topology.txt: $(printf '%s\n' "${ports[@]}" | sort -u | paste -sd' ' -)"
  assert_eq "" "${found}" "lines of scripts/ that write a topology port (or its hex form) themselves"
}

# No bare "return" in the scripts: run from an EXIT trap (a Ctrl-C'd run's
# cleanup), bash gives it the status the script was exiting with, not the
# last command's (restoring HAProxy's baseline would fail on a success).
# "return $?" or "return 0" says which.
test_static_no_bare_return_in_the_scripts() {
  local found
  found=$(cd "${LAB_ROOT}" && grep -nE '^[[:space:]]*return[[:space:]]*(;.*)?$' scripts/*.sh scripts/lib/*.sh .ci/run || true)
  assert_eq "" "${found}" "bare returns (FILE:LINE: write 'return \$?' or 'return 0')"
  # The check itself finds one.
  assert_eq "1" "$(printf 'f() {\n  true\n  return\n}\n' | grep -cE '^[[:space:]]*return[[:space:]]*(;.*)?$')" "a bare return in a fixture"
}

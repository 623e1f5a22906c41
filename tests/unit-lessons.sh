# shellcheck shell=bash
# Unit tests of scripts/lesson.sh that need no lab: its list, and one line
# for every bad input, before anything starts or changes.

test_unit_lessons_list_names_every_lesson_file() {
  local out count
  out=$("${LAB_ROOT}/scripts/lesson.sh" list)
  echo "${out}"
  count=$(find "${LAB_ROOT}/lessons" -maxdepth 1 -name '[0-9][0-9]-*.md' | wc -l)
  assert_ge 1 "${count}" "lessons/NN-*.md files"
  assert_eq "${count}" "$(grep -c '^  [0-9][0-9]  ' <<<"${out}")" "lines of scripts/lesson.sh list"
  assert_match '^  01  maxconn and the accept queue ' "$(sed -n 1p <<<"${out}")" "lesson 01's line"
}

test_unit_lessons_bad_input_is_one_clear_line() {
  local before
  before=$(ls -R "${LAB_ROOT}/exercises" 2>/dev/null || true)
  assert_fails_with '^lesson: no command: scripts/lesson.sh list \| start NN \| check NN \| reset \[NN\]$' "${LAB_ROOT}/scripts/lesson.sh"
  assert_fails_with "^lesson: unknown command 'go': use list, start NN, check NN or reset \[NN\]$" "${LAB_ROOT}/scripts/lesson.sh" go
  assert_fails_with '^lesson: start needs a lesson number: scripts/lesson.sh start NN' "${LAB_ROOT}/scripts/lesson.sh" start
  assert_fails_with "^lesson: 'one' is not a lesson number: try one of 01" "${LAB_ROOT}/scripts/lesson.sh" check one
  assert_fails_with '^lesson: no lesson 99: try one of 01' "${LAB_ROOT}/scripts/lesson.sh" start 99
  assert_fails_with '^lesson: reset takes at most a lesson number' "${LAB_ROOT}/scripts/lesson.sh" reset 1 2
  assert_eq "${before}" "$(ls -R "${LAB_ROOT}/exercises" 2>/dev/null || true)" "exercises/ after the refusals"
}

# Every lesson has its check scenario, its start and its solution settings,
# and they load: the check runs the lesson's own settings file.
test_unit_lessons_every_lesson_has_a_check_a_start_and_a_solution() {
  local file name files
  # Read first: in_image's docker run -i would read the rest of a loop's input.
  mapfile -t files < <(find "${LAB_ROOT}/lessons" -maxdepth 1 -name '[0-9][0-9]-*.md' | sort)
  assert_ge 8 "${#files[@]}" "lessons/NN-*.md files"
  for file in "${files[@]}"; do
    name=$(basename "${file}" .md)
    for part in "checks/lesson-${name}.json" "start/${name}.json" "solutions/${name}.json"; do
      [[ -f "${LAB_ROOT}/lessons/${part}" ]] || fail "lessons/${part}: expected beside lessons/${name}.md, found none"
    done
    echo "lessons/${name}.md: its check reads its start and its solution"
    in_image NODE_IMAGE node scripts/labctl/cli.mjs plan "lesson-${name}" --check --settings "lessons/start/${name}.json" </dev/null
    in_image NODE_IMAGE node scripts/labctl/cli.mjs plan "lesson-${name}" --check --settings "lessons/solutions/${name}.json" </dev/null
  done
}

# The dashboard panels a lesson names ("On the dashboard ..." paragraphs,
# each panel in double quotes) are panels of grafana/dashboards/haproxy-lab.json.
test_unit_lessons_name_only_panels_the_dashboard_has() {
  local file titles panel named=0
  titles=$(grep -o '"title": "[^"]*"' "${LAB_ROOT}/grafana/dashboards/haproxy-lab.json" | sed 's/^"title": //')
  for file in "${LAB_ROOT}"/lessons/[0-9][0-9]-*.md; do
    while read -r panel; do
      [[ -n "${panel}" ]] || continue
      named=$((named + 1))
      grep -qxF -- "${panel}" <<<"${titles}" || fail "$(basename "${file}"): panel ${panel}: expected one of the dashboard's panels, found none by that title"
    # A typed figure's span (scripts/figures.sh) is markup, not a panel's name.
    done < <(awk '/^On the dashboard/ { on = 1 } on && /^$/ { on = 0 } on' "${file}" | sed 's/<span title="[^"]*">//g; s#</span>##g' | grep -o '"[^"]*"')
  done
  assert_ge 1 "${named}" "dashboard panels the lessons name"
}

# Two students' terminals on one lab: a scenario (a lesson's check) while
# another runs on the lab is refused with one line, and lesson.sh start would
# stop the lab under it: refused too; the lock of a run that is gone (killed)
# is taken over. No lab: a live sleep holds the lock of a project of its own.
test_unit_lessons_one_scenario_at_a_time_on_a_lab() {
  local project="unit-lock-$$" lock holder before out shell owner
  lock="${LAB_ROOT}/results/.running-${project}"
  sleep 60 &
  holder=$!
  ln -s "$(run_lock_text "${holder}" "scripts/scenario.sh maxconn-sweep")" "${lock}"
  # shellcheck disable=SC2064 # fixed now
  trap "kill ${holder} 2>/dev/null || true; rm -rf '${lock}'" EXIT
  before=$(ls -A "${LAB_ROOT}/results/maxconn-sweep" 2>/dev/null || true)
  assert_fails_with "^scenario: another scenario runs on this lab \(pid ${holder}: scripts/scenario.sh maxconn-sweep\): wait for it to end, or stop it \(Ctrl-C in its terminal\)$" \
    env COMPOSE_PROJECT_NAME="${project}" "${LAB_ROOT}/scripts/scenario.sh" maxconn-sweep --quick
  assert_fails_with "^lesson: a scenario runs on this lab \(pid ${holder}: scripts/scenario.sh maxconn-sweep\): wait for it to end" \
    env COMPOSE_PROJECT_NAME="${project}" "${LAB_ROOT}/scripts/lesson.sh" start 01
  assert_eq "${before}" "$(ls -A "${LAB_ROOT}/results/maxconn-sweep" 2>/dev/null || true)" "results/maxconn-sweep/ after the refusal"
  assert_eq "${holder}" "$(readlink "${lock}" | cut -d' ' -f1)" "the lock's owner after the refusals"
  # The holder gone: the next run takes the lock over, and gives it back.
  kill "${holder}"
  wait "${holder}" 2>/dev/null || true
  out=$(COMPOSE_PROJECT_NAME="${project}" bash -c 'source "$1/scripts/lib/common.sh"
    take_run_lock "a test'"'"'s"; echo "$$ $(readlink "${RUN_LOCK}" | cut -d" " -f1)"; release_run_lock
    [[ -e "${RUN_LOCK}" ]] && echo "left" || echo "released"' bash "${LAB_ROOT}")
  read -r shell owner <<<"${out}"
  assert_eq "${shell}" "${owner}" "the lock's pid once a new shell took it over (that shell's pid)"
  assert_eq released "$(sed -n 2p <<<"${out}")" "the lock after release_run_lock"
}

# A stale lock found by four runners at once (its pid names a live process
# that started at another time: a pid reused, as after a reboot): exactly
# one takes it over, the other three are refused with the one line, and the
# lock is gone once its taker ends.
test_unit_a_stale_lock_is_taken_over_by_one_runner_only() {
  local project="unit-lock-race-$$" lock out i
  lock="${LAB_ROOT}/results/.running-${project}"
  ln -s "$$ Mon_Jan__1_00:00:00_2001 scripts/scenario.sh maxconn-sweep" "${lock}"
  # shellcheck disable=SC2064 # fixed now
  trap "rm -rf '${lock}' '${lock}.takeover'" EXIT
  out=$(for i in 1 2 3 4; do
    COMPOSE_PROJECT_NAME="${project}" bash -c 'source "$1/scripts/lib/common.sh"
      PROG=runner take_run_lock "runner $2"; echo "took"; sleep 3; release_run_lock' bash "${LAB_ROOT}" "${i}" 2>&1 &
  done
  wait)
  assert_eq 1 "$(grep -c '^took$' <<<"${out}")" "runners that took the stale lock over (output: ${out//$'\n'/ | })"
  assert_eq 3 "$(grep -c '^runner: another scenario runs on this lab (pid [0-9]*: runner [1-4]): wait for it to end' <<<"${out}")" \
    "runners refused with the one line (output: ${out//$'\n'/ | })"
  [[ ! -e "${lock}" && ! -L "${lock}" ]] || fail "the lock is left after its taker ended: $(readlink "${lock}")"
}

# Each lesson's measured duration is written once in its "Duration" line;
# the teacher notes' table repeats it: the two agree.
test_unit_lessons_durations_agree_with_the_teacher_notes() {
  local file name machine plan row
  for file in "${LAB_ROOT}"/lessons/[0-9][0-9]-*.md; do
    name=$(basename "${file}" .md)
    machine=$(sed -n 's/^\*\*Duration\*\*: about [0-9]* min (machine time \(.*\), measured)$/\1/p' "${file}")
    plan=$(sed -n 's/^\*\*Duration\*\*: about \([0-9]*\) min .*/\1/p' "${file}")
    [[ -n "${machine}" ]] || fail "lessons/${name}.md: expected a line '**Duration**: about N min (machine time ..., measured)', found none"
    row=$(grep -F "(${name}.md)" "${LAB_ROOT}/lessons/README.md" || true)
    assert_match "^\| ${name%%-*} \| .* \| ${machine} \| .* \| ${plan} min \|$" "${row}" "lessons/README.md's row of lesson ${name}"
  done
}

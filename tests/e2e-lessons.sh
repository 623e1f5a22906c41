# shellcheck shell=bash
# End to end, the workshop's lessons as a student does them: each lesson's
# runnable block (```bash lesson-run) as written, then scripts/lesson.sh check
# on the lesson's start (it must fail, with the lesson's hint) and on its
# solution (it must pass). Helpers and setup: tests/e2e.sh.
#
# A block's scripts/scenario.sh lines are read by the engine as the script
# reads them before it starts anything (cli.mjs plan --check: the scenario and
# every flag as written), without their load: each of those experiments runs
# in full, or --quick, in its own e2e test (e2e_08, e2e_09*). Every other line
# runs as written.

# lesson_names: NN-topic of every lessons/NN-topic.md.
lesson_names() { find "${LAB_ROOT}/lessons" -maxdepth 1 -name '[0-9][0-9]-*.md' -printf '%f\n' | sed 's/\.md$//' | sort; }

# lesson_blocks FILE: the commands of FILE's "```bash lesson-run" blocks, one per line.
lesson_blocks() { awk '/^```bash lesson-run$/ { on = 1; next } /^```$/ { on = 0 } on && NF' "$1"; }

# run_lesson_block NAME: lesson NAME's runnable lines, as above.
run_lesson_block() {
  local name=$1 line out rc words lines
  # Read first: a command in the loop may read stdin (docker run -i).
  mapfile -t lines < <(lesson_blocks "${LAB_ROOT}/lessons/${name}.md")
  [[ ${#lines[@]} -gt 0 ]] || fail "lessons/${name}.md: expected a \`\`\`bash lesson-run block, found none"
  for line in "${lines[@]}"; do
    if [[ "${line}" == scripts/scenario.sh\ * ]]; then
      echo "lessons/${name}.md: ${line} (read, not run)"
      read -ra words <<<"${line#scripts/scenario.sh }"
      rc=0
      out=$(in_image NODE_IMAGE node scripts/labctl/cli.mjs plan "${words[@]}" --check </dev/null 2>&1) || rc=$?
      assert_eq 0 "${rc}" "exit status of reading '${line}' (lessons/${name}.md): ${out}"
    else
      echo "lessons/${name}.md: ${line}"
      (cd "${LAB_ROOT}" && bash -euo pipefail -c "${line}" </dev/null) || fail "lessons/${name}.md: '${line}' failed"
    fi
  done
}

# lesson_check NN OUT: scripts/lesson.sh check NN's exit status; its output
# shown and kept in OUT.
lesson_check() {
  local rc=0
  (cd "${LAB_ROOT}" && scripts/lesson.sh check "$1" </dev/null 2>&1) >"$2" || rc=$?
  cat "$2"
  return "${rc}"
}

# lesson_start_fails_solution_passes NN-topic: the lesson's block, its check
# on its start (exit 3, "not yet" with the hint), on its solution (PASS).
lesson_start_fails_solution_passes() {
  local name=$1 number=${1%%-*} rc saved="" out
  # A student's own exercises/ is moved aside for the test and put back
  # whatever happens.
  if [[ -e "${LAB_ROOT}/exercises" ]]; then
    saved="${LAB_ROOT}/exercises.before-e2e-$$"
    mv "${LAB_ROOT}/exercises" "${saved}"
  fi
  out=$(mktemp)
  # The test runs in its own subshell: its EXIT is the test's end.
  # shellcheck disable=SC2064 # the paths are fixed now
  trap "rm -f '${out}'; rm -rf '${LAB_ROOT}/exercises'; [[ -z '${saved}' ]] || mv '${saved}' '${LAB_ROOT}/exercises'" EXIT
  run_lesson_block "${name}"
  assert_eq "$(cat "${LAB_ROOT}/lessons/start/${name}.json")" "$(cat "${LAB_ROOT}/exercises/${name}.json")" \
    "exercises/${name}.json after scripts/lesson.sh start ${number}"
  rc=0
  lesson_check "${number}" "${out}" || rc=$?
  assert_eq 3 "${rc}" "exit status of scripts/lesson.sh check ${number} on the lesson's start (3: a verdict failed)"
  assert_match 'not yet: .*hint: ' "$(grep 'not yet' "${out}")" "the check's 'not yet' line with the lesson's hint"
  cp "${LAB_ROOT}/lessons/solutions/${name}.json" "${LAB_ROOT}/exercises/${name}.json"
  rc=0
  lesson_check "${number}" "${out}" || rc=$?
  assert_eq 0 "${rc}" "exit status of scripts/lesson.sh check ${number} on lessons/solutions/${name}.json"
  assert_match "PASS lesson ${number}" "$(grep PASS "${out}")" "the check's PASS line"
  assert_lab_restored
}

# The lesson as a student does it: its block as written, its check failing
# on the start and passing on the solution, the lab restored. One test per
# lesson in the lessons group (test_lessons_NN_topic): a filter runs one
# (scripts/test.sh lessons 03), and a new lesson file gets its own. The
# default tier runs one of them too (test_e2e_14_lesson_...): the workshop's
# path (lesson.sh start, a block as written, check) in every run.
readonly LESSON_IN_DEFAULT_TIER=01-maxconn
while read -r lesson; do
  eval "test_lessons_${lesson//-/_}() { lesson_start_fails_solution_passes ${lesson}; }"
done < <(lesson_names)
unset lesson
eval "test_e2e_14_lesson_${LESSON_IN_DEFAULT_TIER//-/_}() { lesson_start_fails_solution_passes ${LESSON_IN_DEFAULT_TIER}; }"

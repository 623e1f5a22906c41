# shellcheck shell=bash
# End to end, the workshop's lessons: each lesson's check fails on the
# lesson's start and passes on its solution, as scripts/lesson.sh check runs
# it; the lesson's runnable blocks (```bash lesson-run) run as written, so a
# lesson never drifts from the code. Helpers and setup: tests/e2e.sh.

# lesson_names: NN-topic of every lessons/NN-topic.md.
lesson_names() { find "${LAB_ROOT}/lessons" -maxdepth 1 -name '[0-9][0-9]-*.md' -printf '%f\n' | sed 's/\.md$//' | sort; }

test_e2e_14_lesson_checks_fail_on_the_start_and_pass_on_the_solution() {
  local name rc
  e2e_up
  while read -r name; do
    rc=0
    scripts/scenario.sh "lesson-${name}" --settings "lessons/start/${name}.json" </dev/null || rc=$?
    assert_eq 3 "${rc}" "lesson ${name}'s check on its start (3: a verdict failed)"
    rc=0
    scripts/scenario.sh "lesson-${name}" --settings "lessons/solutions/${name}.json" </dev/null || rc=$?
    assert_eq 0 "${rc}" "lesson ${name}'s check on its solution"
    assert_lab_restored
  done < <(lesson_names)
}

# lesson_blocks FILE: the commands of FILE's "```bash lesson-run" blocks, one per line.
lesson_blocks() { awk '/^```bash lesson-run$/ { on = 1; next } /^```$/ { on = 0 } on && NF' "$1"; }

test_e2e_14a_lesson_runnable_blocks_run_as_written() {
  local name line
  while read -r name; do
    [[ -n "$(lesson_blocks "${LAB_ROOT}/lessons/${name}.md")" ]] || fail "lessons/${name}.md: no \`\`\`bash lesson-run block"
    while IFS= read -r line; do
      echo "lessons/${name}.md: ${line}"
      (cd "${LAB_ROOT}" && bash -euo pipefail -c "${line}" </dev/null) || fail "lessons/${name}.md: '${line}' failed"
    done < <(lesson_blocks "${LAB_ROOT}/lessons/${name}.md")
  done < <(lesson_names)
}

# shellcheck shell=bash
# The suite's tiers: docs/testing.md's table is the one scripts/test.sh --list
# and the kept test runs make; what must stay in a tier stays there; the
# tier words refuse bad input with one line. Run alone: scripts/test.sh static tiers

# docs/testing.md lists every test with its tier, what it proves and its time
# in the newest kept run (tests/lib/test-table.mjs; scripts/test-table.sh
# --write makes it).
test_static_testing_table_is_what_the_suite_lists() {
  "${LAB_ROOT}/scripts/test.sh" --list | in_image NODE_IMAGE node tests/lib/test-table.mjs - docs/runs/tests --check docs/testing.md
}

# Every scenario keeps its run in some tier (an e2e, slow or swarm test names
# it), every lesson its check in lessons, and one lesson stays in the default
# tier.
test_static_every_scenario_and_lesson_keeps_a_tier() {
  local list scenario lesson files
  list=$("${LAB_ROOT}/scripts/test.sh" --list e2e slow lessons swarm)
  mapfile -t files < <(awk -v root="${LAB_ROOT}" '{ sub(/:[0-9]+$/, "", $3); print root "/" $3 }' <<<"${list}" | sort -u)
  for scenario in "${LAB_ROOT}"/scenarios/*.json; do
    scenario=$(basename "${scenario}" .json)
    grep -qE "scenario(_judged [a-z-]+|\\.sh) ${scenario}( |$)" "${files[@]}" \
      || fail "scenario ${scenario}: no e2e, slow or swarm test runs it (scenario_judged CHECK ${scenario} ... or scripts/scenario.sh ${scenario})"
  done
  for lesson in "${LAB_ROOT}"/lessons/[0-9][0-9]-*.md; do
    lesson=$(basename "${lesson}" .md)
    grep -q "^lessons lessons_${lesson//-/_} " <<<"${list}" || fail "lesson ${lesson}: no test in the lessons group"
  done
  grep -qE '^e2e e2e_[0-9a-z]+_lesson_' <<<"${list}" || fail "no lesson in the default tier (e2e): expected one test_e2e_..._lesson_..."
}

# The tier words: one line for a bad group or a PATTERN after all, nothing run.
test_static_tier_words_refuse_bad_input_with_one_line() {
  assert_fails_with "^test: unknown test group 'nope': use any of static unit e2e lessons slow swarm floor all" \
    "${LAB_ROOT}/scripts/test.sh" nope
  assert_fails_with "^test: a PATTERN follows a group, not all: name the group" "${LAB_ROOT}/scripts/test.sh" all stack
  assert_fails_with "^test: unknown test group 'nope' after --list" "${LAB_ROOT}/scripts/test.sh" --list nope
  local each together
  each=$(($("${LAB_ROOT}/scripts/test.sh" --list e2e | wc -l) + $("${LAB_ROOT}/scripts/test.sh" --list slow lessons | wc -l)))
  together=$("${LAB_ROOT}/scripts/test.sh" --list e2e slow lessons | wc -l)
  assert_eq "${each}" "${together}" "tests listed for e2e slow lessons (each group's once, though they share files)"
}

# shellcheck shell=bash
# The suite's tiers: docs/testing.md's table is the one scripts/test.sh --list
# and the kept test runs make; what must stay in a tier stays there; the
# tier words refuse bad input with one line. Run alone: scripts/test.sh static tiers

# docs/testing.md lists every test with its tier, what it proves and its time
# in the newest kept run, and every kept run; README's time is the newest kept
# CI run's (tests/lib/test-table.mjs; scripts/test-table.sh --write makes them).
test_static_testing_table_is_what_the_suite_lists() {
  "${LAB_ROOT}/scripts/test.sh" --list | in_image NODE_IMAGE node tests/lib/test-table.mjs - docs/runs/tests --check docs/testing.md README.md
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

# The kept runs' table and README's line are read from the runs' own files:
# a CI run's summary.txt and a named group's TEST_TIMES lines (fixtures
# here), and a README whose line was typed over is caught.
test_static_kept_runs_and_readme_time_come_from_the_runs() {
  local out typed err rc
  # shellcheck disable=SC2016 # node's template literals, not the shell's
  out=$(in_image NODE_IMAGE node --input-type=module -e '
    import fs from "node:fs";
    import { runsTable, timeLine } from "/lab/tests/lib/test-table.mjs";
    const dir = fs.mkdtempSync("/tmp/runs-");
    fs.mkdirSync(`${dir}/20990101T000000Z`);
    fs.writeFileSync(`${dir}/20990101T000000Z/summary.txt`, [
      "group e2e: 20m00s",
      "Compose 2.40.3, scripts/test.sh: 120 passed, 0 failed in 24m10s",
      "Compose 2.40.3 against 2.26.1 (the floor), scripts/test.sh floor: 8 passed, 0 failed in 2m11s",
      "speed reference: RSA-2048 sign 801.5 µs before the tests, 812.0 µs after (openssl speed in x)",
      "whole run 27m02s; log and times in results/.ci/20990101T000000Z", ""].join("\n"));
    fs.mkdirSync(`${dir}/20990102T000000Z`);
    fs.writeFileSync(`${dir}/20990102T000000Z/groups-times.txt`,
      "speed before 790.1\ntest lessons_01_x 60\ngroup lessons 61\nspeed after 795.9\nresult 7 1 75 lessons slow\n");
    console.log(runsTable(dir));
    console.log(timeLine(dir));')
  echo "${out}"
  assert_eq "| [20990102T000000Z](runs/tests/20990102T000000Z/) | \`scripts/test.sh lessons slow\`: 7 passed, 1 failed, 1m15s | 790.1, 795.9 | — |" \
    "$(sed -n 3p <<<"${out}")" "the named groups' run"
  assert_eq "| [20990101T000000Z](runs/tests/20990101T000000Z/) (\`.ci/run\`, a fresh clone) | \`scripts/test.sh\` on Compose 2.40.3: 120 passed, 0 failed, 24m10s; \`scripts/test.sh floor\` on Compose 2.40.3 against 2.26.1 (the floor): 8 passed, 0 failed, 2m11s | 801.5, 812.0 | 27m02s |" \
    "$(sed -n 4p <<<"${out}")" "the CI run"
  assert_match "^In the newest kept CI run \(\[20990101T000000Z\]\(docs/runs/tests/20990101T000000Z/summary.txt\)\), a fresh clone's default tier took 24m10s \(120 passed, 0 failed\) and \`.ci/run\` 27m02s in all, .* 801.5–812.0 µs" \
    "$(sed -n 5p <<<"${out}")" "README's line"
  typed=$(mktemp -d)
  sed 's/default tier took [0-9]*m[0-9]*s/default tier took 9m00s/' "${LAB_ROOT}/README.md" >"${typed}/README.typed.md"
  rc=0
  err=$("${LAB_ROOT}/scripts/test.sh" --list | docker run --rm -i --network none -v "${LAB_ROOT}:/lab:ro" -v "${typed}:/typed:ro" -w /lab \
    "$(env_value NODE_IMAGE)" node tests/lib/test-table.mjs - docs/runs/tests --check /typed/README.typed.md 2>&1) || rc=$?
  rm -rf "${typed}"
  echo "${err}"
  assert_eq 1 "${rc}" "--check's exit status on a README whose time was typed over"
  assert_match "README.typed.md's test-time is not what .* make .*expected: In the newest kept CI run.*found: .*default tier took 9m00s" "${err}" "its message"
}

# shellcheck shell=bash
# Unit tests of scripts/keep-run.sh on a copy of the checkout in a temporary
# folder (its kept runs and results left out) and a real run (a kept one,
# extracted into results/) with a large raw file added; the engine runs in
# the lab's node image, as keep-run runs it.

# The kept run the tests keep again: small, and reported by today's code.
readonly KEEP_RUN_FIXTURE=docs/runs/cores/20261129T010312Z

# engine_in DIR ARGS...: the engine on the checkout DIR, as labctl runs it on the lab's.
engine_in() {
  local dir="$1"
  shift
  docker run --rm -i --network none --user "${LAB_UID}:${LAB_GID}" -v "${dir}:/lab" -w /lab "$(env_value NODE_IMAGE)" node scripts/labctl/cli.mjs "$@"
}

# keep_run_setup: a temporary checkout with that run finished in results/
# (and a 300,000-byte raw file beside its evidence) and an interrupted run.
keep_run_setup() {
  local dir run
  dir=$(mktemp -d)
  mkdir -p "$(dirname "${dir}/${KEEP_RUN_FIXTURE}")"
  # The checkout but its kept runs, results and git: what the engine imports.
  (cd "${LAB_ROOT}" && find . -mindepth 1 -maxdepth 1 ! -name .git ! -name docs ! -name results -exec cp -r {} "${dir}/" \;)
  cp -r "${LAB_ROOT}/${KEEP_RUN_FIXTURE}" "${dir}/${KEEP_RUN_FIXTURE}"
  run="results/cores/${KEEP_RUN_FIXTURE##*/}"
  engine_in "${dir}" kept extract "${KEEP_RUN_FIXTURE}" "${run}" || { echo "could not extract ${KEEP_RUN_FIXTURE}" >&2; return 1; }
  rm -rf "${dir}/docs/runs"
  head -c 300000 /dev/zero >"${dir}/${run}/steps/raw.ndjson"
  mkdir -p "${dir}/results/fullconn/20261122T040000Z"
  echo "# fullconn" >"${dir}/results/fullconn/20261122T040000Z/report.md"
  echo "interrupted by the user (Ctrl-C or SIGTERM)" >"${dir}/results/fullconn/20261122T040000Z/INCOMPLETE"
  echo "${dir}"
}

test_unit_keep_run_archives_the_evidence_and_rereports_it() {
  local dir out kept run rc=0
  dir=$(keep_run_setup)
  run="results/cores/${KEEP_RUN_FIXTURE##*/}"
  out=$(cd "${dir}" && scripts/keep-run.sh "${run}/" 2>&1)
  echo "${out}"
  kept="${dir}/${KEEP_RUN_FIXTURE}"
  assert_match 'files in the archive, 1 left out \(LEFT-OUT.txt in it\)$' "$(grep ' → ' <<<"${out}")" "the summary line"
  assert_eq "$(printf '%s\n' chart.svg evidence.tar.br report.md run.env summary.csv summary.json versions.env)" \
    "$(cd "${kept}" && find . -type f -printf '%P\n' | sort)" "the files kept in the clear"
  cmp -s "${dir}/${run}/report.md" "${kept}/report.md" || fail "report.md: expected the run's own (today's code made both), found it differs"
  assert_match "^steps/raw.ndjson	300000 bytes	sha256 $(head -c 300000 /dev/zero | sha256sum | cut -d' ' -f1)$" \
    "$(engine_in "${dir}" kept extract "${KEEP_RUN_FIXTURE}" x && sed -n 2p "${dir}/x/LEFT-OUT.txt")" "the large file's line in LEFT-OUT.txt"
  assert_eq "" "$(find "${dir}/docs" -name '.keep-*')" "staging folders left behind"
  # --check passes on it, fails naming a changed output, and --refresh puts it back.
  (cd "${dir}" && scripts/keep-run.sh --check "${KEEP_RUN_FIXTURE}") >/dev/null 2>&1 || fail "--check on the run just kept: expected it to pass"
  sed -i 's/"scenario": "cores"/"scenario": "edited"/' "${kept}/summary.json"
  out=$(cd "${dir}" && scripts/keep-run.sh --check "${KEEP_RUN_FIXTURE}" 2>&1) || rc=$?
  assert_eq 1 "${rc}" "--check's exit status with summary.json edited"
  assert_match "summary.json: re-reported from its archive, it differs at line 2: kept \"  \"scenario\": \"edited\",\", re-reported \"  \"scenario\": \"cores\",\"" "${out}" "--check's finding"
  (cd "${dir}" && scripts/keep-run.sh --refresh "${KEEP_RUN_FIXTURE}" && scripts/keep-run.sh --check "${KEEP_RUN_FIXTURE}") >/dev/null 2>&1 \
    || fail "--refresh then --check: expected the edit undone and the check passing"
  rm -rf "${dir}"
}

# Refusals: one line, exit 1 (2 for the engine's), nothing written or overwritten.
test_unit_keep_run_refuses_with_one_line_and_changes_nothing() {
  local dir out rc case args expected status run
  dir=$(keep_run_setup)
  run="results/cores/${KEEP_RUN_FIXTURE##*/}"
  (cd "${dir}" && scripts/keep-run.sh "${run}" >/dev/null 2>&1)
  echo "changed" >"${dir}/${run}/report.md"
  for case in \
    "1|${run}|docs/runs/cores/${KEEP_RUN_FIXTURE##*/} exists: a kept run is never overwritten" \
    '1|results/fullconn/20261122T040000Z|results/fullconn/20261122T040000Z: marked INCOMPLETE (interrupted by the user (Ctrl-C or SIGTERM)); keep a run that ended, or say --partial' \
    '1|results/nope/20261122T040000Z|results/nope/20261122T040000Z: no such folder; give a run folder such as results/maxconn-sweep/20261122T032208Z' \
    '1|docs|docs: not a run folder of this checkout; give results/SCENARIO/TIMESTAMP' \
    '1|results/fullconn/20261122T040000Z results/nope/x|results/fullconn/20261122T040000Z: marked INCOMPLETE (interrupted by the user (Ctrl-C or SIGTERM)); keep a run that ended, or say --partial' \
    '1|--bogus|unknown option --bogus: scripts/keep-run.sh [--partial] results/SCENARIO/TIMESTAMP...' \
    '2|--check docs/runs/nope/20261122T040000Z|docs/runs/nope/20261122T040000Z: not a kept run (no evidence.tar.br); give docs/runs/SCENARIO/STAMP'; do
    IFS='|' read -r status args expected <<<"${case}"
    rc=0
    # shellcheck disable=SC2086 # args: one or two words
    out=$(cd "${dir}" && scripts/keep-run.sh ${args} 2>&1 >/dev/null | grep -v '^keep-run: re-reporting') || true
    # shellcheck disable=SC2086 # the same
    (cd "${dir}" && scripts/keep-run.sh ${args} >/dev/null 2>&1) || rc=$?
    assert_eq "${status}" "${rc}" "exit status for: ${args}"
    assert_match "${expected//[()[\].]/.}$" "${out}" "the error for: ${args}"
    assert_eq 1 "$(grep -c . <<<"${out}")" "lines on stderr for: ${args}"
  done
  assert_match '^# cores — ' "$(head -n 1 "${dir}/${KEEP_RUN_FIXTURE}/report.md")" "the kept report after the refusals"
  assert_eq "cores" "$(ls "${dir}/docs/runs")" "folders under docs/runs after the refusals"
  rm -rf "${dir}"
}

# --partial keeps an interrupted run, its INCOMPLETE marker with it.
test_unit_keep_run_partial_keeps_an_interrupted_run_marked() {
  local dir out run
  dir=$(keep_run_setup)
  run="results/cores/${KEEP_RUN_FIXTURE##*/}"
  echo "interrupted by the user (Ctrl-C or SIGTERM)" >"${dir}/${run}/INCOMPLETE"
  engine_in "${dir}" report "${run}" >/dev/null || true
  out=$(cd "${dir}" && scripts/keep-run.sh --partial "${run}" 2>&1)
  echo "${out}"
  assert_eq "interrupted by the user (Ctrl-C or SIGTERM)" "$(cat "${dir}/${KEEP_RUN_FIXTURE}/INCOMPLETE")" "the kept INCOMPLETE marker"
  assert_match 'INCOMPLETE' "$(head -20 "${dir}/${KEEP_RUN_FIXTURE}/report.md")" "the kept report's INCOMPLETE line"
  (cd "${dir}" && scripts/keep-run.sh --check "${KEEP_RUN_FIXTURE}") >/dev/null 2>&1 || fail "--check on the partial run kept: expected it to pass"
  rm -rf "${dir}"
}

# shellcheck shell=bash
# Unit tests of scripts/keep-run.sh on a small checkout in a temporary folder
# (the script and common.sh copied there, made-up runs): no Docker needed.

# keep_run_setup: a temporary checkout with one finished run (a report, a
# chart, a small and a large raw file) and one interrupted run.
keep_run_setup() {
  local dir run
  dir=$(mktemp -d)
  mkdir -p "${dir}/scripts/lib" "${dir}/docs"
  cp "${LAB_ROOT}/scripts/keep-run.sh" "${dir}/scripts/"
  cp "${LAB_ROOT}/scripts/lib/common.sh" "${dir}/scripts/lib/"
  run="${dir}/results/maxconn-sweep/20261122T032208Z"
  mkdir -p "${run}/steps/01-maxconn-20" "${run}/configs"
  { echo "# maxconn-sweep"; head -c 300000 /dev/zero | tr '\0' x; echo; } >"${run}/report.md"
  echo "<svg/>" >"${run}/chart.svg"
  echo "maxconn 20" >"${run}/configs/01-maxconn-20.cfg"
  echo '{"hits":1}' >"${run}/steps/01-maxconn-20/summary.json"
  head -c 300000 /dev/zero >"${run}/steps/01-maxconn-20/raw.ndjson"
  mkdir -p "${dir}/results/fullconn/20261122T040000Z"
  echo "# fullconn" >"${dir}/results/fullconn/20261122T040000Z/report.md"
  echo "interrupted by the user (Ctrl-C or SIGTERM)" >"${dir}/results/fullconn/20261122T040000Z/INCOMPLETE"
  echo "${dir}"
}

test_unit_keep_run_copies_small_files_and_lists_large_ones() {
  local dir out kept
  dir=$(keep_run_setup)
  out=$(cd "${dir}" && scripts/keep-run.sh results/maxconn-sweep/20261122T032208Z/ 2>&1)
  echo "${out}"
  kept="${dir}/docs/runs/maxconn-sweep/20261122T032208Z"
  assert_match '4 files kept, 1 left out' "${out}" "the summary line"
  assert_eq "$(printf '%s\n' LEFT-OUT.txt chart.svg configs/01-maxconn-20.cfg report.md steps/01-maxconn-20/summary.json)" \
    "$(cd "${kept}" && find . -type f -printf '%P\n' | sort)" "the files kept"
  # report.md is over KEEP_MAX_BYTES too, and kept: README and docs link to it.
  cmp -s "${dir}/results/maxconn-sweep/20261122T032208Z/report.md" "${kept}/report.md" || fail "report.md (300,016 bytes): expected kept as it was, found $(wc -c <"${kept}/report.md" 2>&1) bytes"
  assert_match "^steps/01-maxconn-20/raw.ndjson	300000 bytes	sha256 $(head -c 300000 /dev/zero | sha256sum | cut -d' ' -f1)$" \
    "$(sed -n 2p "${kept}/LEFT-OUT.txt")" "the large file's line in LEFT-OUT.txt"
  assert_eq "" "$(find "${dir}/docs" -name '.keep-run.*')" "staging folders left behind"
  rm -rf "${dir}"
}

# Refusals: one line, exit 1, nothing written or overwritten.
test_unit_keep_run_refuses_with_one_line_and_changes_nothing() {
  local dir out rc case args expected
  dir=$(keep_run_setup)
  (cd "${dir}" && scripts/keep-run.sh results/maxconn-sweep/20261122T032208Z >/dev/null)
  echo "changed" >"${dir}/results/maxconn-sweep/20261122T032208Z/report.md"
  for case in \
    'results/maxconn-sweep/20261122T032208Z|docs/runs/maxconn-sweep/20261122T032208Z exists: a kept run is never overwritten' \
    'results/fullconn/20261122T040000Z|results/fullconn/20261122T040000Z: marked INCOMPLETE (interrupted by the user (Ctrl-C or SIGTERM)); keep a run that ended, or say --partial' \
    'results/nope/20261122T040000Z|results/nope/20261122T040000Z: no such folder; give a run folder such as results/maxconn-sweep/20261122T032208Z' \
    'docs|docs: not a run folder of this checkout; give results/SCENARIO/TIMESTAMP' \
    'results/fullconn/20261122T040000Z results/nope/x|results/fullconn/20261122T040000Z: marked INCOMPLETE (interrupted by the user (Ctrl-C or SIGTERM)); keep a run that ended, or say --partial' \
    '--bogus|unknown option --bogus: scripts/keep-run.sh [--partial] results/SCENARIO/TIMESTAMP...'; do
    args="${case%%|*}" expected="keep-run: ${case#*|}" rc=0
    # shellcheck disable=SC2086 # args: one or two folder names
    out=$(cd "${dir}" && scripts/keep-run.sh ${args} 2>&1 >/dev/null) || rc=$?
    assert_eq 1 "${rc}" "exit status for: ${args}"
    assert_eq "${expected}" "${out}" "the error for: ${args}"
  done
  assert_eq "# maxconn-sweep" "$(head -n 1 "${dir}/docs/runs/maxconn-sweep/20261122T032208Z/report.md")" "the kept report after the refusals"
  assert_eq "maxconn-sweep" "$(ls "${dir}/docs/runs")" "folders under docs/runs after the refusals"
  rm -rf "${dir}"
}

# --partial keeps an interrupted run, its INCOMPLETE marker with it.
test_unit_keep_run_partial_keeps_an_interrupted_run_marked() {
  local dir out
  dir=$(keep_run_setup)
  out=$(cd "${dir}" && scripts/keep-run.sh --partial results/fullconn/20261122T040000Z 2>&1)
  echo "${out}"
  assert_eq "interrupted by the user (Ctrl-C or SIGTERM)" "$(cat "${dir}/docs/runs/fullconn/20261122T040000Z/INCOMPLETE")" "the kept INCOMPLETE marker"
  assert_match '2 files kept, 0 left out' "${out}" "the summary line"
  rm -rf "${dir}"
}

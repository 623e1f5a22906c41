# shellcheck shell=bash
# The kept runs (docs/runs): each one's outputs are what re-reporting its
# archived evidence gives, today, and all of them fit the size a clone
# carries (scripts/lab/kept/kept.mjs, scripts/keep-run.sh).

# What all of docs/runs may weigh, in bytes.
readonly KEPT_RUNS_MAX_BYTES=15000000

test_static_kept_runs_rereport_as_kept() {
  local out rc=0
  out=$(in_image NODE_IMAGE node scripts/lab/cli.mjs kept check 2>&1) || rc=$?
  [[ ${rc} -eq 0 ]] || fail "re-reporting the kept runs from their archives: expected their outputs byte for byte, found:"$'\n'"${out}"
  echo "${out}"
}

test_static_kept_runs_fit_in_15_mb() {
  local out rc=0
  out=$(in_image NODE_IMAGE node scripts/lab/cli.mjs kept size docs/runs --max-bytes "${KEPT_RUNS_MAX_BYTES}" 2>&1) || rc=$?
  [[ ${rc} -eq 0 ]] || fail "docs/runs: expected at most ${KEPT_RUNS_MAX_BYTES} bytes, found ${out}"
  echo "${out}"
}

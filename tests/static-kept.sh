# shellcheck shell=bash
# The kept runs (docs/runs): each one's outputs are what re-reporting its
# archived evidence gives, today; all of them fit the size a clone carries
# (scripts/labctl/kept/kept.mjs, scripts/keep-run.sh); and the docs' figures are
# theirs (scripts/figures.sh).

# What all of docs/runs may weigh, in bytes.
readonly KEPT_RUNS_MAX_BYTES=15000000

test_static_kept_runs_rereport_as_kept() {
  local out rc=0
  out=$(in_image NODE_IMAGE node scripts/labctl/cli.mjs kept check 2>&1) || rc=$?
  [[ ${rc} -eq 0 ]] || fail "re-reporting the kept runs from their archives: expected their outputs byte for byte, found:"$'\n'"${out}"
  echo "${out}"
}

test_static_kept_runs_fit_in_15_mb() {
  local out rc=0
  out=$(in_image NODE_IMAGE node scripts/labctl/cli.mjs kept size docs/runs --max-bytes "${KEPT_RUNS_MAX_BYTES}" 2>&1) || rc=$?
  [[ ${rc} -eq 0 ]] || fail "docs/runs: expected at most ${KEPT_RUNS_MAX_BYTES} bytes, found ${out}"
  echo "${out}"
}

# README's measured table, docs/results.md and the lessons: every figure as
# scripts/figures.sh writes it from the kept runs, none typed by hand.
test_static_figures_are_the_kept_runs() {
  local out rc=0
  out=$(in_image NODE_IMAGE node scripts/labctl/cli.mjs figures --check 2>&1) || rc=$?
  [[ ${rc} -eq 0 ]] || fail "the docs' figures: expected them as scripts/figures.sh writes them from the kept runs, found:"$'\n'"${out}"
}

# shellcheck shell=bash
# Static checks of the GitHub Actions workflows (.github/workflows/) with
# actionlint, from ACTIONLINT_IMAGE (rhysd/actionlint, or its offline
# stand-in). actionlint also runs the image's shellcheck on every `run:`
# script and pyflakes on python steps.

# workflow_lint FILE...: actionlint on FILEs (paths from the repository root),
# one finding per line. Exit 0: clean, 1: findings, 2: bad option, 3: fatal.
workflow_lint() { in_image ACTIONLINT_IMAGE -no-color -oneline "$@"; }

test_static_workflows_pass_actionlint() {
  local files=() file out version
  for file in "${LAB_ROOT}"/.github/workflows/*.yml "${LAB_ROOT}"/.github/workflows/*.yaml; do
    if [[ -f "${file}" ]]; then files+=("${file#"${LAB_ROOT}/"}"); fi
  done
  assert_ge 1 "${#files[@]}" "workflow files in .github/workflows"
  # The image runs the actionlint its tag names (the stand-in too).
  version=$(in_image ACTIONLINT_IMAGE -version | head -n 1)
  assert_eq "$(env_value ACTIONLINT_IMAGE | sed 's/.*://')" "${version}" \
    "actionlint -version against ACTIONLINT_IMAGE's tag"
  if ! out=$(workflow_lint "${files[@]}" 2>&1); then
    printf '%s\n' "${out}"
    fail "actionlint ${version} reports the problems above in ${files[*]}"
  fi
  echo "actionlint ${version}: ${files[*]} clean"
}

# The linter is not a no-op: each defect of the fixture is reported, on its
# line, by the check that owns it (shellcheck and pyflakes included, so the
# image really bundles them).
test_static_actionlint_reports_a_broken_workflow() {
  local fixture=tests/fixtures/workflow-broken.yml out rc=0 expected missing=()
  out=$(workflow_lint "${fixture}" 2>&1) || rc=$?
  printf '%s\n' "${out}"
  assert_eq 1 "${rc}" "actionlint's exit code on ${fixture} (1: problems found)"
  for expected in \
    ':12:[0-9]+: unexpected key "timeout" for "job" section\. .*\[syntax-check\]$' \
    ':16:[0-9]+: unexpected key "uses" for step to run shell command\. .*\[syntax-check\]$' \
    ":20:[0-9]+: got unexpected character ' ' while lexing == operator, expecting '=' \[expression\]$" \
    ':25:[0-9]+: undefined variable "secret"\. .*\[expression\]$' \
    ':29:[0-9]+: shellcheck reported issue in this script: SC2086:.*\[shellcheck\]$' \
    ":33:[0-9]+: pyflakes reported issue in this script: .*'os' imported but unused \[pyflakes\]$"; do
    if ! grep -qE -- "^${fixture}${expected}" <<<"${out}"; then missing+=("${expected}"); fi
  done
  [[ ${#missing[@]} -eq 0 ]] || fail "actionlint did not report: $(printf '/%s/ ' "${missing[@]}")"
  echo "actionlint: $(grep -c "^${fixture}:" <<<"${out}") findings in ${fixture}, the 6 expected among them"
}

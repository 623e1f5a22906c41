# shellcheck shell=bash
# Every link in the lab's Markdown resolves on a fresh clone: a relative link
# names a file or folder git tracks (a results/ run folder is ignored), a
# #fragment names a heading of its target, and a run folder the docs or a
# scenario's notes cite is kept in git under docs/runs/ or marked "(not
# kept)" (tests/lib/doc-links.mjs).

# doc_links FILE...: the checker, given the tracked files on stdin.
doc_links() { git -C "${LAB_ROOT}" ls-files | in_image NODE_IMAGE node tests/lib/doc-links.mjs --tracked - "$@"; }

test_static_markdown_links_resolve() {
  local files=()
  mapfile -t files < <(git -C "${LAB_ROOT}" ls-files '*.md' 'scenarios/*.json' ':!:tests/fixtures/*' ':!:docs/runs/*')
  [[ ${#files[@]} -gt 0 ]] || fail "no Markdown file tracked by git: expected README.md at least"
  doc_links "${files[@]}"
}

# The checker is not a no-op: each broken link of the fixture is reported on
# its line, and only those.
test_static_link_check_reports_broken_links() {
  local fixture=tests/fixtures/doc-links/broken.md out rc=0 expected missing=()
  out=$(doc_links "${fixture}" 2>&1) || rc=$?
  printf '%s\n' "${out}"
  assert_eq 1 "${rc}" "the checker's exit code on ${fixture} (1: broken links)"
  for expected in \
    ':5: \(#no-such-heading\): .* has no heading with anchor #no-such-heading$' \
    ':6: \(no-such-file.md\): .*no-such-file.md is not tracked by git$' \
    ':6: \(\.\./\.\./\.\./results/connections\): results/connections is not tracked by git$' \
    ':7: \(\.\./\.\./\.\./README.md#no-such-section\): README.md has no heading with anchor #no-such-section$' \
    ':8: \(results/maxconn-sweep/20200101T000000Z\): cites a run not kept in git: keep it \(scripts/keep-run.sh results/maxconn-sweep/20200101T000000Z\) or cite a kept one$' \
    ':8: \(results/fullconn/20200101T000000Z\): cites a run not kept in git: keep it \(scripts/keep-run.sh results/fullconn/20200101T000000Z\) or cite a kept one$' \
    ':9: \(…/20200101T000000Z\): cites a run by its timestamp alone: write results/SCENARIO/TIMESTAMP in full$'; do
    if ! grep -qE -- "^${fixture}${expected}" <<<"${out}"; then missing+=("${expected}"); fi
  done
  [[ ${#missing[@]} -eq 0 ]] || fail "the link checker did not report: $(printf '/%s/ ' "${missing[@]}")"
  assert_eq "7 of 8 links broken" "$(tail -1 <<<"${out}")" "the checker's count for ${fixture}"
}

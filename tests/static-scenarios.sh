# shellcheck shell=bash
# The scenarios' published figures and tolerances against the digests the
# suite holds of them (tests/lib/scenario-figures.mjs). Run alone:
# scripts/test.sh static scenarios

# A scenario's published figures or tolerances change only together with the
# e2e tests that run it: each scenario's digest is the one
# tests/fixtures/scenario-figures.json holds, and a difference names the
# scenario, both digests and those tests.
test_static_scenario_figures_change_only_with_their_tests() {
  in_image NODE_IMAGE node tests/lib/scenario-figures.mjs
}

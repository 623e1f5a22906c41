# shellcheck shell=bash
# The structure of the runner (bash) and the engine (node) as rules a test
# can check: imports point one way, every shell function comes from the file
# or from what it sources, and the lab's topology has one home.

# scripts/lab/ is split by stage (core → plan → run → evidence → report):
# an import from a later stage into an earlier one fails.
test_static_engine_imports_point_one_way() {
  in_image NODE_IMAGE node tests/lib/import-stages.mjs scripts/lab
}

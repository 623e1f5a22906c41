# shellcheck shell=bash
# Assertions for the test groups (sourced by scripts/test.sh). Each prints
# what was expected and what came, and fails the test.

fail() { echo "FAIL: $*" >&2; return 1; }

assert_eq() { # EXPECTED ACTUAL WHAT
  [[ "$1" == "$2" ]] || fail "$3: expected '$1', got '$2'"
}

assert_match() { # REGEX TEXT WHAT
  [[ "$2" =~ $1 ]] || fail "$3: '$2' does not match /$1/"
}

assert_ge() { # MIN ACTUAL WHAT (integers)
  [[ "$2" =~ ^[0-9]+$ ]] || fail "$3: '$2' is not a number"
  (("$2" >= "$1")) || fail "$3: expected at least $1, got $2"
}

# assert_fails_with REGEX COMMAND...: COMMAND exits non-zero and its stderr
# matches REGEX (the one clear line a user should see).
assert_fails_with() {
  local regex="$1" err rc=0
  shift
  err=$("$@" 2>&1 >/dev/null) || rc=$?
  [[ ${rc} -ne 0 ]] || fail "'$*' should fail but exited 0"
  [[ "${err}" =~ ${regex} ]] || fail "'$*' stderr does not match /${regex}/: ${err}"
}

# in_image VAR ARGS...: docker run --rm the image named VAR in the env files,
# with the repository mounted read-only at /lab, no network.
in_image() {
  local image
  image=$(env_value "$1")
  shift
  docker run --rm -i --network none -v "${LAB_ROOT}:/lab:ro" -w /lab "${image}" "$@"
}

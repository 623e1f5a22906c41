# shellcheck shell=bash
# The scenario files (scenarios/NAME.json) read by bash alone, for what must
# work before Docker does: "scripts/scenario.sh list" and the check of a
# scenario's name. The engine (scripts/lab/cli.mjs list, loadScenario) says
# the same; a unit test keeps the two lists equal.
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# scenario_names: the scenarios' names, sorted as the engine sorts them.
scenario_names() {
  local file
  for file in "${LAB_ROOT}"/scenarios/*.json; do
    [[ -f "${file}" ]] || continue
    file="${file##*/}"
    echo "${file%.json}"
  done | LC_ALL=C sort
}

# known_scenario NAME: NAME names a scenario file (a lesson's check,
# lesson-*, is lessons/checks/NAME.json: scripts/lab/plan/scenarios.mjs
# scenarioFile); else the engine's own line (unknown scenario, the names to
# try) and exit 2, as the engine would.
known_scenario() {
  if [[ "$1" == lesson-* ]]; then
    [[ ! "$1" =~ ^[a-z0-9][a-z0-9-]*$ || ! -f "${LAB_ROOT}/lessons/checks/$1.json" ]] || return 0
    echo "${PROG}: unknown lesson check \"$1\": scripts/lesson.sh list names the lessons" >&2
    exit 2
  fi
  [[ ! "$1" =~ ^[a-z0-9][a-z0-9-]*$ || ! -f "${LAB_ROOT}/scenarios/$1.json" ]] || return 0
  echo "${PROG}: unknown scenario \"$1\": try one of $(scenario_names | paste -sd, - | sed 's/,/, /g') (or \"list\")" >&2
  exit 2
}

# list_scenarios: "  NAME  description (author year)" for every scenario, the
# names padded to the longest, as scripts/lab/cli.mjs list prints it. A small
# JSON scanner reads the top-level "description" and the "author" and "year"
# of "source", whatever the file's layout (a string's escapes \" \\ \/ kept as
# the character, \n \t \r as a space). Bytes in, bytes out (LC_ALL=C).
list_scenarios() {
  local names
  mapfile -t names < <(scenario_names)
  [[ ${#names[@]} -gt 0 ]] || die "no scenarios/*.json in ${LAB_ROOT}: restore them with git checkout -- scenarios"
  # shellcheck disable=SC2016 # an awk program
  (cd "${LAB_ROOT}/scenarios" && LC_ALL=C awk '
    function unescape(s,   out, i, c) {
      if (index(s, "\\") == 0) return s
      for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (c == "\\") { c = substr(s, ++i, 1); if (c == "n" || c == "t" || c == "r") c = " " }
        out = out c
      }
      return out
    }
    function token(t) {
      if (object[depth] && want_key[depth]) { key[depth] = t; want_key[depth] = 0; return }
      if (depth == 1 && key[1] == "description") description[n] = t
      if (depth == 2 && key[1] == "source" && key[2] == "author") author[n] = t
      if (depth == 2 && key[1] == "source" && key[2] == "year") year[n] = t
    }
    FNR == 1 { n++; name[n] = FILENAME; sub(/\.json$/, "", name[n]); depth = 0 }
    {
      rest = $0
      while (rest != "") {
        c = substr(rest, 1, 1)
        if (match(rest, /^"([^"\\]|\\.)*"/)) { token(unescape(substr(rest, 2, RLENGTH - 2))); rest = substr(rest, RLENGTH + 1); continue }
        if (match(rest, /^[-+.0-9A-Za-z]+/)) { token(substr(rest, 1, RLENGTH)); rest = substr(rest, RLENGTH + 1); continue }
        if (c == "{") { depth++; object[depth] = 1; want_key[depth] = 1; key[depth] = "" }
        else if (c == "[") { depth++; object[depth] = 0; key[depth] = "" }
        else if (c == "}" || c == "]") depth--
        else if (c == ",") { if (object[depth]) want_key[depth] = 1 }
        rest = substr(rest, 2)
      }
    }
    END {
      for (i = 1; i <= n; i++) if (length(name[i]) > width) width = length(name[i])
      for (i = 1; i <= n; i++) {
        source = author[i] (author[i] != "" && year[i] != "" ? " " : "") year[i]
        printf "  %s  %s%s\n", sprintf("%-" width "s", name[i]), description[i], source != "" ? " (" source ")" : ""
      }
    }' "${names[@]/%/.json}")
}

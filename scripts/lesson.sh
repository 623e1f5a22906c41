#!/usr/bin/env bash
# Usage: scripts/lesson.sh list
#        scripts/lesson.sh start NN
#        scripts/lesson.sh check NN
#        scripts/lesson.sh reset [NN]
#
# The workshop's lessons (lessons/NN-topic.md), one per experiment family.
#   list      each lesson: its number, title and measured duration
#   start NN  the lab in lesson NN's starting state, from any state (the
#             load tools stopped, scripts/up.sh, HAProxy on its baseline), and your
#             settings file exercises/NN-topic.json, copied from
#             lessons/start/ (yours is kept if you have one: reset NN)
#   check NN  lesson NN's check: a short measured run (scripts/scenario.sh
#             lesson-NN-topic --settings exercises/NN-topic.json) that says
#             pass, or which verdict failed and a hint; each check is a new
#             run folder under results/lesson-NN-topic/, never over another
#   reset     the lab back to its baseline (as start does); with NN, also
#             your settings file back to the lesson's start
# Exit: 0 done (check: passed), 3 the check ran and failed, 1-2 bad input or
# a lab that cannot run (one line on stderr).
set -euo pipefail

PROG="lesson"
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

readonly LESSONS="${LAB_ROOT}/lessons" EXERCISES="${LAB_ROOT}/exercises"

usage() { sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}"; }

# lesson_files: lessons/NN-topic.md, in order.
lesson_files() {
  local file
  for file in "${LESSONS}"/[0-9][0-9]-*.md; do [[ -f "${file}" ]] && echo "${file}"; done
}

# lesson_numbers: "01, 02, ..." for the one-line errors.
lesson_numbers() { lesson_files | sed 's|.*/\([0-9][0-9]\)-.*|\1|' | paste -sd, - | sed 's/,/, /g'; }

# topic NN: "NN-topic" of lesson NN, or one line and exit 2.
topic() {
  local file
  [[ "$1" =~ ^[0-9]{1,2}$ ]] || { echo "${PROG}: '$1' is not a lesson number: try one of $(lesson_numbers) (scripts/lesson.sh list)" >&2; exit 2; }
  file=$(lesson_files | grep "/$(printf '%02d' "$((10#$1))")-" | head -n 1 || true)
  [[ -n "${file}" ]] || { echo "${PROG}: no lesson $1: try one of $(lesson_numbers) (scripts/lesson.sh list)" >&2; exit 2; }
  file="${file##*/}"
  echo "${file%.md}"
}

# field FILE NAME: the paragraph after "**NAME**: " in a lesson's file, on one line.
field() { awk -v name="**$2**: " 'index($0, name) == 1 { on = 1; $0 = substr($0, length(name) + 1) } on && /^$/ { exit } on { printf "%s%s", sep, $0; sep = " " }' "$1"; }

cmd_list() {
  local file titles=() durations=() numbers=() width=0 i
  while read -r file; do
    numbers+=("$(basename "${file}" | cut -c1-2)")
    titles+=("$(sed -n '1s/^# Lesson [0-9]*: //p' "${file}")")
    durations+=("$(field "${file}" Duration)")
    ((${#titles[-1]} <= width)) || width=${#titles[-1]}
  done < <(lesson_files)
  for i in "${!titles[@]}"; do
    printf "  %s  %-${width}s  %s\n" "${numbers[i]}" "${titles[i]}" "${durations[i]:-duration not measured yet}"
  done
}

# baseline: the lab as scripts/up.sh leaves it, from any state: every
# optional service (the load tools, behind profiles) stopped, then up.sh
# (compose up recreates a service whose settings differ from .env's and puts
# every scale back), and HAProxy recreated if it runs another config than
# haproxy/haproxy.cfg (a run that was killed). Cheap on a lab already so.
baseline() {
  local running optional
  require_docker
  running=$(running_scenario) && die "a scenario runs on this lab (${running}): wait for it to end, or stop it (Ctrl-C in its terminal), then rerun"
  optional=$(comm -13 <(compose config --services | sort) <(compose --profile '*' config --services | sort) | xargs)
  # shellcheck disable=SC2086 # one service per word
  compose --profile '*' rm -sf ${optional} >/dev/null 2>&1 || die "could not stop the load tools (${optional}): run 'docker compose --profile \"*\" down', then rerun"
  "${LAB_ROOT}/scripts/up.sh"
  haproxy_on_baseline || die "could not recreate HAProxy: run 'docker compose up -d --force-recreate haproxy' to see why"
  # The runtime API is read through a probe beside HAProxy: none left.
  remove_instance_probes >/dev/null 2>&1 || true
}

cmd_start() {
  local name mine
  name=$(topic "$1")
  mine="${EXERCISES}/${name}.json"
  [[ -f "${LESSONS}/start/${name}.json" ]] || die "lessons/start/${name}.json is missing: restore it with git checkout -- lessons"
  baseline
  mkdir -p "${EXERCISES}"
  if [[ -f "${mine}" ]]; then
    log "kept your exercises/${name}.json (scripts/lesson.sh reset $1 puts the lesson's start back)"
  else
    cp "${LESSONS}/start/${name}.json" "${mine}"
    log "your settings for the exercise: exercises/${name}.json"
  fi
  log "lesson $1 ready: lessons/${name}.md"
}

cmd_check() {
  local name mine rc=0 hint
  name=$(topic "$1")
  mine="exercises/${name}.json"
  [[ -f "${LAB_ROOT}/${mine}" ]] || die "${mine} does not exist yet: run scripts/lesson.sh start $1 first"
  log "checking ${mine}: scripts/scenario.sh lesson-${name} --settings ${mine}"
  "${LAB_ROOT}/scripts/scenario.sh" "lesson-${name}" --settings "${mine}" </dev/null || rc=$?
  case "${rc}" in
    0) log "PASS lesson $1: your settings do what the exercise asks" ;;
    3)
      hint=$(field "${LESSONS}/${name}.md" Hint)
      log "not yet: a verdict failed (the verdict column above)${hint:+; hint: ${hint}}"
      ;;
    *) log "the check did not run to the end (exit ${rc}: above); your settings file is unchanged" ;;
  esac
  return "${rc}"
}

cmd_reset() {
  local name saved
  if [[ $# -eq 1 ]]; then
    name=$(topic "$1")
    [[ -f "${LESSONS}/start/${name}.json" ]] || die "lessons/start/${name}.json is missing: restore it with git checkout -- lessons"
  fi
  baseline
  if [[ -n "${name:-}" ]]; then
    mkdir -p "${EXERCISES}"
    saved="${name}.json.$(date -u +%Y%m%dT%H%M%SZ)"
    [[ ! -f "${EXERCISES}/${name}.json" ]] || cp "${EXERCISES}/${name}.json" "${EXERCISES}/${saved}"
    cp "${LESSONS}/start/${name}.json" "${EXERCISES}/${name}.json"
    log "exercises/${name}.json is the lesson's start again (yours, if you had one: exercises/${saved})"
  fi
}

main() {
  local command="${1:-}"
  case "${command}" in
    -h | --help | help) usage; return 0 ;;
    list) [[ $# -eq 1 ]] || die "list takes no argument: scripts/lesson.sh list" ;;
    start | check) [[ $# -eq 2 ]] || die "${command} needs a lesson number: scripts/lesson.sh ${command} NN (scripts/lesson.sh list)" ;;
    reset) [[ $# -le 2 ]] || die "reset takes at most a lesson number: scripts/lesson.sh reset [NN]" ;;
    "") die "no command: scripts/lesson.sh list | start NN | check NN | reset [NN]" ;;
    *) die "unknown command '${command}': use list, start NN, check NN or reset [NN]" ;;
  esac
  case "${command}" in
    list) cmd_list ;;
    start) cmd_start "$2" ;;
    check) cmd_check "$2" ;;
    reset) cmd_reset "${@:2}" ;;
  esac
}

# "exit" on the same line: bash reads a script as it runs, so an edit of this
# file during a check (a git pull) cannot make it run what follows.
main "$@"; exit

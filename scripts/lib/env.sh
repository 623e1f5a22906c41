# shellcheck shell=bash
# Files and env: the env files as Compose reads them, the run folder's
# NAME=value files, the topology table (sourced by common.sh).
# Sourced by common.sh, after which this line does nothing; here for a file
# that sources this one alone.
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# The lab's topology: HAProxy's instances, their frontends, the backend
# services, the other services and shared limits, one row each
# (topology.txt; the engine reads the same file: scripts/labctl/core/topology.mjs).
readonly TOPOLOGY_FILE="${LAB_ROOT}/topology.txt"

# The folder of the run under way (scenario.sh read_run_env), "" outside a
# run: the libraries read what its plan wrote (topology.txt, samplers/).
LAB_RUN_DIR=""

# file_value FILE NAME: NAME's value in one of the run folder's NAME=value
# files (run.env, step.env...: scripts/labctl/plan/runfolder.mjs); "" if none.
file_value() { sed -n "s/^$2=//p" "$1" | tail -n 1; }

# file_prefixed FILE PREFIX: the K=V of FILE's "PREFIX.K=V" lines (a step's
# load.* and compose.* lines), one per line.
file_prefixed() { sed -n "s/^$2\.//p" "$1"; }

# env_value NAME: NAME as compose sees it (environment, then the env files,
# the last file winning). Scripts run from LAB_ROOT, as compose resolves
# COMPOSE_ENV_FILES from the working directory. A file's line is read as
# Compose reads it (compose-go's dotenv), else the lab would act on another
# value than the one its services get: blanks around the name, the "=" and
# the value, and "export " before the name, are dropped; so are a value's
# quotes ("..." or '...', and anything after the closing one) and an
# unquoted value's comment (from " #"). Compose's ${VAR} expansion, escapes
# in "..." and values over several lines are not done: the lab's files have
# none. Called everywhere: the rules are bash's own, no process more than
# the sed and tail that find the line.
env_value() {
  if [[ -n "${!1:-}" ]]; then echo "${!1}"; return 0; fi
  local files file value last=""
  IFS=',' read -r -a files <<<"${COMPOSE_ENV_FILES:-.env}"
  for file in "${files[@]}"; do
    [[ -f "${file}" ]] || continue
    value=$(sed -n "s/^[[:space:]]*\(export[[:space:]]\{1,\}\)\{0,1\}$1[[:space:]]*=//p" "${file}" | tail -n 1)
    value="${value#"${value%%[![:space:]]*}"}"
    case "${value}" in
      \"*) value="${value:1}"; value="${value%%\"*}" ;;
      \'*) value="${value:1}"; value="${value%%\'*}" ;;
      *) value="${value%% #*}"; value="${value%"${value##*[![:space:]]}"}" ;;
    esac
    if [[ -n "${value}" ]]; then last="${value}"; fi
  done
  echo "${last}"
}

# topology_text: the lab's table with each HAProxy process a row of its own
# (the engine's expansion: scripts/labctl/core/topology.mjs expandProcesses),
# "#" comments dropped. In a run, the table its plan wrote
# (LAB_RUN_DIR/topology.txt); else the engine's for HAPROXY_PROCESSES as
# compose sees it, kept in results/.cache per process count, table and
# expanding code.
topology_text() {
  # Kept for a step (step-load.sh hold_topology): read ~30 times a step and
  # every second of a load.
  if [[ -n "${LAB_TOPOLOGY_CACHE:-}" ]]; then echo "${LAB_TOPOLOGY_CACHE}"; return 0; fi
  local file="" n sum
  if [[ -n "${LAB_RUN_DIR}" ]]; then
    file="${LAB_RUN_DIR}/topology.txt"
  else
    n=$(env_value HAPROXY_PROCESSES)
    [[ "${n:=1}" =~ ^[1-9][0-9]*$ ]] || die "HAPROXY_PROCESSES must be a whole number from 1, found '${n}' (set it in .env)"
    sum=$(cat "${TOPOLOGY_FILE}" "${LAB_ROOT}/scripts/labctl/core/topology.mjs" | cksum)
    file="${LAB_ROOT}/results/.cache/topology-${n}-${sum%% *}.txt"
    if [[ ! -s "${file}" ]]; then
      mkdir -p "${file%/*}"
      labctl topology --processes "${n}" >"${file}.$$" || { rm -f "${file}.$$"; die "could not expand ${TOPOLOGY_FILE#"${LAB_ROOT}/"} (above)"; }
      mv "${file}.$$" "${file}"
    fi
  fi
  sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "${file}"
}

# topology_rows KIND: "NAME KEY=VALUE..." for each row of KIND, in the table's order.
topology_rows() {
  topology_text | awk -v kind="$1" '$1 == kind { $1 = ""; sub(/^ +/, ""); print }'
}

# topology_names KIND: the names of KIND's rows (a frontend's once per instance).
topology_names() { topology_rows "$1" | awk '{ print $1 }'; }

# topology_value KIND NAME KEY: KEY's value in NAME's row of KIND ("" when
# it has none; a frontend's first row).
topology_value() {
  topology_rows "$1" | awk -v name="$2" -v key="$3=" '
    $1 == name { for (i = 2; i <= NF; i++) if (index($i, key) == 1) { print substr($i, length(key) + 1); exit } }'
}

# haproxy_instances: the HAProxy instances' names (one per process);
# first_instance: the first.
haproxy_instances() { topology_names instance; }

first_instance() { haproxy_instances | head -n 1; }

# haproxy_containers: the instances that stand for their container (its first
# process): its memory, CPU, kernel counters and log, read once.
haproxy_containers() { topology_rows instance | awk '/(^| )process=1( |$)/ || !/(^| )process=/ { print $1 }'; }

# frontend_ports [INSTANCE]: the TCP ports of the frontends (of INSTANCE).
frontend_ports() {
  topology_rows frontend | awk -v instance="${1:-}" '
    { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
    instance == "" || v["instance"] == instance { print v["port"] }' | sort -un
}

# container_processes INSTANCE: the instances of INSTANCE's container (its processes).
container_processes() {
  topology_rows instance | awk -v c="$1" '{ own = $1; for (i = 2; i <= NF; i++) if ($i ~ /^container=/) own = substr($i, 11) } own == c { print $1 }'
}

# step_value DIR NAME: NAME of the step's step.env; run_value DIR NAME: of
# its run's run.env; started_value DIR NAME: of what start_load wrote.
step_value() { file_value "$1/step.env" "$2"; }

run_value() { file_value "$1/../../run.env" "$2"; }

started_value() { file_value "$1/started.env" "$2"; }

# load_env_file DIR ENV_LINES: DIR/load.env, the step's load environment
# as the tool's containers get it (compose.yaml: env_file ${LOAD_ENV_FILE}),
# and nothing else: a variable of the runner's shell that the step does not
# set never reaches them. Each value single-quoted, which compose reads as
# written (spaces too: the planner refuses a quote in a load value). Prints
# the file's absolute path.
load_env_file() {
  local kv file="$1/load.env"
  [[ "${file}" == /* ]] || file="${PWD}/${file}"
  while IFS= read -r kv; do
    [[ -z "${kv}" ]] || printf "%s='%s'\n" "${kv%%=*}" "${kv#*=}"
  done <<<"$2" >"${file}"
  echo "${file}"
}

# use_load_env DIR ENV_LINES: in this (sub)shell, LOAD_ENV_FILE names DIR's
# load.env, and ENV_LINES are exported for the ones compose interpolates
# itself (LOADGEN_SCRIPT, LOADGEN_SYSCTL). Call it in a subshell.
use_load_env() {
  local kv
  LOAD_ENV_FILE=$(load_env_file "$1" "$2") || return 1
  export LOAD_ENV_FILE
  while IFS= read -r kv; do [[ -z "${kv}" ]] || export "${kv?}"; done <<<"$2"
}

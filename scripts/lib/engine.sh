# shellcheck shell=bash
# The operations that differ between a lab on one host and one on a Swarm,
# and the one place that chooses between them: each operation calls the
# engine's own function, onehost_NAME (scripts/lib/engine-onehost.sh) or
# swarm_NAME (scripts/lib/engine-swarm.sh, once use_engine swarm has loaded
# it). Every other function is the same on both.
# Sourced by common.sh, after which this line does nothing; here for a file
# that sources this one alone.
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# shellcheck source=scripts/lib/engine-onehost.sh
source "${LAB_ROOT}/scripts/lib/engine-onehost.sh"
LAB_ENGINE=onehost

# use_engine onehost|swarm: the engine the operations below go to from now on.
use_engine() {
  [[ "$1" == onehost || "$1" == swarm ]] || die "no such engine: $1 (onehost or swarm)"
  if [[ "$1" == swarm ]]; then
    # shellcheck source=scripts/lib/engine-swarm.sh
    source "${LAB_ROOT}/scripts/lib/engine-swarm.sh"
    swarm_init
  fi
  LAB_ENGINE="$1"
}

# The lab is up and free for a run.
require_stack() { "${LAB_ENGINE}_require_stack"; }
# Every load tool of the run stopped (a Ctrl-C's cleanup too).
stop_load_tools() { "${LAB_ENGINE}_stop_load_tools"; }
# HAProxy's instances, the lab's services and containers.
instance_container() { "${LAB_ENGINE}_instance_container" "$@"; }
instance_exec() { "${LAB_ENGINE}_instance_exec" "$@"; }
service_exec() { "${LAB_ENGINE}_service_exec" "$@"; }
node_exec() { "${LAB_ENGINE}_node_exec" "$@"; }
running_containers() { "${LAB_ENGINE}_running_containers" "$@"; }
# HAProxy back after a restart's stop.
start_again() { "${LAB_ENGINE}_start_again" "$@"; }
# The services' scale and settings.
backend_scale() { "${LAB_ENGINE}_backend_scale"; }
scale_services() { "${LAB_ENGINE}_scale_services" "$@"; }
recreate_services() { "${LAB_ENGINE}_recreate_services" "$@"; }
# Readings of the containers this machine's cgroups do not hold.
readings_of_other_nodes() { "${LAB_ENGINE}_readings_of_other_nodes" "$@"; }
# The limits that cap held connections (the preflight's limits.env).
collect_limits() { "${LAB_ENGINE}_collect_limits" "$@"; }
# A step's load tool: started, waited for, its exits, its files.
start_tool() { "${LAB_ENGINE}_start_tool" "$@"; }
wait_tool_ended() { "${LAB_ENGINE}_wait_tool_ended" "$@"; }
tool_exit_codes() { "${LAB_ENGINE}_tool_exit_codes" "$@"; }
tool_finished() { "${LAB_ENGINE}_tool_finished" "$@"; }

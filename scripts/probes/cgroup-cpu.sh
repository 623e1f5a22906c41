# shellcheck shell=sh
# sh scripts/probes/cgroup-cpu.sh ROOT ID...: "ID VALUE UNIT" for each
# container ID given after the cgroup root ROOT: the CPU time the kernel charged to the
# container's cgroup (every process in it: exec'd ones too). cgroup v1:
# cpuacct.usage (ns); v2: cpu.stat usage_usec (us). Then its CFS periods
# so far and those in which it used up its quota ("ID N periods", "ID N
# throttled": cpu.stat nr_periods, nr_throttled): under a quota the CPU time
# reads a little under it (84% of 0.2 core at a ceiling), the throttling
# does not. Docker's cgroupfs and systemd drivers name the folder
# differently, and an engine started with --cgroup-parent (the practice
# Swarm's nodes, scripts/swarm.sh) puts them under that parent (the last
# pattern, a glob); a container with no folder (stopped) prints nothing. Read
# with the shell's own read, no cat or sed: this runs every second for every
# container (30 at 250,000 connections), and each fork costs the machine.
# Run by scripts/lib/cgroups.sh cgroup_read, on this host or in a container
# on the engine's machine (given as the program text: no mount).
root=$1; shift
for id in "$@"; do
  stat=
  for f in "$root/cpuacct/docker/$id/cpuacct.usage" "$root/cpu,cpuacct/docker/$id/cpuacct.usage" \
    "$root/cpuacct/system.slice/docker-$id.scope/cpuacct.usage" "$root/cpu,cpuacct/system.slice/docker-$id.scope/cpuacct.usage" \
    "$root"/cpuacct/*/"$id"/cpuacct.usage; do
    [ -r "$f" ] || continue
    read -r v <"$f" && echo "$id $v ns"
    # v1 keeps the throttling in the cpu controller (its cpu.stat has no usage_usec).
    for stat in "$root/cpu/docker/$id/cpu.stat" "$root/cpu,cpuacct/docker/$id/cpu.stat" \
      "$root/cpu/system.slice/docker-$id.scope/cpu.stat" "$root/cpu,cpuacct/system.slice/docker-$id.scope/cpu.stat" \
      "$root"/cpu/*/"$id"/cpu.stat; do
      [ -r "$stat" ] && break
    done
    break
  done
  # v2: one cpu.stat holds the CPU time and the throttling.
  if [ -z "$stat" ]; then
    for stat in "$root/system.slice/docker-$id.scope/cpu.stat" "$root/docker/$id/cpu.stat"; do [ -r "$stat" ] && break; done
  fi
  [ -r "$stat" ] || continue
  while read -r k v; do
    case "$k" in
      usage_usec) echo "$id $v us" ;;
      nr_periods) echo "$id $v periods" ;;
      nr_throttled) echo "$id $v throttled" ;;
    esac
  done <"$stat"
done

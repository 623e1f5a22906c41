# shellcheck shell=sh
# sh scripts/probes/cgroup-quota.sh ROOT ID...: "ID QUOTA_US PERIOD_US" for
# each container ID given after ROOT: the CPU quota its cgroup enforces (cgroup v1
# cpu.cfs_quota_us, -1 = none; v2 cpu.max, "max" = none), as scripts/probes/cgroup-cpu.sh.
# Run by scripts/lib/cgroups.sh cgroup_read, on this host or in a container
# on the engine's machine (given as the program text: no mount).
root=$1; shift
for id in "$@"; do
  for d in "$root/cpu/docker/$id" "$root/cpu,cpuacct/docker/$id" "$root/cpu/system.slice/docker-$id.scope" "$root/cpu,cpuacct/system.slice/docker-$id.scope" "$root"/cpu/*/"$id"; do
    if [ -r "$d/cpu.cfs_quota_us" ]; then echo "$id $(cat "$d/cpu.cfs_quota_us") $(cat "$d/cpu.cfs_period_us")"; continue 2; fi
  done
  for d in "$root/system.slice/docker-$id.scope" "$root/docker/$id"; do
    if [ -r "$d/cpu.max" ]; then echo "$id $(sed "s/^max /-1 /" "$d/cpu.max")"; continue 2; fi
  done
done

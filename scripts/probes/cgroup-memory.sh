# shellcheck shell=sh
# sh scripts/probes/cgroup-memory.sh ROOT ID...: "ID BYTES" for each
# container ID given after the cgroup root ROOT: the memory its cgroup holds less the page cache the
# kernel may drop, as docker stats computes it (v1 memory.usage_in_bytes -
# total_inactive_file, v2 memory.current - inactive_file). Same layouts as
# scripts/probes/cgroup-cpu.sh; a container with no folder (stopped) prints nothing.
# Run by scripts/lib/cgroups.sh cgroup_read, on this host or in a container
# on the engine's machine (given as the program text: no mount).
root=$1; shift
for id in "$@"; do
  for d in "$root/memory/docker/$id" "$root/memory/system.slice/docker-$id.scope" \
    "$root/system.slice/docker-$id.scope" "$root/docker/$id" "$root"/memory/*/"$id"; do
    if [ -r "$d/memory.usage_in_bytes" ]; then read -r used <"$d/memory.usage_in_bytes"; key=total_inactive_file
    elif [ -r "$d/memory.current" ]; then read -r used <"$d/memory.current"; key=inactive_file
    else continue; fi
    while read -r k v; do
      if [ "$k" = "$key" ] && [ "$v" -lt "$used" ]; then used=$((used - v)); fi
    done <"$d/memory.stat"
    echo "$id $used"
    break
  done
done

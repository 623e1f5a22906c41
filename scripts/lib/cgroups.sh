# shellcheck shell=bash
# cgroups and /proc: each container's CPU, memory and allowance from its
# cgroup (the programs in scripts/probes/cgroup-*.sh), the limits that cap
# held connections, the kernel's memory (sourced by common.sh).
# Sourced by common.sh, after which this line does nothing; here for a file
# that sources this one alone.
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# memory_limits [COMPOSE_ARGS...]: "SERVICE BYTES" for each service of
# "compose COMPOSE_ARGS config" (by default, what compose up starts) with
# deploy.resources.limits.memory, from its pretty JSON, line by line (the
# same on Compose 2.26 and 2.40).
memory_limits() {
  compose "$@" config --format json | awk '
    { line = $0; sub(/^[ \t]+/, "", line) }
    line ~ /^[]}]/ { depth--; next }
    line ~ /[[{]$/ {
      key = ""
      if (line ~ /^"/) { key = substr(line, 2); sub(/".*/, "", key) }
      path[++depth] = key
      next
    }
    depth == 6 && path[2] == "services" && path[4] == "deploy" && path[5] == "resources" && path[6] == "limits" && line ~ /^"memory":/ {
      v = tolower(line); sub(/^"memory": *"?/, "", v); sub(/"?,?$/, "", v); sub(/b$/, "", v)
      n = v + 0; u = substr(v, length(v))
      if (u == "k") n *= 1024; else if (u == "m") n *= 1048576; else if (u == "g") n *= 1073741824
      printf "%s %.0f\n", path[3], n
    }'
}

# service_nofile SERVICE [COMPOSE_ARGS...]: the open-file limit SERVICE's own
# container gets: asked in a running one, else in a one-off container of the
# service (its compose settings, no dependencies started).
service_nofile() {
  local service="$1"
  shift
  if [[ -n "$(compose "$@" ps -q --status running "${service}" 2>/dev/null)" ]]; then
    compose "$@" exec -T "${service}" sh -c 'ulimit -n'
  else
    compose "$@" run --rm --no-deps -T --entrypoint sh "${service}" -c 'ulimit -n' 2>/dev/null
  fi
}

# service_memory SERVICE [COMPOSE_ARGS...]: SERVICE's own memory limit in
# bytes (its config also lists the services it depends on); 0: none.
service_memory() {
  local service="$1"
  shift
  memory_limits "$@" 2>/dev/null | awk -v s="${service}" '$1 == s { n = $2 } END { print n + 0 }'
}

# haproxy_limits: each HAProxy container's open files and memory limit
# (INSTANCE_nofile, INSTANCE_memory_bytes; its processes, haproxy/processes.sh,
# each get these) and its kernel's local port range, read in it.
haproxy_limits() {
  local instance
  for instance in $(haproxy_containers); do
    echo "${instance}_nofile=$(instance_exec "${instance}" sh -c 'ulimit -n')"
    echo "${instance}_memory_bytes=$(docker inspect -f '{{.HostConfig.Memory}}' "$(instance_container "${instance}")")"
  done
  echo "port_range=$(instance_exec "$(first_instance)" cat /proc/sys/net/ipv4/ip_local_port_range | awk '{ print $1, $2 }')"
}

# host_limits: the Docker host's kernel's (a Linux host or Docker Desktop's
# VM, seen from a container on the host network): fs.nr_open, the conntrack
# table and whether bridged traffic goes through it, the memory available.
host_limits() {
  local nr_open ct_max ct_count bridge mem
  # shellcheck disable=SC2016 # expanded by the container's shell
  read -r nr_open ct_max ct_count bridge mem < <(docker run --rm --network host "$(env_value NODE_IMAGE)" sh -c '
    for f in fs/nr_open net/netfilter/nf_conntrack_max net/netfilter/nf_conntrack_count net/bridge/bridge-nf-call-iptables; do
      printf "%s " "$(cat "/proc/sys/$f" 2>/dev/null || echo 0)"
    done
    awk "/^MemAvailable:/ { print \$2 * 1024 }" /proc/meminfo')
  echo "nr_open=${nr_open}"
  echo "conntrack_max=${ct_max}"
  echo "conntrack_count=${ct_count}"
  echo "bridge_tracked=$([[ "${bridge}" == 1 && "${ct_max}" -gt 0 ]] && echo true || echo false)"
  echo "mem_available_bytes=${mem}"
}

# kernel_memory FILE: the Docker host's kernel's own memory (a Linux host or
# Docker Desktop's VM): slab (socket, inode and dentry objects), TCP's
# buffers (sockstat's "mem", in pages) and sockets allocated, NAME=value
# lines read before a step and mid-hold (the engine takes the difference).
# Read through the first HAProxy container's probe: /proc/meminfo and these
# two sockstat fields are the kernel's whichever network namespace reads
# them, and a docker exec (~0.1 s) replaces a container of its own (~0.4 s,
# before every step and in the middle of its load).
kernel_memory() {
  # shellcheck disable=SC2016 # expanded by the probe's shell
  probe_exec "$(haproxy_containers | head -n 1)" sh -c '
    echo "# the Docker host kernel'"'"'s memory (scripts/lib/cgroups.sh kernel_memory)"
    awk "/^(Slab|SUnreclaim|MemAvailable):/ { sub(/:/, \"\", \$1); printf \"%s_bytes=%.0f\n\", tolower(\$1), \$2 * 1024 }" /proc/meminfo
    awk "\$1 == \"TCP:\" { for (i = 2; i < NF; i += 2) if (\$i == \"alloc\" || \$i == \"mem\") printf \"tcp_%s=%s\n\", \$i, \$(i + 1) }" /proc/net/sockstat
    awk "/^KernelPageSize:/ { print \"page_size=\" \$2 * 1024; exit }" /proc/self/smaps' >"$1" 2>/dev/null || true
}

# container_memory FILE [--profile P ...]: "NAME BYTES" for every running
# container of the lab (with the profiles' ones, the load generators): the
# memory its cgroup holds, page cache excluded (scripts/probes/cgroup-memory.sh), the figure
# docker stats shows. Read in ~0.2 s where docker stats --no-stream takes
# 2-3 s (it waits a second for a CPU sample), before every step.
container_memory() {
  local file="$1" id name bytes
  shift
  declare -A names=()
  while read -r id name; do names[${id}]=${name}; done < <(lab_containers "$@")
  [[ ${#names[@]} -gt 0 ]] || return 0
  {
    echo "# NAME BYTES: each container's memory, page cache excluded, from its cgroup (scripts/lib/cgroups.sh container_memory)"
    while read -r id bytes; do
      if [[ -n "${names[${id}]:-}" && "${bytes}" =~ ^[0-9]+$ ]]; then echo "${names[${id}]} ${bytes}"; fi
    done < <(cgroup_read cgroup-memory.sh "${!names[@]}")
    readings_of_other_nodes memory
  } >"${file}"
}

# cgroup_read PROGRAM ID...: the lines of PROGRAM (scripts/probes/cgroup-*.sh)
# for the running containers given. Read on this host when its
# /sys/fs/cgroup holds Docker's containers (Linux), else from the engine's own
# machine (Docker Desktop's VM) in a throwaway container that mounts its
# cgroup tree read-only.
cgroup_read() {
  local program="${LAB_ROOT}/scripts/probes/$1" out
  shift
  [[ $# -gt 0 ]] || return 0
  out=$(sh "${program}" /sys/fs/cgroup "$@" 2>/dev/null || true)
  if [[ -z "${out}" ]]; then
    out=$(docker run --rm --network none -v /sys/fs/cgroup:/host-cgroup:ro --entrypoint sh \
      "$(env_value NODE_IMAGE)" -c "$(<"${program}")" _ /host-cgroup "$@" 2>/dev/null || true)
  fi
  [[ -z "${out}" ]] || echo "${out}"
}

# cgroup_cpu ID...: "ID VALUE UNIT" per running container (scripts/probes/cgroup-cpu.sh).
cgroup_cpu() { cgroup_read cgroup-cpu.sh "$@"; }

# container_cpu FILE [--profile P ...] [SERVICE ...]: appends "AT_MS NAME
# VALUE UNIT" for every running container of the lab (with the profiles'
# ones; only SERVICE's when named): its cgroup's CPU time so far
# (cgroup_cpu), read at AT_MS. Read before and after a step and every second
# of its load (scripts/lib/step-load.sh); the engine takes the difference
# (scripts/labctl/evidence/cpu.mjs).
container_cpu() {
  local file="$1" at id value unit name
  shift
  declare -A names=()
  while read -r id name; do names[${id}]=${name}; done < <(lab_containers "$@")
  [[ ${#names[@]} -gt 0 ]] || return 0
  # The time of the cgroup read itself, not of the docker calls before it
  # (hundreds of ms under load: a rate over 2 s samples was off by 25%).
  at=$(now_ms)
  {
    while read -r id value unit; do
      if [[ -n "${names[${id}]:-}" && "${value}" =~ ^[0-9]+$ ]]; then echo "${at} ${names[${id}]} ${value} ${unit}"; fi
    done < <(cgroup_cpu "${!names[@]}")
    readings_of_other_nodes cpu
  } >>"${file}"
}

# container_allowance FILE [--profile P ...]: "NAME cores=C nano_cpus=N
# cpuset=S cfs_quota_us=Q cfs_period_us=P machine_cores=M" for every running
# container of the lab: the CPU it may use as Docker was told (docker inspect)
# and as its cgroup enforces it (read back), and the engine's cores.
# scripts/labctl/evidence/cpu.mjs takes the smallest that applies.
container_allowance() {
  local file="$1" ids=() id name nano cpuset quota period machine
  shift
  declare -A names=()
  while read -r id name; do names[${id}]=${name} ids+=("${id}"); done < <(lab_containers "$@")
  [[ ${#ids[@]} -gt 0 ]] || return 0
  machine=$(docker info -f '{{.NCPU}}' 2>/dev/null || echo 0)
  declare -A quotas=()
  while read -r id quota period; do quotas[${id}]="${quota} ${period}"; done < <(cgroup_read cgroup-quota.sh "${ids[@]}")
  {
    echo "# the CPU each container may use (scripts/lib/cgroups.sh container_allowance); read by scripts/labctl/evidence/cpu.mjs"
    while read -r id nano cpuset; do
      read -r quota period <<<"${quotas[${id}]:-- -}"
      echo "${names[${id}]} nano_cpus=${nano} cpuset=${cpuset:--} cfs_quota_us=${quota} cfs_period_us=${period} machine_cores=${machine}"
    done < <(docker inspect -f '{{.Id}} {{.HostConfig.NanoCpus}} {{.HostConfig.CpusetCpus}}' "${ids[@]}" 2>/dev/null)
    readings_of_other_nodes allowance
  } >"${file}"
}

# shellcheck shell=bash
# Image contracts: every image the lab runs provides what its official image
# provides (tests/contracts/images.json: user, entrypoint, cmd, workdir,
# volumes, stop signal, shell, tools present and absent, GNU-only options,
# writable paths), whichever env files name the images. The offline stand-ins
# are built from Debian packages: without this check a bashism or a GNU-only
# option inside a container would pass CI and break on the official images.

# _contract_plan_js: node code that turns the table into one check a line,
# fields separated by \x1f (unit separator):
#   image VAR
#   inspect VAR WHAT TEMPLATE EXPECTED       docker image inspect -f TEMPLATE
#   probe VAR SHELL USER WHAT EXPECTED SNIPPET
#                                            SNIPPET, run by SHELL in the image
#                                            as USER ("" = the image's own),
#                                            prints what it found
#   exec VAR WHAT EXPECTED ARGV...           ARGV as the entrypoint: succeeds/fails
_contract_plan_js() {
  cat <<'JS'
const fs = require('node:fs');
const [file, ...only] = process.argv.slice(1);
const table = JSON.parse(fs.readFileSync(file, 'utf8'));
const FIELDS = new Set(['official', 'source', 'config', 'shell', 'runs_as', 'other_users', 'tools_present', 'tools_absent',
  'gnu_options', 'commands_succeed', 'writable', 'not_writable', 'paths', 'exec_succeed', 'exec_fail', 'not_compared']);
const CONFIG = ['user', 'entrypoint', 'cmd', 'workdir', 'volumes', 'exposed_ports', 'stop_signal'];
const lines = [];
const emit = (...fields) => {
  for (const f of fields) {
    if (typeof f !== 'string' || /[\x1f\n]/.test(f)) throw new Error(`${file}: bad value ${JSON.stringify(f)}`);
  }
  lines.push(fields.join('\x1f'));
};
const q = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;
// The JSON docker's templates print: a list, or null; a set as {"k":{}}, or null.
const list = (a) => (a === null ? 'null' : JSON.stringify(a));
const set = (a) => (a.length === 0 ? 'null' : JSON.stringify(Object.fromEntries([...a].sort().map((k) => [k, {}]))));
const ID = 'echo "$(id -un 2>/dev/null || echo "?") $(id -u):$(id -g) home=$HOME"';
const writable = (p) => `f=${q(`${p.replace(/\/$/, '')}/.contract-check`)}.$$; if ( : >"$f" ) 2>/dev/null; then rm -f "$f"; echo writable; else echo "not writable"; fi`;
for (const name of only) if (!(name in table.images)) throw new Error(`${file} has no ${name}`);
for (const [name, c] of Object.entries(table.images)) {
  if (only.length > 0 && !only.includes(name)) continue;
  const unknown = Object.keys(c).filter((k) => !FIELDS.has(k));
  if (unknown.length > 0) throw new Error(`${file}: ${name}: unknown field(s) ${unknown.join(', ')}`);
  if (!Array.isArray(c.source) || c.source.length === 0) throw new Error(`${file}: ${name}: no source`);
  for (const k of CONFIG) if (!(k in c.config)) throw new Error(`${file}: ${name}: config.${k} missing`);
  emit('image', name);
  const cfg = c.config;
  emit('inspect', name, 'user (Config.User)', '{{.Config.User}}', cfg.user);
  emit('inspect', name, 'entrypoint', '{{json .Config.Entrypoint}}', list(cfg.entrypoint));
  emit('inspect', name, 'cmd', '{{json .Config.Cmd}}', list(cfg.cmd));
  emit('inspect', name, 'workdir', '{{.Config.WorkingDir}}', cfg.workdir);
  emit('inspect', name, 'volumes', '{{json .Config.Volumes}}', set(cfg.volumes));
  emit('inspect', name, 'exposed ports', '{{json .Config.ExposedPorts}}', set(cfg.exposed_ports));
  emit('inspect', name, 'stop signal', '{{.Config.StopSignal}}', cfg.stop_signal);
  if (c.shell === null) {
    if (c.tools_present || c.commands_succeed || c.writable) throw new Error(`${file}: ${name}: no shell to probe with`);
    for (const argv of c.exec_succeed ?? []) emit('exec', name, `run ${argv.join(' ')}`, 'succeeds', ...argv);
    for (const argv of c.exec_fail ?? []) emit('exec', name, `run ${argv.join(' ')}`, 'fails', ...argv);
    continue;
  }
  const sh = c.shell.path;
  const probe = (user, what, expected, snippet) => emit('probe', name, sh, user, what, expected, snippet);
  probe('', `shell ${sh}`, c.shell.kind,
    `if [ ! -e ${q(sh)} ]; then echo missing; elif ${q(sh)} --help 2>&1 | grep -q BusyBox; then echo busybox; else basename "$(readlink -f /proc/$$/exe)"; fi`);
  probe('', 'default user (id -un, id -u:id -g, $HOME)', c.runs_as, ID);
  for (const t of c.tools_present ?? []) {
    probe('', `tool ${t}`, 'present', `if command -v ${q(t)} >/dev/null 2>&1; then echo present; else echo absent; fi`);
  }
  for (const t of c.tools_absent ?? []) {
    probe('', `tool ${t}`, 'absent', `if p=$(command -v ${q(t)} 2>/dev/null); then echo "present at $p"; else echo absent; fi`);
  }
  for (const [cmd, expected] of Object.entries(c.gnu_options ?? {})) {
    probe('', `"${cmd}" (a GNU-only option)`, expected,
      `if ${cmd} >/dev/null 2>&1; then echo "accepted: $(${cmd} 2>&1 | head -n 1)"; else echo rejected; fi`);
  }
  for (const cmd of c.commands_succeed ?? []) {
    probe('', `command "${cmd}"`, 'succeeds', `if ( ${cmd} ) >/dev/null 2>&1; then echo succeeds; else echo "fails (exit $?)"; fi`);
  }
  for (const p of c.writable ?? []) probe('', `${p} as the default user`, 'writable', writable(p));
  for (const p of c.not_writable ?? []) probe('', `${p} as the default user`, 'not writable', writable(p));
  for (const [p, expected] of Object.entries(c.paths ?? {})) {
    const fields = expected.includes(' ') ? 'substr($1, 1, 10), $3 ":" $4' : '$3 ":" $4';
    probe('', `${p} (ls -ldn)`, expected, `if [ -e ${q(p)} ]; then ls -ldn ${q(p)} | awk '{ print ${fields} }'; else echo missing; fi`);
  }
  for (const u of c.other_users ?? []) {
    probe(u.user, `user ${u.user} (id -un, id -u:id -g, $HOME)`, u.id, ID);
    for (const p of u.writable ?? []) probe(u.user, `${p} as ${u.user}`, 'writable', writable(p));
    for (const p of u.not_writable ?? []) probe(u.user, `${p} as ${u.user}`, 'not writable', writable(p));
  }
}
console.log(lines.join('\n'));
JS
}

# _contract_mismatch VAR IMAGE WHAT EXPECTED FOUND
_contract_mismatch() {
  echo "MISMATCH ${1} (${2}) ${3}: contract says '${4}', found '${5}'"
  mismatches=$((mismatches + 1))
}

# _contract_run_probes VAR IMAGE: the probes collected in p_* for one image,
# one docker run per user, each probe's answer on a line "R<index>\x1f<found>".
_contract_run_probes() {
  local var="$1" image="$2" i u script out err found
  local -A seen=() answer=()
  local users=() user_args=()
  [[ ${#p_what[@]} -gt 0 ]] || return 0
  for i in "${!p_what[@]}"; do
    u="${p_user[i]:--}"
    [[ -n "${seen[${u}]:-}" ]] || { seen[${u}]=1; users+=("${u}"); }
  done
  for u in "${users[@]}"; do
    script=""
    for i in "${!p_what[@]}"; do
      [[ "${p_user[i]:--}" == "${u}" ]] || continue
      script+="r=\$( { ${p_snippet[i]}"$'\n'"} 2>&1 | tr '\\n' ' ' ); printf 'R%s\\037%s\\n' ${i} \"\${r% }\""$'\n'
    done
    user_args=()
    [[ "${u}" == "-" ]] || user_args=(--user "${u}")
    err=$(mktemp)
    out=$(docker run --rm --network none "${user_args[@]}" --entrypoint "${p_shell[0]}" "${image}" -c "${script}" 2>"${err}") || true
    while IFS=$'\x1f' read -r i found; do
      if [[ "${i}" == R* ]]; then answer[${i#R}]="${found}"; fi
    done <<<"${out}"
    for i in "${!p_what[@]}"; do
      if [[ "${p_user[i]:--}" == "${u}" && -z "${answer[${i}]+set}" ]]; then
        answer[${i}]="no answer: $(head -c 300 "${err}" | tr '\n' ' ')"
      fi
    done
    rm -f "${err}"
  done
  for i in "${!p_what[@]}"; do
    checks=$((checks + 1))
    [[ "${answer[${i}]}" == "${p_expected[i]}" ]] \
      || _contract_mismatch "${var}" "${image}" "${p_what[i]}" "${p_expected[i]}" "${answer[${i}]}"
  done
}

# _contract_have_image VAR IMAGE: IMAGE is here, pulled if not (as docker run
# would), or built by compose for the one image it builds (netprobe).
_contract_have_image() {
  docker image inspect "$2" >/dev/null 2>&1 && return 0
  if [[ "$1" == NETPROBE_IMAGE ]]; then
    compose --profile tools build -q netprobe >&2 || return 1
  elif [[ "$1" == H2LOAD_IMAGE ]]; then
    compose --profile bench build -q h2load >&2 || return 1
  else
    docker pull -q "$2" >/dev/null || return 1
  fi
  docker image inspect "$2" >/dev/null 2>&1
}

# _contract_end_image: run the probes gathered for the current image, then
# print its tally (contract_check's variables).
_contract_end_image() {
  [[ -n "${current}" ]] || return 0
  if [[ ${skip} -eq 0 ]]; then _contract_run_probes "${current}" "${image}"; fi
  echo "${current} (${image:-unset}): $((checks - checks_before)) checks, $((mismatches - mismatches_before)) mismatches"
  p_shell=() p_user=() p_what=() p_expected=() p_snippet=()
}

# contract_check [VAR...]: the images named by VAR... (every image in the
# table by default) against tests/contracts/images.json; one line per
# mismatch, "MISMATCH VAR (image) what: contract says '...', found '...'".
contract_check() {
  local plan line kind var image="" what tmpl expected found skip=0
  local mismatches=0 checks=0 current="" images=0 checks_before=0 mismatches_before=0
  local -a f=() p_shell=() p_user=() p_what=() p_expected=() p_snippet=()
  if ! plan=$(in_image NODE_IMAGE node -e "$(_contract_plan_js)" tests/contracts/images.json "$@"); then
    fail "could not read tests/contracts/images.json (output above)"
    return 1
  fi
  while IFS= read -r line; do
    IFS=$'\x1f' read -r -a f <<<"${line}"
    kind="${f[0]}" var="${f[1]}"
    case "${kind}" in
      image)
        _contract_end_image
        current="${var}" skip=0 images=$((images + 1)) checks_before=${checks} mismatches_before=${mismatches}
        image=$(env_value "${var}")
        if [[ -z "${image}" ]]; then
          _contract_mismatch "${var}" "unset" "image" "an image name in the env files" "nothing"
          skip=1
        elif ! _contract_have_image "${var}" "${image}"; then
          _contract_mismatch "${var}" "${image}" "image" "an image here (pull or build it)" "no such image"
          skip=1
        fi
        ;;
      inspect)
        [[ ${skip} -eq 0 ]] || continue
        what="${f[2]}" tmpl="${f[3]}" expected="${f[4]:-}"
        found=$(docker image inspect -f "${tmpl}" "${image}" 2>&1) || true
        checks=$((checks + 1))
        [[ "${found}" == "${expected}" ]] || _contract_mismatch "${var}" "${image}" "${what}" "${expected}" "${found}"
        ;;
      probe)
        [[ ${skip} -eq 0 ]] || continue
        p_shell+=("${f[2]}") p_user+=("${f[3]:-}") p_what+=("${f[4]}") p_expected+=("${f[5]}") p_snippet+=("${f[6]}")
        ;;
      exec)
        [[ ${skip} -eq 0 ]] || continue
        what="${f[2]}" expected="${f[3]}"
        if docker run --rm --network none --entrypoint "${f[4]}" "${image}" "${f[@]:5}" >/dev/null 2>&1; then
          found=succeeds
        else
          found=fails
        fi
        checks=$((checks + 1))
        [[ "${found}" == "${expected}" ]] || _contract_mismatch "${var}" "${image}" "${what}" "${expected}" "${found}"
        ;;
      *) fail "unknown plan line: ${line}"; return 1 ;;
    esac
  done <<<"${plan}"
  _contract_end_image
  echo "${images} images, ${checks} checks, ${mismatches} mismatches"
  if [[ ${mismatches} -gt 0 ]]; then
    fail "${mismatches} contract mismatches (the MISMATCH lines above)"
    return 1
  fi
}

test_static_images_match_their_official_contracts() {
  contract_check
}

# The check itself: the k6 image with bash added (from HAPROXY_IMAGE, which
# has it) must fail, and say that bash is there.
test_static_contract_check_catches_a_drifted_image() {
  local drift="haproxy-lab/contract-drift:test" out rc=0
  if ! out=$(docker build -q -t "${drift}" --build-arg "IMAGE=$(env_value K6_IMAGE)" \
    --build-arg "BASH_FROM=$(env_value HAPROXY_IMAGE)" - 2>&1 <<'DOCKERFILE'
ARG IMAGE
ARG BASH_FROM
FROM ${BASH_FROM} AS bash
FROM ${IMAGE}
COPY --from=bash /usr/bin/bash /bin/bash
DOCKERFILE
  ); then
    fail "could not build the drifted image: ${out}"
  fi
  out=$(K6_IMAGE="${drift}" contract_check K6_IMAGE 2>&1) || rc=$?
  docker image rm -f "${drift}" >/dev/null
  echo "${out}"
  assert_eq 1 "${rc}" "contract check's exit status on the drifted image"
  grep -qF "MISMATCH K6_IMAGE (${drift}) tool bash: contract says 'absent', found 'present at /bin/bash'" <<<"${out}" \
    || fail "the contract check did not name bash in the drifted image"
}

# shellcheck shell=bash
# Unit tests of scripts/images.sh, which carries the lab's images to a room
# with no registry: its errors, and a real save and load of the images here
# (the stand-ins with COMPOSE_ENV_FILES=.env,offline.env).

test_unit_images_bad_input_is_one_clear_line() {
  local dir
  dir=$(mktemp -d)
  touch "${dir}/exists.tar" "${dir}/alone.tar"
  assert_fails_with '^images: no command: scripts/images.sh list \| pull \| save FILE \| load FILE$' "${LAB_ROOT}/scripts/images.sh"
  assert_fails_with "^images: unknown command 'push': use list, pull, save FILE or load FILE$" "${LAB_ROOT}/scripts/images.sh" push
  assert_fails_with '^images: save needs one FILE: scripts/images.sh save FILE$' "${LAB_ROOT}/scripts/images.sh" save
  assert_fails_with '^images: list takes no argument' "${LAB_ROOT}/scripts/images.sh" list extra
  assert_fails_with "exists: images are never written over an existing file" "${LAB_ROOT}/scripts/images.sh" save "${dir}/exists.tar"
  assert_fails_with "no such folder" "${LAB_ROOT}/scripts/images.sh" save "${dir}/nowhere/lab.tar"
  assert_fails_with "no such file; give the FILE scripts/images.sh save wrote" "${LAB_ROOT}/scripts/images.sh" load "${dir}/none.tar"
  assert_fails_with "alone.tar.sha256 missing: copy it beside" "${LAB_ROOT}/scripts/images.sh" load "${dir}/alone.tar"
  # Offline, pull only checks the stand-ins: one missing is named, with where it comes from.
  if [[ "${COMPOSE_ENV_FILES:-}" == *offline.env* ]]; then
    assert_fails_with '^images: not built yet: haproxy-lab/nope:1: the offline stand-ins are built by scripts/offline-images.sh, never pulled$' \
      env NETPROBE_IMAGE=haproxy-lab/nope:1 "${LAB_ROOT}/scripts/images.sh" pull
  fi
  assert_eq 0 "$(stat -c %s "${dir}/exists.tar")" "the existing file, untouched"
  rm -rf "${dir}"
}

# Saves every image here, refuses a damaged copy, then removes one image's
# name and loads the archive: the name comes back on the same image.
test_unit_images_save_and_load_round_trip() {
  local dir images netprobe id listed image
  dir=$(mktemp -d)
  images=$("${LAB_ROOT}/scripts/images.sh" list)
  echo "${images}"
  "${LAB_ROOT}/scripts/images.sh" save "${dir}/lab.tar"
  assert_match '^[0-9a-f]{64}  lab\.tar$' "$(cat "${dir}/lab.tar.sha256")" "lab.tar.sha256"
  # docker save's manifest.json names each image it holds.
  listed=$(tar -xOf "${dir}/lab.tar" manifest.json)
  while read -r image; do
    [[ "${listed}" == *"\"${image}\""* ]] || fail "lab.tar's manifest.json: expected ${image}, found ${listed:0:300}"
  done < <(awk '$1 == "present" { print $2 }' <<<"${images}")
  cp "${dir}/lab.tar" "${dir}/damaged.tar" && cp "${dir}/lab.tar.sha256" "${dir}/damaged.tar.sha256"
  printf 'x' | dd of="${dir}/damaged.tar" bs=1 seek=4096 conv=notrunc status=none
  assert_fails_with 'damaged.tar is damaged \(sha256 [0-9a-f]+, .* says [0-9a-f]+\): copy it again; nothing was loaded' \
    "${LAB_ROOT}/scripts/images.sh" load "${dir}/damaged.tar"
  netprobe=$(env_value NETPROBE_IMAGE)
  id=$(docker image inspect --format '{{.Id}}' "${netprobe}")
  docker image rm -f "${netprobe}" >/dev/null
  "${LAB_ROOT}/scripts/images.sh" load "${dir}/lab.tar"
  assert_eq "${id}" "$(docker image inspect --format '{{.Id}}' "${netprobe}" 2>&1)" "${netprobe} after load"
  rm -rf "${dir}"
}

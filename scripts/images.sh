#!/usr/bin/env bash
# Usage: scripts/images.sh list | pull | save FILE | load FILE
#
# The lab's images, carried to a room with no registry (a workshop's Wi-Fi):
# pull them once where a registry answers, save them to a USB stick, load
# them on each laptop. The images are every one compose.yaml names, in every
# profile, as the env files resolve them (.env, or COMPOSE_ENV_FILES=.env,offline.env
# for the stand-ins scripts/offline-images.sh builds).
#   list       each image, present here or missing
#   pull       pulls the registry's images and builds the lab's own (the
#              services compose.yaml builds); offline, says what scripts/offline-images.sh builds
#   save FILE  every image into FILE (one docker save archive) and its
#              checksum into FILE.sha256; refuses a FILE that exists and an
#              image that is missing (offline, Grafana: it has no stand-in)
#   load FILE  checks FILE against FILE.sha256 (copy both), then loads it and
#              lists the images present
# Exit: 0 done, 1 bad input or an image missing (one line on stderr).
set -euo pipefail

# shellcheck disable=SC2034 # read by die/log in scripts/lib/common.sh
PROG="images"
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

partial=""

usage() { sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}"; }

# shellcheck disable=SC2329 # run by the EXIT trap
cleanup() { [[ -z "${partial}" ]] || rm -f "${partial}"; }

# lab_images: every image compose.yaml uses, in every profile, once each.
lab_images() {
  local images
  images=$(compose --profile '*' config --images 2>&1) || die "docker compose config failed: $(head -n 1 <<<"${images}"); run 'docker compose config' and fix what it says"
  sort -u <<<"${images}"
}

# no_stand_in IMAGE: Grafana with offline.env, which has no stand-in for it:
# scripts/up.sh starts the lab without it.
no_stand_in() { [[ "${COMPOSE_ENV_FILES:-}" == *offline.env* && "$1" == "$(env_value GRAFANA_IMAGE)" ]]; }


# sha256 FILE: FILE's checksum line ("HASH  NAME"), with coreutils or macOS's shasum.
sha256() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1"; else shasum -a 256 "$1"; fi
}

cmd_list() {
  local image
  while read -r image; do
    if present "${image}"; then echo "present  ${image}"
    elif no_stand_in "${image}"; then echo "missing  ${image} (offline.env has no stand-in: the lab starts without it)"
    else echo "missing  ${image}"; fi
  done < <(lab_images)
}

# cmd_pull: online, compose pulls what it does not build, then builds the
# rest (the services with a build: in compose.yaml); offline the stand-ins come from
# scripts/offline-images.sh, never from a registry: only checked.
cmd_pull() {
  local missing
  if [[ "${COMPOSE_ENV_FILES:-}" == *offline.env* ]]; then
    # cmd_list's "missing IMAGE" lines; Grafana's has a note after it.
    missing=$(cmd_list | awk '$1 == "missing" && NF == 2 { print $2 }' | paste -sd' ' -)
    [[ -z "${missing}" ]] || die "not built yet: ${missing}: the offline stand-ins are built by scripts/offline-images.sh, never pulled"
    log "every stand-in is present (offline.env has no Grafana: the lab starts without it)"
    return 0
  fi
  log "pulling every image compose.yaml uses (docker compose pull), then building the lab's own (docker compose build)"
  compose --profile '*' pull --ignore-buildable \
    || die "docker compose pull failed (above): with no registry, load the images from a file: scripts/images.sh load FILE"
  compose --profile '*' build || die "docker compose build failed (above)"
  log "every image present: scripts/images.sh save FILE carries them"
}

cmd_save() {
  local file="$1" images=() missing=() image bytes=0 size
  [[ ! -e "${file}" ]] || die "${file} exists: images are never written over an existing file; give a new name"
  [[ -d "$(dirname "${file}")" ]] || die "$(dirname "${file}"): no such folder; create it or give another FILE"
  while read -r image; do
    if no_stand_in "${image}"; then
      log "left out ${image}: offline.env has no Grafana stand-in"
    elif present "${image}"; then
      images+=("${image}")
      size=$(docker image inspect --format '{{.Size}}' "${image}")
      bytes=$((bytes + size))
    else
      missing+=("${image}")
    fi
  done < <(lab_images)
  ((${#missing[@]} == 0)) || die "not here: ${missing[*]}; run scripts/images.sh pull first"
  log "saving ${#images[@]} images ($((bytes / 1048576)) MiB as docker lists them; layers they share are saved once) to ${file}"
  partial="${file}.partial"
  docker save -o "${partial}" "${images[@]}"
  mv "${partial}" "${file}"
  partial=""
  (cd "$(dirname "${file}")" && sha256 "$(basename "${file}")") >"${file}.sha256"
  log "saved ${file} ($(($(wc -c <"${file}") / 1048576)) MiB) and ${file}.sha256; on each laptop: scripts/images.sh load ${file}"
}

cmd_load() {
  local file="$1" want got missing
  [[ -f "${file}" ]] || die "${file}: no such file; give the FILE scripts/images.sh save wrote"
  [[ -f "${file}.sha256" ]] || die "${file}.sha256 missing: copy it beside ${file} (scripts/images.sh save writes both)"
  want=$(awk '{ print $1; exit }' "${file}.sha256")
  log "checking ${file} against ${file}.sha256"
  got=$(sha256 "${file}" | awk '{ print $1 }')
  [[ "${got}" == "${want}" ]] || die "${file} is damaged (sha256 ${got}, ${file}.sha256 says ${want}): copy it again; nothing was loaded"
  log "loading ${file}"
  docker load -q -i "${file}"
  missing=$(cmd_list | awk '$1 == "missing" { print $2 }' | while read -r image; do no_stand_in "${image}" || echo "${image}"; done | paste -sd' ' -)
  [[ -z "${missing}" ]] || die "still missing after loading ${file}: ${missing} (saved with other env files? COMPOSE_ENV_FILES is '${COMPOSE_ENV_FILES:-.env}')"
  log "every image the lab uses is present"
}

main() {
  local command="${1:-}"
  case "${command}" in
    -h|--help|help) usage; return 0 ;;
    list|pull) [[ $# -eq 1 ]] || die "${command} takes no argument: scripts/images.sh ${command}" ;;
    save|load) [[ $# -eq 2 && -n "$2" ]] || die "${command} needs one FILE: scripts/images.sh ${command} FILE" ;;
    "") die "no command: scripts/images.sh list | pull | save FILE | load FILE" ;;
    *) die "unknown command '${command}': use list, pull, save FILE or load FILE" ;;
  esac
  require_docker
  trap cleanup EXIT
  "cmd_${command}" "${@:2}"
}

main "$@"

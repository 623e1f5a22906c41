#!/bin/bash
# Usage (in a Debian build stage): rootfs.sh COMMAND ARGS... [-- COMMAND ARGS...]...
#
# Builds /rootfs, the whole file system of a stand-in image, for a final stage
#   FROM scratch
#   COPY --from=rootfs /rootfs /
# so that the image holds what the official one holds and nothing of Debian's
# userland (no bash, no GNU coreutils, no apt).
#
#   skeleton              /bin /sbin /usr/bin ... /etc, /root (700), /tmp (1777)
#   busybox               Debian's busybox-static as /bin/busybox, every applet
#                         a symlink to it at its usual path (busybox --install -s),
#                         /bin/sh among them: the userland of Alpine and busybox images
#   copy SRC[=DEST]...    a program (at DEST, by default its own path) with the
#                         shared libraries ldd lists and the dynamic loader
#   tree PATH...          files or directories as they are (data, JS modules)
#   etc alpine|busybox    /etc/passwd and /etc/group of Alpine (alpine-baselayout)
#                         or of the busybox image (buildroot's skeleton), with
#                         /etc/nsswitch.conf, the CA bundle, /etc/services
#   user NAME UID GID HOME [GECOS]
#                         a user and its group, as busybox "adduser -D" makes
#                         them: shell /bin/sh, HOME created, owned UID:GID, mode 755
#   fix-links             copy the targets of symlinks that point outside /rootfs
set -euo pipefail

readonly R=/rootfs

die() { echo "rootfs.sh: $*" >&2; exit 1; }

skeleton() {
  local d
  for d in bin sbin usr/bin usr/sbin usr/local/bin usr/lib lib lib64 etc home var run mnt opt; do
    mkdir -p "${R}/${d}"
  done
  install -d -m 700 "${R}/root"
  install -d -m 1777 "${R}/tmp" "${R}/var/tmp"
}

busybox_userland() {
  # busybox-static: no libraries needed, so it also works where nothing else is.
  local bb
  bb=$(command -v busybox) || die "busybox not found: install busybox-static in the build stage"
  if ldd "${bb}" >/dev/null 2>&1; then die "${bb} is dynamically linked: install busybox-static, not busybox"; fi
  install -m 755 "${bb}" "${R}/bin/busybox"
  # In the chroot /proc is absent, so busybox links to argv[0], /bin/busybox.
  chroot "${R}" /bin/busybox --install -s
  # Debian's build adds package-manager applets no Alpine or busybox image has.
  rm -f "${R}/usr/bin/dpkg" "${R}/usr/bin/dpkg-deb" "${R}/usr/bin/rpm" "${R}/usr/bin/rpm2cpio"
  [[ "$(readlink "${R}/bin/sh")" == /bin/busybox ]] || die "/bin/sh is not busybox after --install -s"
  # It also leaves out printenv, an applet of Alpine's and the busybox image's
  # builds that the lab runs in containers (printenv NAME...): the same, in awk.
  if [[ ! -e "${R}/usr/bin/printenv" ]]; then
    cat >"${R}/usr/bin/printenv" <<'SH'
#!/bin/sh
# printenv [NAME]...: busybox's printenv applet (Debian's busybox build has none).
[ $# -eq 0 ] && exec env
exec awk 'BEGIN {
  for (i = 1; i < ARGC; i++) if (ARGV[i] in ENVIRON) print ENVIRON[ARGV[i]]; else missing = 1
  exit missing
}' "$@"
SH
    chmod 755 "${R}/usr/bin/printenv"
  fi
}

# libs FILE: the shared libraries and the loader FILE needs, into /rootfs.
libs() {
  local out lib
  if ! out=$(ldd "$1" 2>&1); then
    # Static programs (Go with CGO off): nothing to copy.
    grep -qE 'not a dynamic executable|statically linked' <<<"${out}" && return 0
    die "ldd $1: ${out}"
  fi
  grep -q 'not found' <<<"${out}" && die "ldd $1: a library is missing: ${out}"
  while read -r lib; do
    [[ -e "${R}${lib}" ]] && continue
    mkdir -p "${R}$(dirname "${lib}")"
    cp -L "${lib}" "${R}${lib}"
  done < <(awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' <<<"${out}")
}

copy() {
  local spec src dest
  for spec in "$@"; do
    src="${spec%%=*}"
    dest="${spec#*=}"
    [[ -e "${src}" ]] || die "copy: ${src} not found"
    mkdir -p "${R}$(dirname "${dest}")"
    # Never write through a busybox applet's link (it points at /bin/busybox).
    rm -f "${R}${dest}"
    cp -L "${src}" "${R}${dest}"
    chmod 755 "${R}${dest}"
    libs "${src}"
  done
}

tree() {
  local path
  for path in "$@"; do
    [[ -e "${path}" || -L "${path}" ]] || die "tree: ${path} not found"
    # Already there (a link or file copied with its folder): keep it.
    [[ -L "${R}${path}" || -f "${R}${path}" ]] && continue
    cp -a --parents "${path}" "${R}/"
  done
}

# fix-links: a symlink copied into /rootfs may point at a file that was not
# copied (Debian's JS modules link into /usr/share/javascript...): copy it.
fix_links() {
  local changed=1 link target abs
  while [[ ${changed} -eq 1 ]]; do
    changed=0
    while IFS= read -r -d '' link; do
      target=$(readlink "${link}")
      case "${target}" in
        /*) abs="${target}" ;;
        *) abs="$(dirname "${link#"${R}"}")/${target}" ;;
      esac
      if [[ ! -e "${R}${abs}" && ! -L "${R}${abs}" ]]; then
        # Resolve the link's directory as Debian has it, then copy the target.
        abs=$(cd "$(dirname "${link#"${R}"}")" && realpath -m "${target}")
        if [[ -e "${abs}" && ! -e "${R}${abs}" ]]; then
          cp -a --parents "${abs}" "${R}/"
          changed=1
        fi
      fi
    done < <(find "${R}" -type l -print0)
  done
}

etc_files() {
  case "$1" in
    alpine)
      # alpine-baselayout's passwd and group, the entries the images use.
      printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' \
        'nobody:x:65534:65534:nobody:/:/sbin/nologin' >"${R}/etc/passwd"
      printf '%s\n' 'root:x:0:root' 'nogroup:x:65533:' 'nobody:x:65534:' >"${R}/etc/group"
      ;;
    busybox)
      # buildroot's system/skeleton (the busybox image's /etc), and /home
      # owned by nobody, as the busybox image's builder creates home folders.
      printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' \
        'nobody:x:65534:65534:nobody:/home:/bin/false' >"${R}/etc/passwd"
      printf '%s\n' 'root:x:0:' 'nobody:x:65534:' >"${R}/etc/group"
      chown 65534:65534 "${R}/home"
      ;;
    *) die "etc: alpine or busybox, not '$1'" ;;
  esac
  chmod 644 "${R}/etc/passwd" "${R}/etc/group"
  # glibc programs read this (musl and busybox-static ignore what they lack).
  printf '%s\n' 'passwd: files' 'group: files' 'shadow: files' 'hosts: files dns' \
    'networks: files' 'protocols: files' 'services: files' >"${R}/etc/nsswitch.conf"
  mkdir -p "${R}/etc/ssl/certs"
  cp -L /etc/ssl/certs/ca-certificates.crt "${R}/etc/ssl/certs/ca-certificates.crt"
  if [[ -e /etc/services ]]; then cp -L /etc/services /etc/protocols "${R}/etc/"; fi
}

user() {
  local name="$1" uid="$2" gid="$3" home="$4" gecos="${5:-Linux User,,,}"
  grep -q "^${name}:" "${R}/etc/group" || echo "${name}:x:${gid}:${name}" >>"${R}/etc/group"
  echo "${name}:x:${uid}:${gid}:${gecos}:${home}:/bin/sh" >>"${R}/etc/passwd"
  install -d -m 755 -o "${uid}" -g "${gid}" "${R}${home}"
}

main() {
  local cmd args
  [[ -d "${R}" ]] || mkdir -p "${R}"
  while [[ $# -gt 0 ]]; do
    cmd="$1"
    shift
    args=()
    while [[ $# -gt 0 && "$1" != "--" ]]; do args+=("$1"); shift; done
    [[ $# -gt 0 ]] && shift
    case "${cmd}" in
      skeleton) skeleton ;;
      busybox) busybox_userland ;;
      copy) copy "${args[@]}" ;;
      tree) tree "${args[@]}" ;;
      fix-links) fix_links ;;
      etc) etc_files "${args[@]}" ;;
      user) user "${args[@]}" ;;
      *) die "unknown command '${cmd}'" ;;
    esac
  done
}

main "$@"

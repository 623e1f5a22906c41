# Stand-in for koalaman/shellcheck (koalaman/shellcheck, Dockerfile.multi-arch):
# FROM scratch with /bin/shellcheck alone: no shell, no other tool, root,
# WORKDIR /mnt, ENTRYPOINT ["/bin/shellcheck"]. Debian's shellcheck is linked
# dynamically (GHC's runtime: libgmp, libffi, libnuma, glibc): those libraries
# and the dynamic loader come along; the official binary is static.
ARG BASE_IMAGE
FROM ${BASE_IMAGE} AS rootfs
ARG VERSION
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends "shellcheck=${VERSION}.*" \
 && rm -rf /var/lib/apt/lists/*
COPY rootfs.sh /usr/local/lib/offline/
RUN /usr/local/lib/offline/rootfs.sh copy /usr/bin/shellcheck=/bin/shellcheck

FROM scratch
COPY --from=rootfs /rootfs /
WORKDIR /mnt
ENTRYPOINT ["/bin/shellcheck"]

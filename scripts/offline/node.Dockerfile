# Stand-in for the official node:<major>-alpine image (nodejs/docker-node,
# 24/alpine3.*/Dockerfile): a busybox userland (busybox-static, /bin/sh =
# busybox ash), node, npm, npx and corepack from Debian's packages with only
# the libraries and JS modules they load, root by default, a "node" user
# 1000:1000 with home /home/node, ENTRYPOINT docker-entrypoint.sh, CMD node.
# What cannot match: glibc here, musl there.
ARG BASE_IMAGE
FROM ${BASE_IMAGE} AS rootfs
ARG VERSION
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends busybox-static "nodejs=${VERSION}.*" npm node-corepack \
 && rm -rf /var/lib/apt/lists/*
COPY rootfs.sh node-modules.cjs node-entrypoint.sh /usr/local/lib/offline/
# Debian's node loads some of its own builtins (undici for fetch, acorn,
# minimatch...) from /usr/share/nodejs; npm and corepack are node scripts
# ("#!/usr/bin/env node") whose modules live there too: node-modules.cjs lists
# the packages these need, out of the hundreds Debian's npm package pulls in.
RUN set -eu; \
    cd /usr/local/lib/offline; \
    ./rootfs.sh skeleton -- busybox -- etc alpine -- user node 1000 1000 /home/node \
      -- copy /usr/bin/node \
      -- tree /usr/bin/nodejs /usr/bin/npm /usr/bin/npx /usr/bin/corepack /usr/share/node_modules; \
    node node-modules.cjs /usr/lib/x86_64-linux-gnu/libnode.so.* /usr/share/nodejs/npm /usr/share/nodejs/corepack \
      >modules.txt; \
    xargs ./rootfs.sh tree <modules.txt; \
    ./rootfs.sh fix-links; \
    for tool in node nodejs npm npx corepack; do ln -s "/usr/bin/${tool}" "/rootfs/usr/local/bin/${tool}"; done; \
    install -m 755 node-entrypoint.sh /rootfs/usr/local/bin/docker-entrypoint.sh; \
    # OpenSSL's default folder, as Debian lays it out (CA bundle, config).
    mkdir -p /rootfs/usr/lib/ssl; \
    ln -s /etc/ssl/certs /rootfs/usr/lib/ssl/certs; \
    ln -s /etc/ssl/certs/ca-certificates.crt /rootfs/usr/lib/ssl/cert.pem

FROM scratch
COPY --from=rootfs /rootfs /
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["node"]

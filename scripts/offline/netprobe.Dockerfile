# Stand-in for the lab's netprobe image (netprobe/Dockerfile: node:alpine plus
# Alpine's iproute2-ss, ENTRYPOINT ["ss"], CMD ["-ltn"]): the same shape, an
# Alpine-like busybox userland (busybox-static, /bin/sh = busybox ash) and
# /usr/bin/ss from Debian's iproute2 with its libraries. (The official one
# also has node from its base image; netprobe never runs it.)
ARG BASE_IMAGE
FROM ${BASE_IMAGE} AS rootfs
ARG VERSION
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends busybox-static iproute2 \
 && rm -rf /var/lib/apt/lists/*
COPY rootfs.sh /usr/local/lib/offline/
RUN /usr/local/lib/offline/rootfs.sh skeleton -- busybox -- etc alpine -- copy /usr/bin/ss

FROM scratch
COPY --from=rootfs /rootfs /
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
ENTRYPOINT ["ss"]
CMD ["-ltn"]

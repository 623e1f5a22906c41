# Stand-in for the lab's h2load image (loadgen/h2load/Dockerfile: Alpine's
# nghttp2 and wrk packages on the lab's node:alpine image): Debian's h2load
# (nghttp2-client) and wrk with the libraries they load, on the node
# stand-in (its node runs the wrapper, loadgen/h2load/run.mjs), whose own
# libraries stay as they are: only those it lacks are added.
ARG BASE_IMAGE
ARG NODE_IMAGE
FROM ${NODE_IMAGE} AS node
RUN find / -xdev ! -type d >/node-files.txt

FROM ${BASE_IMAGE} AS rootfs
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends nghttp2-client wrk \
 && rm -rf /var/lib/apt/lists/*
COPY rootfs.sh /usr/local/lib/offline/
COPY --from=node /node-files.txt /tmp/node-files.txt
RUN /usr/local/lib/offline/rootfs.sh copy /usr/bin/h2load /usr/bin/wrk \
 && while read -r file; do rm -f "/rootfs${file}"; done </tmp/node-files.txt

FROM ${NODE_IMAGE}
COPY --from=rootfs /rootfs /
CMD ["node", "/loadgen/h2load/run.mjs"]

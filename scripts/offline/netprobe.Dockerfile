# Stand-in for the lab's netprobe image (netprobe/Dockerfile: node:alpine plus
# Alpine's iproute2-ss), from Debian's iproute2.
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
ARG VERSION
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends iproute2 \
 && rm -rf /var/lib/apt/lists/*
ENTRYPOINT ["ss"]
CMD ["-ltn"]

# Stand-in for the official docker image's dind variant (docker-library/docker
# 28/dind/Dockerfile): a Docker engine in a container, for the practice Swarm
# scripts/swarm.sh makes on one machine (nodes of a Swarm). Same entrypoint
# name and contract: no arguments, or only flags, starts dockerd; with
# DOCKER_TLS_CERTDIR empty it listens on tcp://0.0.0.0:2375 without TLS (the
# practice nodes' network is the host's own bridge); /var/lib/docker is a
# volume. The engine is Debian's docker.io package, the same 28 line.
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
ARG VERSION
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends "docker.io=${VERSION}.*" docker-cli iptables iproute2 ca-certificates procps \
 && rm -rf /var/lib/apt/lists/* \
 && dockerd --version && docker --version
COPY dind-entrypoint.sh /usr/local/bin/dockerd-entrypoint.sh
VOLUME /var/lib/docker
EXPOSE 2375 2376
ENTRYPOINT ["dockerd-entrypoint.sh"]
CMD []

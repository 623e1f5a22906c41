#!/bin/sh
# The official dind entrypoint's contract, for the practice nodes only: no
# arguments, or flags only, start dockerd on its unix socket and, with
# DOCKER_TLS_CERTDIR empty (the only mode the stand-in has), on tcp 2375
# without TLS (scripts/swarm.sh adds --tls=false, as the official image needs
# too). A command that is not a flag runs as it is.
set -e
if [ -n "${DOCKER_TLS_CERTDIR:-}" ]; then
	echo "dockerd-entrypoint: this stand-in has no TLS: run it with DOCKER_TLS_CERTDIR= (empty)" >&2
	exit 1
fi
if [ "$#" -eq 0 ] || [ "${1#-}" != "$1" ]; then
	set -- dockerd --host=unix:///var/run/docker.sock --host=tcp://0.0.0.0:2375 "$@"
fi
exec "$@"

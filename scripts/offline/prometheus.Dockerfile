# Stand-in for prom/prometheus: same entrypoint, paths and user. wget is there
# because the official (busybox) image has it and the healthcheck uses it.
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
ARG VERSION
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends "prometheus=${VERSION}.*" wget \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /prometheus && chown nobody:nogroup /prometheus
USER nobody
WORKDIR /prometheus
EXPOSE 9090
ENTRYPOINT ["/bin/prometheus"]
CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"]

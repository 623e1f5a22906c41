# Stand-in for prom/haproxy-exporter, from Debian's package.
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
ARG VERSION
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends "prometheus-haproxy-exporter=${VERSION}.*" wget \
 && rm -rf /var/lib/apt/lists/* \
 && ln -s /usr/bin/prometheus-haproxy-exporter /usr/local/bin/haproxy_exporter
USER nobody
EXPOSE 9101
ENTRYPOINT ["haproxy_exporter"]

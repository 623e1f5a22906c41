# Stand-in for the official haproxy image (Debian variant): same user, paths,
# entrypoint and stop signal, built from Debian's package.
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
ARG VERSION
ARG DEBIAN_FRONTEND=noninteractive
# The package creates the haproxy user and /var/lib/haproxy, as in the official image.
RUN apt-get update \
 && apt-get install -y --no-install-recommends "haproxy=${VERSION}.*" \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /usr/local/etc/haproxy /var/lib/haproxy \
 && chown haproxy:haproxy /var/lib/haproxy
COPY haproxy-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
STOPSIGNAL SIGUSR1
ENTRYPOINT ["docker-entrypoint.sh"]
USER haproxy
WORKDIR /var/lib/haproxy
CMD ["haproxy", "-f", "/usr/local/etc/haproxy/haproxy.cfg"]

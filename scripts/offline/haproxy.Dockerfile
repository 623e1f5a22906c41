# Stand-in for the official haproxy image (Debian variant, docker-library/haproxy
# 3.2/Dockerfile): same user (haproxy 99:99), paths, tools (bash, socat),
# entrypoint, workdir and stop signal, and the same allocator.
# The official image compiles the upstream source; this machine's package
# mirror serves no source packages (apt-get source: 404), so the binary is
# Debian's package. Debian links it with jemalloc (forky's; bookworm's 2.6 not),
# the official build uses glibc's malloc: libjemalloc.so.2 is replaced by an
# empty library of the same name, so every malloc resolves to glibc's (checked
# below with LD_DEBUG).
ARG BASE_IMAGE
FROM ${BASE_IMAGE} AS shim
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev \
 && printf '/* no symbols: malloc and free stay glibc'"'"'s */\n' \
    | gcc -shared -fPIC -x c - -Wl,-soname,libjemalloc.so.2 -o /libjemalloc.so.2

FROM ${BASE_IMAGE}
ARG VERSION
ARG DEBIAN_FRONTEND=noninteractive
COPY --from=shim /libjemalloc.so.2 /tmp/libjemalloc.so.2
RUN apt-get update \
 && apt-get install -y --no-install-recommends "haproxy=${VERSION}.*" ca-certificates socat \
 && rm -rf /var/lib/apt/lists/* \
 && jemalloc=$(ldd /usr/sbin/haproxy | awk '/libjemalloc/ { print $3 }') \
 && { [ -z "${jemalloc}" ] || mv /tmp/libjemalloc.so.2 "${jemalloc}"; } \
 && LD_DEBUG=bindings haproxy -v 2>&1 | grep -q "to [^ ]*/libc\.so\.6 .*normal symbol .malloc'" \
 && ! LD_DEBUG=bindings haproxy -v 2>&1 | grep -q "to [^ ]*/libjemalloc[^ ]* .*normal symbol .malloc'" \
 && groupmod --gid 99 haproxy && usermod --uid 99 --gid 99 haproxy \
 && mkdir -p /usr/local/etc/haproxy /usr/local/sbin /var/lib/haproxy \
 && chown haproxy:haproxy /var/lib/haproxy \
 && ln -s /usr/sbin/haproxy /usr/local/sbin/haproxy
COPY haproxy-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
STOPSIGNAL SIGUSR1
ENTRYPOINT ["docker-entrypoint.sh"]
USER haproxy
WORKDIR /var/lib/haproxy
CMD ["haproxy", "-f", "/usr/local/etc/haproxy/haproxy.cfg"]

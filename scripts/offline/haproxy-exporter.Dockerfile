# Stand-in for prom/haproxy-exporter (prometheus/haproxy_exporter, Dockerfile):
# the busybox image's userland (as in prometheus.Dockerfile) with Debian's
# exporter as /bin/haproxy_exporter, USER nobody, EXPOSE 9101.
ARG BASE_IMAGE
FROM ${BASE_IMAGE} AS rootfs
ARG VERSION
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends busybox-static netbase tzdata \
      "prometheus-haproxy-exporter=${VERSION}.*" \
 && rm -rf /var/lib/apt/lists/*
COPY rootfs.sh /usr/local/lib/offline/
RUN /usr/local/lib/offline/rootfs.sh skeleton -- busybox -- etc busybox \
      -- copy /usr/bin/prometheus-haproxy-exporter=/bin/haproxy_exporter \
      -- tree /usr/share/zoneinfo -- fix-links

FROM scratch
COPY --from=rootfs /rootfs /
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
EXPOSE 9101
USER nobody
ENTRYPOINT ["/bin/haproxy_exporter"]

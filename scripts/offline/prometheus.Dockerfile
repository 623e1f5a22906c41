# Stand-in for prom/prometheus (prometheus/prometheus, Dockerfile): the
# busybox image's userland (quay.io/prometheus/busybox: busybox, CA bundle,
# nsswitch.conf, /etc/services, zoneinfo; root and nobody 65534:65534) with
# Debian's prometheus and promtool as /bin/prometheus and /bin/promtool,
# /etc/prometheus/prometheus.yml, /etc/prometheus and /prometheus owned by
# nobody (g+w on /prometheus), USER nobody, WORKDIR and VOLUME /prometheus.
ARG BASE_IMAGE
FROM ${BASE_IMAGE} AS rootfs
ARG VERSION
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends busybox-static netbase tzdata "prometheus=${VERSION}.*" \
 && rm -rf /var/lib/apt/lists/*
COPY rootfs.sh /usr/local/lib/offline/
# Debian's prometheus serves its web assets from /usr/share/prometheus/web
# (--web.local-assets); the official binary embeds them.
RUN set -eu; \
    /usr/local/lib/offline/rootfs.sh skeleton -- busybox -- etc busybox \
      -- copy /usr/bin/prometheus=/bin/prometheus /usr/bin/promtool=/bin/promtool \
      -- tree /usr/share/prometheus/web /usr/share/zoneinfo -- fix-links; \
    mkdir -p /rootfs/etc/prometheus /rootfs/prometheus; \
    cp /etc/prometheus/prometheus.yml /rootfs/etc/prometheus/; \
    chown -R 65534:65534 /rootfs/etc/prometheus /rootfs/prometheus; \
    chmod g+w /rootfs/prometheus

FROM scratch
COPY --from=rootfs /rootfs /
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
WORKDIR /prometheus
USER nobody
EXPOSE 9090
VOLUME ["/prometheus"]
ENTRYPOINT ["/bin/prometheus"]
CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"]

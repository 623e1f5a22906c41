# Stand-in for grafana/k6, compiled from its Go module (no registry image needed).
ARG BASE_IMAGE
FROM ${BASE_IMAGE} AS build
ARG VERSION
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends golang-go git ca-certificates \
 && rm -rf /var/lib/apt/lists/*
# The machine's own CA bundle, so a TLS-inspecting proxy in front of the Go
# module proxy is trusted during the build only; it is not in the final image.
COPY build-ca.crt /tmp/build-ca.crt
ENV SSL_CERT_FILE=/tmp/build-ca.crt GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false
RUN go install -trimpath -ldflags='-s -w' "go.k6.io/k6@v${VERSION}" \
 && cp /root/go/bin/k6 /usr/local/bin/k6

# The official image (grafana/k6, Dockerfile): Alpine with the k6 binary, user
# k6 (uid and gid 12345, home /home/k6, "adduser -D -u 12345 -g 12345 k6"),
# USER 12345, WORKDIR /home/k6, ENTRYPOINT ["k6"]. Here: a busybox userland
# (busybox-static, /bin/sh = busybox ash: loadgen/run.sh uses busybox
# nslookup, hostname -i, cut, grep -o, awk) and k6 (static Go), nothing else.
FROM ${BASE_IMAGE} AS rootfs
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends busybox-static \
 && rm -rf /var/lib/apt/lists/*
COPY rootfs.sh /usr/local/lib/offline/
COPY --from=build /usr/local/bin/k6 /usr/bin/k6
RUN /usr/local/lib/offline/rootfs.sh skeleton -- busybox -- etc alpine \
      -- user k6 12345 12345 /home/k6 12345 -- copy /usr/bin/k6

FROM scratch
COPY --from=rootfs /rootfs /
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
USER 12345
WORKDIR /home/k6
ENTRYPOINT ["k6"]

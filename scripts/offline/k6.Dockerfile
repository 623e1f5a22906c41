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

FROM ${BASE_IMAGE}
COPY --from=build /usr/local/bin/k6 /usr/bin/k6
# busybox: the official image is Alpine, whose busybox nslookup the loadgen
# entrypoint uses to find its replica number.
RUN apt-get update \
 && apt-get install -y --no-install-recommends busybox \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 12345 k6 && useradd --uid 12345 --gid k6 --create-home --home-dir /home/k6 k6
USER k6
WORKDIR /home/k6
ENTRYPOINT ["k6"]

# Stand-in for the lab's vegeta image (loadgen/vegeta/Dockerfile: vegeta
# compiled from its Go module in golang:alpine, on the lab's node:alpine
# image): vegeta compiled from the same module with Debian's Go, on the node
# stand-in (its node runs the wrapper, loadgen/vegeta/attack.mjs).
ARG BASE_IMAGE
ARG NODE_IMAGE
FROM ${BASE_IMAGE} AS build
ARG VEGETA_VERSION
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends golang-go git ca-certificates \
 && rm -rf /var/lib/apt/lists/*
# The machine's own CA bundle, trusted during the build only (as k6.Dockerfile).
COPY build-ca.crt /tmp/build-ca.crt
ENV SSL_CERT_FILE=/tmp/build-ca.crt GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false
RUN go install -trimpath -ldflags='-s -w' "github.com/tsenart/vegeta/v12@v${VEGETA_VERSION}" \
 && cp /root/go/bin/vegeta /usr/local/bin/vegeta

FROM ${NODE_IMAGE}
ARG VEGETA_VERSION
ENV VEGETA_VERSION=${VEGETA_VERSION}
COPY --from=build /usr/local/bin/vegeta /usr/local/bin/vegeta
CMD ["node", "/loadgen/vegeta/attack.mjs"]

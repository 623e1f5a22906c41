# Stand-in for rhysd/actionlint, compiled from its Go module (no registry image needed).
# The same contract as the official image (its Dockerfile): actionlint at
# /usr/local/bin/actionlint as the entrypoint, shellcheck and pyflakes on PATH
# (actionlint runs them on `run:` scripts; here Debian's shellcheck and
# pyflakes3 where the official image has koalaman/shellcheck-alpine's and
# Alpine's py3-pyflakes), user "guest", no WORKDIR (mount a repository, -w it).
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
# -X ...version: `actionlint -version` prints "1.7.12" as the official image
# does (it is built with ACTIONLINT_VER=<tag without v>).
RUN go install -trimpath \
      -ldflags="-s -w -X github.com/rhysd/actionlint.version=${VERSION}" \
      "github.com/rhysd/actionlint/cmd/actionlint@v${VERSION}" \
 && cp /root/go/bin/actionlint /usr/local/bin/actionlint

FROM ${BASE_IMAGE}
ARG DEBIAN_FRONTEND=noninteractive
COPY --from=build /usr/local/bin/actionlint /usr/local/bin/actionlint
# actionlint looks for "pyflakes"; Debian's package may name it pyflakes3 only.
# guest: Alpine's (uid 405, group users), the official image's user.
RUN apt-get update \
 && apt-get install -y --no-install-recommends shellcheck pyflakes3 \
 && rm -rf /var/lib/apt/lists/* \
 && { command -v pyflakes >/dev/null || ln -s pyflakes3 /usr/bin/pyflakes; } \
 && useradd --system --uid 405 --gid users --no-create-home --home-dir /dev/null --shell /usr/sbin/nologin guest
USER guest
ENTRYPOINT ["/usr/local/bin/actionlint"]

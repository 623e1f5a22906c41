# Stand-in for koalaman/shellcheck, from Debian's package.
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
ARG VERSION
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends "shellcheck=${VERSION}.*" \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /mnt
ENTRYPOINT ["/bin/shellcheck"]

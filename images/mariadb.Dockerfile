# The database image: Debian's MariaDB, in the same Debian base image the
# build image starts from, so that no registry is needed. The server's
# datadir is made when a container starts (see workloads/mysqld).
#
# patchproof builds it with the engine's builder; by hand:
#   docker build -f images/mariadb.Dockerfile --build-arg BASE=debian:bookworm images
ARG BASE=debian:bookworm
FROM ${BASE}
ARG APT_SOURCES=
# policy-rc.d: the package's server does not start while it is installed
# (a container has no init, and the image would keep it half-running).
RUN printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d \
 && if [ -n "$APT_SOURCES" ]; then printf '%s' "$APT_SOURCES" >/etc/apt/sources.list && rm -f /etc/apt/sources.list.d/*; fi
RUN export DEBIAN_FRONTEND=noninteractive \
 && apt-get update -q \
 && apt-get install -y -q --no-install-recommends mariadb-server mariadb-client \
 && apt-get clean && rm -rf /var/lib/apt/lists/*

# The build image: every build of --builder docker, and the test suites,
# run in containers of it. It holds the compiler, the tools a git checkout
# of php-src needs to configure (autoconf, bison, re2c), apxs2 for the ZTS
# build's Apache module, and the -dev packages of the official image's
# profile. Its ID is part of every build's cache key, so a change here
# rebuilds every build once.
#
# patchproof builds it with the engine's builder (ImageBuild); by hand:
#   docker build -f images/build.Dockerfile --build-arg BASE=debian:bookworm images
ARG BASE=debian:bookworm
FROM ${BASE}
# The sources.list apt installs from: this machine's suites and security
# archive, so that an image has the package versions a host run has.
# Empty keeps the base image's own.
ARG APT_SOURCES=
# policy-rc.d: no service starts while its package is installed (a
# container has no init).
RUN printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d \
 && if [ -n "$APT_SOURCES" ]; then printf '%s' "$APT_SOURCES" >/etc/apt/sources.list && rm -f /etc/apt/sources.list.d/*; fi
RUN export DEBIAN_FRONTEND=noninteractive \
 && apt-get update -q \
 && apt-get install -y -q --no-install-recommends \
	gcc g++ make pkg-config autoconf bison re2c ccache file apache2-dev \
	libargon2-dev libcurl4-openssl-dev libonig-dev libreadline-dev libsodium-dev \
	libsqlite3-dev libssl-dev libxml2-dev zlib1g-dev \
 && apt-get clean && rm -rf /var/lib/apt/lists/*

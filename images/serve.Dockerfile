# The serve image: a build's servers run in it (the race stage's and the
# benchmark's Apache with a ZTS build's module, valgrind counting
# instructions). It starts from the build image, so that a build's
# libraries are there at the versions it was built against, with the
# compiler's ThreadSanitizer runtime; it is an image of its own so that the
# build image, which names every build's cache key, stays as it is.
#
# patchproof builds it with the engine's builder; by hand:
#   docker build -f images/serve.Dockerfile --build-arg BASE=IMAGE images
# where IMAGE is the build image.
ARG BASE
FROM ${BASE}
RUN export DEBIAN_FRONTEND=noninteractive \
 && apt-get update -q \
 && apt-get install -y -q --no-install-recommends apache2 valgrind \
 && apt-get clean && rm -rf /var/lib/apt/lists/*

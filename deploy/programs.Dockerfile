# syntax=docker/dockerfile:1
# The programs a cluster's exec and sat jobs may run, as an image: the
# Kubernetes component deploy/kubernetes/programs copies its /programs into
# every worker's programs folder. A program runs inside the worker's image
# (Debian bookworm-slim), so it must be a static binary, a binary of the same
# Debian release (as CaDiCaL below), or a script whose interpreter that image
# has (the worker image has no Python: build one FROM orchard that adds it).
#
#   docker build -f deploy/programs.Dockerfile -t registry.example/orchard-programs:1 .
#
# BASE replaces the Debian image both stages start from (CI builds it with a
# base made by mmdebstrap, as no registry is reachable there).
ARG DEBIAN_RELEASE=bookworm
ARG BASE=debian:${DEBIAN_RELEASE}-slim
FROM ${BASE} AS tools
RUN apt-get update \
    && apt-get install -y --no-install-recommends cadical gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
COPY examples/exec/collatz.c /src/collatz.c
RUN install -d /programs \
    && install -m 0555 /usr/bin/cadical /programs/cadical \
    && gcc -O2 -static -o /programs/collatz /src/collatz.c \
    && chmod 0555 /programs/collatz

FROM ${BASE}
COPY --from=tools /programs /programs
USER 10001:10001

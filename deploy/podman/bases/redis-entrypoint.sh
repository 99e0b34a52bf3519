#!/bin/sh
# As the official redis image does: a redis-server started without a config file listens on the
# container's network with protected mode off (the container network is the boundary).
set -eu
if [ "${1:-}" = redis-server ] && [ "${2:-}" = "${2#/}" ]; then
  shift
  exec redis-server --protected-mode no "$@"
fi
exec "$@"

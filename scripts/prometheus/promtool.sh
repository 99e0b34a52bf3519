#!/usr/bin/env bash
# Prints the path of a promtool (Prometheus's rule checker and evaluator), for the tests of the
# alert rules and scaling queries (test/e2e/alert-rules.e2e-spec.ts). $PROMTOOL or one on PATH
# when there is one; else Debian's prometheus package, downloaded (not installed: no service,
# no user, nothing started) and unpacked once into a cache directory. Needs apt's package lists
# (`apt-get update`); no root.
set -euo pipefail

if [ -n "${PROMTOOL:-}" ]; then echo "$PROMTOOL"; exit 0; fi
if command -v promtool > /dev/null 2>&1; then command -v promtool; exit 0; fi

dir=${XDG_CACHE_HOME:-$HOME/.cache}/research-data-services/prometheus
if [ ! -x "$dir/usr/bin/promtool" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && apt-get download -qq prometheus 2> /dev/null) \
    || { echo "promtool: apt-get download prometheus failed (run apt-get update first)" >&2; exit 1; }
  mkdir -p "$work/root"
  dpkg-deb --fsys-tarfile "$work"/prometheus_*.deb | tar -x -C "$work/root" ./usr/bin/promtool
  mkdir -p "$dir/usr/bin"
  mv "$work/root/usr/bin/promtool" "$dir/usr/bin/promtool"
fi
echo "$dir/usr/bin/promtool"

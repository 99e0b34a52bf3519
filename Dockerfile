# One image for every process of the project (see docker-compose.yml and k8s/):
#   catalog-api         node --max-semi-space-size=4 --max-old-space-size=256 dist/apps/catalog-api/apps/catalog-api/src/main.js   (the default)
#   catalog migrations  node dist/apps/catalog-api/apps/catalog-api/src/database/migrate.js
#   provisioner API     node --max-semi-space-size=4 --max-old-space-size=192 dist/apps/provisioner/apps/provisioner/src/main.js
#   provisioner worker  node --max-semi-space-size=4 --max-old-space-size=384 --external-memory-accounted-in-global-limit dist/apps/provisioner/apps/provisioner/src/worker.js
# Each runs as PID 1 and exits on SIGTERM by itself (no init process needed). Settings come from
# the environment at run time; the image holds no secrets.
#
# Build: `docker build -t research-data-services:0.1.0 .` (or `podman build`), with the labels'
# facts: --build-arg VERSION=0.1.0 --build-arg REVISION=$(git rev-parse HEAD)
# --build-arg CREATED=$(git log -1 --format=%cI). Where the official base cannot be pulled, pass
# an equivalent one (deploy/podman/build-bases.sh makes localhost/rds-base-node:24.21.0-bookworm):
# `--build-arg NODE_BASE=...`. Behind a TLS-intercepting proxy, hand npm the CA bundle for the
# build only, never into a layer:
#   --secret id=npm_ca,src=/etc/ssl/certs/ca-certificates.crt

# Node.js 24 LTS, pinned by digest (the multi-architecture index of the tag): a re-pushed tag
# cannot change what is built. This line names the project's Node.js: build-bases.sh builds the
# local equivalent of this version and .ci/run tests on it.
ARG NODE_BASE=node:24.21.0-bookworm-slim@sha256:d6aa754f16b3197301076f047b5def2f02ea1dbbc2ca920407d46d7ec7f87b20

# ---- build: all dependencies, compile both apps -------------------------------------------
FROM ${NODE_BASE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# `npm install` exactly as locked: the build fails if npm would change the lock (what `npm ci`
# would refuse). Not `npm ci`: docs/decisions/npm-install-not-npm-ci.md.
RUN --mount=type=secret,id=npm_ca,target=/run/secrets/npm_ca --mount=type=cache,target=/root/.npm \
    cp package-lock.json /tmp/lock \
    && NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca npm install --no-audit --no-fund \
    && cmp -s package-lock.json /tmp/lock
COPY tsconfig.base.json tsconfig.json nest-cli.json ./
COPY libs ./libs
COPY apps ./apps
RUN npm run build

# ---- runtime: production dependencies and the compiled output only ------------------------
FROM ${NODE_BASE} AS runtime
# GLIBC_TUNABLES: glibc's allocator keeps its threshold for mmap at 128 KiB instead of raising it
# to the largest block freed so far, so a large import's buffers go back to the system when freed
# (docs/decisions/malloc-mmap-threshold.md).
ENV NODE_ENV=production \
    STORAGE_ROOT=/data/storage \
    GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072
WORKDIR /app
COPY package.json package-lock.json ./
# typeorm and valibot name ts-node and typescript as optional peers, so npm keeps those dev tools
# (and @types/node) in a production install; nothing loads them at run time: removed. npm's
# download cache is a build cache mount (kept between builds, never in a layer).
RUN --mount=type=secret,id=npm_ca,target=/run/secrets/npm_ca --mount=type=cache,target=/root/.npm \
    cp package-lock.json /tmp/lock \
    && NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca npm install --omit=dev --no-audit --no-fund \
    && cmp -s package-lock.json /tmp/lock && rm /tmp/lock \
    && node -e "for (const d of Object.keys(require('./package.json').devDependencies)) require('fs').rmSync('node_modules/' + d, { recursive: true, force: true })" \
    && mkdir -p /data/storage /data/dropzone \
    && chown -R 1000:1000 /data
COPY --from=build /app/dist ./dist
# The image's `node` user, by number so Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 3000 3001 3002
CMD ["node", "--max-semi-space-size=4", "--max-old-space-size=256", "dist/apps/catalog-api/apps/catalog-api/src/main.js"]

# OCI annotations (https://github.com/opencontainers/image-spec/blob/main/annotations.md). Last,
# so a new revision or date relabels the image without rebuilding any layer.
ARG NODE_BASE
ARG VERSION=unknown
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="research-data-services" \
      org.opencontainers.image.description="Catalog API and storage provisioner for research-data management: catalog-api, its migrations, the provisioner API and worker" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.base.name="${NODE_BASE}"

# One image for every process of the project (see docker-compose.yml and k8s/):
#   catalog-api         node --max-old-space-size=256 dist/apps/catalog-api/apps/catalog-api/src/main.js   (the default)
#   catalog migrations  node dist/apps/catalog-api/apps/catalog-api/src/database/migrate.js
#   provisioner API     node dist/apps/provisioner/apps/provisioner/src/main.js
#   provisioner worker  node --max-semi-space-size=4 dist/apps/provisioner/apps/provisioner/src/worker.js
# Settings come from the environment at run time; the image holds no secrets.
#
# Build: `docker build -t research-data-services:0.1.0 .` (or `podman build`). Where the official
# base cannot be pulled, pass an equivalent one (deploy/podman/build-bases.sh makes
# localhost/rds-base-node:20.20.2-bookworm): `--build-arg NODE_BASE=...`. Behind a TLS-intercepting
# proxy, hand npm the CA bundle for the build only, never into a layer:
#   --secret id=npm_ca,src=/etc/ssl/certs/ca-certificates.crt

ARG NODE_BASE=node:20.20.2-bookworm-slim

# ---- build: all dependencies, compile both apps -------------------------------------------
FROM ${NODE_BASE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=secret,id=npm_ca,target=/run/secrets/npm_ca --mount=type=cache,target=/root/.npm \
    NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca npm install --no-audit --no-fund
COPY tsconfig.base.json tsconfig.json nest-cli.json ./
COPY libs ./libs
COPY apps ./apps
RUN npm run build

# ---- runtime: production dependencies and the compiled output only ------------------------
FROM ${NODE_BASE} AS runtime
ENV NODE_ENV=production \
    STORAGE_ROOT=/data/storage
WORKDIR /app
COPY package.json package-lock.json ./
# typeorm and valibot name ts-node and typescript as optional peers, so npm keeps those dev tools
# (and @types/node) in a production install; nothing loads them at run time: removed. npm's
# download cache is a build cache mount (kept between builds, never in a layer).
RUN --mount=type=secret,id=npm_ca,target=/run/secrets/npm_ca --mount=type=cache,target=/root/.npm \
    NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca npm install --omit=dev --no-audit --no-fund \
    && node -e "for (const d of Object.keys(require('./package.json').devDependencies)) require('fs').rmSync('node_modules/' + d, { recursive: true, force: true })" \
    && mkdir -p /data/storage /data/dropzone \
    && chown -R 1000:1000 /data
COPY --from=build /app/dist ./dist
# The image's `node` user, by number so Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 3000 3001 3002
CMD ["node", "--max-old-space-size=256", "dist/apps/catalog-api/apps/catalog-api/src/main.js"]

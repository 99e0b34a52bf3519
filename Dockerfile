# One image for every process of the project (see docker-compose.yml and k8s/):
#   catalog-api         node --max-old-space-size=256 dist/apps/catalog-api/apps/catalog-api/src/main.js   (the default)
#   catalog migrations  node dist/apps/catalog-api/apps/catalog-api/src/database/migrate.js
#   provisioner API     node dist/apps/provisioner/apps/provisioner/src/main.js
#   provisioner worker  node --max-semi-space-size=4 dist/apps/provisioner/apps/provisioner/src/worker.js
# Settings come from the environment at run time; the image holds no secrets.

# ---- build: all dependencies, compile both apps -------------------------------------------
FROM node:20.20.2-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund
COPY tsconfig.base.json tsconfig.json nest-cli.json ./
COPY libs ./libs
COPY apps ./apps
RUN npm run build

# ---- runtime: production dependencies and the compiled output only ------------------------
FROM node:20.20.2-bookworm-slim AS runtime
ENV NODE_ENV=production \
    STORAGE_ROOT=/data/storage
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --omit=dev --no-audit --no-fund \
    && npm cache clean --force \
    && mkdir -p /data/storage /data/dropzone \
    && chown -R 1000:1000 /data
COPY --from=build /app/dist ./dist
# The image's `node` user, by number so Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 3000 3001 3002
CMD ["node", "--max-old-space-size=256", "dist/apps/catalog-api/apps/catalog-api/src/main.js"]

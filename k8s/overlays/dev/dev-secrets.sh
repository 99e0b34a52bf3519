#!/usr/bin/env bash
# Prints the three Secrets of the dev overlay with fresh random values (nothing secret is kept
# in the repository). Once per cluster, before the first `kubectl apply -k k8s/overlays/dev`:
#   k8s/overlays/dev/dev-secrets.sh | kubectl apply -f -
# Running it again makes new values: restart the Postgres pod after deleting its volume, or keep
# the Secrets you have. Needs only kubectl (client side, no cluster access to print).
set -euo pipefail

namespace=research-data

# Hex of random bytes: 2 characters per byte, no symbols to quote in a URL.
random_hex() { head -c "$1" /dev/urandom | od -An -tx1 | tr -d ' \n'; }

password=$(random_hex 24)
# The provisioner's registration key; the catalog gets only its SHA-256.
registration_key=$(random_hex 24)
registration_digest=$(printf %s "$registration_key" | sha256sum | cut -d' ' -f1)

secret() {
  local name=$1
  shift
  kubectl create secret generic "$name" --namespace "$namespace" --dry-run=client -o yaml "$@"
}

secret postgres-dev \
  --from-literal=POSTGRES_USER=catalog \
  --from-literal=POSTGRES_PASSWORD="$password" \
  --from-literal=POSTGRES_DB=catalog
echo ---
secret catalog-api-secrets \
  --from-literal=DATABASE_URL="postgres://catalog:${password}@postgres:5432/catalog" \
  --from-literal=DATABASE_DIRECT_URL= \
  --from-literal=GLOBAL_API_KEY="$(random_hex 24)" \
  --from-literal=REGISTRATION_API_KEY_SHA256="$registration_digest" \
  --from-literal=GA4GH_BROKER_API_KEY_SHA256= \
  --from-literal=IDP_CLIENT_SECRET=
echo ---
secret provisioner-secrets \
  --from-literal=REDIS_URL=redis://redis:6379/0 \
  --from-literal=REDIS_PASSWORD= \
  --from-literal=REDIS_SENTINEL_PASSWORD= \
  --from-literal=DATABASE_URL= \
  --from-literal=DATABASE_DIRECT_URL= \
  --from-literal=PROVISIONER_API_KEY="$(random_hex 24)" \
  --from-literal=PROVISIONER_READ_API_KEYS="$(random_hex 24)" \
  --from-literal=CATALOG_API_KEY="$registration_key" \
  --from-literal=DRS_CATALOG_BROKER_KEY= \
  --from-literal=DRS_URL_SIGNING_KEY= \
  --from-literal=DRS_URL_NEXT_SIGNING_KEY= \
  --from-literal=DRS_URL_PREVIOUS_SIGNING_KEY= \
  --from-literal=SOURCES='[{"name":"dropzone","type":"dropzone","root":"/data/dropzone"}]'

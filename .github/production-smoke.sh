#!/usr/bin/env bash
# Starts the built service against EVENTSTORE_URL and MONGODB_URL and checks that it answers a
# write and the read of it (a tenant, a user, the user list: the read waits on the projection,
# through KurrentDB's filtered $all read). Used by .github/workflows/ci.yml.
set -euo pipefail
: "${EVENTSTORE_URL:?}" "${MONGODB_URL:?}"
cd "$(dirname "$0")/.."
export SEALING_KEY="$(openssl rand -base64 32)"
export ADMIN_API_KEY="svc_ak_$(node -e "const a='0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';let s='';for(const b of require('crypto').randomBytes(43))s+=a[b%62];process.stdout.write(s)")"
export MONGODB_DATABASE="wellstream_smoke"
export DATA_DIR="$(mktemp -d)"
export PORT=18080 HOST=127.0.0.1 LOG_LEVEL=warn
node dist/src/main.js &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
base="http://127.0.0.1:$PORT"
for _ in $(seq 1 60); do
  curl -fsS "$base/openapi.yaml" >/dev/null 2>&1 && break
  kill -0 $pid 2>/dev/null || { echo "the service exited at start-up"; exit 1; }
  sleep 1
done
tenant=$(curl -fsS -X POST "$base/v1/admin/tenants" -H "authorization: Bearer $ADMIN_API_KEY" -H 'content-type: application/json' -d '{"name":"smoke"}')
key=$(node -e "process.stdout.write(JSON.parse(process.argv[1]).api_key)" "$tenant")
user=$(curl -fsS -X POST "$base/v1/users" -H "authorization: Bearer $key" -H 'content-type: application/json' -d '{"external_ref":"smoke-1"}')
id=$(node -e "process.stdout.write(JSON.parse(process.argv[1]).id)" "$user")
curl -fsS "$base/v1/users/$id" -H "authorization: Bearer $key" | grep -q "$id"
curl -fsS "$base/v1/users" -H "authorization: Bearer $key" | grep -q "$id"
echo "service answered a write and its reads against KurrentDB and MongoDB"

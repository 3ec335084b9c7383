#!/usr/bin/env bash
# Makes examples/certs/example.pem (a self-signed certificate for localhost and 127.0.0.1,
# then its key), which examples/https.cfg serves. Does nothing when it exists. The file is
# not in git: each machine makes its own key.
set -euo pipefail
cd "$(dirname "$0")/.."
pem=examples/certs/example.pem
[[ -s $pem ]] && exit 0
mkdir -p examples/certs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 825 \
  -subj "/CN=localhost" -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
  -keyout "$tmp/key.pem" -out "$tmp/cert.pem" 2>/dev/null
cat "$tmp/cert.pem" "$tmp/key.pem" > "$pem.tmp"
mv "$pem.tmp" "$pem"
echo "example-cert: made $pem (self-signed, localhost)"

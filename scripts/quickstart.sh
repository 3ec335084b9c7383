#!/usr/bin/env bash
# Installs what is needed, builds the release preset and runs sluice in the foreground on
# examples/quickstart.cfg. Ctrl-C stops it.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh
cmake --preset release
cmake --build --preset release --target sluice

cat <<'TXT'

sluice is starting in the foreground on examples/quickstart.cfg (Ctrl-C stops it).
From another terminal, try:

  printf 'show info\n' | socat - TCP:127.0.0.1:8080     # a CLI command through the tcp proxy
  printf 'show stat\n' | socat - TCP:127.0.0.1:8081     # the stats socket itself
  printf 'help\n'      | socat - TCP:127.0.0.1:8080

Each proxied connection is logged below (option tcplog, log stdout).

TXT
exec build/release/src/app/sluice -d -f examples/quickstart.cfg

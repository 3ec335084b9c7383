#!/usr/bin/env bash
# See docs/performance.md. bench/syscalls.sh --help for options.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
exec python3 "$BENCH_DIR/bench.py" syscalls "$@"

#!/usr/bin/env bash
# One command for the whole comparison: starts an nginx origin on loopback, then sluice, HAProxy and
# nginx (as a proxy) in turn, interleaved, at 1 and 2 threads, and writes bench/results/<stamp>/
# (results.md, chart.png, runs.jsonl, machine.txt). See docs/performance.md.
#
#   bench/run.sh                                  # everything, 3 repetitions of 10 s
#   BENCH_DURATION=5 BENCH_REPS=5 bench/run.sh    # shorter runs, more repetitions
#   bench/run.sh --scenarios http-close,tcp-connrate --threads 1 --out /tmp/res
#   bench/run.sh --help
#
# Environment: SLUICE_BIN (default build/release/src/app/sluice), LOADGEN_BIN, BENCH_DURATION,
# BENCH_REPS, BENCH_SCENARIOS, BENCH_CANDIDATES, BENCH_THREADS, BENCH_MEM_CONNS, BENCH_OUT, ...
set -euo pipefail
source "$(dirname "$0")/lib.sh"
exec python3 "$BENCH_DIR/bench.py" "$@"

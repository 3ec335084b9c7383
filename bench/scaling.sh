#!/usr/bin/env bash
# Connection-rate scaling of sluice's listener shard modes on N cores: client, origin and sluice on
# disjoint CPU sets (taskset); by-process, by-group at several group sizes, by-thread. Sized to run
# unattended in about 8 minutes on a 16+ core machine. See docs/performance.md.
#
#   bench/scaling.sh --dry-run               # print the plan for this machine
#   bench/scaling.sh --cores 48 --dry-run    # ... or for another one
#   bench/scaling.sh --out bench/results/scaling-$(hostname).md
#   bench/scaling.sh --duration 1 --reps 1   # tiny run (works on 2 cores, degenerate CPU split)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
exec python3 "$BENCH_DIR/bench.py" scaling "$@"

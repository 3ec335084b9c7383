# Sourced by the bench/*.sh wrappers: finds the sluice binary and the load generator, building the
# latter on its own (cmake -S bench/loadgen) when the main build tree does not have it.
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(dirname "$BENCH_DIR")
export SLUICE_BIN=${SLUICE_BIN:-$REPO_DIR/build/release/src/app/sluice}
if [[ -z ${LOADGEN_BIN:-} ]]; then
  if [[ -x $REPO_DIR/build/release/bench/loadgen/sluice-loadgen ]]; then
    LOADGEN_BIN=$REPO_DIR/build/release/bench/loadgen/sluice-loadgen
  else
    LOADGEN_BIN=$REPO_DIR/build/bench-loadgen/sluice-loadgen
    if [[ ! -x $LOADGEN_BIN || $BENCH_DIR/loadgen/loadgen.cc -nt $LOADGEN_BIN ]]; then
      echo "bench: building sluice-loadgen in build/bench-loadgen" >&2
      cmake -S "$BENCH_DIR/loadgen" -B "$REPO_DIR/build/bench-loadgen" -DCMAKE_BUILD_TYPE=Release >/dev/null
      cmake --build "$REPO_DIR/build/bench-loadgen" >/dev/null
    fi
  fi
fi
export LOADGEN_BIN
# The proxy needs 2 descriptors per connection: use the whole hard limit.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

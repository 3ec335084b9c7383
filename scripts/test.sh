#!/usr/bin/env bash
# The whole test suite in one command: for each build mode (default: release asan), configure
# and build with the CMake preset, then run every ctest entry (unit, fuzz corpus replay and the
# integration folders). Prints one summary line at the end and exits non-zero on any failure.
#
#   ./scripts/test.sh                 # release + asan (ASan+UBSan) + tsan (threaded tests)
#   ./scripts/test.sh debug           # any preset from CMakePresets.json
#   SLUICE_SKIP_SETUP=1 ./scripts/test.sh release
#   CTEST_ARGS="-R integration" ./scripts/test.sh release
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
modes=("$@")
[[ ${#modes[@]} -gt 0 ]] || modes=(release asan tsan)
jobs=${SLUICE_JOBS:-$(nproc 2>/dev/null || echo 2)}

if [[ ${SLUICE_SKIP_SETUP:-0} != 1 ]]; then
  ./scripts/setup.sh || { echo "sluice tests: setup failed"; exit 1; }
fi

# Module layering (docs/architecture.md, "Module dependencies"): no build needed, so a module
# that includes one it does not depend on fails here in a second, before any build.
python3 scripts/check_module_deps.py || { echo "sluice tests: module dependency check failed"; exit 1; }

# Sanitizer behaviour for the asan/tsan builds (harmless for the others). Tests that start
# sluice inherit these, so a leak or UB in the binary fails its integration test too.
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:abort_on_error=0:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1:exitcode=23}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1:exitcode=24}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:exitcode=66}
# Integration tests must never wait on a terminal.
exec </dev/null

# The GoogleTest cases and pytest tests that failed in a ctest log. Unit binaries run as one
# ctest entry each (unit.<module>, tests/CMakeLists.txt), so ctest's own list names the binary;
# this names the cases: gtest's "[  FAILED  ] Suite.Case (N ms)" lines, a case that started and
# never ended (a crash, a sanitizer abort, a timeout), and pytest's "FAILED path::test" lines.
failed_cases() {
  awk '
    function flush() { if (cur != "") print "  " entry ": " cur " (did not finish: crash, sanitizer report or timeout)"; cur = "" }
    /^ *[0-9]+\/[0-9]+ Test +#[0-9]+: / { flush(); entry = $4; next }
    /^ *Start +[0-9]+: / || /^[0-9]+% tests passed/ { flush(); next }
    /^\[ RUN      \] / { cur = $4; next }
    /^\[       OK \] / || /^\[  SKIPPED \] / { cur = ""; next }
    /^\[  FAILED  \] / && $4 ~ /\./ { n = $4; sub(/,$/, "", n); print "  " entry ": " n; cur = ""; next }
    /^FAILED [^ ]+::/ { n = $0; sub(/^FAILED /, "", n); sub(/ - .*/, "", n); sub(/.*\/tests\/integration\//, "", n); print "  " entry ": " n }
    END { flush() }' "$1" | sort -u
}

summary=()
times=()
status=0
for mode in "${modes[@]}"; do
  t0=$SECONDS
  echo "=== sluice tests: $mode: configure and build"
  # A build folder made here for the first time (a fresh clone, CI) builds in unity mode: every
  # file is compiled once, so batching them parses the heavy headers once per batch. A folder that
  # exists keeps its own setting, so a developer's incremental release build stays per-file.
  unity=()
  [[ -f build/$mode/CMakeCache.txt ]] || unity=(-DSLUICE_UNITY=ON)
  if ! cmake --preset "$mode" "${unity[@]}"; then
    summary+=("$mode configure FAILED"); status=1; continue
  fi
  if ! cmake --build --preset "$mode" -j "$jobs"; then
    summary+=("$mode build FAILED"); status=1; continue
  fi

  built=$((SECONDS - t0))
  echo "=== sluice tests: $mode: built in ${built}s; running the tests"
  t1=$SECONDS
  # Sanitizer builds run several times slower: integration tests stretch their deadlines
  # (never their assertions on behaviour) by this factor.
  case $mode in
    asan|tsan|fuzz) export SLUICE_TEST_SLOW=${SLUICE_TEST_SLOW_SANITIZED:-3} ;;
    *) export SLUICE_TEST_SLOW=${SLUICE_TEST_SLOW_DEFAULT:-1} ;;
  esac
  log=build/$mode/Testing/sluice-test.log
  mkdir -p "build/$mode/Testing"
  # Integration folders each start their own processes on ports they pick, so they can run in
  # parallel with the unit tests; -j2 keeps a 2-core machine busy without starving timing.
  # ThreadSanitizer runs what has threads in it: every unit test and the integration folders
  # that drive several workers at once (sharding, multi-queue accept, limits, relaying, stop).
  mode_args=${CTEST_ARGS:-}
  if [[ $mode == tsan && -z ${CTEST_ARGS:-} ]]; then
    mode_args='-E ^(integration\.(cmdline|examples|logging|failover|timeouts|cli|bench_smoke)|fuzz_replay)'
  fi
  # shellcheck disable=SC2086
  ctest --test-dir "build/$mode" --output-on-failure -j "${SLUICE_CTEST_JOBS:-2}" \
        --timeout 600 $mode_args 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  echo "=== sluice tests: $mode: tests ran in $((SECONDS - t1))s"
  times+=("$mode build ${built}s tests $((SECONDS - t1))s")
  cases=$(failed_cases "$log")
  if [[ -n $cases ]]; then
    echo "=== sluice tests: $mode: failed cases:"
    echo "$cases"
  fi
  # ctest's own tally: "100% tests passed, 0 tests failed out of 42" / "No tests were found!!!"
  line=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1)
  if [[ -n $line ]]; then
    failed=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")
    total=$(sed -E 's/.* failed out of ([0-9]+).*/\1/' <<<"$line")
    summary+=("$mode $((total - failed))/$total passed")
    [[ $failed -eq 0 && $rc -eq 0 ]] || status=1
  else
    summary+=("$mode: no test results (ctest exit $rc)")
    status=1
  fi
done

echo
( IFS=,; msg="${times[*]}"; echo "sluice tests: times: ${msg//,/, }" )
( IFS=,; msg="${summary[*]}"; echo "sluice tests: ${msg//,/, }" )
exit $status

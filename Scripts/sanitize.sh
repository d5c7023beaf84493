#!/usr/bin/env bash
# Runs the Swift test suite under AddressSanitizer or ThreadSanitizer, each in a
# scratch directory of its own (.build-asan, .build-tsan), and fails on any report.
# Slow (a sanitized build of everything, then every test): run by hand, not in
# Scripts/test.sh.
#
#     Scripts/sanitize.sh address|thread [-- swift test arguments, e.g. --filter X]
#
# The tests that run homed, homectl and homed-sim run this build's sanitized
# binaries (HOMED_BUILD_DIR). Every report, the test process's and every child's,
# is written to a file of its own under SCRATCH/sanitizer-reports/ (a child's
# stderr is a pipe its test reads, where a report would go unseen), and counted.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  echo "usage: Scripts/sanitize.sh address|thread [-- swift test arguments]" >&2
  exit 2
}
[[ $# -ge 1 ]] || usage
sanitizer=$1
shift
case $sanitizer in
  address) scratch=.build-asan ;;
  thread) scratch=.build-tsan ;;
  *) usage ;;
esac
if [[ $# -gt 0 ]]; then
  [[ $1 == -- ]] || usage
  shift
fi

# Under ThreadSanitizer the daemon's locks are pthread mutexes, which it sees
# (Sources/HomeServer/Support/Locked.swift says why).
flags=()
[[ $sanitizer == thread ]] && flags=(-Xswiftc -DHOMED_PTHREAD_LOCKS)
echo "== swift build --build-tests --sanitize=$sanitizer --scratch-path $scratch ${flags[*]}"
swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch" "${flags[@]}"

reports="$PWD/$scratch/sanitizer-reports"
rm -rf "$reports"
mkdir -p "$reports"
export HOMED_BUILD_DIR="$PWD/$scratch/debug"
case $sanitizer in
  # LeakSanitizer is off: in a Swift process it takes objects that are still
  # referenced, but only through tagged pointers (weak references' side tables,
  # multi-payload enums' payloads), for leaks, by the hundred in one run of the
  # suite. ASAN_OPTIONS=detect_leaks=1 turns it on for a look. (The fuzzer checks
  # leaks input by input, where such noise does not arise.)
  address) export ASAN_OPTIONS="log_path=$reports/asan:detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" ;;
  thread)
    export TSAN_OPTIONS="log_path=$reports/tsan:suppressions=$PWD/Scripts/tsan-suppressions.txt${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
    ;;
esac

echo "== swift test --skip-build --sanitize=$sanitizer --scratch-path $scratch"
set +e
# A hang (a test waiting for something that never comes) ends the run instead of
# stalling it: SANITIZE_TIMEOUT seconds, an hour unless said.
# One test at a time (--no-parallel): sanitized, the tests that wait for processes
# block their threads ten times longer, and run side by side they hold every
# thread of the concurrency pool the in-process tests need (those then time out,
# though each passes alone). As in Scripts/test.sh, the stress trials (homed
# started by the hundred) run last.
stress='KillNineTrialsTests|HomedProcessTests/twoAtOnce'
if [[ $# -gt 0 ]]; then
  timeout --kill-after=30 "${SANITIZE_TIMEOUT:-3600}" \
    swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" "${flags[@]}" "$@"
  status=$?
else
  timeout --kill-after=30 "${SANITIZE_TIMEOUT:-3600}" \
    swift test --skip-build --no-parallel --sanitize="$sanitizer" --scratch-path "$scratch" "${flags[@]}" --skip "$stress"
  status=$?
  timeout --kill-after=30 "${SANITIZE_TIMEOUT:-3600}" \
    swift test --skip-build --no-parallel --sanitize="$sanitizer" --scratch-path "$scratch" "${flags[@]}" --filter "$stress"
  second=$?
  [[ $status -ne 0 ]] || status=$second
fi
if [[ $status -eq 124 || $status -eq 137 ]]; then
  echo "sanitize.sh: the tests did not finish within ${SANITIZE_TIMEOUT:-3600}s (a hang)" >&2
fi
set -e

found=$(find "$reports" -type f | sort)
if [[ -n $found ]]; then
  echo "== $(echo "$found" | wc -l) sanitizer report file(s):" >&2
  for file in $found; do
    echo "--- $file" >&2
    grep -E '^(WARNING|ERROR|SUMMARY): ' "$file" >&2 || head -n 20 "$file" >&2
  done
  exit 1
fi
if [[ $status -ne 0 ]]; then
  echo "sanitize.sh: the tests failed under $sanitizer ($status)" >&2
  exit "$status"
fi
echo "sanitize.sh: $sanitizer: every test passed, 0 sanitizer reports"

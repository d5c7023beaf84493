#!/usr/bin/env bash
# Builds homed's libFuzzer target (the Fuzz/ package, release, with AddressSanitizer)
# and runs it for SECONDS (default 60) on a copy of the seed corpus Fuzz/corpus/,
# which it never writes to. Prints libFuzzer's final figures; exits non-zero on a
# finding (crash, leak, timeout, out-of-memory) and prints where its input is.
#
#     Scripts/fuzz.sh [SECONDS] [-- extra libFuzzer arguments]
#     Scripts/fuzz.sh 3600 -- -runs=10000000     # stops at whichever comes first
#     Scripts/fuzz.sh --build-only               # builds it, runs nothing
#
# Every run gets a directory of its own under .build-fuzz/runs/ (never committed):
# corpus/ (the seeds and what the run found new), findings/, fuzz.log (and with
# -jobs=N, fuzz-0.log … per job).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  echo "usage: Scripts/fuzz.sh [SECONDS] [-- extra libFuzzer arguments] | --build-only" >&2
  exit 2
}
build_only=false
if [[ ${1:-} == --build-only ]]; then
  [[ $# -eq 1 ]] || usage
  build_only=true
  shift
fi
seconds=60
if [[ $# -gt 0 && $1 != -- ]]; then
  [[ $1 =~ ^[0-9]+$ ]] || usage
  seconds=$1
  shift
fi
if [[ $# -gt 0 ]]; then
  [[ $1 == -- ]] || usage
  shift
fi

scratch=.build-fuzz
echo "== building the fuzzer (Fuzz/, release, -sanitize=fuzzer,address)"
swift build -c release --package-path Fuzz --scratch-path "$scratch" \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
fuzzer="$PWD/$scratch/release/homed-fuzz"
$build_only && exit 0
dictionary="$PWD/Fuzz/homed.dict"

run="$PWD/$scratch/runs/$(date -u +%Y%m%d-%H%M%S)-$$"
mkdir -p "$run/corpus" "$run/findings"
cp Fuzz/corpus/* "$run/corpus/"

echo "== fuzzing for ${seconds}s (run directory $run)"
set +e
# From the run directory: with -jobs, libFuzzer writes each job's log (fuzz-N.log)
# to the working directory.
(cd "$run" && "$fuzzer" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
  -dict="$dictionary" -artifact_prefix="$run/findings/" "$@" "$run/corpus" >"$run/fuzz.log" 2>&1)
status=$?
set -e

# Per log (one, or one per job): the last status line (executions, coverage,
# corpus) and the final figures.
for log in "$run"/fuzz*.log; do
  echo "-- $(basename "$log")"
  grep -E '^#[0-9]+' "$log" | tail -n 1 || true
  grep -E '^(Done|stat::)' "$log" || true
done
if [[ $status -ne 0 ]] || [[ -n $(ls -A "$run/findings") ]]; then
  grep -hE 'ERROR: |SUMMARY: |Fatal error|Test unit written' "$run"/fuzz*.log >&2 || true
  echo "fuzz.sh: libFuzzer exited $status; the log is $run/fuzz.log; the finding's input:" >&2
  ls -1 "$run/findings/"* >&2 || echo "(none written)" >&2
  echo "reproduce with: $fuzzer FILE (minimize: $fuzzer -minimize_crash=1 -runs=100000 FILE)" >&2
  exit 1
fi
echo "fuzz.sh: no findings"

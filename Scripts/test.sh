#!/usr/bin/env bash
# Runs every test: generated-code checks, the Swift tests (unit, integration over a
# real socket, CLI processes), the Python suites against a real homed (the client,
# each provider and bridge, with their real peers on loopback), the C client, the
# docs' links, homed-web in a browser and a fuzzing smoke; and, beside them, the
# release build that Scripts/install.sh installs. Every suite runs whatever an
# earlier one did; a summary lists each suite's result and counts, and the script
# fails at the end if any suite failed. Each suite's whole output is in
# .build/test-logs/SUITE.log.
#   Scripts/test.sh
set -uo pipefail
cd "$(dirname "$0")/.."
Scripts/bootstrap.sh --python || { echo "test: Scripts/bootstrap.sh --python failed" >&2; exit 1; }

logs=.build/test-logs
rm -rf "$logs"
mkdir -p "$logs"
# The Python programs, their tests and the Swift tests that run Python programs all
# use .venv (Clients/constraints.txt's versions), never the machine's own packages.
export PATH="$PWD/.venv/bin:$PATH" HOMED_BIN="$PWD/.build/debug/homed"
names=() results=() counts=()
passed_total=0 failed_total=0

# The counts a runner printed: pytest's "N passed, N failed", XCTest's "Executed N
# tests, with N failures", Swift Testing's "Test run with N tests … passed/failed
# after …", make check's "N passed, N failed".
count() {
  python3 - "$1" <<'PY'
import re, sys
text = open(sys.argv[1], errors="replace").read()
passed = failed = 0
found = False
for line in text.splitlines():
    line = line.strip()
    if re.match(r"^=*\s*(\d+ (passed|failed|errors?|skipped|deselected|xfailed|xpassed)(, )?)+.* in [\d.]+s", line.strip("= ")):
        found = True
        for n, kind in re.findall(r"(\d+) (passed|failed|errors?)", line):
            if kind == "passed":
                passed += int(n)
            else:
                failed += int(n)
    m = re.search(r"Test run with (\d+) tests? (?:in \d+ suites? )?(passed|failed) after", line)
    if m:
        found = True
        if m.group(2) == "passed":
            passed += int(m.group(1))
        else:
            issues = re.search(r"with (\d+) issues?", line)
            failed += int(issues.group(1)) if issues else 1
            passed += max(int(m.group(1)) - (int(issues.group(1)) if issues else 1), 0)
    m = re.match(r"^(?:\w+: )?(\d+) passed, (\d+) failed", line)
    if m:
        found = True
        passed += int(m.group(1)); failed += int(m.group(2))
xc = re.findall(r"Test Suite 'All tests' (?:passed|failed) at .*\n\s*Executed (\d+) tests?, with (\d+) failures?", text)
for n, f in xc:
    found = True
    passed += int(n) - int(f); failed += int(f)
print(f"{passed} {failed}" if found else "- -")
PY
}

# suite NAME COMMAND…: runs it with its output to the terminal and its log.
suite() {
  local name=$1 started=$SECONDS rc
  shift
  echo "== $name"
  "$@" 2>&1 | tee "$logs/$name.log"
  rc=${PIPESTATUS[0]}
  read -r passed failed < <(count "$logs/$name.log")
  names+=("$name")
  results+=("$([[ $rc == 0 ]] && echo ok || echo "FAILED (exit $rc)")")
  counts+=("$([[ $passed == - ]] && echo "" || echo "$passed passed, $failed failed") $((SECONDS - started))s")
  [[ $passed != - ]] && passed_total=$((passed_total + passed)) failed_total=$((failed_total + failed))
  [[ $rc == 0 ]] || { [[ $passed == - || $failed == 0 ]] && failed_total=$((failed_total + 1)); }
  return 0
}

suite generated-code bash -c 'Scripts/generate-proto.sh --check && python3 Scripts/generate-catalog.py --check &&
  python3 Scripts/make-golden-frames.py --check && .venv/bin/python -m pytest -q Scripts/tests/test_generate_swift_wire.py'
suite imports Scripts/check-imports.sh
# Every relative link in the Markdown resolves, the layout table matches the tree, the
# README stays a newcomer's page (Scripts/check-docs.py --help); and its own test.
suite docs bash -c 'python3 Scripts/check-docs.py && .venv/bin/python -m pytest -q Scripts/tests/test_check_docs.py'
suite formatting swift format lint --strict --recursive --parallel Sources Tests Benchmarks/Sources Fuzz/Sources \
  Web/Sources Package.swift Benchmarks/Package.swift Fuzz/Package.swift Web/Package.swift
# Warnings are errors (Package.swift). Nothing below can run without this build.
suite build swift build --build-tests
if [[ ${results[-1]} == ok ]]; then
  suite man-pages Scripts/generate-man.sh --check
  # The trials that start homed by the hundred (kill -9 at random moments, two daemons
  # racing for one database) run on their own afterwards: on two cores they would
  # starve the tests that check something happens within a second. So does the log's
  # bound (CheckpointTests): how far the log grows while the background copy syncs
  # depends on the cores the other suites leave it (a remote conformance run starts
  # nats-server, homed-nats and homed-nats-remote beside it).
  stress='KillNineTrialsTests|HomedProcessTests/twoAtOnce|CheckpointTests'
  suite swift-tests swift test --skip-build --skip "$stress"
  suite swift-stress-trials swift test --skip-build --filter "$stress"
  # The conformance list, Tests/Conformance/scenarios.json, runs in all three
  # clients: ConformanceTests (swift test above), test_conformance.py (pytest) and
  # conformance.c (make check). One pytest run could take every suite (pytest.ini);
  # a run each keeps their counts apart here.
  #
  # Beside them, the builds of what ships (Scripts/build-release.sh: homed-web, then
  # homed, homectl and homed-sim, release with the runtime linked in) and the fuzzer
  # (release with AddressSanitizer), one after the other: the Python suites mostly
  # wait on their peers, and on two cores the builds take the time they leave idle
  # (on a fresh machine about a quarter of an hour of build), at a lower priority
  # than the suites' own processes. Their suites below report them; homed-web is
  # tested from its release build, and install.sh and the package find all of it
  # built.
  prebuilt_dir=$logs/prebuilt
  mkdir -p "$prebuilt_dir"
  (
    # beside NAME COMMAND…: its output, then its status (whole, by a rename).
    beside() {
      local name=$1
      shift
      nice -n 10 "$@" >"$prebuilt_dir/$name.out" 2>&1
      echo $? >"$prebuilt_dir/$name.rc.new" && mv "$prebuilt_dir/$name.rc.new" "$prebuilt_dir/$name.rc"
    }
    beside web-build Scripts/build-release.sh --web-only
    beside fuzz-build Scripts/fuzz.sh --build-only
    beside release-build Scripts/build-release.sh --main-only
  ) &
  prebuilding=$!
  for dir in Clients/python/tests Clients/providers/*/tests Clients/bridges/*/tests; do
    name=python-$(basename "$(dirname "$dir")")
    [[ $dir == Clients/bridges/* ]] && name=$name-bridge
    [[ $dir == Clients/python/tests ]] && name=python-client
    suite "$name" .venv/bin/python -m pytest -q "$dir"
  done
  suite c-client make -s -C Clients/c check HOMED_BIN="$HOMED_BIN"
  # prebuilt NAME: waits for that build beside, then gives its output and status.
  prebuilt() {
    while [[ ! -e "$prebuilt_dir/$1.rc" ]]; do
      kill -0 "$prebuilding" 2>/dev/null || [[ -e "$prebuilt_dir/$1.rc" ]] \
        || { echo "test: the builds beside the suites ended before $1"; return 1; }
      sleep 1
    done
    cat "$prebuilt_dir/$1.out"
    return "$(cat "$prebuilt_dir/$1.rc")"
  }
  # homed-web (Web/, a package of its own), then its tests: headless Chromium
  # (Debian's chromium and chromium-driver) against a real homed and homed-web.
  suite web-build prebuilt web-build
  if [[ ${results[-1]} == ok ]]; then
    suite web env HOMED_WEB_BIN="$PWD/Web/.build/release/homed-web" .venv/bin/python -m pytest -q Web/tests
  fi
  # A short smoke run of the fuzzer over the frame decoder, the envelope and every
  # method (Fuzz/README.md), once its build (above) went through.
  suite fuzz-build prebuilt fuzz-build
  if [[ ${results[-1]} == ok ]]; then
    suite fuzz-smoke bash -c 'python3 Fuzz/make-corpus.py --check && Scripts/fuzz.sh 60'
  fi
  # The release build of homed, homectl and homed-sim, for install.sh and the package.
  suite release-build prebuilt release-build
  wait "$prebuilding"
fi

echo
echo "== summary (logs in $logs/)"
status=0
for i in "${!names[@]}"; do
  printf '  %-26s %-18s %s\n' "${names[$i]}" "${results[$i]}" "${counts[$i]}"
  [[ ${results[$i]} == ok ]] || status=1
done
echo "total: $passed_total passed, $failed_total failed"
exit $status

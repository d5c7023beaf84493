#!/usr/bin/env bash
# Runs every test: generated-code checks, the Swift tests (unit, integration over a
# real socket, CLI processes) and the Python client's tests against a real homed.
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/bootstrap.sh --python

echo "== generated code is current"
Scripts/generate-proto.sh --check
python3 Scripts/generate-catalog.py --check
python3 Scripts/make-golden-frames.py --check

echo "== imports say what they expose"
Scripts/check-imports.sh

echo "== formatting (swift format, .swift-format)"
swift format lint --strict --recursive --parallel Sources Tests Benchmarks/Sources Fuzz/Sources Package.swift \
  Benchmarks/Package.swift Fuzz/Package.swift

echo "== swift build (warnings are errors)"
swift build --build-tests

echo "== man pages are current (from the debug executables' options)"
Scripts/generate-man.sh --check

# The trials that start homed by the hundred (kill -9 at random moments, two daemons
# racing for one database) run on their own afterwards: on two cores they would
# starve the tests that check something happens within a second.
stress='KillNineTrialsTests|HomedProcessTests/twoAtOnce'
echo "== swift test (all but the stress trials)"
swift test --skip-build --skip "$stress"
echo "== swift test (the stress trials)"
swift test --skip-build --filter "$stress"

# The conformance list, Tests/Conformance/scenarios.json, runs in all three
# clients: ConformanceTests (swift test above), test_conformance.py (pytest) and
# conformance.c (make check).
echo "== Python client against a real homed"
HOMED_BIN="$PWD/.build/debug/homed" python3 -m pytest -q Clients/python
# Each provider's and bridge's tests in a run of their own: their test modules
# share names (test_end_to_end, test_mapping), which one pytest process cannot
# collect together.
for suite in Clients/providers/sysfs Clients/providers/zigbee2mqtt Clients/providers/mqtt \
  Clients/providers/homekit Clients/bridges/homeassistant/tests Clients/bridges/homekit/tests \
  Clients/bridges/nats/tests; do
  echo "== $suite against a real homed"
  HOMED_BIN="$PWD/.build/debug/homed" python3 -m pytest -q "$suite"
done

echo "== C client library (Clients/c: make check, with AddressSanitizer and UBSan)"
make -s -C Clients/c check HOMED_BIN="$PWD/.build/debug/homed"

# A short smoke run of the fuzzer over the frame decoder, the envelope and every
# method (Fuzz/README.md); its own release build with AddressSanitizer.
echo "== fuzzing smoke (Scripts/fuzz.sh 60)"
python3 Fuzz/make-corpus.py --check
Scripts/fuzz.sh 60

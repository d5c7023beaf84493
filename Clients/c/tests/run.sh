#!/bin/sh
# Runs the C client's tests (built by `make check` with AddressSanitizer and
# UBSan): the framing and cursor alone, the client against a misbehaving fake
# server, then against a real homed started here (HOMED_BIN) — its tests, the
# conformance list (on a homed of its own) and homewatch, whose lines must equal `homectl watch`'s for the same event — and
# finally `make install` into a temporary prefix, building a program against
# the installed library with pkg-config.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
HOMED_BIN=${HOMED_BIN:-../../.build/debug/homed}
HOMECTL_BIN=${HOMECTL_BIN:-$(dirname "$HOMED_BIN")/homectl}
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

echo "-- test_frames"
"$BUILD/asan/test_frames" ../../Tests/Fixtures/frames
echo "-- test_fake_server"
"$BUILD/asan/test_fake_server"

if [ ! -x "$HOMED_BIN" ] || [ ! -x "$HOMECTL_BIN" ]; then
  echo "run.sh: no homed at $HOMED_BIN or homectl at $HOMECTL_BIN: build them (swift build) or set HOMED_BIN" >&2
  exit 1
fi
work=$(mktemp -d /tmp/homed-c-tests.XXXXXX)
daemon=""
cleanup() {
  for pid in $daemon ${watchers:-}; do kill "$pid" 2>/dev/null || true; done
  for pid in $daemon ${watchers:-}; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
export HOMED_SOCKET="$work/homed.sock"
"$HOMED_BIN" --demo --no-simulator --in-memory --socket "$HOMED_SOCKET" >"$work/homed.log" 2>&1 &
daemon=$!
tries=0
until [ -S "$HOMED_SOCKET" ]; do
  tries=$((tries + 1))
  if [ $tries -gt 200 ] || ! kill -0 "$daemon" 2>/dev/null; then
    echo "run.sh: homed did not start listening on $HOMED_SOCKET:" >&2
    cat "$work/homed.log" >&2
    exit 1
  fi
  sleep 0.1
done

echo "-- test_daemon"
"$BUILD/asan/test_daemon"

echo "-- the conformance list (Tests/Conformance/scenarios.json)"
"$BUILD/asan/conformance" ../../Tests/Conformance/scenarios.json "$HOMED_BIN"

echo "-- homewatch and homectl watch print the same line"
"$BUILD/asan/homewatch" --markers -n 1 >"$work/homewatch.out" 2>"$work/homewatch.err" &
homewatch=$!
"$HOMECTL_BIN" watch --markers -C 1 >"$work/homectl.out" 2>"$work/homectl.err" &
homectl=$!
watchers="$homewatch $homectl"
# Both subscribed (their first line is the subscribed marker) before the write.
tries=0
until [ -s "$work/homewatch.out" ] && [ -s "$work/homectl.out" ]; do
  tries=$((tries + 1))
  if [ $tries -gt 200 ]; then
    echo "run.sh: the watchers did not subscribe:" >&2
    cat "$work/homewatch.err" "$work/homectl.err" >&2
    exit 1
  fi
  sleep 0.1
done
"$HOMECTL_BIN" set "Living Room/Lamp/Brightness" 64 >/dev/null
wait "$homewatch"
wait "$homectl"
watchers=""
python3 - "$work/homewatch.out" "$work/homectl.out" <<'PY'
import json, sys
lines = [[json.loads(line) for line in open(path)] for path in sys.argv[1:]]
names = ("homewatch", "homectl watch")
for name, got in zip(names, lines):
    kinds = [line["kind"] for line in got]
    assert kinds == ["subscribed", "value"], f"{name} printed {kinds}"
ours, theirs = (got[1] for got in lines)
assert list(ours) == list(theirs), f"the fields differ:\n  homewatch:     {list(ours)}\n  homectl watch: {list(theirs)}"
for key in ours:
    if key == "origin":
        continue
    assert ours[key] == theirs[key], f"{key}: homewatch {ours[key]!r}, homectl watch {theirs[key]!r}"
assert ours["value"] == 64 and ours["accessory"] == "Lamp", ours
assert {k: v for k, v in ours["origin"].items()} == theirs["origin"], (ours["origin"], theirs["origin"])
print("ok   the same line:", json.dumps(ours)[:100] + "…")
PY

echo "-- make install and a program built with pkg-config"
make -s install PREFIX="$work/prefix" >/dev/null
cat >"$work/uses_library.c" <<'C'
#include <homed/client.h>
#include <stdio.h>
int main(void) {
    homed_client *client;
    homed_status status;
    int code = homed_connect(NULL, NULL, &client, &status);
    if (code) { printf("%s\n", status.message); return code; }
    printf("connection %llu\n", (unsigned long long)homed_hello_reply(client)->connection_id);
    homed_close(client);
    return 0;
}
C
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
# shellcheck disable=SC2046
${CC:-cc} "$work/uses_library.c" -o "$work/uses_shared" $(pkg-config --cflags --libs homed-client)
LD_LIBRARY_PATH="$work/prefix/lib" "$work/uses_shared" | grep -q '^connection [1-9]'
# shellcheck disable=SC2046
${CC:-cc} "$work/uses_library.c" -o "$work/uses_static" $(pkg-config --cflags homed-client) \
  "$work/prefix/lib/libhomed-client.a" $(pkg-config --libs libprotobuf-c)
"$work/uses_static" | grep -q '^connection [1-9]'
[ -x "$work/prefix/bin/homewatch" ]
echo "ok   installed: $(cd "$work/prefix" && find . -type f -o -type l | sort | tr '\n' ' ')"
echo "run.sh: every C client test passed"

#!/usr/bin/env bash
# Quick start: build homed and run it on its defaults with the demo home, so that
# `homectl watch` (in another shell) shows live changes at once.
#
# The demo's database is a temporary one, removed when homed ends: run as root,
# the default would be /var/lib/homed/homed.sqlite, the system service's. Give
# --db PATH (or --in-memory) to choose; other arguments go to homed as they are.
# However this script is stopped (Ctrl-C, kill PID, kill -9 PID, its terminal
# closed), homed stops with it, before the temporary database goes.
# HOMED_BIN: run that homed instead of building (the tests do).
set -euo pipefail
cd "$(dirname "$0")/.."
homed=${HOMED_BIN:-}
if [[ -z $homed ]]; then
  Scripts/bootstrap.sh
  swift build --product homed
  swift build --product homectl
  homed=.build/debug/homed
fi

database=()
chosen=no
for argument in "$@"; do
  case "$argument" in --db | --db=* | --in-memory) chosen=yes ;; esac
done
if [[ $chosen == no ]]; then
  scratch=$(mktemp -d "${TMPDIR:-/tmp}/homed-demo.XXXXXX")
  database=(--db "$scratch/homed.sqlite")
  echo "homed: the demo's database is $scratch/homed.sqlite (removed when homed ends; --db PATH keeps one)" >&2
fi
echo "homed: starting with the demo home; in another shell try: .build/debug/homectl watch | jq ." >&2
# Not exec: the database is removed once homed has ended. homed gets SIGTERM when
# this script ends, however it ends (setpriv --pdeathsig: even by kill -9), and a
# signal to the script is passed on to homed, which shuts down cleanly; only then
# does the scratch directory go.
setpriv --pdeathsig TERM -- "$homed" --demo "${database[@]}" "$@" &
pid=$!
stopped=no
stop() { stopped=yes; kill -TERM "$pid" 2>/dev/null || true; }
trap 'stop' INT TERM HUP
status=0
while kill -0 "$pid" 2>/dev/null; do
  wait "$pid" && status=0 || status=$?
done
[[ -n ${scratch:-} ]] && rm -rf "$scratch"
# homed ended by the signal passed on is a clean stop, not a failure.
[[ $stopped == yes ]] && ((status >= 128)) && status=0
exit "$status"

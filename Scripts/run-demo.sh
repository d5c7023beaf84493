#!/usr/bin/env bash
# Quick start: build homed and run it on its defaults with the demo home, so that
# `homectl watch` (in another shell) shows live changes at once.
#
# The demo's database is a temporary one, removed when homed ends: run as root,
# the default would be /var/lib/homed/homed.sqlite, the system service's. Give
# --db PATH (or --in-memory) to choose; other arguments go to homed as they are.
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/bootstrap.sh
swift build --product homed
swift build --product homectl

database=()
chosen=no
for argument in "$@"; do
  case "$argument" in --db | --db=* | --in-memory) chosen=yes ;; esac
done
if [[ $chosen == no ]]; then
  scratch=$(mktemp -d "${TMPDIR:-/tmp}/homed-demo.XXXXXX")
  trap 'rm -rf "$scratch"' EXIT
  database=(--db "$scratch/homed.sqlite")
  echo "homed: the demo's database is $scratch/homed.sqlite (removed when homed ends; --db PATH keeps one)" >&2
fi
echo "homed: starting with the demo home; in another shell try: .build/debug/homectl watch | jq ." >&2
# Not exec: the trap removes the scratch database once homed has ended (Ctrl-C
# reaches homed too, which shuts down cleanly).
.build/debug/homed --demo "${database[@]}" "$@"

#!/usr/bin/env bash
# Quick start: build homed and run it on its defaults with the demo home, so that
# `homectl watch` (in another shell) shows live changes at once.
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/bootstrap.sh
swift build --product homed
swift build --product homectl
echo "homed: starting with the demo home; in another shell try: .build/debug/homectl watch | jq ." >&2
exec .build/debug/homed --demo "$@"

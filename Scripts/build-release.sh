#!/usr/bin/env bash
# The release build that Scripts/install.sh installs and the Debian package ships:
# homed, homectl and homed-sim, and homed-web (Web/, a package of its own with its
# own .build), with the Swift runtime and Foundation linked in. Scripts/test.sh makes
# it beside the Python suites and tests homed-web from it; install.sh makes it when
# not given --no-build. One set of flags here, so that each finds the other's build
# up to date.
#   Scripts/build-release.sh [--web-only | --main-only]
set -euo pipefail
cd "$(dirname "$0")/.."
# The service runs as its own user with ProtectHome=yes, which must not need a
# toolchain that may live in a home directory: hence the static runtime.
swift_build=(swift build -c release --static-swift-stdlib)
main=yes web=yes
case "${1:-}" in
  "") ;;
  --web-only) main=no ;;
  --main-only) web=no ;;
  *) echo "build-release: unknown argument '$1' (--web-only, --main-only)" >&2; exit 2 ;;
esac
if [[ $main == yes ]]; then
  for product in homed homectl homed-sim; do
    echo "== swift build -c release --static-swift-stdlib --product $product"
    "${swift_build[@]}" --product "$product"
  done
fi
if [[ $web == yes ]]; then
  echo "== swift build --package-path Web -c release --static-swift-stdlib --product homed-web"
  "${swift_build[@]}" --package-path Web --product homed-web
fi

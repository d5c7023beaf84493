#!/usr/bin/env bash
# Every import in Sources/ says what it exposes (public, package or internal), so a
# module's public interface is what its author chose; a C module (C*) is never
# imported publicly, and nothing is re-exported with @_exported.
set -euo pipefail
cd "$(dirname "$0")/.."

status=0
if bare=$(grep -rnE '^[[:space:]]*(@preconcurrency )?import ' Sources Benchmarks/Sources Fuzz/Sources --include='*.swift'); then
  echo "imports without an access level (write 'internal import X' or 'public import X'):" >&2
  echo "$bare" >&2
  status=1
fi
if leaked=$(grep -rnE '^[[:space:]]*(public|package) import C[A-Za-z]*$' Sources --include='*.swift'); then
  echo "C modules imported into an interface (import them internally; give users Swift values):" >&2
  echo "$leaked" >&2
  status=1
fi
if exported=$(grep -rn '@_exported' Sources --include='*.swift'); then
  echo "re-exports (a client imports what it uses itself):" >&2
  echo "$exported" >&2
  status=1
fi
exit $status

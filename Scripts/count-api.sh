#!/usr/bin/env bash
# The size of what HomeModel and HomeWire show: public declarations in their
# hand-written files (all, those a user sees, those behind @_spi(Wire) that only
# this repository's Benchmarks and Fuzz packages import), and HomeWire's
# hand-written Swift lines (the generated file aside).
#   Scripts/count-api.sh
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t files < <(find Sources/HomeModel Sources/HomeWire -name '*.swift' \
  ! -path '*/Generated/*' ! -name '*+Generated.swift' | sort)
awk '
  FNR == 1 { spiDepth = -1; depth = 0; pendingSPI = 0 }
  {
    line = $0
    isDecl = (line ~ /^[ \t]*(@[A-Za-z_]+(\([^)]*\))? )*public / && line !~ /public import/)
    # An attribute line of its own: @_spi(Wire) (with @inlinable) above the declaration.
    if (line ~ /^[ \t]*@_spi\(Wire\)[ \t]*(@[A-Za-z]+[ \t]*)*$/) pendingSPI = 1
    spi = (spiDepth >= 0) || (line ~ /@_spi/) || pendingSPI
    if (isDecl) { total++; if (!spi) visible++; pendingSPI = 0 }
    # The members of an SPI type, and of extensions of one, are SPI too.
    if ((line ~ /@_spi\(Wire\) public (struct|enum)/ || line ~ /^extension WireFrame/) && spiDepth < 0) spiDepth = depth
    opened = gsub(/\{/, "{", line); closed = gsub(/\}/, "}", line)
    depth += opened - closed
    if (spiDepth >= 0 && depth <= spiDepth && closed > 0) spiDepth = -1
  }
  END { printf "public declarations in HomeModel + HomeWire: %d (seen by users: %d, behind @_spi(Wire): %d)\n",
        total, visible, total - visible }
' "${files[@]}"

lines=$(find Sources/HomeWire -name '*.swift' ! -path '*/Generated/*' -exec cat {} + | wc -l)
echo "hand-written Swift in Sources/HomeWire: $lines lines"

#!/usr/bin/env bash
# Regenerates everything made from Protos/: the protoc-c output, the Swift half
# of the bridge (Scripts/generate-swift-wire.py) and the descriptor set the
# Python client loads. The protoc-c output serves the daemon and the C client
# library (Clients/c) alike. Run after every change to Protos/.
#   Scripts/generate-proto.sh          regenerate in place
#   Scripts/generate-proto.sh --check  fail if the committed files differ
set -euo pipefail
cd "$(dirname "$0")/.."

command -v protoc-c >/dev/null || { echo "protoc-c not found: apt-get install protobuf-c-compiler libprotobuf-c-dev" >&2; exit 1; }

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
protoc-c --proto_path=Protos --c_out="$out" Protos/*.proto
protoc-c --proto_path=Protos --descriptor_set_out="$out/home_v1.desc" Protos/*.proto
# With source info: the generated Swift carries the schema's comments.
protoc-c --proto_path=Protos --include_source_info --descriptor_set_out="$out/home_v1.source.desc" Protos/*.proto
# The test venv's python (Scripts/bootstrap.sh --python) has the pinned protobuf.
python=python3
[[ -x .venv/bin/python ]] && python=.venv/bin/python
"$python" -c "import google.protobuf" 2>/dev/null || { echo "$python has no protobuf: Scripts/bootstrap.sh --python" >&2; exit 1; }
"$python" Scripts/generate-swift-wire.py "$out/home_v1.source.desc" "$out/home_v1.pb-c.h" "$out/home_v1.wire.swift"

targets=(
  "$out/home_v1.pb-c.c:Sources/CHomeProto/home_v1.pb-c.c"
  "$out/home_v1.pb-c.h:Sources/CHomeProto/include/home_v1.pb-c.h"
  "$out/home_v1.wire.swift:Sources/HomeWire/Generated/home_v1.wire.swift"
  "$out/home_v1.desc:Clients/python/homed/home_v1.desc"
)

if [[ "${1:-}" == "--check" ]]; then
  status=0
  for pair in "${targets[@]}"; do
    src=${pair%%:*}; dst=${pair#*:}
    if ! cmp -s "$src" "$dst"; then
      echo "generated code is stale: $dst differs from a fresh protoc-c run (run Scripts/generate-proto.sh)" >&2
      status=1
    fi
  done
  exit $status
fi

for pair in "${targets[@]}"; do
  src=${pair%%:*}; dst=${pair#*:}
  mkdir -p "$(dirname "$dst")"
  cp "$src" "$dst"
done
echo "regenerated: ${targets[*]#*:}"

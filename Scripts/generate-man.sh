#!/usr/bin/env bash
# Regenerates the man pages in Packaging/man/ from the executables' own argument
# definitions (swift-argument-parser's generate-manual plugin), one page per
# executable with every subcommand in it, finished by Scripts/man-sections.py with the
# hand-written sections in Packaging/man/sections/. Run after changing an option, a
# help text or a section.
#   Scripts/generate-man.sh          regenerate in place
#   Scripts/generate-man.sh --check  fail if the committed pages differ
# Builds the debug executables first when they are not built yet.
set -euo pipefail
cd "$(dirname "$0")/.."

# The pages carry this date rather than the day they were made, so a fresh generation
# matches the committed pages; move it forward with a release.
date=2026-11-24
pages=(homed homectl homed-sim)

log=$(mktemp)
out=$(mktemp -d)
trap 'rm -rf "$log" "$out"' EXIT
if ! swift package generate-manual --configuration debug --date "$date" >"$log" 2>&1; then
  cat "$log" >&2
  echo "generate-man: swift package generate-manual failed" >&2
  exit 1
fi
for page in "${pages[@]}"; do
  # The plugin says where it wrote each executable's page: "Generated manual in 'file:///…/homed'".
  dir=$(sed -n "s|^Generated manual in 'file://\(.*/$page\)/*'\$|\1|p" "$log")
  if [[ -z "$dir" || ! -f "$dir/$page.1" ]]; then
    cat "$log" >&2
    echo "generate-man: no page for $page in the plugin's output" >&2
    exit 1
  fi
  cp "$dir/$page.1" "$out/$page.1"
  # The sections people look for (ENVIRONMENT, FILES, EXIT STATUS, EXAMPLES, SEE
  # ALSO), and homectl's common options once.
  extra=()
  [[ $page == homectl ]] && extra=(--common-options)
  python3 Scripts/man-sections.py "$out/$page.1" "Packaging/man/sections/$page.mdoc" "${extra[@]}"
done

if [[ "${1:-}" == "--check" ]]; then
  status=0
  for page in "${pages[@]}"; do
    if ! cmp -s "$out/$page.1" "Packaging/man/$page.1"; then
      echo "man page is stale: Packaging/man/$page.1 differs from a fresh generation (run Scripts/generate-man.sh)" >&2
      status=1
    fi
  done
  exit $status
fi

mkdir -p Packaging/man
written=()
for page in "${pages[@]}"; do
  cp "$out/$page.1" "Packaging/man/$page.1"
  written+=("Packaging/man/$page.1")
done
echo "regenerated: ${written[*]}"

#!/usr/bin/env bash
# Removes what Scripts/install.sh installed, by its manifest, never by a pattern:
#   Scripts/uninstall.sh ROOT MANIFEST
# ROOT is DESTDIR/PREFIX; MANIFEST is the manifest's path relative to it
# (share/homed/install-manifest). Each line is "f PATH" (a file install.sh put) or
# "d PATH" (a directory it made), PATH relative to ROOT. Files go first, then the
# directories that are empty, deepest first; the manifest itself last. Run it through
# `Scripts/install.sh --uninstall [--prefix DIR] [--destdir DIR]`.
set -euo pipefail

die() { echo "uninstall: $*" >&2; exit 2; }
(($# == 2)) || die "usage: Scripts/uninstall.sh ROOT MANIFEST"
root=${1%/}
manifest="$root/$2"
[[ -f "$manifest" ]] || die "no manifest at $manifest: nothing was installed there by install.sh (or it was removed by hand)"

# Every line must be one of ours, naming a path inside ROOT: a manifest edited into
# "f ../../etc/passwd" must not remove anything.
while IFS= read -r line; do
  [[ "$line" =~ ^[fd]\ [^/].*$ ]] || die "$manifest: not an entry: '$line'"
  [[ "/${line:2}/" != *"/../"* && "/${line:2}/" != *"/./"* ]] || die "$manifest: a path leaving $root: '$line'"
done <"$manifest"

mapfile -t files < <(sed -n 's/^f //p' "$manifest")
# Deepest first, so a parent is empty once its children are gone.
mapfile -t dirs < <(sed -n 's/^d //p' "$manifest" | awk -F/ '{ print NF "\t" $0 }' | sort -rn | cut -f2-)

removed=0
for path in "${files[@]}"; do
  target="$root/$path"
  if [[ -d "$target" && ! -L "$target" ]]; then
    echo "uninstall: $target is a directory now, not the file installed there: left" >&2
  elif [[ -e "$target" || -L "$target" ]]; then
    rm -f "$target"
    echo "removed $target"
    removed=$((removed + 1))
  fi
done
rm -f "$manifest"
# A directory that holds something else (another program's completion, a file of the
# admin's) stays.
for path in "${dirs[@]}"; do
  rmdir "$root/$path" 2>/dev/null && echo "removed $root/$path/" || true
done
echo "uninstall: removed $removed files from $root; /var/lib/homed and the homed user, if made, are kept"

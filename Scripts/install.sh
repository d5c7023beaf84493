#!/usr/bin/env bash
# Builds homed, homectl and homed-sim in release mode and installs them with their man
# pages, shell completions, systemd units (system and user) and sysusers.d entry.
#   Scripts/install.sh [--prefix DIR] [--destdir DIR]
# --prefix (default /usr/local): where the files will live; the units' ExecStart= names
#   PREFIX/bin/homed. systemd reads units from /usr/local/lib/systemd too.
# --destdir: stage the tree under DIR instead of / (for packages): files go to
#   DESTDIR/PREFIX/…, while the units still name PREFIX/bin/homed.
# Then, for the system service (as root):
#   systemd-sysusers homed.conf && systemctl daemon-reload && systemctl enable --now homed.socket homed.service
# or for a user's own homed:
#   systemctl --user daemon-reload && systemctl --user enable --now homed.socket homed.service
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,13s/^# \{0,1\}//p' "$0"; }

prefix=/usr/local
destdir=""
while (($#)); do
  case "$1" in
    --prefix) prefix=${2:?--prefix needs a directory}; shift 2 ;;
    --prefix=*) prefix=${1#*=}; shift ;;
    --destdir) destdir=${2:?--destdir needs a directory}; shift 2 ;;
    --destdir=*) destdir=${1#*=}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "install.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
# The units name the binary by this path: it must not depend on where install.sh ran.
[[ "$prefix" == /* ]] || { echo "install.sh: --prefix must be an absolute path, not '$prefix'" >&2; exit 2; }
prefix=${prefix%/}
[[ -n "$destdir" && "$destdir" != /* ]] && destdir="$PWD/$destdir"
root="${destdir%/}$prefix"

Scripts/bootstrap.sh
# The Swift runtime and Foundation linked in: the service runs as its own user with
# ProtectHome=yes, which must not need a toolchain that may live in a home directory.
build=(swift build -c release --static-swift-stdlib)
for product in homed homectl homed-sim; do
  echo "== swift build -c release --product $product"
  "${build[@]}" --product "$product"
done
bin=$("${build[@]}" --show-bin-path)

echo "== installing into $root"
install -d "$root/bin" "$root/share/man/man1" "$root/share/bash-completion/completions" \
  "$root/share/zsh/site-functions" "$root/share/fish/vendor_completions.d" \
  "$root/lib/systemd/system" "$root/lib/systemd/user" "$root/lib/sysusers.d"
for program in homed homectl homed-sim; do
  install -m 755 "$bin/$program" "$root/bin/$program"
  install -m 644 "Packaging/man/$program.1" "$root/share/man/man1/$program.1"
  # Each program writes its own completion scripts (swift-argument-parser).
  "$bin/$program" --generate-completion-script bash >"$root/share/bash-completion/completions/$program"
  "$bin/$program" --generate-completion-script zsh >"$root/share/zsh/site-functions/_$program"
  "$bin/$program" --generate-completion-script fish >"$root/share/fish/vendor_completions.d/$program.fish"
done
chmod 644 "$root"/share/bash-completion/completions/* "$root"/share/zsh/site-functions/_* \
  "$root"/share/fish/vendor_completions.d/*.fish

unit() { # unit SOURCE DESTINATION: the unit with @BINDIR@ made the installed bin directory
  sed "s|@BINDIR@|$prefix/bin|g" "$1" >"$2"
  chmod 644 "$2"
}
for name in homed.service homed.socket; do
  unit "Packaging/systemd/$name" "$root/lib/systemd/system/$name"
  unit "Packaging/systemd/user/$name" "$root/lib/systemd/user/$name"
done
install -m 644 Packaging/sysusers.d/homed.conf "$root/lib/sysusers.d/homed.conf"
# The configuration's every key, commented out: copy it to /etc/homed/homed.yaml.
install -d "$root/share/doc/homed"
install -m 644 Packaging/config/homed.yaml "$root/share/doc/homed/homed.yaml"

echo "installed:"
(cd "$root" && find . -type f | sort | sed 's|^\./|  '"$root"'/|')

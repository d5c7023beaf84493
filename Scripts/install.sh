#!/usr/bin/env bash
# Builds homed, homectl, homed-sim and homed-web (Web/) in release mode and installs them with their man
# pages, shell completions, systemd units (system and user), sysusers.d and tmpfiles.d
# entries, the Python integrations (each in a venv of its own under
# PREFIX/lib/homed/venvs, its commands in PREFIX/bin: Scripts/install-python.sh; PYTHON
# names the interpreter, default python3, which must be 3.11), and a manifest of every
# file it installed.
#   Scripts/install.sh [--prefix DIR] [--destdir DIR] [--no-build] [--homectl-name NAME]
#   Scripts/install.sh --uninstall [--prefix DIR] [--destdir DIR]
# --prefix (default /usr/local): where the files will live; the units' ExecStart= names
#   PREFIX/bin/homed. systemd reads units from /usr/local/lib/systemd too.
# --destdir: stage the tree under DIR instead of / (for packages): files go to
#   DESTDIR/PREFIX/…, while the units still name PREFIX/bin/homed.
# --no-build: install the release binaries already in .build (from an earlier
#   install.sh, Scripts/build-release.sh or Scripts/test.sh) instead of building.
# --homectl-name: install homectl under another name (homed-ctl). Without it, a
#   homectl that is not homed's (Debian's systemd-homed has one) is never replaced:
#   homed's is installed beside it as homed-ctl.
# --uninstall: remove exactly the files PREFIX/share/homed/install-manifest lists
#   (and the directories install.sh created, when empty). /var/lib/homed and the
#   homed user stay, as a removed Debian package leaves them.
# Then, for the system service (as root):
#   systemd-sysusers homed.conf && systemd-tmpfiles --create homed.conf && systemctl daemon-reload
#   systemctl enable --now homed.socket homed.service
# or for a user's own homed:
#   systemctl --user daemon-reload && systemctl --user enable --now homed.socket homed.service
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,28s/^# \{0,1\}//p' "$0"; }
die() { echo "install.sh: $*" >&2; exit 2; }

prefix=/usr/local
destdir=""
build=yes
uninstall=no
ctl_name=""
while (($#)); do
  case "$1" in
    --prefix) prefix=${2:?--prefix needs a directory}; shift 2 ;;
    --prefix=*) prefix=${1#*=}; shift ;;
    --destdir) destdir=${2:?--destdir needs a directory}; shift 2 ;;
    --destdir=*) destdir=${1#*=}; shift ;;
    --no-build) build=no; shift ;;
    --homectl-name) ctl_name=${2:?--homectl-name needs a name}; shift 2 ;;
    --homectl-name=*) ctl_name=${1#*=}; shift ;;
    --uninstall) uninstall=yes; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "install.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
# The units name the binary by this path: it must not depend on where install.sh ran.
[[ "$prefix" == /* ]] || die "--prefix must be an absolute path, not '$prefix'"
prefix=${prefix%/}
[[ -n "$destdir" && "$destdir" != /* ]] && destdir="$PWD/$destdir"
[[ -z "$ctl_name" || "$ctl_name" =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] \
  || die "--homectl-name must be a plain file name, not '$ctl_name'"
root="${destdir%/}$prefix"
# Paths in the manifest are relative to the prefix, so a staged tree's manifest is
# still right once the tree is copied to its final place.
manifest_path=share/homed/install-manifest
manifest="$root/$manifest_path"

if [[ $uninstall == yes ]]; then
  # Units left enabled would point at files that are gone: disabling is the admin's
  # call. systemctl enable links each unit by its path, so a link to this prefix's
  # unit is this install's (a Debian package's homed.service is under /usr/lib).
  if [[ -z "$destdir" ]]; then
    for link in /etc/systemd/system/*.wants/homed.service /etc/systemd/system/*.wants/homed.socket; do
      if [[ -L "$link" && $(readlink "$link") == "$prefix/lib/systemd/system/"* ]]; then
        die "$link: homed is enabled from $prefix; first: systemctl disable --now homed.socket homed.service"
      fi
    done
  fi
  exec Scripts/uninstall.sh "$root" "$manifest_path"
fi

# --- the binaries: built here, or from an earlier release build --------------------
# Scripts/build-release.sh's: the Swift runtime linked in, homed-web from Web/.
if [[ $build == yes ]]; then
  Scripts/bootstrap.sh
  Scripts/build-release.sh
fi
# .build/release is the link SwiftPM keeps to the last release build's directory.
bin=$PWD/.build/release
web_bin=$PWD/Web/.build/release
for program in homed homectl homed-sim; do
  [[ -x "$bin/$program" ]] || die "--no-build: no release build of $program in $bin
  build it first: Scripts/build-release.sh (or run install.sh without --no-build)"
done
[[ -x "$web_bin/homed-web" ]] || die "--no-build: no release build of homed-web in $web_bin
  build it first: Scripts/build-release.sh --web-only (or run install.sh without --no-build)"

# --- homectl's name: never replace another program's homectl ------------------------
# homed's homectl prints a bare version number (0.1.0) and says "homed" in its help;
# systemd-homed's prints "systemd 252 (…)". A file the manifest lists is ours too.
is_ours() {
  local file=$1 version
  [[ "$file" == "$root/bin/"* && -f "$manifest" ]] && grep -qx "f bin/${file##*/}" "$manifest" && return 0
  version=$(timeout 5 "$file" --version 2>/dev/null) || return 1
  [[ "$version" =~ ^[0-9]+(\.[0-9]+)+$ ]] || return 1
  # grep reads it all: with -q it could leave first, and pipefail would count the SIGPIPE.
  timeout 5 "$file" --help 2>/dev/null | grep homed >/dev/null
}
other_homectl=""
if [[ -z "$ctl_name" ]]; then
  ctl_name=homectl
  candidates=("$root/bin/homectl")
  # Installing to the real system, a homectl in /usr/bin (Debian's systemd-homed puts
  # it there) would be shadowed by /usr/local/bin/homectl for everyone: beside it, too.
  [[ -z "$destdir" && "$prefix" != /usr ]] && candidates+=(/usr/bin/homectl /bin/homectl)
  for candidate in "${candidates[@]}"; do
    if [[ -e "$candidate" || -L "$candidate" ]] && ! is_ours "$candidate"; then
      other_homectl=$candidate
      ctl_name=homed-ctl
      break
    fi
  done
fi
if [[ "$ctl_name" != homectl && -e "$root/bin/$ctl_name" ]] && ! is_ours "$root/bin/$ctl_name"; then
  die "$root/bin/$ctl_name exists and is not homed's homectl: not replacing it"
fi

# --- install, recording every file and every directory made ---------------------------
echo "== installing into $root"
installed=()
made_dirs=()
make_dir() { # make_dir RELATIVE: each missing directory on the way is recorded
  local rel=$1 path=""
  local IFS=/
  for part in $rel; do
    path=${path:+$path/}$part
    if [[ ! -d "$root/$path" ]]; then
      install -d "$root/$path"
      made_dirs+=("$path")
    fi
  done
}
put() { # put MODE SOURCE RELATIVE-DESTINATION
  make_dir "$(dirname "$3")"
  install -m "$1" "$2" "$root/$3"
  installed+=("$3")
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for program in homed homectl homed-sim; do
  name=$program
  [[ $program == homectl ]] && name=$ctl_name
  put 755 "$bin/$program" "bin/$name"
  put 644 "Packaging/man/$program.1" "share/man/man1/$name.1"
  # Each program writes its own completion scripts (swift-argument-parser), for its
  # own name; a renamed homectl gets them with every "homectl" made its new name.
  for shell in bash zsh fish; do
    "$bin/$program" --generate-completion-script "$shell" | sed "s/\b$program\b/$name/g" >"$tmp/$shell"
  done
  put 644 "$tmp/bash" "share/bash-completion/completions/$name"
  put 644 "$tmp/zsh" "share/zsh/site-functions/_$name"
  put 644 "$tmp/fish" "share/fish/vendor_completions.d/$name.fish"
done

unit() { # unit SOURCE RELATIVE-DESTINATION: the unit with @BINDIR@ made the installed bin directory
  sed "s|@BINDIR@|$prefix/bin|g" "$1" >"$tmp/unit"
  put 644 "$tmp/unit" "$2"
}
for name in homed.service homed.socket; do
  unit "Packaging/systemd/$name" "lib/systemd/system/$name"
  unit "Packaging/systemd/user/$name" "lib/systemd/user/$name"
done
# The Python integrations (Scripts/install-python.sh): each in a venv of its own
# under lib/homed/venvs with Clients/constraints.txt's versions, its commands in bin
# (homed-nats-remote, which homectl --nats runs, beside homectl; homed-homekit-provider,
# which homectl homekit runs, on PATH), their man pages and system units.
python_manifest=$tmp/python-manifest
for dir in bin share/man/man1 lib/systemd/system lib/homed; do make_dir "$dir"; done
Scripts/install-python.sh --byte-compile "$root" "$prefix" "${PYTHON:-python3}" >"$python_manifest" \
  || die "Scripts/install-python.sh failed"
while read -r kind path; do
  if [[ $kind == d ]]; then
    [[ " ${made_dirs[*]} " == *" $path "* ]] || made_dirs+=("$path")
  else
    installed+=("$path")
  fi
done <"$python_manifest"
# homed-web (Web/): its program, its hand-written man page, its system unit (not
# enabled) and its users.
put 755 "$web_bin/homed-web" bin/homed-web
put 644 Packaging/man/homed-web.1 share/man/man1/homed-web.1
unit Packaging/systemd/homed-web.service lib/systemd/system/homed-web.service
put 644 Packaging/sysusers.d/homed-web.conf lib/sysusers.d/homed-web.conf
put 644 Packaging/sysusers.d/homed.conf lib/sysusers.d/homed.conf
put 644 Packaging/tmpfiles.d/homed.conf lib/tmpfiles.d/homed.conf
# The configuration's every key, commented out: copy it to /etc/homed/homed.yaml.
put 644 Packaging/config/homed.yaml share/doc/homed/homed.yaml

# A file an earlier install put and this one did not (homectl, now homed-ctl beside
# another program's) is ours by that install's manifest: it goes, or it would still
# shadow the other homectl. The directories earlier installs made stay listed, for
# --uninstall (Scripts/uninstall.sh reads the manifest).
if [[ -f "$manifest" ]]; then
  while IFS= read -r path; do
    [[ " ${installed[*]} $manifest_path " == *" $path "* ]] && continue
    [[ "/$path/" == *"/../"* ]] && die "$manifest: a path leaving $root: '$path'"
    if [[ -f "$root/$path" || -L "$root/$path" ]]; then
      rm -f "$root/$path"
      echo "removed $root/$path (installed before, not now)"
    fi
  done < <(sed -n 's/^f //p' "$manifest")
fi
make_dir "$(dirname "$manifest_path")"
{
  printf 'f %s\n' "${installed[@]}" "$manifest_path"
  [[ -f "$manifest" ]] && grep '^d ' "$manifest"
  printf 'd %s\n' "${made_dirs[@]}"
} | grep -x '[fd] ..*' | awk '!seen[$0]++' >"$tmp/manifest"
install -m 644 "$tmp/manifest" "$manifest"

echo "installed:"
sed -n 's|^f |  '"$root"'/|p' "$manifest"
if [[ -n "$other_homectl" ]]; then
  cat >&2 <<EOF

install.sh: $other_homectl is another program's homectl (Debian's systemd-homed has
one), so homed's is $prefix/bin/homed-ctl, beside it. To have "homectl" mean homed's
for you: alias homectl=homed-ctl in ~/.bashrc, or a link earlier in your PATH:
  ln -s $prefix/bin/homed-ctl ~/.local/bin/homectl
EOF
fi

#!/usr/bin/env bash
# Builds the Debian package homed_VERSION_ARCH.deb from a release build (the Swift
# runtime linked in statically), with dpkg-deb from a staged tree:
#   Scripts/build-deb.sh [--no-build] [--output DIR] [--compression xz|gzip|zstd]
# --no-build: package the release binaries already in .build/release (install.sh's
#   --no-build) instead of building them first.
# --output: where the .deb goes (default .build/deb). Its path is the last line printed.
# --compression: dpkg-deb's (default xz, Debian's: 50 MB, minutes on two busy cores;
#   gzip: 74 MB, minutes sooner, which the package test uses).
# The tree is Scripts/install.sh --prefix /usr --destdir, laid out as Debian expects
# (zsh's vendor-completions, gzipped man pages, /etc/homed/homed.yaml a conffile), plus
# the Python client for Debian's python3, and the Python integrations (install.sh:
# each in a venv of its own under /usr/lib/homed/venvs, on Debian's python3.11,
# with Clients/constraints.txt's versions; units not enabled, man pages, READMEs and
# configuration examples). The maintainer scripts and the
# control file's template are in Packaging/debian. Not debhelper: homed builds with
# SwiftPM and a toolchain Debian does not package, so a source package and
# dpkg-buildpackage would add a build system around a build that stays the same; what
# debhelper would write into the maintainer scripts is written out there instead.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,16s/^# \{0,1\}//p' "$0"; }
die() { echo "build-deb: $*" >&2; exit 2; }

install_args=()
output=.build/deb
compression=xz
while (($#)); do
  case "$1" in
    --no-build) install_args+=(--no-build); shift ;;
    --output) output=${2:?--output needs a directory}; shift 2 ;;
    --output=*) output=${1#*=}; shift ;;
    --compression) compression=${2:?--compression needs xz, gzip or zstd}; shift 2 ;;
    --compression=*) compression=${1#*=}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "build-deb: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
[[ "$compression" =~ ^(xz|gzip|zstd)$ ]] || die "--compression takes xz, gzip or zstd, not '$compression'"
for tool in dpkg dpkg-deb dpkg-shlibdeps strip gzip; do
  command -v "$tool" >/dev/null || die "$tool not found (Debian packages dpkg-dev and binutils)"
done

umask 022
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage=$work/homed
debian=Packaging/debian

# --- the tree install.sh makes, for /usr -------------------------------------------
# homectl is homed-ctl in the package: Debian's systemd-homed ships /usr/bin/homectl,
# and two packages may not ship one path. The postinst offers the name homectl,
# while /usr/bin/homectl is free, through update-alternatives.
# The venvs run on Debian's python3.11 (the package depends on it), not on whichever
# python3 is first in PATH.
[[ -x /usr/bin/python3.11 ]] || die "/usr/bin/python3.11 not found (Debian package python3.11)"
PYTHON=/usr/bin/python3.11 Scripts/install.sh --prefix /usr --destdir "$stage" --homectl-name homed-ctl "${install_args[@]}" \
  >"$work/install.log" 2>&1 || { cat "$work/install.log" >&2; die "Scripts/install.sh failed"; }
usr=$stage/usr
rm "$usr/share/homed/install-manifest" # dpkg keeps its own list of the package's files

version=$("$usr/bin/homed" --version)
[[ "$version" =~ ^[0-9][0-9A-Za-z.+~-]*$ ]] || die "homed --version printed '$version', not a version"
arch=$(dpkg --print-architecture)

# Where Debian puts what install.sh puts for /usr/local's conventions.
mv "$usr/share/zsh/site-functions" "$usr/share/zsh/vendor-completions"
install -d "$stage/etc/homed"
mv "$usr/share/doc/homed/homed.yaml" "$stage/etc/homed/homed.yaml" # every key commented out: the defaults
gzip -9n "$usr"/share/man/man1/*.1
# The integrations' venvs: their byte code is the postinst's to make (as Debian's
# Python packages do), and their wheels' compiled modules are stripped as dh_strip
# strips Debian's own.
find "$usr/lib/homed/venvs" -name __pycache__ -type d -prune -exec rm -rf {} +
find "$usr/lib/homed/venvs" -type f -name '*.so*' -exec strip --strip-unneeded --remove-section=.comment \
  --remove-section=.note {} +
# As dh_strip does for executables: the symbols are a third of each binary.
for program in homed homed-ctl homed-sim homed-web; do
  strip --remove-section=.comment --remove-section=.note "$usr/bin/$program"
done

# homectl's completion scripts under the name homectl, the targets of the
# alternative's slave links (the ones in the usual places complete homed-ctl).
install -d "$usr/share/homed/completions"
"$usr/bin/homed-ctl" --generate-completion-script bash >"$usr/share/homed/completions/homectl.bash"
"$usr/bin/homed-ctl" --generate-completion-script zsh >"$usr/share/homed/completions/_homectl"
"$usr/bin/homed-ctl" --generate-completion-script fish >"$usr/share/homed/completions/homectl.fish"
chmod 644 "$usr"/share/homed/completions/*
# bash-completion sources these; a #! line would make them look like scripts to run.
for file in "$usr"/share/bash-completion/completions/* "$usr/share/homed/completions/homectl.bash"; do
  sed -i '1{/^#!/d}' "$file"
done

# --- the Python client, for Debian's python3 and python3-protobuf ---------------------
python=$usr/lib/python3/dist-packages/homed
(cd Clients/python/homed && find . -type f \( -name '*.py' -o -name '*.desc' \) -not -path '*/__pycache__/*') |
  while IFS= read -r file; do install -D -m 644 "Clients/python/homed/$file" "$python/$file"; done
[[ -f "$python/__init__.py" && -f "$python/home_v1.desc" ]] || die "the Python client is not in $python"
sed 's|@BINDIR@|/usr/bin|g' Packaging/systemd/user/homed-sysfs.service >"$usr/lib/systemd/user/homed-sysfs.service"
chmod 644 "$usr/lib/systemd/user/homed-sysfs.service"

# --- documentation ---------------------------------------------------------------
doc=$usr/share/doc/homed
install -m 644 "$debian/copyright" "$doc/copyright"
install -D -m 644 "$debian/lintian-overrides" "$usr/share/lintian/overrides/homed"
# Each integration's README (its unit's Documentation=) and configuration examples.
for readme in providers/zigbee2mqtt:zigbee2mqtt providers/mqtt:mqtt-devices providers/homekit:homekit-provider \
  providers/sysfs:sysfs providers/esphome:esphome providers/hue:hue bridges/homeassistant:homeassistant \
  bridges/homekit:homekit bridges/nats:nats; do
  install -m 644 "Clients/${readme%%:*}/README.md" "$doc/README.${readme#*:}.md"
done
install -D -m 644 Clients/bridges/homeassistant/homed-mqtt.example.ini "$doc/examples/homed-mqtt.example.ini"
install -D -m 644 Clients/bridges/nats/homed-nats.example.ini "$doc/examples/homed-nats.example.ini"
install -m 644 Web/README.md "$doc/README.web.md"
install -m 644 README.md "$doc/README.md"
gzip -9n "$doc/README.md"
# The pages README.md links to, where its links lead (docs/…).
install -d "$doc/docs"
install -m 644 docs/*.md "$doc/docs/"
install -D -m 644 Sources/HomeSimulator/Demo/demo-home.yaml "$doc/examples/demo-home.yaml"
# A native package's changelog: one entry, from the commit it was built from.
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
date=$(git log -1 --format=%cD 2>/dev/null || date -R)
maintainer=$(sed -n 's/^Maintainer: //p' "$debian/control.in")
printf 'homed (%s) unstable; urgency=medium\n\n  * Built from commit %s by Scripts/build-deb.sh.\n\n -- %s  %s\n' \
  "$version" "$commit" "$maintainer" "$date" | gzip -9n >"$doc/changelog.gz"

# --- DEBIAN: control, maintainer scripts, conffiles, md5sums -------------------------
# dpkg-shlibdeps reads the shared libraries the binaries need (libc6, libprotobuf-c1,
# libsqlite3-0, libsystemd0, …) and the versions their symbols need; it wants a
# debian/control to read, which a dpkg-deb build has no other use for.
mkdir -p "$work/shlibs/debian"
printf 'Source: homed\n\nPackage: homed\nArchitecture: any\n' >"$work/shlibs/debian/control"
shlibs=$(cd "$work/shlibs" && dpkg-shlibdeps -O "$usr/bin/homed" "$usr/bin/homed-ctl" "$usr/bin/homed-sim" 2>"$work/shlibdeps.log") \
  || { cat "$work/shlibdeps.log" >&2; die "dpkg-shlibdeps failed"; }
shlibs=${shlibs#shlibs:Depends=}
[[ -n "$shlibs" ]] || die "dpkg-shlibdeps found no libraries"

install -d "$stage/DEBIAN"
installed_size=$(du -sk --apparent-size "$stage" | cut -f1)
sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@INSTALLED_SIZE@|$installed_size|" \
  -e "s|@SHLIBS_DEPENDS@|$shlibs|" "$debian/control.in" >"$stage/DEBIAN/control"
for script in postinst prerm postrm; do install -m 755 "$debian/$script" "$stage/DEBIAN/$script"; done
install -m 644 "$debian/conffiles" "$stage/DEBIAN/conffiles"
(cd "$stage" && find . -path ./DEBIAN -prune -o -path ./etc -prune -o -type f -printf '%P\0' | sort -z |
  xargs -0 md5sum) >"$stage/DEBIAN/md5sums"
chmod 644 "$stage/DEBIAN/md5sums"
chmod 755 "$stage"

# The files' times are the commit's: the same commit builds the same package.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
mkdir -p "$output"
deb="$output/homed_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Z"$compression" --build "$stage" "$deb" >/dev/null
echo "build-deb: $(dpkg-deb --field "$deb" Package Version Architecture | tr '\n' ' ')"
echo "$deb"

#!/usr/bin/env bash
# Builds the Debian package (Scripts/build-deb.sh) and installs it with dpkg into a
# fresh root made here, then checks what a Debian admin relies on:
# - every file in its place with its mode, /etc/homed/homed.yaml a conffile;
# - the postinst made the homed user and group and /var/lib/homed (homed's, 0700),
#   and enabled nothing; /usr/bin/homectl is homed-ctl through update-alternatives;
# - the packaged programs run (homed serves, homed-ctl asks it, homed reads the
#   shipped homed.yaml), bash completes both names, the Python client imports;
# - another package's homectl (a stand-in for systemd-homed, built here) is never
#   replaced, whichever is installed first, nor removed with homed;
# - remove keeps /var/lib/homed, the conffile and the user; purge removes
#   /var/lib/homed and /etc/homed and leaves nothing else behind;
# - lintian finds no errors.
#   Scripts/tests/test-package.sh [--no-build]
# --no-build packages the release binaries already in .build/release.
# dpkg --root runs maintainer scripts chrooted into the root, which would need a
# whole Debian there; --force-script-chrootless runs them here with DPKG_ROOT set,
# which systemd-sysusers, systemd-tmpfiles, update-alternatives and
# deb-systemd-helper honour (the package's scripts pass it on). Needs root for
# dpkg (sudo otherwise), and lintian (Scripts/bootstrap.sh --package installs it).
set -euo pipefail
cd "$(dirname "$0")/../.."

build_args=()
case "${1:-}" in
  --no-build) build_args+=(--no-build) ;;
  "") ;;
  *) echo "test-package: unknown argument '$1' (only --no-build)" >&2; exit 2 ;;
esac
sudo_cmd=()
[[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)

tmp=$(mktemp -d)
trap '"${sudo_cmd[@]}" rm -rf "$tmp"' EXIT
fail() { echo "test-package: FAIL: $*" >&2; exit 1; }
# No "producer | grep -q" here: grep -q leaves at the first match, the producer dies of
# SIGPIPE, and with pipefail the match reads as a failure. grep >/dev/null reads all.
step() { echo "== test-package: $*"; }

step "building the package"
SECONDS=0
Scripts/build-deb.sh --output "$tmp" --compression gzip "${build_args[@]}" >"$tmp/build.log" 2>&1 \
  || { cat "$tmp/build.log" >&2; fail "Scripts/build-deb.sh failed"; }
deb=$(tail -1 "$tmp/build.log")
[[ -f "$deb" ]] || fail "build-deb.sh did not print the package's path (last line: $deb)"
echo "   $deb ($(du -h "$deb" | cut -f1), ${SECONDS}s)"
version=$(dpkg-deb --field "$deb" Version)

step "lintian"
# --fail-on error: warnings are reported, not fatal. Overrides, each with its reason,
# are in Packaging/debian/lintian-overrides (dpkg-deb packages carry them in the tree).
lintian --fail-on error --tag-display-limit 0 "$deb" >"$tmp/lintian.log" 2>&1 || {
  cat "$tmp/lintian.log" >&2
  fail "lintian found errors"
}
sed 's/^/   /' "$tmp/lintian.log"

# --- a fresh root with an empty dpkg database -----------------------------------------
root=$tmp/root
mkdir -p "$root"/var/lib/dpkg/{info,updates,triggers,alternatives} "$root"/etc/alternatives "$root"/usr/bin
touch "$root"/var/lib/dpkg/{status,available}
dpkg_root() { # the package's dependencies are not in the empty root: they are forced.
  # --log: dpkg would log to this machine's /var/log/dpkg.log, not the root's.
  "${sudo_cmd[@]}" dpkg --root="$root" --log="$tmp/dpkg-history.log" --force-script-chrootless --force-depends "$@"
}
installed() { dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${db:Status-Status}' homed 2>/dev/null || true; }
mode_owner() { stat -c '%a %U:%G' "$root$1"; }
snapshot() { # every path in the root but dpkg's, update-alternatives' and d-s-h's records
  (cd "$root" && find . -path ./var/lib/dpkg -prune -o -path ./etc/alternatives -prune \
    -o -path ./var/lib/systemd/deb-systemd-helper-enabled -prune -o -print | sort)
}

# A stand-in for Debian's systemd-homed, which owns /usr/bin/homectl, its man page and
# its bash completion (the paths of systemd-homed 252).
other=$tmp/other
mkdir -p "$other"/DEBIAN "$other"/usr/bin "$other"/usr/share/man/man1 "$other"/usr/share/bash-completion/completions
printf '#!/bin/sh\necho "systemd 252 (252.39-1~deb12u2)"\n' >"$other/usr/bin/homectl"
chmod 755 "$other/usr/bin/homectl"
echo '.TH HOMECTL 1' | gzip -9n >"$other/usr/share/man/man1/homectl.1.gz"
echo 'complete -F _systemd_homectl homectl' >"$other/usr/share/bash-completion/completions/homectl"
printf 'Package: other-homectl\nVersion: 1\nArchitecture: all\nMaintainer: test <test@example.org>\nDescription: another homectl\n' \
  >"$other/DEBIAN/control"
dpkg-deb --root-owner-group --build "$other" "$tmp/other-homectl.deb" >/dev/null
other_sum=$(md5sum <"$other/usr/bin/homectl")

before=$(snapshot)

step "install into a fresh root"
dpkg_root -i "$deb" >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log" >&2; fail "dpkg -i failed"; }
[[ $(installed) == installed ]] || fail "homed is '$(installed)' after dpkg -i, not installed"

expected=(
  "/usr/bin/homed 755" "/usr/bin/homed-ctl 755" "/usr/bin/homed-sim 755"
  "/usr/lib/systemd/system/homed.service 644" "/usr/lib/systemd/system/homed.socket 644"
  "/usr/lib/systemd/system/homed-sysfs.service 644"
  "/usr/lib/systemd/user/homed.service 644" "/usr/lib/systemd/user/homed.socket 644"
  "/usr/lib/systemd/user/homed-sysfs.service 644"
  "/usr/lib/sysusers.d/homed.conf 644" "/usr/lib/tmpfiles.d/homed.conf 644"
  "/usr/share/man/man1/homed.1.gz 644" "/usr/share/man/man1/homed-ctl.1.gz 644" "/usr/share/man/man1/homed-sim.1.gz 644"
  "/usr/share/man/man1/homed-sysfs.1.gz 644"
  "/usr/share/bash-completion/completions/homed-ctl 644" "/usr/share/zsh/vendor-completions/_homed-ctl 644"
  "/usr/share/fish/vendor_completions.d/homed-ctl.fish 644"
  "/usr/share/bash-completion/completions/homed 644" "/usr/share/zsh/vendor-completions/_homed-sim 644"
  "/usr/share/homed/completions/homectl.bash 644" "/usr/share/homed/completions/_homectl 644"
  "/usr/share/homed/completions/homectl.fish 644"
  "/usr/lib/python3/dist-packages/homed/__init__.py 644" "/usr/lib/python3/dist-packages/homed/home_v1.desc 644"
  "/usr/lib/python3/dist-packages/homed/aio/__init__.py 644"
  "/usr/lib/homed/venvs/nats/pyvenv.cfg 644" "/usr/lib/homed/venvs/homekit/bin/homed-homekit-provider 644"
  "/usr/share/doc/homed/README.zigbee2mqtt.md 644" "/usr/share/doc/homed/examples/homed-nats.example.ini 644"
  "/usr/share/doc/homed/README.esphome.md 644" "/usr/share/doc/homed/README.hue.md 644"
  "/usr/bin/homed-web 755" "/usr/share/man/man1/homed-web.1.gz 644" "/usr/lib/systemd/system/homed-web.service 644"
  "/usr/lib/sysusers.d/homed-web.conf 644" "/usr/share/doc/homed/README.web.md 644"
  "/etc/homed/homed.yaml 644" "/usr/share/doc/homed/copyright 644" "/usr/share/doc/homed/changelog.gz 644"
  "/usr/share/doc/homed/examples/demo-home.yaml 644"
)
# Each Python integration: its command (a link into its venv), its man page, its unit.
integrations=(homed-zigbee2mqtt homed-mqtt-devices homed-mqtt homed-homekit homed-homekit-provider homed-nats
  homed-nats-remote homed-sysfs homed-esphome homed-hue)
for program in "${integrations[@]}"; do
  expected+=("/usr/share/man/man1/$program.1.gz 644")
  [[ $program == homed-nats-remote ]] || expected+=("/usr/lib/systemd/system/$program.service 644")
  expected+=("/usr/bin/$program 755")
  grep -q "^exec \"\$here/../lib/homed/venvs/[a-z0-9-]*/bin/python\" \"\$here/../lib/homed/venvs/[a-z0-9-]*/bin/$program\" \"\$@\"\$" \
    "$root/usr/bin/$program" || fail "/usr/bin/$program does not run its venv's $program"
done
for entry in "${expected[@]}"; do
  path=${entry% *} mode=${entry##* }
  [[ -f "$root$path" && -s "$root$path" ]] || fail "missing or empty: $path"
  [[ $(mode_owner "$path") == "$mode root:root" ]] || fail "$path is $(mode_owner "$path"), not $mode root:root"
done
# Two packages may not ship one path: none of these may be in the package itself.
for path in /usr/bin/homectl /usr/share/man/man1/homectl.1.gz /usr/share/bash-completion/completions/homectl; do
  ! dpkg-deb --contents "$deb" | grep " \.$path\$" >/dev/null || fail "the package ships $path, which systemd-homed ships too"
done
! dpkg-deb --contents "$deb" | grep -e '__pycache__' -e '\.pyc$' -e 'install-manifest' >/dev/null \
  || fail "the package ships byte code or install.sh's manifest"
dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Conffiles}\n' homed | grep '^ /etc/homed/homed.yaml [0-9a-f]\{32\}$' >/dev/null \
  || fail "/etc/homed/homed.yaml is not a conffile"
grep -q '^/usr/lib/systemd/system/homed.service$' <(dpkg-query --admindir="$root/var/lib/dpkg" -L homed) \
  || fail "dpkg does not list homed.service as the package's"

step "the postinst: user, group, /var/lib/homed, homectl; nothing enabled"
grep -q '^homed:x:[0-9]*:[0-9]*:homed, the home daemon:/var/lib/homed:/usr/sbin/nologin$' "$root/etc/passwd" \
  || fail "no homed user in the root's /etc/passwd: $(cat "$root/etc/passwd" 2>/dev/null)"
grep -q '^homed:x:[0-9]*:' "$root/etc/group" || fail "no homed group in the root's /etc/group: $(cat "$root/etc/group" 2>/dev/null)"
# homed-web and the user its viewers connect as may open homed's socket: they, and only
# they, are members of group homed (systemd-sysusers lists members in its own order).
members=$(awk -F: '$1 == "homed" { print $4 }' "$root/etc/group" | tr , '\n' | sort | paste -sd,)
[[ $members == homed-viewer,homed-web ]] || fail "group homed's members are '$members', not homed-viewer and homed-web"
for user in homed-web homed-viewer; do
  grep -q "^$user:x:[0-9]*:[0-9]*:[^:]*:/:/usr/sbin/nologin\$" "$root/etc/passwd" \
    || fail "no $user system user without a login in the root's /etc/passwd"
done
uid=$(awk -F: '$1 == "homed" { print $3 }' "$root/etc/passwd")
gid=$(awk -F: '$1 == "homed" { print $3 }' "$root/etc/group")
((uid > 0 && uid < 1000)) || fail "homed's uid $uid is not a system uid"
[[ $(stat -c '%a %u:%g' "$root/var/lib/homed") == "700 $uid:$gid" ]] \
  || fail "/var/lib/homed is $(stat -c '%a %u:%g' "$root/var/lib/homed"), not 700 $uid:$gid (homed's, as StateDirectoryMode=)"
[[ $(readlink "$root/usr/bin/homectl") == /etc/alternatives/homectl &&
  $(readlink "$root/etc/alternatives/homectl") == /usr/bin/homed-ctl ]] \
  || fail "/usr/bin/homectl is not the homectl alternative pointing at /usr/bin/homed-ctl"
[[ $(readlink "$root/etc/alternatives/homectl.1.gz") == /usr/share/man/man1/homed-ctl.1.gz ]] \
  || fail "homectl's man page does not follow the alternative"
enabled=$(find "$root/etc/systemd" -type l 2>/dev/null || true)
[[ -z "$enabled" ]] || fail "the package enabled units: $enabled"
# deb-systemd-helper's own record of what it enabled (the *.dsh-also lists are what
# update-state noted to clean up on purge, not enablement).
recorded=$(find "$root/var/lib/systemd/deb-systemd-helper-enabled" -not -type d -not -name '*.dsh-also' 2>/dev/null || true)
[[ -z "$recorded" ]] || fail "deb-systemd-helper recorded enabled units: $recorded"
for unit in homed.socket homed.service homed-sysfs.service homed-zigbee2mqtt.service homed-homekit.service; do
  DPKG_ROOT=$root DPKG_MAINTSCRIPT_PACKAGE=homed deb-systemd-helper --quiet was-enabled "$unit" && fail "deb-systemd-helper says $unit was enabled"
done

step "the installed programs run"
[[ $("$root/usr/bin/homed" --version) == "$version" ]] || fail "homed --version is not $version"
[[ $("$root/usr/bin/homed-ctl" --version) == "$version" ]] || fail "homed-ctl --version is not $version"
"$root/usr/bin/homed-sim" --help >/dev/null || fail "homed-sim --help failed"
# homed-web's man page, written by hand, describes every option of homed-web serve.
for option in $("$root/usr/bin/homed-web" serve --help | grep -o -- '--[a-z][a-z-]*' | sort -u | grep -v -x -- --help); do
  zcat "$root/usr/share/man/man1/homed-web.1.gz" | grep -- "${option//-/\\\\-}" >/dev/null \
    || fail "homed-web.1 does not describe $option"
done
grep -qx "ExecStart=/usr/bin/homed --socket /run/homed/homed.sock --db /var/lib/homed/homed.sqlite" \
  "$root/usr/lib/systemd/system/homed.service" || fail "homed.service does not start /usr/bin/homed"
grep -q '^ExecStart=/usr/bin/homed-sysfs ' "$root/usr/lib/systemd/system/homed-sysfs.service" \
  || fail "homed-sysfs.service does not start /usr/bin/homed-sysfs"
completes() { # completes FILE NAME: bash, with FILE loaded, offers "status" for "NAME st<Tab>"
  bash -c 'source "$1" && complete -p "$2" >/dev/null 2>&1 && function=$(complete -p "$2" | grep -o -- "-F [^ ]*" | cut -c4-) &&
    COMP_WORDS=("$2" st) COMP_CWORD=1 COMP_LINE="$2 st" COMP_POINT=$((${#2} + 3)) && "$function" "$2" st "$2" &&
    printf "%s\n" "${COMPREPLY[@]}"' _ "$1" "$2" | grep -x status >/dev/null
}
completes "$root/usr/share/bash-completion/completions/homed-ctl" homed-ctl \
  || fail "bash's completion for homed-ctl does not complete 'homed-ctl st' to status"
completes "$root/usr/share/homed/completions/homectl.bash" homectl \
  || fail "the homectl alternative's bash completion does not complete 'homectl st' to status"
head -1 "$root/usr/share/zsh/vendor-completions/_homed-ctl" | grep -qx '#compdef homed-ctl' || fail "zsh's _homed-ctl is not for homed-ctl"
# The Python client from where the package puts it, on Debian's python3 with Debian's
# python3-protobuf (the package recommends it; Scripts/bootstrap.sh --package installs it).
PYTHONPATH="$root/usr/lib/python3/dist-packages" /usr/bin/python3 -c 'import homed, homed.aio' \
  || fail "the packaged Python client does not import with Debian's python3-protobuf"
[[ ! -e "$root/usr/lib/homed/python" ]] || fail "the package ships a second copy of the Python client"
# Every integration runs from its venv on Debian's python3.11, with nothing of this
# machine's Python (no PYTHONPATH, a PATH of the root's and the system's only).
for program in "${integrations[@]}"; do
  grep -q '^home = /usr/bin$' "$root/usr/lib/homed/venvs/"*"/bin/../pyvenv.cfg" || fail "a venv is not on /usr/bin's python"
  (cd / && env -i PATH="$root/usr/bin:/usr/bin:/bin" "$root/usr/bin/$program" --help) >"$tmp/help" 2>&1 \
    || { cat "$tmp/help" >&2; fail "$program --help failed from the package"; }
  grep -q '^usage: ' "$tmp/help" || fail "$program --help printed no usage"
done
! grep -rl "$tmp" "$root/usr/lib/homed" >/dev/null || fail "a file in the venvs names the build's stage: $(grep -rl "$tmp" "$root/usr/lib/homed" | head -3)"
# The man pages describe each option their --help has.
for program in homed-sysfs homed-zigbee2mqtt homed-homekit-provider homed-esphome homed-hue; do
  for option in $(env -i PATH="$root/usr/bin:/usr/bin:/bin" "$root/usr/bin/$program" --help |
    grep -o -- '--[a-z][a-z-]*' | sort -u | grep -v -x -- --help); do
    zcat "$root/usr/share/man/man1/$program.1.gz" | grep -- "${option//-/\\\\-}" >/dev/null \
      || fail "$program.1 does not describe $option"
  done
done
# The postinst made each venv's byte code: running a program writes nothing more.
[[ -n $(find "$root/usr/lib/homed/venvs/nats" -name '*.pyc' | head -1) ]] || fail "the postinst made no byte code"
before_run=$(cd "$root" && find usr | sort)

step "a real round trip of the integrations, from the package"
socket=$tmp/run/homed.sock
mkdir -m 700 "$tmp/run"
"$root/usr/bin/homed" --socket "$socket" --in-memory >"$tmp/homed.log" 2>&1 &
homed_pid=$!
broker_pid=""
cleanup_round_trip() {
  kill "$homed_pid" ${broker_pid:+"$broker_pid"} ${provider_pid:+"$provider_pid"} 2>/dev/null || true
  wait "$homed_pid" ${broker_pid:+"$broker_pid"} ${provider_pid:+"$provider_pid"} 2>/dev/null || true
}
for _ in $(seq 300); do [[ -S "$socket" ]] && break; sleep 0.1; done
[[ -S "$socket" ]] || { cat "$tmp/homed.log" >&2; fail "the packaged homed did not listen"; }
# The Zigbee2MQTT provider against a real mosquitto: a device published on
# bridge/devices becomes an accessory in homed.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\n' "$port" >"$tmp/mosquitto.conf"
mosquitto -c "$tmp/mosquitto.conf" >"$tmp/mosquitto.log" 2>&1 &
broker_pid=$!
for _ in $(seq 100); do (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
env -i PATH="$root/usr/bin:/usr/bin:/bin" "$root/usr/bin/homed-zigbee2mqtt" --socket "$socket" \
  --broker "mqtt://127.0.0.1:$port" >"$tmp/z2m.log" 2>&1 &
provider_pid=$!
# The device is the first light of the corpus generated from Zigbee2MQTT's own device
# pages (Clients/providers/zigbee2mqtt/tests/corpus), as the provider's tests use it.
read -r name device < <(python3 - Clients/providers/zigbee2mqtt/tests/corpus/devices-1.json <<'PY'
import json, sys
devices = json.load(open(sys.argv[1]))["devices"]
light = next(d for d in devices if any(e.get("type") == "light" for e in d["definition"]["exposes"]))
light["friendly_name"] = "Hall Lamp"  # the household's name for it; the definition is the device's
print(light["friendly_name"].replace(" ", "_"), json.dumps([light]))
PY
)
name=${name//_/ }
mosquitto_pub -p "$port" -r -t zigbee2mqtt/bridge/state -m '{"state":"online"}'
mosquitto_pub -p "$port" -r -t zigbee2mqtt/bridge/devices -m "$device"
for _ in $(seq 300); do
  "$root/usr/bin/homed-ctl" --socket "$socket" --timeout 5 accessories 2>/dev/null | grep -qF "$name" && break
  sleep 0.2
done
"$root/usr/bin/homed-ctl" --socket "$socket" --timeout 5 accessories >"$tmp/accessories" 2>&1 || true
grep -qF "$name" "$tmp/accessories" || { cleanup_round_trip; cat "$tmp/z2m.log" "$tmp/accessories" >&2
  fail "the packaged homed-zigbee2mqtt did not bring a device into the packaged homed"; }
kill "$provider_pid"; wait "$provider_pid" 2>/dev/null || true; provider_pid=""
# homectl --nats runs the packaged homed-nats-remote beside homed-ctl (port 1 answers nothing).
nats_out=$(cd / && env -i PATH="$root/usr/bin:/usr/bin:/bin" "$root/usr/bin/homed-ctl" --nats nats://127.0.0.1:1 get Lamp/On 2>&1) \
  && { cleanup_round_trip; fail "homectl --nats with no server succeeded"; }
[[ $nats_out == *"cannot reach the NATS server nats://127.0.0.1:1"* ]] \
  || { cleanup_round_trip; fail "homectl --nats did not run the packaged homed-nats-remote: $nats_out"; }
# The remote socket it started for those settings stops now (it would stop when idle).
kill "$(cat 2>/dev/null "$(env -i PATH="$root/usr/bin:/usr/bin:/bin" "$root/usr/bin/homed-nats-remote" --server nats://127.0.0.1:1 \
  --print-socket).pid")" 2>/dev/null || true
# homectl homekit runs the packaged provider (on PATH); the HomeKit bridge prints its pairing.
homekit_out=$(cd / && env -i PATH="$root/usr/bin:/usr/bin:/bin" "$root/usr/bin/homed-ctl" homekit list --state-dir "$tmp/hk" 2>&1) \
  || { cleanup_round_trip; fail "homectl homekit list failed from the package: $homekit_out"; }
env -i PATH="$root/usr/bin:/usr/bin:/bin" "$root/usr/bin/homed-homekit" pairing --state-dir "$tmp/hk-bridge" --no-qr \
  >"$tmp/pairing" 2>&1 || { cleanup_round_trip; cat "$tmp/pairing" >&2; fail "homed-homekit pairing failed from the package"; }
grep -q 'X-HM://' "$tmp/pairing" && grep -Eq '[0-9]{3}-[0-9]{2}-[0-9]{3}' "$tmp/pairing" \
  || { cleanup_round_trip; cat "$tmp/pairing" >&2; fail "homed-homekit pairing printed no setup code and URI"; }
# The stripped programs serve and answer: homed-ctl asks the packaged homed.
"$root/usr/bin/homed-ctl" --socket "$socket" --timeout 10 status >"$tmp/status" 2>&1 || status_failed=yes
cleanup_round_trip
[[ -z "${status_failed:-}" ]] || { cat "$tmp/homed.log" "$tmp/status" >&2; fail "the packaged homed-ctl status against the packaged homed failed"; }
[[ "$(cd "$root" && find usr | sort)" == "$before_run" ]] || fail "running the packaged programs wrote under /usr: \
$(diff <(echo "$before_run") <(cd "$root" && find usr | sort) | head -5)"
# The conffile as shipped (every key commented out) is a configuration homed takes.
"$root/usr/bin/homed" --config "$root/etc/homed/homed.yaml" --print-paths >/dev/null 2>"$tmp/config.log" \
  || { cat "$tmp/config.log" >&2; fail "homed refuses the packaged /etc/homed/homed.yaml"; }
if command -v systemd-analyze >/dev/null; then
  # Verified here, not in the root (which has no systemd): its ExecStart= made the root's.
  mkdir "$tmp/units"
  for program in "${integrations[@]}"; do
    [[ $program == homed-nats-remote ]] && continue
    sed "s|/usr/bin/|$root/usr/bin/|" "$root/usr/lib/systemd/system/$program.service" >"$tmp/units/$program.service"
  done
  (cd "$tmp/units" && MANPATH="$root/usr/share/man" systemd-analyze verify ./*.service) >"$tmp/verify" 2>&1 || true
  # homed.socket and homed.service, which it names, are not on this machine.
  ! grep -v -e 'homed\.socket' -e 'homed\.service' "$tmp/verify" | grep . \
    || fail "systemd-analyze verify of the integrations' units found problems"
fi

step "another package's homectl, installed after homed, is its own"
dpkg_root -i "$tmp/other-homectl.deb" >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log" >&2; fail "installing other-homectl failed"; }
[[ ! -L "$root/usr/bin/homectl" && $(md5sum <"$root/usr/bin/homectl") == "$other_sum" ]] \
  || fail "/usr/bin/homectl is not the other package's after installing it"

step "configured again beside it, homed takes back its offer of the name homectl"
dpkg_root -i "$deb" >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log" >&2; fail "reinstalling homed beside other-homectl failed"; }
[[ $(md5sum <"$root/usr/bin/homectl") == "$other_sum" ]] || fail "reinstalling homed touched the other package's homectl"
for link in /usr/share/zsh/vendor-completions/_homectl /usr/share/fish/vendor_completions.d/homectl.fish /etc/alternatives/homectl; do
  [[ ! -e "$root$link" && ! -L "$root$link" ]] || fail "beside the other homectl, homed still offers $link"
done

step "remove keeps /var/lib/homed, the conffile and the user; not the other homectl"
# The root's files are root's, /var/lib/homed homed's: written as root.
echo "the admin's change" | "${sudo_cmd[@]}" tee -a "$root/etc/homed/homed.yaml" >/dev/null
echo database | "${sudo_cmd[@]}" tee "$root/var/lib/homed/homed.sqlite" >/dev/null
dpkg_root --remove homed >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log" >&2; fail "dpkg --remove failed"; }
[[ $(installed) == config-files ]] || fail "homed is '$(installed)' after dpkg --remove, not config-files"
[[ $("${sudo_cmd[@]}" cat "$root/var/lib/homed/homed.sqlite") == database ]] || fail "remove did not keep /var/lib/homed/homed.sqlite"
grep -q "the admin's change" "$root/etc/homed/homed.yaml" || fail "remove did not keep the changed conffile"
grep -q '^homed:' "$root/etc/passwd" || fail "remove took the homed user"
[[ ! -e "$root/usr/bin/homed" && ! -e "$root/usr/bin/homed-ctl" ]] || fail "remove left homed's programs"
[[ $(md5sum <"$root/usr/bin/homectl") == "$other_sum" ]] || fail "removing homed touched the other package's homectl"
[[ ! -e "$root/etc/alternatives/homectl" ]] || fail "remove left the homectl alternative"

step "homed installed after another package's homectl leaves it alone"
dpkg_root -i "$deb" >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log" >&2; fail "dpkg -i beside other-homectl failed"; }
[[ $(installed) == installed ]] || fail "homed is '$(installed)' beside other-homectl, not installed"
[[ $(md5sum <"$root/usr/bin/homectl") == "$other_sum" ]] || fail "installing homed replaced the other package's homectl"
grep -q "homed-ctl" "$tmp/dpkg.log" || fail "the postinst did not say that homed's homectl is homed-ctl"
[[ -x "$root/usr/bin/homed-ctl" ]] || fail "no /usr/bin/homed-ctl beside the other homectl"
for link in /usr/share/zsh/vendor-completions/_homectl /usr/share/fish/vendor_completions.d/homectl.fish /etc/alternatives/homectl; do
  [[ ! -e "$root$link" && ! -L "$root$link" ]] || fail "beside the other homectl, homed still offers $link"
done

step "purge removes /var/lib/homed and /etc/homed, and leaves nothing else"
dpkg_root --purge homed >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log" >&2; fail "dpkg --purge failed"; }
[[ -z $(installed) || $(installed) == not-installed ]] || fail "homed is '$(installed)' after purge"
[[ ! -e "$root/var/lib/homed" ]] || fail "purge left /var/lib/homed"
[[ ! -e "$root/etc/homed" ]] || fail "purge left /etc/homed"
dpkg_root --purge other-homectl >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log" >&2; fail "purging other-homectl failed"; }
# What is left beyond the fresh root: the user and group (Debian keeps system users)
# with the backups and lock systemd-sysusers writes beside them, update-alternatives'
# log, and the directories these live in.
left=$(diff <(echo "$before") <(snapshot) | sed -n 's/^> //p' |
  grep -v -x -e './etc/\(passwd\|group\|shadow\|gshadow\)-\?' -e './etc/.pwd.lock' \
    -e './var/log' -e './var/log/alternatives.log' -e './var/lib/systemd' || true)
[[ -z "$left" ]] || fail "purge left: $left"
grep -q '^homed:' "$root/etc/passwd" || fail "purge took the homed user (Debian keeps system users)"

step "ok ($SECONDS s)"

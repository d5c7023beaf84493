#!/usr/bin/env bash
# Installs into temporary directories and checks the tree: every file in its place,
# the units naming the installed homed and accepted by systemd-analyze verify, the
# programs and completion scripts working; --no-build, --uninstall by the manifest,
# and another program's homectl left alone. On the release build Scripts/test.sh made
# (Scripts/install.sh makes it when there is none: minutes the first time), so CI runs
# it after Scripts/test.sh (.ci/run). The stage (--destdir) and every install after
# the first take that build as it is (--no-build).
set -euo pipefail
cd "$(dirname "$0")/../.."

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check-install: $*" >&2; exit 1; }

prefix="$tmp/prefix"
Scripts/install.sh --prefix "$prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log" >&2; fail "install.sh failed"; }

expected=(
  bin/homed bin/homectl bin/homed-sim
  share/man/man1/homed.1 share/man/man1/homectl.1 share/man/man1/homed-sim.1 share/doc/homed/homed.yaml
  share/bash-completion/completions/homectl share/zsh/site-functions/_homectl
  share/fish/vendor_completions.d/homectl.fish
  share/bash-completion/completions/homed share/zsh/site-functions/_homed share/fish/vendor_completions.d/homed.fish
  lib/systemd/system/homed.service lib/systemd/system/homed.socket
  lib/systemd/user/homed.service lib/systemd/user/homed.socket
  lib/sysusers.d/homed.conf lib/tmpfiles.d/homed.conf share/homed/install-manifest
  bin/homed-nats-remote share/man/man1/homed-nats-remote.1 lib/homed/venvs/nats/bin/homed-nats-remote
  lib/homed/venvs/nats/pyvenv.cfg lib/systemd/system/homed-nats.service
  bin/homed-web share/man/man1/homed-web.1 lib/systemd/system/homed-web.service lib/sysusers.d/homed-web.conf
)
for program in homed-zigbee2mqtt homed-mqtt-devices homed-mqtt homed-homekit homed-homekit-provider homed-nats \
  homed-nats-remote homed-sysfs homed-esphome homed-hue; do
  expected+=("bin/$program" "share/man/man1/$program.1")
done
for file in "${expected[@]}"; do [[ -s "$prefix/$file" ]] || fail "missing or empty: $file"; done
for program in homed homectl homed-sim homed-web homed-nats-remote homed-zigbee2mqtt homed-homekit-provider; do
  [[ -x "$prefix/bin/$program" ]] || fail "not executable: bin/$program"
done
! grep -rn '@BINDIR@' "$prefix/lib" || fail "@BINDIR@ left in a unit"
grep -qx "ExecStart=$prefix/bin/homed --socket /run/homed/homed.sock --db /var/lib/homed/homed.sqlite" \
  "$prefix/lib/systemd/system/homed.service" || fail "the system unit does not start $prefix/bin/homed"
"$prefix/bin/homectl" --version | grep -qx '[0-9][0-9.]*' || fail "homectl --version does not print a version"
"$prefix/bin/homed" --help >/dev/null || fail "homed --help failed"
"$prefix/bin/homed-web" --help >/dev/null || fail "homed-web --help failed"
bash -c "source '$prefix/share/bash-completion/completions/homectl' && complete -p homectl" >/dev/null \
  || fail "bash does not load homectl's completion"
# homectl --nats runs the homed-nats-remote beside it, in its own venv (a PATH
# without this tree's: nothing of the source tree is used); port 1 answers nothing.
files_before=$(find "$prefix" | sort)
nats_out=$(cd / && env -u PYTHONPATH PATH="$(dirname "$(command -v python3)"):/usr/bin:/bin" \
  "$prefix/bin/homectl" --nats nats://127.0.0.1:1 get Lamp/On 2>&1) && fail "homectl --nats with no server succeeded"
[[ "$nats_out" == *"cannot reach the NATS server nats://127.0.0.1:1"* ]] \
  || fail "homectl --nats did not run the installed homed-nats-remote: $nats_out"
# The remote socket it started for those settings stops now (it would stop when idle).
kill "$(cat 2>/dev/null "$(env -u PYTHONPATH PATH="$(dirname "$(command -v python3)"):/usr/bin:/bin" \
  "$prefix/bin/homed-nats-remote" --server nats://127.0.0.1:1 --print-socket).pid")" 2>/dev/null || true
# Each integration runs from its venv, and running writes nothing there (its byte code
# was made at install): uninstalling leaves nothing behind.
for program in homed-zigbee2mqtt homed-mqtt-devices homed-mqtt homed-homekit homed-homekit-provider homed-nats \
  homed-sysfs homed-esphome homed-hue; do
  (cd / && env -u PYTHONPATH PATH=/usr/bin:/bin "$prefix/bin/$program" --help >/dev/null) || fail "$program --help failed"
done
[[ "$(find "$prefix" | sort)" == "$files_before" ]] || fail "running the installed programs wrote under $prefix: \
$(diff <(echo "$files_before") <(find "$prefix" | sort) | head -5)"

if command -v systemd-analyze >/dev/null; then
  # verify prints what it finds and still exits 0: any output is a failure.
  mkdir -m 700 "$tmp/runtime"
  (cd "$prefix/lib/systemd/system" && MANPATH="$prefix/share/man" systemd-analyze verify ./homed.service ./homed.socket \
    ./homed-zigbee2mqtt.service ./homed-mqtt-devices.service ./homed-mqtt.service ./homed-homekit.service \
    ./homed-homekit-provider.service ./homed-nats.service ./homed-sysfs.service ./homed-esphome.service \
    ./homed-hue.service ./homed-web.service) \
    >"$tmp/verify" 2>&1 || true
  (cd "$prefix/lib/systemd/user" && XDG_RUNTIME_DIR="$tmp/runtime" MANPATH="$prefix/share/man" \
    systemd-analyze --user verify ./homed.service ./homed.socket) >>"$tmp/verify" 2>&1 || true
  [[ ! -s "$tmp/verify" ]] || { cat "$tmp/verify" >&2; fail "systemd-analyze verify found problems"; }
else
  echo "check-install: systemd-analyze not found (Debian package systemd); units not verified" >&2
fi

# A staged install (--destdir) puts files under the stage and still names the final prefix.
Scripts/install.sh --no-build --prefix /usr --destdir "$tmp/stage" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log" >&2; fail "install.sh --destdir failed"; }
[[ -x "$tmp/stage/usr/bin/homed" ]] || fail "--destdir: no $tmp/stage/usr/bin/homed"
grep -q '^ExecStart=/usr/bin/homed ' "$tmp/stage/usr/lib/systemd/system/homed.service" \
  || fail "--destdir: the unit does not name /usr/bin/homed"

# --no-build installs the build above; --uninstall removes exactly what the manifest
# lists and leaves what others put beside it.
prefix="$tmp/again"
mkdir -p "$prefix/share/bash-completion/completions"
echo 'complete -F _other other' >"$prefix/share/bash-completion/completions/other"
Scripts/install.sh --no-build --prefix "$prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log" >&2; fail "install.sh --no-build failed"; }
cmp -s "$prefix/bin/homed" "$tmp/prefix/bin/homed" || fail "--no-build did not install the release build's homed"
# Installed again under another name, the earlier homectl (and its man page and
# completions) go: the manifest says they were ours.
Scripts/install.sh --no-build --prefix "$prefix" --homectl-name homed-ctl >"$tmp/install.log" 2>&1 \
  || { cat "$tmp/install.log" >&2; fail "install.sh --homectl-name homed-ctl failed"; }
[[ -x "$prefix/bin/homed-ctl" && ! -e "$prefix/bin/homectl" && ! -e "$prefix/share/man/man1/homectl.1" ]] \
  || fail "reinstalled as homed-ctl, the earlier homectl is still there (or homed-ctl is not)"
manifest="$prefix/share/homed/install-manifest"
(cd "$prefix" && find . ! -type d ! -path ./share/bash-completion/completions/other | sed 's|^\./|f |' | sort) >"$tmp/files"
grep '^f ' "$manifest" | sort | diff - "$tmp/files" >&2 || fail "the manifest does not list exactly the files installed"
Scripts/install.sh --uninstall --prefix "$prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log" >&2; fail "install.sh --uninstall failed"; }
left=$(cd "$prefix" && find . ! -path . ! -path ./share ! -path ./share/bash-completion \
  ! -path ./share/bash-completion/completions ! -path ./share/bash-completion/completions/other)
[[ -z "$left" ]] || fail "--uninstall left: $left"
[[ -f "$prefix/share/bash-completion/completions/other" ]] || fail "--uninstall removed a file install.sh did not put"
Scripts/install.sh --uninstall --prefix "$prefix" >"$tmp/install.log" 2>&1 && fail "a second --uninstall succeeded with no manifest"
grep -q "no manifest at $manifest" "$tmp/install.log" || fail "a second --uninstall does not say there is no manifest"

# Another program's homectl (systemd-homed's prints "systemd 252 (…)") stays; homed's
# goes beside it as homed-ctl, and install.sh says so.
prefix="$tmp/beside"
mkdir -p "$prefix/bin"
printf '#!/bin/sh\necho "systemd 252 (252.39-1~deb12u2)"\n' >"$prefix/bin/homectl"
chmod 755 "$prefix/bin/homectl"
cp "$prefix/bin/homectl" "$tmp/other-homectl"
Scripts/install.sh --no-build --prefix "$prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log" >&2; fail "install.sh beside another homectl failed"; }
cmp -s "$prefix/bin/homectl" "$tmp/other-homectl" || fail "install.sh replaced another program's homectl"
[[ $("$prefix/bin/homed-ctl" --version) == $("$tmp/prefix/bin/homectl" --version) ]] || fail "no homed-ctl beside the other homectl"
[[ -s "$prefix/share/man/man1/homed-ctl.1" && ! -e "$prefix/share/man/man1/homectl.1" ]] || fail "homectl's man page is not homed-ctl.1"
bash -c "source '$prefix/share/bash-completion/completions/homed-ctl' && complete -p homed-ctl" >/dev/null \
  || fail "bash does not load homed-ctl's completion for homed-ctl"
grep -q "is another program's homectl" "$tmp/install.log" && grep -q "alias homectl=homed-ctl" "$tmp/install.log" \
  || fail "install.sh did not say that it installed homed-ctl and how to pick"
Scripts/install.sh --uninstall --prefix "$prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log" >&2; fail "--uninstall beside another homectl failed"; }
cmp -s "$prefix/bin/homectl" "$tmp/other-homectl" || fail "--uninstall removed another program's homectl"
[[ ! -e "$prefix/bin/homed-ctl" ]] || fail "--uninstall left homed-ctl"

# --no-build without a release build says what to do (a copy of the scripts, with no .build).
mkdir -p "$tmp/repo/Scripts"
cp -r Packaging "$tmp/repo/"
cp Scripts/install.sh Scripts/uninstall.sh "$tmp/repo/Scripts/"
"$tmp/repo/Scripts/install.sh" --no-build --prefix "$tmp/never" >"$tmp/install.log" 2>&1 && fail "--no-build succeeded without a release build"
grep -q -- "--no-build: no release build of homed in $tmp/repo/.build/release" "$tmp/install.log" \
  || fail "--no-build without a build does not say so: $(cat "$tmp/install.log")"
[[ ! -e "$tmp/never" ]] || fail "--no-build without a build installed something"

echo "check-install: ok"

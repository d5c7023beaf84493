#!/usr/bin/env bash
# Installs into temporary directories and checks the tree: every file in its place,
# the units naming the installed homed and accepted by systemd-analyze verify, the
# programs and completion scripts working. Needs a release build (Scripts/install.sh
# makes one: minutes the first time), so Scripts/test.sh does not run it.
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
  lib/sysusers.d/homed.conf
)
for file in "${expected[@]}"; do [[ -s "$prefix/$file" ]] || fail "missing or empty: $file"; done
for program in homed homectl homed-sim; do [[ -x "$prefix/bin/$program" ]] || fail "not executable: bin/$program"; done
! grep -rn '@BINDIR@' "$prefix/lib" || fail "@BINDIR@ left in a unit"
grep -qx "ExecStart=$prefix/bin/homed --socket /run/homed/homed.sock --db /var/lib/homed/homed.sqlite" \
  "$prefix/lib/systemd/system/homed.service" || fail "the system unit does not start $prefix/bin/homed"
"$prefix/bin/homectl" --version | grep -qx '[0-9][0-9.]*' || fail "homectl --version does not print a version"
"$prefix/bin/homed" --help >/dev/null || fail "homed --help failed"
bash -c "source '$prefix/share/bash-completion/completions/homectl' && complete -p homectl" >/dev/null \
  || fail "bash does not load homectl's completion"

if command -v systemd-analyze >/dev/null; then
  # verify prints what it finds and still exits 0: any output is a failure.
  mkdir -m 700 "$tmp/runtime"
  (cd "$prefix/lib/systemd/system" && MANPATH="$prefix/share/man" systemd-analyze verify ./homed.service ./homed.socket) \
    >"$tmp/verify" 2>&1 || true
  (cd "$prefix/lib/systemd/user" && XDG_RUNTIME_DIR="$tmp/runtime" MANPATH="$prefix/share/man" \
    systemd-analyze --user verify ./homed.service ./homed.socket) >>"$tmp/verify" 2>&1 || true
  [[ ! -s "$tmp/verify" ]] || { cat "$tmp/verify" >&2; fail "systemd-analyze verify found problems"; }
else
  echo "check-install: systemd-analyze not found (Debian package systemd); units not verified" >&2
fi

# A staged install (--destdir) puts files under the stage and still names the final prefix.
Scripts/install.sh --prefix /usr --destdir "$tmp/stage" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log" >&2; fail "install.sh --destdir failed"; }
[[ -x "$tmp/stage/usr/bin/homed" ]] || fail "--destdir: no $tmp/stage/usr/bin/homed"
grep -q '^ExecStart=/usr/bin/homed ' "$tmp/stage/usr/lib/systemd/system/homed.service" \
  || fail "--destdir: the unit does not name /usr/bin/homed"

echo "check-install: ok"

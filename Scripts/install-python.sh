#!/usr/bin/env bash
# Installs each Python integration with its pinned dependencies in a virtual
# environment of its own, PREFIX/lib/homed/venvs/NAME, as dh-virtualenv packages do;
# its commands linked into PREFIX/bin, a man page each (Packaging/man/CMD.1 when one
# is written there, else made from the command's --help by help2man) and, for the
# system services, its unit from Packaging/systemd (not enabled).
#   Scripts/install-python.sh [--byte-compile] ROOT PREFIX [PYTHON]
# --byte-compile: the venvs' byte code made here (and listed), so that running a
# program writes nothing under PREFIX; the Debian package makes it in its postinst
# instead, as Debian's Python packages do.
# ROOT: where PREFIX's files go now (DESTDIR/PREFIX); PREFIX: where they will live.
# PYTHON (default python3): the interpreter the venvs run on; the Debian package
# uses Debian's /usr/bin/python3. The versions are Clients/constraints.txt's.
# The venvs are made where they are staged; nothing in them names the stage.
# PREFIX/bin/CMD is a two-line sh script that runs CMD's venv script (no #! line of
# its own) with the venv's python, found from the sh script's own path: so it runs
# from PREFIX, from the stage, or from a root a test installed the package into, alike.
# stdout: the manifest's lines of what it made ("f PATH" and "d PATH", relative to ROOT).
set -euo pipefail
cd "$(dirname "$0")/.."
compile=no
[[ ${1:-} == --byte-compile ]] && { compile=yes; shift; }
(($# >= 2)) || { echo "usage: Scripts/install-python.sh [--byte-compile] ROOT PREFIX [PYTHON]" >&2; exit 2; }
root=${1%/} prefix=${2%/} python=${3:-python3}
die() { echo "install-python: $*" >&2; exit 2; }
python3 -m pip --version >/dev/null 2>&1 || die "python3 has no pip to install the venvs with (Debian package python3-pip)"
command -v help2man >/dev/null || die "help2man not found (Debian package help2man: Scripts/bootstrap.sh --package)"
"$python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' \
  || die "$python is not Python 3.11, the version Clients/constraints.txt was tested with"

# venv name | its distributions | its commands
integrations=(
  "zigbee2mqtt|Clients/providers/zigbee2mqtt|homed-zigbee2mqtt"
  "mqtt-devices|Clients/providers/mqtt|homed-mqtt-devices"
  "homeassistant|Clients/bridges/homeassistant|homed-mqtt"
  "homekit|Clients/bridges/homekit Clients/providers/homekit|homed-homekit homed-homekit-provider"
  "nats|Clients/bridges/nats|homed-nats homed-nats-remote"
  "sysfs|Clients/providers/sysfs|homed-sysfs"
  "esphome|Clients/providers/esphome|homed-esphome"
  "hue|Clients/providers/hue|homed-hue"
)
export PIP_CONSTRAINT="$PWD/Clients/constraints.txt" PIP_DISABLE_PIP_VERSION_CHECK=1

# make_venv ENTRY: one integration's venv, commands, man pages and units; stdout: its
# manifest lines.
make_venv() {
  local name dists commands venv dist_paths script cmd description path made=()
  IFS='|' read -r name dists commands <<<"$1"
  venv=lib/homed/venvs/$name
  rm -rf "${root:?}/$venv"
  mkdir -p "$root/lib/homed/venvs"
  # No pip inside: the venv is installed into from outside (pip --python), and
  # Debian's python3 needs no python3-venv for a venv without pip.
  "$python" -m venv --without-pip "$root/$venv"
  read -ra dist_paths <<<"$dists"
  python3 -m pip --python "$root/$venv/bin/python" install -q --no-compile --no-warn-script-location \
    ./Clients/python "${dist_paths[@]/#/./}" >&2 || die "pip could not install $dists into $venv"
  "$root/$venv/bin/python" -m pip --version >/dev/null 2>&1 && die "$venv has a pip of its own"
  # What would name the stage rather than PREFIX: activate scripts (a service has no
  # use for them), pip's record of where each local distribution came from, byte code.
  rm -f "$root/$venv"/bin/activate* "$root/$venv"/bin/Activate.ps1
  find "$root/$venv" \( -name direct_url.json -o -name __pycache__ -prune \) -exec rm -rf {} +
  sed -i "/^command = /d" "$root/$venv/pyvenv.cfg"
  for script in "$root/$venv"/bin/*; do
    [[ -f $script && ! -L $script ]] || continue
    head -1 "$script" | grep -q '^#!.*python' || continue
    # Not a program of its own: PREFIX/bin/CMD runs it with the venv's python.
    sed -i "1s|^#!.*\$|# $prefix/bin/${script##*/} runs this with $prefix/$venv/bin/python|" "$script"
    chmod 644 "$script"
  done
  # What wheels mark executable that is not a program (Debian's own modules are 0644).
  find "$root/$venv/lib" -type f -perm /111 -exec chmod a-x {} +
  if [[ $compile == yes ]]; then
    # unchecked-hash: valid whatever the files' times become; the file names inside
    # are PREFIX's, not the stage's.
    "$root/$venv/bin/python" -m compileall -q -j 0 --invalidation-mode unchecked-hash -s "$root" -p "$prefix" \
      "$root/$venv/lib" >&2 || die "byte-compiling $venv failed"
  fi
  mkdir -p "$root/bin" "$root/share/man/man1"
  for cmd in $commands; do
    [[ -f "$root/$venv/bin/$cmd" ]] || die "$dists did not install the command $cmd"
    printf '#!/bin/sh\n# %s, in its venv: %s\nhere=$(dirname -- "$(realpath -- "$0")")\nexec "$here/../%s/bin/python" "$here/../%s/bin/%s" "$@"\n' \
      "$cmd" "$prefix/$venv" "$venv" "$venv" "$cmd" >"$root/bin/$cmd"
    chmod 755 "$root/bin/$cmd"
    made+=("f bin/$cmd")
    if [[ -f Packaging/man/$cmd.1 ]]; then
      install -m 644 "Packaging/man/$cmd.1" "$root/share/man/man1/$cmd.1"
    else
      description=$(sed -n 's/^description = "\(.*\)"$/\1/p' "${dist_paths[0]}/pyproject.toml")
      [[ $cmd == homed-homekit-provider ]] && description=$(sed -n 's/^description = "\(.*\)"$/\1/p' Clients/providers/homekit/pyproject.toml)
      help2man --no-info --no-discard-stderr --version-string=0.1.0 --section=1 --source=homed \
        --name="$description" --output="$root/share/man/man1/$cmd.1" "$root/bin/$cmd" \
        || die "help2man could not make $cmd.1 from $cmd --help"
      chmod 644 "$root/share/man/man1/$cmd.1"
    fi
    made+=("f share/man/man1/$cmd.1")
    if [[ -f Packaging/systemd/$cmd.service ]]; then
      mkdir -p "$root/lib/systemd/system"
      sed "s|@BINDIR@|$prefix/bin|g" "Packaging/systemd/$cmd.service" >"$root/lib/systemd/system/$cmd.service"
      chmod 644 "$root/lib/systemd/system/$cmd.service"
      made+=("f lib/systemd/system/$cmd.service")
    fi
  done
  # help2man ran the commands: byte code they wrote goes, when none is to be shipped.
  [[ $compile == yes ]] || find "$root/$venv" -name __pycache__ -prune -exec rm -rf {} +
  while IFS= read -r path; do made+=("f $path"); done < <(cd "$root" && find "$venv" ! -type d | sort)
  while IFS= read -r path; do made+=("d $path"); done < <(cd "$root" && find "$venv" -type d | sort)
  printf '%s\n' "${made[@]}"
}

# One venv per core at a time: pip is busy on one core while it installs. Each
# job's output is kept apart and said in the integrations' order.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for index in "${!integrations[@]}"; do
  while (($(jobs -rp | wc -l) >= $(nproc))); do wait -n || true; done
  # Not in an && list: there errexit would not stop make_venv at a failing command.
  {
    make_venv "${integrations[$index]}" >"$work/$index.made" 2>"$work/$index.log"
    echo done >"$work/$index.ok"
  } &
done
wait
for index in "${!integrations[@]}"; do
  cat "$work/$index.log" >&2
  [[ -e "$work/$index.ok" ]] || exit 2
done
for index in "${!integrations[@]}"; do cat "$work/$index.made"; done
printf '%s\n' "d lib/homed/venvs" "d lib/homed"

#!/usr/bin/env bash
# Installs what building and testing homed needs on a fresh Debian machine, when
# missing: protobuf-c (runtime + protoc-c), SQLite and libsystemd headers, systemd's
# systemd-socket-activate and util-linux's setpriv (the service and roles tests run
# them), gcc, make and jansson for the C client library and its tests, help2man (the
# Python programs' man pages, Scripts/install-python.sh), and for the
# Python tests, with --python, Debian's mosquitto and a venv, .venv, holding the tree's
# Python distributions and exactly the versions in Clients/constraints.txt, and
# Debian's chromium and chromium-driver for homed-web's browser tests; with
# --package what Scripts/build-deb.sh and its test need: dpkg-dev (dpkg-shlibdeps),
# binutils (strip), lintian, python3.11 (the Python programs'
# venvs) and mosquitto with its clients (the package test's round trip).
set -euo pipefail

python=no
package=no
for arg in "$@"; do
  case "$arg" in
    --python) python=yes ;;
    --package) package=yes ;;
    *) echo "bootstrap: unknown argument '$arg' (--python, --package)" >&2; exit 2 ;;
  esac
done

need=()
for pkg in libprotobuf-c-dev protobuf-c-compiler libsqlite3-dev libsystemd-dev pkg-config systemd util-linux gcc make libjansson-dev help2man; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [[ $package == yes ]]; then
  for pkg in dpkg-dev binutils lintian python3.11 python3-protobuf mosquitto mosquitto-clients; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
  done
fi
if ((${#need[@]})); then
  echo "bootstrap: installing ${need[*]}" >&2
  sudo_cmd=""
  [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need[@]}" >/dev/null
fi

if [[ $python == yes ]]; then
  # The Zigbee2MQTT, MQTT devices and Home Assistant tests run a real broker.
  # Installing mosquitto enables its system service, but nothing listens until a
  # test starts one.
  dpkg -s mosquitto >/dev/null 2>&1 || {
    echo "bootstrap: installing mosquitto for the MQTT integrations' tests" >&2
    sudo_cmd=""
    [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq mosquitto >/dev/null
  }
  # homed-web's tests (Web/tests) drive Debian's headless Chromium through its
  # chromedriver over the WebDriver protocol (the standard library's urllib: no
  # selenium needed).
  web_need=()
  for pkg in chromium chromium-driver; do dpkg -s "$pkg" >/dev/null 2>&1 || web_need+=("$pkg"); done
  if ((${#web_need[@]})); then
    echo "bootstrap: installing ${web_need[*]} for homed-web's browser tests" >&2
    sudo_cmd=""
    [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${web_need[@]}" >/dev/null
  fi
  # Every Python distribution of the tree (the client, the test kit, each provider
  # and bridge) into one venv of its own, .venv, with nothing from the machine's
  # Python: the versions are Clients/constraints.txt's, whatever pip would pick
  # today or the machine already holds. Scripts/test.sh runs the Python suites
  # and the programs with .venv's python.
  venv=.venv
  constraints=Clients/constraints.txt
  export PIP_CONSTRAINT="$PWD/$constraints" PIP_DISABLE_PIP_VERSION_CHECK=1
  [[ -x $venv/bin/python ]] || { echo "bootstrap: making $venv" >&2; python3 -m venv "$venv"; }
  stamp=$venv/.constraints.sha256
  if ! sha256sum --check --status "$stamp" 2>/dev/null; then
    echo "bootstrap: installing $constraints into $venv" >&2
    # Only the pinned lines (every one of them: the venv holds exactly these).
    grep -E '^[A-Za-z0-9_.-]+==' "$constraints" >"$venv/pins.txt"
    "$venv/bin/python" -m pip install -q -r "$venv/pins.txt"
    sha256sum "$constraints" >"$stamp"
  fi
  # The tree's own distributions, rebuilt each time (their code is what is tested),
  # their dependencies already in place above.
  distributions=()
  for dir in Clients/python Clients/python/testkit Clients/providers/* Clients/bridges/*; do
    [[ -f $dir/pyproject.toml ]] && distributions+=("./$dir")
  done
  "$venv/bin/python" -m pip install -q --no-deps --force-reinstall "${distributions[@]}"
  # Nothing missing, nothing outside its range: pip's own consistency check.
  "$venv/bin/python" -m pip check >/dev/null || { "$venv/bin/python" -m pip check >&2; exit 1; }
fi

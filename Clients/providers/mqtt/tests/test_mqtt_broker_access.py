"""Brokers that refuse the provider, or are not there yet: a clear log line,
and the provider connects by itself once it can."""

import os

from homed_testkit.mqtt_broker import Mosquitto, free_port
from .fleet import Fleet
from .discovered_devices import KEYS
from .mqtt_helpers import start_provider, wait_accessories, wait_log


def test_credentials_come_from_a_file_and_a_refusal_is_logged(homed, workdir, processes):
    broker = Mosquitto.with_password(workdir, "homed", "s3cret pass").start()
    fleet = Fleet(broker.port, username="homed", password="s3cret pass")
    try:
        fleet.start()
        anonymous = start_provider(homed, broker.url, processes)
        wait_log(anonymous, f"broker 127.0.0.1:{broker.port} refused the connection: Not authorized (check "
                            "--credentials; trying again)")
        anonymous.kill()
        secrets = os.path.join(workdir, "mqtt-credentials")
        with open(secrets, "w") as f:
            f.write("# the broker's account\nusername = homed\npassword = s3cret pass\n")
        provider = start_provider(homed, broker.url, processes, "--credentials", secrets)
        with homed.client() as client:
            wait_accessories(client, KEYS, provider)
        with open(f"/proc/{provider.pid}/cmdline", "rb") as f:
            assert b"s3cret" not in f.read()
    finally:
        fleet.stop()
        broker.kill()


def test_a_broker_that_is_not_there_yet(homed, workdir, processes):
    broker = Mosquitto(workdir, free_port())
    provider = start_provider(homed, broker.url, processes)
    wait_log(provider, f"cannot connect to the broker 127.0.0.1:{broker.port} (trying again")
    broker.start()
    fleet = Fleet(broker.port)
    try:
        fleet.start()
        with homed.client() as client:
            wait_accessories(client, KEYS, provider, timeout=20)
    finally:
        fleet.stop()
        broker.kill()


def test_a_missing_credentials_file_exits_2(homed, workdir, processes):
    provider = start_provider(homed, "mqtt://127.0.0.1:1", processes, "--credentials", os.path.join(workdir, "none"))
    assert provider.proc.wait(10) == 2
    wait_log(provider, "credentials file")

"""Helpers of the end-to-end tests: the test's certificate, the fake bridge
as a process, the provider as a process, and what homed holds of its
accessories (the shared parts are homed_testkit.providers'). Every wait is
bounded."""

from __future__ import annotations

import datetime
import hashlib
import ipaddress
import json
import os
import socket
import ssl
import sys
import urllib.request
from pathlib import Path
from types import SimpleNamespace

from homed_testkit import installed_program
from homed_testkit.mqtt_broker import free_port
from homed_testkit.providers import (ids_of, provider_accessories, start_program, value_of,  # noqa: F401
                                     wait_for, wait_log, wait_provider_accessories, wait_value)

PROGRAM = installed_program("homed-hue")
PROVIDER = "hue"
HERE = Path(__file__).parent
FIXTURE = HERE / "fixtures" / "bridge.json"
APPLICATION_KEY = "fake-application-key-0123456789abcdef"


def resources():
    return json.loads(FIXTURE.read_text(encoding="utf-8"))["data"]


def make_certificate(directory: str):
    """A self-signed certificate for 127.0.0.1 (made at test time): (cert path, key path, its SHA-256)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "001788fffe000000")])  # a bridge id, as Hue's are
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = os.path.join(directory, "bridge-cert.pem"), os.path.join(directory, "bridge-key.pem")
    Path(cert_path).write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    Path(key_path).write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                 serialization.NoEncryption()))
    return cert_path, key_path, hashlib.sha256(cert.public_bytes(serialization.Encoding.DER)).hexdigest()


class FakeBridge:
    """The fake bridge (fake_bridge.py) as a process on a fixed port, so that
    it can be killed and started again where the provider looks for it."""

    def __init__(self, workdir, processes, resources_path=FIXTURE):
        self.workdir, self.processes = workdir, processes
        self.cert, self.key, self.sha256 = make_certificate(workdir)
        self.port = free_port()
        self.resources_path = str(resources_path)
        self.process = None
        self.context = ssl.create_default_context(cafile=self.cert)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> "FakeBridge":
        argv = [sys.executable, str(HERE / "fake_bridge.py"), "--port", str(self.port), "--cert", self.cert,
                "--key", self.key, "--resources", self.resources_path, "--application-key", APPLICATION_KEY]
        # Its log beside homed's, in the test's directory (start_program takes it from a `directory`).
        self.process = start_program(SimpleNamespace(directory=self.workdir), argv, "bridge.log", self.processes)
        wait_for(self._listening, 15, "the fake bridge listening", self.process)
        return self

    def _listening(self) -> bool:
        if self.process.proc.poll() is not None:
            raise AssertionError(f"the fake bridge exited\n{self.process.log()}")
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
            return True
        except OSError:
            return False

    def kill(self) -> None:
        self.process.kill()

    def call(self, method: str, path: str, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"https://{self.address}{path}", data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, context=self.context, timeout=10) as response:
            return json.loads(response.read())

    def push(self, *items, kind="update"):
        """Update events, one SSE message, as the bridge pushes them."""
        return self.call("POST", "/fake/events", [{"type": kind, "data": list(items)}])

    def raw(self, data: str):
        """One event whose data is `data` as it is (malformed on purpose)."""
        return self.call("POST", "/fake/raw", {"data": data})

    def revoke(self, end_streams=True, revoked=True):
        """The application key deleted on the bridge (revoked=False: back again)."""
        return self.call("POST", "/fake/revoke", {"end_streams": end_streams, "revoked": revoked})

    def streams(self) -> int:
        return self.call("GET", "/fake/streams")["streams"]

    def puts(self):
        return self.call("GET", "/fake/puts")

    def resource(self, rid):
        return self.call("GET", f"/fake/resource/{rid}")


def write_pairing(workdir, bridge: FakeBridge) -> str:
    from homed_hue import keyfile
    path = os.path.join(workdir, "hue", "bridge.json")
    keyfile.save(path, keyfile.Pairing(bridge.address, APPLICATION_KEY, "", bridge.sha256))
    return path


def start_provider(homed, key_file, processes, *extra, write_timeout=2.0):
    argv = [sys.executable, PROGRAM, "--socket", homed.socket_path, "--key-file", key_file, "--write-timeout",
            str(write_timeout), "--log-level", "debug", *extra]
    return start_program(homed, argv, "hue.log", processes)


def accessories(client):
    return provider_accessories(client, PROVIDER)


def wait_accessories(client, keys, process, timeout=20.0, reachable=True):
    return wait_provider_accessories(client, PROVIDER, keys, process, timeout, reachable)

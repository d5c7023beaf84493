"""`pip install ./Clients/python` installs homed (homed.aio and the schema
included) and leaves nothing behind in the checkout: the build happens out of
tree (pyproject.toml's build backend), not in build/ and homed.egg-info here."""

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest


# Not from conftest: pytest may have another conftest module loaded (Clients/providers).
CLIENT_DIR = Path(__file__).resolve().parents[1]
INSTALL_TIMEOUT = 240  # seconds: a wheel build (and, with build isolation, fetching its backend)


def files_under(directory):
    """Every file and directory below ``directory``, as relative paths."""
    found = set()
    for root, dirs, files in os.walk(directory):
        for name in dirs + files:
            found.add(os.path.relpath(os.path.join(root, name), directory))
    return found


def git_status(directory):
    """``git status --porcelain --ignored`` of the directory, or None outside a git checkout."""
    if shutil.which("git") is None:
        return None
    result = subprocess.run(["git", "status", "--porcelain", "--ignored", "."], cwd=directory,
                            capture_output=True, text=True, timeout=60)
    return set(result.stdout.splitlines()) if result.returncode == 0 else None


def test_pip_install_leaves_the_checkout_clean_and_installs_homed_aio():
    if importlib.util.find_spec("pip") is None:
        pytest.skip("pip is not importable in this interpreter, so `pip install` cannot be tried")
    target = tempfile.mkdtemp(prefix="homed-install-", dir="/tmp")
    files_before, status_before = files_under(CLIENT_DIR), git_status(CLIENT_DIR)
    try:
        command = [sys.executable, "-m", "pip", "install", "--no-deps", "--target", target, str(CLIENT_DIR)]
        if importlib.util.find_spec("flit_core") is not None:
            command.insert(4, "--no-build-isolation")  # the backend is here: no need to fetch it
        env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
        installed = subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, env=env)
        assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]

        assert files_under(CLIENT_DIR) == files_before, "the install wrote into the checkout"
        assert git_status(CLIENT_DIR) == status_before, "git sees new files in the checkout"

        probe = ("import homed, homed.aio, os, sys; "
                 "assert homed.__file__.startswith(sys.argv[1]), homed.__file__; "
                 "assert os.path.isfile(os.path.join(os.path.dirname(homed.__file__), 'home_v1.desc')); "
                 "assert homed.aio.connect and homed.pb.Frame; print('ok')")
        imported = subprocess.run([sys.executable, "-c", probe, target], cwd=target, capture_output=True,
                                  text=True, timeout=60, env=dict(os.environ, PYTHONPATH=target))
        assert imported.returncode == 0 and imported.stdout.strip() == "ok", imported.stderr[-3000:]
    finally:
        shutil.rmtree(target, ignore_errors=True)

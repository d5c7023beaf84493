"""A WebDriver client in the standard library: Debian's chromedriver driving
Debian's headless Chromium over the W3C WebDriver HTTP protocol, which is all the
tests need (navigate, run a script, click, type, screenshot)."""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from typing import Any, Callable, Optional

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def chromium_binaries():
    """(chromium, chromedriver) from Debian's packages, or a sentence saying what to install."""
    chromium = os.environ.get("CHROMIUM_BIN") or shutil.which("chromium")
    driver = os.environ.get("CHROMEDRIVER_BIN") or shutil.which("chromedriver")
    if not chromium or not driver:
        raise RuntimeError("headless Chromium is needed: apt-get install chromium chromium-driver "
                           "(Scripts/bootstrap.sh installs them)")
    return chromium, driver


class WebDriverError(AssertionError):
    pass


class Browser:
    """One chromedriver process and one browser session."""

    def __init__(self, log_path: str, preexec_fn=None):
        chromium, driver = chromium_binaries()
        self.port = free_port()
        self.log = open(log_path, "ab")
        self.proc = subprocess.Popen([driver, f"--port={self.port}"], stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, preexec_fn=preexec_fn)
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 20
        while True:
            try:
                self._request("GET", "/status")
                break
            except (OSError, WebDriverError):
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise WebDriverError("chromedriver did not start")
                time.sleep(0.05)
        args = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,1000", "--no-first-run", "--disable-extensions",
                # A page in the background must go on receiving: the benchmark times it.
                "--disable-background-timer-throttling", "--disable-renderer-backgrounding"]
        answer = self._request("POST", "/session", {"capabilities": {"alwaysMatch": {
            "browserName": "chrome", "goog:chromeOptions": {"binary": chromium, "args": args}}}})
        self.session = answer["sessionId"]

    def _request(self, method: str, path: str, body: Optional[dict] = None, timeout: float = 60) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return json.loads(response.read() or b"{}").get("value")
        except urllib.error.HTTPError as error:
            detail = error.read().decode(errors="replace")
            raise WebDriverError(f"WebDriver {method} {path}: HTTP {error.code}: {detail[:600]}") from None

    def _session(self, method: str, path: str, body: Optional[dict] = None) -> Any:
        return self._request(method, f"/session/{self.session}{path}", body)

    def get(self, url: str) -> None:
        self._session("POST", "/url", {"url": url})

    def run(self, script: str, *args) -> Any:
        """Runs `script` (a function body: `return …`) in the page."""
        return self._session("POST", "/execute/sync", {"script": script, "args": list(args)})

    def run_async(self, script: str, *args) -> Any:
        """Runs `script`, whose last argument is the callback to call with the result."""
        return self._session("POST", "/execute/async", {"script": script, "args": list(args)})

    def wait(self, script: str, timeout: float = 10.0, what: str = "", *args) -> Any:
        """Evaluates `script` until it returns something truthy: a condition waited
        for, never a sleep. Fails after `timeout` seconds with `what`."""
        deadline = time.monotonic() + timeout
        last = None
        while True:
            last = self.run(script, *args)
            if last:
                return last
            if time.monotonic() > deadline:
                raise AssertionError(f"not within {timeout} s: {what or script} (last: {last!r})")
            time.sleep(0.01)

    def find(self, css: str) -> str:
        found = self._session("POST", "/element", {"using": "css selector", "value": css})
        return found[ELEMENT]

    def find_all(self, css: str) -> list:
        return [e[ELEMENT] for e in self._session("POST", "/elements", {"using": "css selector", "value": css})]

    def click(self, css: str) -> None:
        self._session("POST", f"/element/{self.find(css)}/click", {})

    def type(self, css: str, text: str) -> None:
        self._session("POST", f"/element/{self.find(css)}/value", {"text": text})

    def screenshot(self, path: str) -> None:
        with open(path, "wb") as out:
            out.write(base64.b64decode(self._session("GET", "/screenshot")))

    def delete_cookies(self) -> None:
        self._session("DELETE", "/cookie")

    def new_tab(self) -> str:
        return self._session("POST", "/window/new", {"type": "tab"})["handle"]

    def switch_to(self, handle: str) -> None:
        self._session("POST", "/window", {"handle": handle})

    def close(self) -> None:
        try:
            self._request("DELETE", f"/session/{self.session}", timeout=10)
        except Exception:  # noqa: BLE001 - the driver goes anyway
            pass
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)
        self.log.close()

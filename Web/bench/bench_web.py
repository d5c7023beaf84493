#!/usr/bin/env python3
"""homed-web's benchmark, against a real homed (the still demo home, on a database in
a temporary directory) and a real homed-web:

  latency  a change to the page's DOM: from just before `homectl set` starts to the
           moment the page has updated the element (performance.timeOrigin +
           performance.now() in headless Chromium, matched by the event's seq), over
           --changes changes, one after another; p50/p99, homectl's own run time, and
           from homed's commit (the event's time) to the DOM.
  pages    --pages open pages on one homed-web (each what the page does: GET
           /api/home, then its event stream), a change every --interval-ms for
           --seconds: homed-web's and homed's RSS and CPU, and whether every page
           received every event.

  .venv/bin/python Web/bench/bench_web.py [latency|pages|all] [--changes 1000] [--pages 100]

Binaries: $HOMED_BIN (default .build/debug/homed, homectl beside it) and
$HOMED_WEB_BIN (default Web/.build/release/homed-web if built, else debug)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

repo = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(repo))

from homed_testkit import HomedProcess, die_with_parent  # noqa: E402

from Web.tests.helpers import WebProcess, characteristic_id  # noqa: E402
from Web.tests.webdriver import Browser  # noqa: E402


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def homectl(socket_path, *args):
    binary = Path(os.environ.get("HOMED_BIN", repo / ".build/debug/homed")).with_name("homectl")
    return subprocess.run([str(binary), "--socket", socket_path, *args], capture_output=True, text=True, check=True)


def process_figures(pid):
    """(RSS in MiB, CPU seconds so far: user + system) of one process, from /proc."""
    with open(f"/proc/{pid}/status") as status:
        rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return rss, (int(fields[11]) + int(fields[12])) / ticks


def latency(homed, web, workdir, changes):
    browser = Browser(os.path.join(workdir, "chromedriver.log"), preexec_fn=die_with_parent)
    try:
        browser.get(web.url + "/")
        browser.wait("return document.getElementById('status').dataset.state === 'live'", 15)
        brightness = characteristic_id(web.state(), "Lamp", "Brightness")
        to_dom, runs, commit_to_dom = [], [], []
        for index in range(changes):
            value = index % 100 + 1
            started = time.time() * 1000
            out = homectl(homed.socket_path, "set", "Living Room/Lamp/Brightness", str(value), "--json")
            ended = time.time() * 1000
            seq = json.loads(out.stdout)["seq"]
            if seq == 0:
                continue  # unchanged: no event
            applied = browser.wait(f"""const t = window.homedWeb.applied[{seq}];
                return t && document.querySelector('[data-value="{brightness}"]').textContent === '{value}%' && t""",
                                   10, f"seq {seq} on the page")
            to_dom.append(applied - started)
            runs.append(ended - started)
            commit_to_dom.append(applied - browser.run(f"return window.homedWeb.eventMs[{seq}]"))
        return {
            "changes": len(to_dom),
            "set_to_dom_ms": {"p50": round(percentile(to_dom, 50), 2), "p99": round(percentile(to_dom, 99), 2),
                              "max": round(max(to_dom), 2)},
            # From homed's commit (the event's time, whole ms) to the DOM: homed-web's and the page's share.
            "commit_to_dom_ms": {"p50": round(percentile(commit_to_dom, 50), 2),
                                 "p99": round(percentile(commit_to_dom, 99), 2)},
            "homectl_run_ms": {"p50": round(percentile(runs, 50), 2), "p99": round(percentile(runs, 99), 2)},
        }
    finally:
        browser.close()


class Page(threading.Thread):
    """What one open page asks of homed-web: the state, then its event stream; counts
    the events received."""

    def __init__(self, web, state):
        super().__init__(daemon=True)
        self.web, self.state = web, state
        self.seqs = []
        self.ready = threading.Event()
        self.sock = None

    def run(self):
        status, _, _ = self.web.request("GET", "/api/home")
        assert status == 200
        self.sock = socket.create_connection(("127.0.0.1", self.web.port))
        self.sock.sendall(f"GET /api/events?journal={self.state['journal']}&since={self.state['seq']} HTTP/1.1\r\n"
                          f"Host: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".encode())
        buffer = b""
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return
                buffer += chunk
                while b"\n\n" in buffer:
                    message, buffer = buffer.split(b"\n\n", 1)
                    for line in message.split(b"\n"):
                        if line.startswith(b"id: "):
                            self.seqs.append(int(line[4:]))
                        if b'"state":"live"' in line:
                            self.ready.set()
        except OSError:
            return

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
            self.sock.close()
        except OSError:
            pass


def pages(homed, web, count, seconds, interval_ms):
    state = web.state()
    brightness = characteristic_id(state, "Lamp", "Brightness")
    opened = [Page(web, state) for _ in range(count)]
    for page in opened:
        page.start()
    for page in opened:
        assert page.ready.wait(30), "a page did not go live"
    idle_web, idle_homed = process_figures(web.proc.pid), process_figures(homed.proc.pid)
    client = homed.client("bench")
    from homed import pb
    started = time.monotonic()
    cpu_web0, cpu_homed0 = idle_web[1], idle_homed[1]
    written = []
    value = 0
    while time.monotonic() - started < seconds:
        value = value % 100 + 1
        written.append(client.write({brightness: pb.Value(int_value=value)}).results[0].seq)
        time.sleep(interval_ms / 1000)
    elapsed = time.monotonic() - started
    busy_web, busy_homed = process_figures(web.proc.pid), process_figures(homed.proc.pid)
    last = max(written)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(not page.seqs or page.seqs[-1] < last for page in opened):
        time.sleep(0.05)
    complete = sum(1 for page in opened if set(written) <= set(page.seqs) and len(page.seqs) == len(set(page.seqs)))
    for page in opened:
        page.close()
    client.close()
    return {
        "pages": count, "changes": len(written), "seconds": round(elapsed, 1),
        "pages_with_every_change_once": complete,
        "homed_web": {"rss_mib_idle": round(idle_web[0], 1), "rss_mib_busy": round(busy_web[0], 1),
                      "cpu_percent_busy": round(100 * (busy_web[1] - cpu_web0) / elapsed, 1)},
        "homed": {"rss_mib_idle": round(idle_homed[0], 1), "rss_mib_busy": round(busy_homed[0], 1),
                  "cpu_percent_busy": round(100 * (busy_homed[1] - cpu_homed0) / elapsed, 1)},
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("which", nargs="?", default="all", choices=["latency", "pages", "all"])
    parser.add_argument("--changes", type=int, default=1000)
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--interval-ms", type=float, default=100)
    args = parser.parse_args()
    if "HOMED_WEB_BIN" not in os.environ:
        release = repo / "Web/.build/release/homed-web"
        if release.exists():
            os.environ["HOMED_WEB_BIN"] = str(release)
    workdir = tempfile.mkdtemp(prefix="homed-web-bench-", dir="/tmp")
    os.chmod(workdir, 0o755)
    homed = HomedProcess(os.environ.get("HOMED_BIN", str(repo / ".build/debug/homed")), workdir,
                         extra_args=["--demo", "--no-simulator"])
    web = None
    try:
        homed.start()
        web = WebProcess(workdir, homed.socket_path, args=["--max-streams", str(max(256, args.pages * 2))]).start()
        results = {"homed_web": os.environ.get("HOMED_WEB_BIN", "Web/.build/debug/homed-web")}
        if args.which in ("latency", "all"):
            results["latency"] = latency(homed, web, workdir, args.changes)
        if args.which in ("pages", "all"):
            results["pages"] = pages(homed, web, args.pages, args.seconds, args.interval_ms)
        print(json.dumps(results, indent=2))
    finally:
        if web:
            web.kill()
        homed.kill()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()

"""The page in a real browser: what it shows, live changes, writes, resuming after
either side restarts, roles, bad input and a flood of connections."""

import json
import os
import socket
import subprocess
import threading
import time

import pytest
from homed import pb
from homed_testkit import homectl

from .helpers import WebProcess, characteristic_id, history_seqs

# Null-safe: while a page loads (a login's redirect, a reload) an element may not
# be there yet, and a script that throws would fail the wait instead of waiting.
LIVE = "return document.getElementById('status')?.dataset.state === 'live'"


def open_page(browser, web):
    browser.get(web.url + "/")
    browser.wait(LIVE, 10, "the page is live")


def test_the_page_shows_the_demo_rooms_and_each_state_as_homectl_accessories_does(browser, web, homed, workdir):
    open_page(browser, web)
    rooms = browser.run("return [...document.querySelectorAll('section.room h2')].map(h => h.textContent)")
    assert rooms[:4] == ["Living Room", "Kitchen", "Bedroom", "Hallway"]
    shown = browser.run("""return Object.fromEntries([...document.querySelectorAll('article.accessory')].map(
        a => [a.querySelector('h3').textContent, a.querySelector('.state').textContent]))""")
    listed = json.loads(homectl(homed, "accessories", "--json").stdout)
    assert listed, "homectl accessories listed nothing"
    assert rooms == list(dict.fromkeys(accessory["room"] for accessory in listed))
    for accessory in listed:
        expected = accessory["state"] if accessory["reachable"] else "unreachable"
        assert shown[accessory["name"]] == expected, accessory["name"]
    # The providers' list is there (the still demo has none connected: it says so).
    assert browser.run("return document.getElementById('providers-section') !== null")
    target = os.environ.get("HOMED_WEB_SCREENSHOT") or os.path.join(workdir, "screenshot.png")
    browser.screenshot(target)
    assert os.path.getsize(target) > 10_000


def test_a_homectl_set_appears_on_the_page(browser, web, homed):
    """Each value, in turn (how soon is Web/bench/bench_web.py's figure, not a test's)."""
    open_page(browser, web)
    brightness = characteristic_id(web.state(), "Lamp", "Brightness")
    for value in (37, 81, 5):
        result = homectl(homed, "set", "Living Room/Lamp/Brightness", str(value))
        assert result.returncode == 0, result.stderr
        browser.wait(f"return document.querySelector('[data-value=\"{brightness}\"]')?.textContent === '{value}%'",
                     10, f"Brightness {value}% on the page")


def test_a_click_on_the_lamps_switch_reaches_homectl_get(browser, web, homed):
    open_page(browser, web)
    on = characteristic_id(web.state(), "Lamp", "On")
    before = homectl(homed, "get", "Living Room/Lamp/On", "--json")
    was_on = json.loads(before.stdout)[0]["value"] is True
    browser.click(f"button[data-write='{on}']")
    deadline = time.monotonic() + 5
    while True:
        now = json.loads(homectl(homed, "get", "Living Room/Lamp/On", "--json").stdout)[0]["value"]
        if now is (not was_on):
            break
        assert time.monotonic() < deadline, "the click did not reach homed"
    # Acknowledged on the page once homed answered: pressed state and no pending mark.
    browser.wait(f"""const b = document.querySelector("button[data-write='{on}']");
        return b.getAttribute('aria-pressed') === '{str(not was_on).lower()}' &&
            !b.closest('.accessory').classList.contains('pending') && b.closest('.accessory').dataset.ackSeq""",
                 5, "the write acknowledged on the page")


class Writer(threading.Thread):
    """Changes the lamp's brightness as fast as homed answers, until stopped, through
    homed's own client (a change a test can count on: each one is an event)."""

    def __init__(self, homed, brightness):
        super().__init__(daemon=True)
        self.homed = homed
        self.brightness = brightness
        self.stopped = threading.Event()
        self.written = 0
        self.errors = 0

    def run(self):
        client = None
        value = 1
        while not self.stopped.is_set():
            try:
                if client is None:
                    client = self.homed.client("test-writer")
                client.write({self.brightness: pb.Value(int_value=value % 100 + 1)})
                self.written += 1
                value += 1
            except Exception:  # noqa: BLE001 - homed restarting: connect again
                self.errors += 1
                client = None
                self.stopped.wait(0.05)
        if client is not None:
            client.close()

    def stop(self):
        self.stopped.set()
        self.join(10)


def page_seqs(browser):
    return browser.run("return window.homedWeb.seqs")


def check_nothing_missed_nothing_twice(browser, homed, first_seq):
    """Waits until the page has reached homed's latest seq, then compares every seq the
    page received since `first_seq` with homed's history."""
    with homed.client("check") as client:
        latest = client.call("GetStatus").seq
        browser.wait(f"return window.homedWeb.lastSeq >= {latest}", 10, f"the page reached seq {latest}")
        expected = history_seqs(client, first_seq, latest)
    received = [seq for seq in page_seqs(browser) if first_seq < seq <= latest]
    duplicates = sorted({s for s in received if received.count(s) > 1})
    assert not duplicates, f"received twice: {duplicates[:20]}"
    missing = sorted(set(expected) - set(received))
    extra = sorted(set(received) - set(expected))
    assert not missing and not extra, (f"{len(missing)} missing {missing[:20]}…{missing[-5:]}, not in homed's "
                                       f"history {extra[:20]}; received {len(received)}, {received[:3]}…{received[-3:]}"
                                       f"; homed's {len(expected)}, {expected[:3]}…{expected[-3:]}")
    assert received == expected
    return len(received)


@pytest.mark.parametrize("graceful", [False, True], ids=["SIGKILL", "SIGTERM"])
def test_a_stream_cut_by_restarting_homed_web_resumes_with_nothing_missed_and_nothing_twice(
        browser, web, homed, graceful):
    open_page(browser, web)
    first = browser.run("return window.homedWeb.lastSeq")
    writer = Writer(homed, characteristic_id(web.state(), "Lamp", "Brightness"))
    writer.start()
    try:
        browser.wait(f"return window.homedWeb.lastSeq > {first} + 20", 10, "events flowing")
        web.restart(graceful)  # mid-stream, then the same port again
        during = browser.run("return window.homedWeb.lastSeq")
        browser.wait(f"return window.homedWeb.lastSeq > {during} + 20", 15, "events flowing again")
    finally:
        writer.stop()
    # Live again: the badge turns once the page has caught up, which can come a
    # moment after the events it counts.
    browser.wait("return window.homedWeb.statusLog.filter(s => s === 'live').length >= 2", 10,
                 "live again after the restart")
    count = check_nothing_missed_nothing_twice(browser, homed, first)
    assert count > 40


def test_a_stream_cut_by_restarting_homed_resumes_from_its_journal_with_nothing_missed_and_nothing_twice(
        browser, web, homed):
    open_page(browser, web)
    first = browser.run("return window.homedWeb.lastSeq")
    writer = Writer(homed, characteristic_id(web.state(), "Lamp", "Brightness"))
    writer.start()
    try:
        browser.wait(f"return window.homedWeb.lastSeq > {first} + 20", 10, "events flowing")
        homed.restart()  # SIGTERM, then the same database: the journal continues
        browser.wait("return window.homedWeb.statusLog.includes('catching-up')", 10, "catching up shown")
        during = browser.run("return window.homedWeb.lastSeq")
        browser.wait(f"return window.homedWeb.lastSeq > {during} + 20", 15, "events flowing again")
    finally:
        writer.stop()
    browser.wait(LIVE, 10, "live again")
    # Resumed, not reloaded: homed kept the journal, so no resync was needed.
    assert "reloading" not in browser.run("return window.homedWeb.statusLog")
    check_nothing_missed_nothing_twice(browser, homed, first)


def log_in(browser, web, name, password):
    browser.get(web.url + "/")
    browser.type("input[name=name]", name)
    browser.type("input[name=password]", password)
    browser.click("#login button[type=submit]")
    browser.wait(LIVE, 10, f"{name}'s page is live")


def test_a_viewer_has_no_controls_and_a_forged_write_is_refused_by_homed(browser, login_web, homed):
    log_in(browser, login_web, "victor", "victor-secret")
    assert browser.run("return window.homedWeb.state.role") == "viewer"
    assert browser.run("return document.querySelectorAll('article.accessory').length") > 5
    assert browser.run("return document.querySelectorAll('[data-write], [data-scene]').length") == 0
    on = characteristic_id(browser.run("return window.homedWeb.state"), "Lamp", "On")
    before = homectl(homed, "get", "Living Room/Lamp/On", "--json").stdout
    forged = browser.run_async("""const done = arguments[arguments.length - 1];
        fetch('/api/write', {method: 'POST', headers: {'Content-Type': 'application/json',
            'X-CSRF-Token': window.homedWeb.state.csrf}, body: JSON.stringify({id: arguments[0], value: true})})
          .then(async r => done([r.status, await r.json()]));""", on)
    status, answer = forged
    assert status == 403
    # homed's own refusal: the viewer's connection is nobody's, whom homed gives the viewer role.
    assert answer["code"] == "PERMISSION_DENIED"
    assert "WriteCharacteristics needs the user role" in answer["message"]
    assert "has the viewer role" in answer["message"]
    assert homectl(homed, "get", "Living Room/Lamp/On", "--json").stdout == before
    # Without the page's CSRF token homed-web refuses it before homed is asked.
    status, _, body = login_web.request("POST", "/api/write", json.dumps({"id": on, "value": True}).encode(),
                                        {"Content-Type": "application/json"})
    assert status == 401  # no session cookie: not logged in
    # A user of the same homed-web has the controls.
    browser.delete_cookies()
    log_in(browser, login_web, "alice", "alice-secret")
    assert browser.run("return window.homedWeb.state.role") == "user"
    assert browser.run("return document.querySelectorAll('[data-write]').length") > 5


def test_a_wrong_password_is_refused(login_web):
    status, _, body = login_web.request("POST", "/login", b"name=victor&password=wrong",
                                        {"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 401
    assert b"Wrong name or password" in body
    status, _, body = login_web.request("GET", "/api/home")
    assert status == 401


def api_error(web, method, path, body=None, headers=None):
    status, _, raw = web.request(method, path, body, headers)
    return status, json.loads(raw)


def test_bad_input_gets_an_http_status_with_homeds_message_and_changes_nothing(web, homed):
    state = web.state()
    csrf = {"X-CSRF-Token": state["csrf"], "Content-Type": "application/json"}
    brightness = characteristic_id(state, "Lamp", "Brightness")
    before = homectl(homed, "get", "Living Room/Lamp/Brightness", "--json").stdout
    # A wrong value: homed's own message.
    status, answer = api_error(web, "POST", "/api/write", json.dumps({"id": brightness, "value": 500}).encode(), csrf)
    assert status == 400 and answer["code"] == "INVALID_ARGUMENT"
    assert answer["message"] == f"characteristic {brightness} (Brightness): 500 is above the maximum 100"
    status, answer = api_error(web, "POST", "/api/write", json.dumps({"id": brightness, "value": "bright"}).encode(),
                               csrf)
    assert status == 400 and "Brightness" in answer["message"]
    status, answer = api_error(web, "POST", "/api/write", json.dumps({"id": 999999, "value": 1}).encode(), csrf)
    assert status == 404 and "999999" in answer["message"]
    # The right token from another origin (a page elsewhere cannot read it; if it
    # could, its Origin still gives it away).
    status, answer = api_error(web, "POST", "/api/write", json.dumps({"id": brightness, "value": 5}).encode(),
                               {**csrf, "Origin": "http://127.0.0.10:8080"})
    assert status == 403 and "another origin" in answer["message"]
    status, answer = api_error(web, "POST", "/api/write", json.dumps({"id": brightness, "value": 5}).encode(),
                               {"Content-Type": "application/json"})
    assert status == 403 and "X-CSRF-Token" in answer["message"]
    # Malformed and oversized requests.
    status, answer = api_error(web, "POST", "/api/write", b'{"id": 17,', csrf)
    assert status == 400 and answer["code"] == "INVALID_ARGUMENT"
    status, answer = api_error(web, "POST", "/api/write", json.dumps({"value": 1}).encode(), csrf)
    assert status == 400 and '"id"' in answer["message"]
    status, answer = api_error(web, "POST", "/api/write", b"x" * 100_000, csrf)
    assert status == 413 and answer["code"] == "RESOURCE_EXHAUSTED"
    status, answer = api_error(web, "GET", "/api/events?since=abc")
    assert status == 400 and "abc" in answer["message"]
    status, answer = api_error(web, "GET", "/api/history?id=x")
    assert status == 400
    # An unknown path.
    status, answer = api_error(web, "GET", "/no/such/page")
    assert status == 404 and "/no/such/page" in answer["message"]
    # Not HTTP at all: the connection gets a 400 and is closed.
    with socket.create_connection(("127.0.0.1", web.port), timeout=5) as raw:
        raw.sendall(b"\x16\x03\x01 not http at all\r\n\r\n")
        reply = raw.recv(200)
    assert reply == b"" or reply.startswith(b"HTTP/1.1 400")
    assert homectl(homed, "get", "Living Room/Lamp/Brightness", "--json").stdout == before
    # And homed-web still serves.
    assert web.state()["homes"]


def test_history_of_a_characteristic_is_a_chart_of_homeds_rollups(browser, web, homed):
    for value in (10, 60, 30):
        assert homectl(homed, "set", "Living Room/Lamp/Brightness", str(value)).returncode == 0
    open_page(browser, web)
    brightness = characteristic_id(web.state(), "Lamp", "Brightness")
    browser.click(f"[data-char='{brightness}'] button.chart")
    browser.wait("return document.querySelector('#chart polyline') !== null", 5, "the chart drawn")
    assert browser.run("return document.querySelector('#chart p').textContent") == "min 10, max 60%"


def test_a_flood_of_connections_is_bounded_with_a_clear_503_and_homed_is_unaffected(workdir, homed):
    web = WebProcess(workdir, homed.socket_path, name="flood-web", args=["--max-streams", "20"]).start()
    sockets = []
    try:
        state = web.state()
        answers = []
        for _ in range(60):
            s = socket.create_connection(("127.0.0.1", web.port), timeout=10)
            s.sendall(f"GET /api/events?journal={state['journal']}&since={state['seq']} HTTP/1.1\r\n"
                      f"Host: 127.0.0.1:{web.port}\r\n\r\n".encode())
            sockets.append(s)
        for s in sockets:
            answers.append(s.recv(4096).decode(errors="replace"))
        streams = [a for a in answers if a.startswith("HTTP/1.1 200")]
        refused = [a for a in answers if a.startswith("HTTP/1.1 503")]
        assert len(streams) == 20 and len(refused) == 40, [a.split("\r\n")[0] for a in answers]
        assert "20 event streams open, its limit" in refused[0]
        # homed is unaffected: a read is answered (within homectl's own deadline).
        assert homectl(homed, "get", "Living Room/Lamp/On").returncode == 0
        status, _, _ = web.request("GET", "/metrics")
        assert status == 200
    finally:
        for s in sockets:
            s.close()
    # Once the flood is gone, pages are served again.
    deadline = time.monotonic() + 10
    while True:
        status, _, body = web.request("GET", "/metrics")
        if b"homed_web_streams 0" in body:
            break
        assert time.monotonic() < deadline, body.decode()[-500:]
    web.kill()


def test_metrics_are_prometheus_text_with_homeds_figures(web):
    status, headers, body = web.request("GET", "/metrics")
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    text = body.decode()
    for name in ("homed_up 1", "homed_seq ", "homed_connections ", "homed_subscriptions ",
                 "homed_history_oldest_seq ", "# TYPE homed_web_requests_total counter", "homed_web_streams "):
        assert name in text, name


def test_a_scene_runs_from_its_button_and_a_layout_change_reloads_the_page(browser, web, homed):
    open_page(browser, web)
    assert homectl(homed, "set", "Living Room/Lamp/On", "false").returncode == 0
    # Creating the scene is a layout change: the open page reloads the state and shows it.
    assert homectl(homed, "scenes", "create", "Evening").returncode == 0
    assert homectl(homed, "scenes", "add-action", "Evening", "Living Room/Lamp/On", "true").returncode == 0
    # Clicked in the page: each layout change renders the page anew, which would leave
    # a WebDriver reference to an earlier button stale.
    with homed.client("check") as client:
        latest = client.call("GetStatus").seq
    browser.wait(f"""if (window.homedWeb.lastSeq < {latest} || window.homedWeb.loading) return false;
        const button = [...document.querySelectorAll('[data-scene]')].find(b => b.textContent === 'Evening');
        if (button) button.click();
        return Boolean(button);""", 5, "the new scene's button, after both changes")
    browser.wait("return [...document.querySelectorAll('#messages p.ok')].some(p => p.textContent === 'Evening: done')",
                 5, "the scene acknowledged")
    assert json.loads(homectl(homed, "get", "Living Room/Lamp/On", "--json").stdout)[0]["value"] is True


def test_an_unreachable_accessory_is_marked_and_comes_back(browser, workdir):
    """With the simulator (a provider): homectl sim takes an accessory offline."""
    from homed_testkit import HomedProcess, require_binary
    daemon = HomedProcess(require_binary(), workdir, extra_args=["--demo"]).start()
    web = WebProcess(workdir, daemon.socket_path, name="sim-web").start()
    try:
        open_page(browser, web)
        lamp = next(a for a in web.state()["accessories"].values() if a["name"] == "Lamp")
        card = f"document.querySelector('[data-accessory=\"{lamp['id']}\"]')"
        assert homectl(daemon, "sim", "unreachable", "Living Room/Lamp", "--for", "30").returncode == 0
        browser.wait(f"return {card}.classList.contains('unreachable') && "
                     f"{card}.querySelector('.state').textContent === 'unreachable'", 5, "the lamp marked unreachable")
        assert homectl(daemon, "sim", "unreachable", "Living Room/Lamp", "--for", "0").returncode == 0
        browser.wait(f"return !{card}.classList.contains('unreachable')", 5, "the lamp reachable again")
    finally:
        web.kill()
        daemon.kill()


def test_a_homed_that_cannot_resume_sends_a_resync_and_the_page_reloads_the_state(browser, workdir):
    """A homed in memory begins a new journal at every start: the page's seq means
    nothing to it, so it says resync, and the page loads the state again."""
    from homed_testkit import HomedProcess, require_binary
    daemon = HomedProcess(require_binary(), workdir, in_memory=True,
                          extra_args=["--demo", "--no-simulator"]).start()
    web = WebProcess(workdir, daemon.socket_path, name="memory-web").start()
    try:
        open_page(browser, web)
        journal = browser.run("return window.homedWeb.journal")
        daemon.restart()
        browser.wait("return window.homedWeb.statusLog.includes('reloading')", 15, "the page told to reload")
        browser.wait(f"return window.homedWeb.journal !== '{journal}' && "
                     "document.getElementById('status')?.dataset.state === 'live'", 15, "live on the new journal")
        brightness = characteristic_id(web.state(), "Lamp", "Brightness")
        assert homectl(daemon, "set", "Living Room/Lamp/Brightness", "44").returncode == 0
        browser.wait(f"return document.querySelector('[data-value=\"{brightness}\"]')?.textContent === '44%'", 10,
                     "a change after the resync")
    finally:
        web.kill()
        daemon.kill()


def test_a_connect_as_user_whom_homed_gives_more_than_the_role_is_refused_at_start(workdir, homed):
    """root is always homed's admin: viewers connected as root could write."""
    from .helpers import web_binary
    result = subprocess.run([web_binary(), "--socket", homed.socket_path, "--listen", "127.0.0.1:0",
                             "--connect-as", "viewer=root"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 64
    assert "homed gives root (uid 0) the admin role, more than viewer" in result.stderr


def test_a_users_file_with_a_mistake_is_refused_with_its_line(workdir, homed):
    from .helpers import web_binary
    path = os.path.join(workdir, "bad-users")
    with open(path, "w") as out:
        out.write("# users\nalice user $2b$04$abcdefghijklmnopqrstuv\nbob boss $2b$04$abcdefghijklmnopqrstuv\n")
    result = subprocess.run([web_binary(), "--socket", homed.socket_path, "--users-file", path],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 64
    assert f'{path}:3: "boss" is not a role (viewer, user or admin)' in result.stderr


def test_tls_serves_http2_and_http11_and_the_session_cookie_is_secure(workdir, homed, users_file):
    import http.client
    import ssl
    key, cert = os.path.join(workdir, "key.pem"), os.path.join(workdir, "cert.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "1", "-subj", "/CN=localhost"], check=True, capture_output=True)
    web = WebProcess(workdir, homed.socket_path, name="tls-web", args=[
        "--tls-certificate", cert, "--tls-key", key, "--login", "always", "--users-file", users_file]).start()
    try:
        context = ssl.create_default_context(cafile=cert)
        context.check_hostname = False
        context.set_alpn_protocols(["h2", "http/1.1"])
        with socket.create_connection(("127.0.0.1", web.port)) as raw, \
                context.wrap_socket(raw, server_hostname="localhost") as tls:
            assert tls.selected_alpn_protocol() == "h2"
        context.set_alpn_protocols(["http/1.1"])
        connection = http.client.HTTPSConnection("127.0.0.1", web.port, context=context, timeout=10)
        connection.request("POST", "/login", body="name=alice&password=alice-secret",
                           headers={"Content-Type": "application/x-www-form-urlencoded"})
        response = connection.getresponse()
        response.read()
        assert response.status == 303
        cookie = response.getheader("Set-Cookie")
        for attribute in ("HttpOnly", "Secure", "SameSite=Strict"):
            assert attribute in cookie, cookie
        connection.request("GET", "/api/home", headers={"Cookie": cookie.split(";")[0]})
        response = connection.getresponse()
        assert response.status == 200 and json.loads(response.read())["user"] == "alice"
    finally:
        web.kill()


def test_a_resume_longer_than_homeds_queue_is_a_resync_not_merged_values(web, homed):
    """A page away while more changed than homed's largest subscriber queue holds:
    homed cannot replay it all, and the page is told to reload (an explicit resync)
    after the events that fit, in order, never values merged in their place."""
    from homed import Client
    state = web.state()
    since = state["seq"]
    brightness = characteristic_id(state, "Lamp", "Brightness")
    with Client.connect(homed.socket_path, client_name="burst") as client:
        # 17 batches of 1 000 changes (each write another value): 17 000 events, past
        # the 16 384 a page's queue holds.
        for batch in range(17):
            writes = [pb.CharacteristicWrite(characteristic_id=brightness, value=pb.Value(int_value=10 + (i + batch) % 2))
                      for i in range(1000)]
            client.call("WriteCharacteristics", pb.WriteCharacteristicsRequest(writes=writes))
    s = socket.create_connection(("127.0.0.1", web.port), timeout=30)
    try:
        s.sendall(f"GET /api/events?journal={state['journal']}&since={since} HTTP/1.1\r\n"
                  f"Host: 127.0.0.1:{web.port}\r\n\r\n".encode())
        received = b""
        deadline = time.monotonic() + 60
        while b"event: resync" not in received:
            assert time.monotonic() < deadline, received[-2000:]
            chunk = s.recv(65536)
            assert chunk, "the stream ended without a resync: " + received[-2000:].decode(errors="replace")
            received += chunk
    finally:
        s.close()
    text = received.decode(errors="replace")
    before = text.split("event: resync")[0]
    ids = [int(line[4:]) for line in before.splitlines() if line.startswith("id: ")]
    # Consecutive from the page's seq: nothing merged away (a merge leaves seqs out).
    assert ids == list(range(since + 1, since + 1 + len(ids))), ids[:5]
    assert 0 < len(ids) < 17_000
    assert "did not fit in homed's queue" in text.split("event: resync")[1][:500]

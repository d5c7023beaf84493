"""A fake Hue bridge, run as a process by the tests: HTTPS on 127.0.0.1 with
the test's own certificate, the recorded resources (fixtures/bridge.json) at
GET /clip/v2/resource, server-sent events at /eventstream/clip/v2 as a bridge
sends them, PUTs to lights applied and confirmed by an update event carrying
what changed, and POST /api answering error 101 until the link button is
"pressed".

The test drives it on the same server, under /fake/ (no key needed):
POST /fake/events (a list of events, {"type": "update", "data": [...]}, applied
and pushed), POST /fake/link-button, POST /fake/confirm ({"confirm": false}:
PUTs are applied but no event is sent), GET /fake/puts (every PUT so far),
GET /fake/resource/{id}, POST /fake/raw ({"data": TEXT}: TEXT sent as one
event's data as it is, not applied: a malformed event), POST /fake/revoke
({"end_streams": true}: the application key deleted, as from the Hue app;
every request with it is answered 403 "unauthorized user" from then on, and
its open event streams end unless end_streams is false; {"revoked": false}
takes it back).

With --stdin-control each line read on stdin is a list of events pushed as
POST /fake/events pushes them (the benchmark's way: no HTTP request per event).

    python fake_bridge.py --port P --cert CERT --key KEY --resources FILE --application-key K [--stdin-control]
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import ssl
import sys
import time
import uuid

from aiohttp import web


def merge(into: dict, change: dict) -> None:
    for key, value in change.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            merge(into[key], value)
        else:
            into[key] = copy.deepcopy(value)


class FakeBridge:
    def __init__(self, resources: list, key: str):
        self.by_id = {r["id"]: r for r in copy.deepcopy(resources)}
        self.order = [r["id"] for r in resources]
        self.key = key
        self.streams: list = []
        self.puts: list = []
        self.link_pressed = False
        self.confirm = True
        self.counter = 0
        self.revoked = False

    # -- what a bridge serves ----------------------------------------------------------

    def authorized(self, request) -> bool:
        return not self.revoked and request.headers.get("hue-application-key") == self.key

    @staticmethod
    def unauthorized():
        return web.json_response({"errors": [{"description": "unauthorized user"}], "data": []}, status=403)

    async def resources(self, request):
        if not self.authorized(request):
            return self.unauthorized()
        return web.json_response({"errors": [], "data": [self.by_id[i] for i in self.order if i in self.by_id]})

    async def one_type(self, request):
        if not self.authorized(request):
            return self.unauthorized()
        rtype = request.match_info["rtype"]
        return web.json_response({"errors": [], "data": [self.by_id[i] for i in self.order
                                                         if i in self.by_id and self.by_id[i]["type"] == rtype]})

    async def put_light(self, request):
        if not self.authorized(request):
            return self.unauthorized()
        rid = request.match_info["rid"]
        light = self.by_id.get(rid)
        if light is None or light.get("type") != "light":
            return web.json_response({"errors": [{"description": f"Not Found: /light/{rid}"}], "data": []},
                                     status=404)
        body = await request.json()
        self.puts.append({"rid": rid, "body": body})
        change = {}
        if "on" in body and light["on"]["on"] != body["on"]["on"]:
            change["on"] = {"on": body["on"]["on"]}
        if "dimming" in body and light["dimming"].get("brightness") != body["dimming"]["brightness"]:
            change["dimming"] = {"brightness": body["dimming"]["brightness"]}
        if "color_temperature" in body:
            change["color_temperature"] = {"mirek": body["color_temperature"]["mirek"], "mirek_valid": True}
        if "color" in body:
            change["color"] = {"xy": body["color"]["xy"]}
            if "color_temperature" in light:  # a colour set leaves white mode, as a bulb does
                change["color_temperature"] = {"mirek": None, "mirek_valid": False}
        merge(light, change)
        if change and self.confirm:
            item = {"id": rid, "id_v1": light.get("id_v1", ""), "owner": light.get("owner"), "type": "light", **change}
            self.push([{"type": "update", "data": [item]}])
        return web.json_response({"errors": [], "data": [{"rid": rid, "rtype": "light"}]})

    async def eventstream(self, request):
        if not self.authorized(request):
            return self.unauthorized()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(request)
        queue: asyncio.Queue = asyncio.Queue()
        self.streams.append(queue)
        try:
            await response.write(b": hi\n\n")
            while True:
                frame = await queue.get()
                if frame is None:  # the key revoked: the stream ends
                    break
                await response.write(frame)
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            self.streams.remove(queue)
        return response

    def push(self, events: list) -> None:
        """Events applied to the resources and sent, each as a bridge sends it."""
        stamped = []
        for event in events:
            for item in event.get("data", []):
                if event.get("type") == "update" and item.get("id") in self.by_id:
                    merge(self.by_id[item["id"]], {k: v for k, v in item.items() if k != "id"})
                elif event.get("type") == "add":
                    self.by_id[item["id"]] = copy.deepcopy(item)
                    self.order.append(item["id"])
                elif event.get("type") == "delete":
                    self.by_id.pop(item.get("id"), None)
            stamped.append({"creationtime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                            "id": str(uuid.uuid4()), **event})
        self.send(json.dumps(stamped))

    def send(self, data: str) -> None:
        """One event, its data as given."""
        self.counter += 1
        frame = f"id: {int(time.time())}:{self.counter}\ndata: {data}\n\n".encode()
        for queue in self.streams:
            queue.put_nowait(frame)

    async def create_user(self, request):
        body = await request.json()
        if not isinstance(body, dict) or not body.get("devicetype"):
            return web.json_response([{"error": {"type": 5, "address": "/", "description": "invalid/missing parameters in body"}}])
        if not self.link_pressed:
            return web.json_response([{"error": {"type": 101, "address": "", "description": "link button not pressed"}}])
        return web.json_response([{"success": {"username": self.key, "clientkey": "0123456789ABCDEF0123456789ABCDEF"}}])

    # -- the test's controls --------------------------------------------------------------

    async def fake_events(self, request):
        self.push(await request.json())
        return web.json_response({"streams": len(self.streams)})

    async def fake_raw(self, request):
        self.send((await request.json())["data"])
        return web.json_response({"streams": len(self.streams)})

    async def fake_revoke(self, request):
        body = await request.json() if request.can_read_body else {}
        self.revoked = bool(body.get("revoked", True))
        if self.revoked and body.get("end_streams", True):
            for queue in self.streams:
                queue.put_nowait(None)
        return web.json_response({"revoked": True})

    async def stdin_control(self, app):
        """Each line on stdin: a list of events, pushed."""
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=2 ** 22)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

        async def read():
            while True:
                line = await reader.readline()
                if not line:
                    return
                self.push(json.loads(line))

        app["stdin"] = loop.create_task(read())

    async def fake_link_button(self, request):
        self.link_pressed = True
        return web.json_response({"pressed": True})

    async def fake_confirm(self, request):
        self.confirm = bool((await request.json()).get("confirm"))
        return web.json_response({"confirm": self.confirm})

    async def fake_puts(self, request):
        return web.json_response(self.puts)

    async def fake_resource(self, request):
        return web.json_response(self.by_id.get(request.match_info["rid"]))

    async def fake_streams(self, request):
        return web.json_response({"streams": len(self.streams)})

    def app(self) -> web.Application:
        app = web.Application()
        app.add_routes([web.get("/clip/v2/resource", self.resources),
                        web.get("/clip/v2/resource/{rtype}", self.one_type),
                        web.put("/clip/v2/resource/light/{rid}", self.put_light),
                        web.get("/eventstream/clip/v2", self.eventstream),
                        web.post("/api", self.create_user),
                        web.post("/fake/events", self.fake_events),
                        web.post("/fake/link-button", self.fake_link_button),
                        web.post("/fake/raw", self.fake_raw),
                        web.post("/fake/revoke", self.fake_revoke),
                        web.post("/fake/confirm", self.fake_confirm),
                        web.get("/fake/puts", self.fake_puts),
                        web.get("/fake/streams", self.fake_streams),
                        web.get("/fake/resource/{rid}", self.fake_resource)])
        return app


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--resources", required=True)
    parser.add_argument("--application-key", required=True)
    parser.add_argument("--stdin-control", action="store_true")
    args = parser.parse_args()
    with open(args.resources, encoding="utf-8") as f:
        resources = json.load(f)["data"]
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(args.cert, args.key)
    bridge = FakeBridge(resources, args.application_key)
    app = bridge.app()
    if args.stdin_control:
        app.on_startup.append(bridge.stdin_control)
    web.run_app(app, host="127.0.0.1", port=args.port, ssl_context=context, print=None,
                access_log=None, reuse_address=True, shutdown_timeout=0.5)


if __name__ == "__main__":
    main()

"""The home side of the remote socket: homed's unary calls by request/reply.

    homed.<site>.call.<Method>    body: the serialized request (the socket's)
      header Homed-Timeout-Ms     optional: the call's deadline, as `timeout_ms` on the socket
    answer                        header Homed-Status: <code>; the response's bytes when 0,
                                  else a serialized home.v1.CallStatus

The caller's role comes from `Nats-Request-Info` (a service import with
`share: true`) through `[roles]`, as for remote writes; a method asks for the
role homed itself asks for (docs/protocol.md, Roles). The call then runs on a
connection of the bridge's own to homed. `GetHome` in pages runs on a
connection of its own per paging caller, because homed's page tokens belong to
the connection that asked for the first page.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from typing import Dict, List, Optional, Tuple

import homed
import homed.aio
from homed import pb

from .config import Settings, role_for
from .layout import HDR_STATUS

log = logging.getLogger("homed-nats.calls")

__all__ = ["CallService", "CALL_ROLES", "NOT_CARRIED", "HDR_TIMEOUT", "call_subject", "call_wildcard"]

HDR_TIMEOUT = "Homed-Timeout-Ms"
RANKS = {"none": 0, "viewer": 1, "user": 2, "admin": 3}
ROLE_NUMBERS = {"viewer": pb.ROLE_VIEWER, "user": pb.ROLE_USER, "admin": pb.ROLE_ADMIN}

#: The unary methods carried, with the role homed asks of a caller for each.
CALL_ROLES = {
    "GetHome": "viewer", "ListAccessories": "viewer", "ReadCharacteristics": "viewer", "GetStatus": "viewer",
    "ListTypes": "viewer", "ListProviders": "viewer", "ReadHistory": "viewer", "TraceTrigger": "viewer",
    "WriteCharacteristics": "user", "ExecuteActionSet": "user",
    "ChangeLayout": "admin", "ImportLayout": "admin", "GetStats": "admin",
}
#: Methods no request/reply can carry, and why (the remote socket says it).
NOT_CARRIED = {
    "OpenProvider": "a provider session is a stream homed sends commands on",
    "RegisterAccessories": "it belongs to a provider session",
    "AnswerCommand": "it belongs to a provider session",
    "ReportValues": "it belongs to a provider session",
    "Backup": "a backup is a stream of the database's pages",
}
PAGER_IDLE = 60.0  # a paging caller that asked for no page for this long is forgotten


def call_subject(prefix: str, site: str, method: str) -> str:
    return f"{prefix}.{site}.call.{method}"


def call_wildcard(prefix: str, site: str) -> str:
    return f"{prefix}.{site}.call.*"


class CallService:
    """Serves `homed.<site>.call.*` for a bridge: `await service.start(nc)`,
    then `await service.close()` on the way out."""

    def __init__(self, settings: Settings, client_name: str = "homed-nats calls"):
        self.settings = settings
        self.names = settings.names
        self.client_name = client_name
        self.nc = None
        self.client: Optional[homed.aio.Client] = None
        self.lock = asyncio.Lock()
        # pager -> (its connection, when it was last used)
        self.pagers: Dict[str, Tuple[homed.aio.Client, float]] = {}
        self.pager_ids = 0
        self.pager_prefix = secrets.token_hex(4)  # a token of an earlier run (or another bridge) names no pager
        self.stats = {"calls": 0, "denied": 0}

    async def start(self, nc) -> None:
        self.nc = nc
        await nc.subscribe(call_wildcard(self.names.prefix, self.names.site), queue="homed-nats", cb=self.on_call)

    async def close(self) -> None:
        for client in [self.client] + [c for c, _ in self.pagers.values()]:
            if client is not None:
                try:
                    await asyncio.wait_for(client.close(), 2)
                except Exception:  # noqa: BLE001
                    pass
        self.client, self.pagers = None, {}

    async def _reply(self, msg, code: int, body: bytes = b"", message: str = "") -> None:
        if not msg.reply:
            return
        if code != pb.OK:
            body = pb.CallStatus(code=code, message=message).SerializeToString()
        elif len(body) > self.nc.max_payload - 4096:
            code = pb.RESOURCE_EXHAUSTED
            body = pb.CallStatus(code=code, message=(
                f"the answer is {len(body)} bytes, over the NATS server's max_payload ({self.nc.max_payload}): "
                f"ask for less (GetHome: page_size)")).SerializeToString()
        await self.nc.publish(msg.reply, body, headers={HDR_STATUS: str(code)})

    async def on_call(self, msg) -> None:
        method = msg.subject.rsplit(".", 1)[-1]
        try:
            await self._call(msg, method)
        except Exception as error:  # noqa: BLE001 - one bad request must not end the service
            log.exception("%s: not handled", msg.subject)
            await self._reply(msg, pb.INTERNAL, message=f"homed-nats: {method}: {error}")

    def _caller(self, msg) -> Tuple[str, str, bool]:
        info = (msg.headers or {}).get("Nats-Request-Info")
        account = user = None
        if info:
            try:
                found = json.loads(info)
                account, user = found.get("acc"), found.get("user")
            except ValueError:
                pass
        return f"{account or '?'}/{user or '?'}", role_for(self.settings.roles, account, user), bool(info)

    async def _call(self, msg, method: str) -> None:
        if method in NOT_CARRIED:
            await self._reply(msg, pb.UNIMPLEMENTED, message=f"{method} is not carried over NATS: "
                                                             f"{NOT_CARRIED[method]}; use homed's socket")
            return
        least = CALL_ROLES.get(method)
        if least is None:
            await self._reply(msg, pb.UNIMPLEMENTED, message=f"{method} is no unary method homed-nats carries")
            return
        caller, role, vouched = self._caller(msg)
        if RANKS.get(role, 0) < RANKS[least]:
            self.stats["denied"] += 1
            text = f"{method} needs the {least} role; the NATS caller {caller} has the {role} role (homed-nats [roles])"
            if not vouched:
                text += ("; the request carried no Nats-Request-Info: callers must come from another account "
                         "that imports the service with share: true")
            log.warning("%s: refused: %s", msg.subject, text)
            await self._reply(msg, pb.PERMISSION_DENIED, message=text)
            return
        timeout = None
        given = (msg.headers or {}).get(HDR_TIMEOUT)
        if given is not None:
            if not given.isdigit():
                await self._reply(msg, pb.INVALID_ARGUMENT, message=f"{HDR_TIMEOUT} {given!r}: a number of ms")
                return
            timeout = int(given) / 1000
        try:
            payloads = await self._run(method, msg.data or b"", timeout)
        except homed.HomedError as error:
            await self._reply(msg, error.code, message=error.message)
            return
        self.stats["calls"] += 1
        body = payloads[0] if payloads else b""
        if method == "GetStatus":
            # The role is the NATS caller's, not that of the bridge's connection.
            status = pb.GetStatusResponse.FromString(body)
            status.caller_role = ROLE_NUMBERS.get(role, pb.ROLE_UNSPECIFIED)
            body = status.SerializeToString()
        await self._reply(msg, pb.OK, body)

    async def _run(self, method: str, request: bytes, timeout: Optional[float]) -> List[bytes]:
        if method == "GetHome":
            parsed = pb.GetHomeRequest.FromString(request) if request else pb.GetHomeRequest()
            if parsed.page_size or parsed.page_token:
                return await self._page(parsed, request, timeout)
        for attempt in (1, 2):
            client = await self._client()
            try:
                return await client.call_raw(method, request, timeout=timeout if timeout is not None else 30)
            except homed.Unavailable:
                # homed restarted since the last call: once more on a new connection.
                await self._drop(client)
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    async def _page(self, parsed, request: bytes, timeout: Optional[float]) -> List[bytes]:
        """A page of GetHome on the paging caller's own homed connection. The token
        handed out is `<pager>~<homed's token>`: homed's tokens name a page of a
        connection's snapshot, and two callers' tokens may be the same text."""
        now = time.monotonic()
        for pager, (client, used) in list(self.pagers.items()):
            if now - used > PAGER_IDLE:
                del self.pagers[pager]
                await self._close(client)
        if parsed.page_token:
            pager, _, token = parsed.page_token.partition("~")
            found = self.pagers.pop(pager, None) if token else None
            if found is None:
                raise homed.error_for(pb.INVALID_ARGUMENT, f"GetHome: page token {parsed.page_token!r} is not "
                                                           f"one homed-nats handed out (or it expired): ask for the "
                                                           f"first page again")
            client = found[0]
            parsed.page_token = token
            request = parsed.SerializeToString()
        else:
            client = await homed.aio.connect(self.settings.socket_path, client_name=f"{self.client_name} (pages)",
                                             call_timeout=30)
            self.pager_ids += 1
            pager = f"{self.pager_prefix}{self.pager_ids}"
        try:
            payloads = await client.call_raw("GetHome", request, timeout=timeout if timeout is not None else 30)
        except BaseException:
            await self._close(client)
            raise
        response = pb.GetHomeResponse.FromString(payloads[0]) if payloads else pb.GetHomeResponse()
        if response.next_page_token:
            self.pagers[pager] = (client, time.monotonic())
            response.next_page_token = f"{pager}~{response.next_page_token}"
            return [response.SerializeToString()]
        await self._close(client)
        return payloads

    async def _client(self) -> homed.aio.Client:
        async with self.lock:
            if self.client is None or self.client.closed:
                self.client = await homed.aio.connect(self.settings.socket_path, client_name=self.client_name,
                                                      call_timeout=30)
            return self.client

    async def _drop(self, client) -> None:
        async with self.lock:
            if self.client is client:
                self.client = None
        await self._close(client)

    @staticmethod
    async def _close(client) -> None:
        try:
            await asyncio.wait_for(client.close(), 2)
        except Exception:  # noqa: BLE001
            pass

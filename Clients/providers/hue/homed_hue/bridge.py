"""The bridge's CLIP v2 API over HTTPS (aiohttp): the resources, a light's
PUT, the event stream, and pairing's POST /api. TLS is checked against the
certificate pinned at pairing, or a CA file given; only `insecure` (told
explicitly) skips it."""

from __future__ import annotations

import hashlib
import json
import ssl
from typing import AsyncIterator, Optional, Tuple

import aiohttp

from .sse import SseParser

__all__ = ["BridgeError", "Unauthorized", "Bridge", "tls", "certificate_sha256", "split_address"]

REQUEST_TIMEOUT = aiohttp.ClientTimeout(total=10, sock_connect=5)
# The stream is quiet while nothing happens: no read timeout, a connect one only.
STREAM_TIMEOUT = aiohttp.ClientTimeout(total=None, sock_connect=5, sock_read=None)


class BridgeError(Exception):
    """The bridge answered with an error (its description) or not as a bridge."""


class Unauthorized(BridgeError):
    """The application key is not (or no longer) the bridge's: HTTP 401 or
    403, CLIP v2's "unauthorized user"."""

    def __init__(self, status: int, description: str):
        self.status, self.description = status, description
        super().__init__(f"it refused the application key (HTTP {status}: {description})")


def split_address(address: str) -> Tuple[str, int]:
    """HOST, HOST:PORT or [IPv6]:PORT → (host, port); 443 when none."""
    if address.startswith("["):
        host, _, rest = address[1:].partition("]")
        port = rest.lstrip(":")
    elif address.count(":") == 1:
        host, _, port = address.partition(":")
    else:
        host, port = address, ""
    if not host or (port and not port.isdigit()):
        raise ValueError(f"{address!r} is not HOST or HOST:PORT")
    return host, int(port) if port else 443


def tls(sha256: str = "", cafile: Optional[str] = None, insecure: bool = False):
    """What aiohttp's `ssl=` takes. A Hue bridge's certificate names its bridge
    id, not its address, so with a CA file the chain is checked and the name not."""
    if cafile:
        context = ssl.create_default_context(cafile=cafile)
        context.check_hostname = False
        return context
    if sha256:
        return aiohttp.Fingerprint(bytes.fromhex(sha256))
    if insecure:
        return False
    raise ValueError("no certificate to check the bridge's against: pair again, or give --cafile")


async def certificate_sha256(host: str, port: int, cafile: Optional[str] = None, timeout: float = 10) -> str:
    """The SHA-256 of the certificate the bridge shows (checked against the CA
    file when one is given): what pairing pins."""
    import asyncio
    context = ssl.create_default_context(cafile=cafile) if cafile else ssl.create_default_context()
    context.check_hostname = False
    if not cafile:
        context.verify_mode = ssl.CERT_NONE  # trust on first use: pinned from now on
    _, writer = await asyncio.wait_for(asyncio.open_connection(host, port, ssl=context), timeout)
    try:
        der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
    finally:
        writer.close()
    return hashlib.sha256(der).hexdigest()


def _errors(document) -> str:
    if isinstance(document, dict) and isinstance(document.get("errors"), list):
        return "; ".join(str(e.get("description", e)) if isinstance(e, dict) else str(e)
                         for e in document["errors"])
    return ""


class Bridge:
    """One HTTPS session to the bridge (`async with`)."""

    def __init__(self, address: str, application_key: str, ssl_check):
        self.host, self.port = split_address(address)
        self.base = f"https://{self.host}:{self.port}" if ":" not in self.host else f"https://[{self.host}]:{self.port}"
        self.key = application_key
        self.ssl = ssl_check
        self.session: Optional[aiohttp.ClientSession] = None

    async def __aenter__(self) -> "Bridge":
        # Events of many resources come as one line: read_bufsize above aiohttp's 64 KiB.
        self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=self.ssl),
                                             read_bufsize=2 ** 22, headers={"hue-application-key": self.key})
        return self

    async def __aexit__(self, *exc) -> None:
        await self.session.close()

    async def _json(self, response: aiohttp.ClientResponse):
        text = await response.text()
        try:
            document = json.loads(text)
        except ValueError:
            if response.status in (401, 403):
                raise Unauthorized(response.status, text[:80] or "no description") from None
            raise BridgeError(f"HTTP {response.status}: not JSON ({text[:80]!r})") from None
        if response.status in (401, 403):
            raise Unauthorized(response.status, _errors(document) or "no description")
        if response.status >= 300:
            raise BridgeError(f"HTTP {response.status}: {_errors(document) or text[:120]}")
        return document

    async def resources(self) -> list:
        async with self.session.get(f"{self.base}/clip/v2/resource", timeout=REQUEST_TIMEOUT) as response:
            document = await self._json(response)
        if not isinstance(document, dict) or not isinstance(document.get("data"), list):
            raise BridgeError("GET /clip/v2/resource: no data list")
        return document["data"]

    async def probe(self, timeout: float) -> None:
        """One small request, to learn that the bridge still answers (its event
        stream is silent while nothing happens, so silence says nothing)."""
        async with self.session.get(f"{self.base}/clip/v2/resource/bridge",
                                    timeout=aiohttp.ClientTimeout(total=timeout)) as response:
            await self._json(response)

    async def put(self, rtype: str, rid: str, body: dict) -> None:
        async with self.session.put(f"{self.base}/clip/v2/resource/{rtype}/{rid}", json=body,
                                    timeout=REQUEST_TIMEOUT) as response:
            document = await self._json(response)
        errors = _errors(document)
        if errors:
            raise BridgeError(errors)

    async def open_events(self) -> aiohttp.ClientResponse:
        response = await self.session.get(f"{self.base}/eventstream/clip/v2", timeout=STREAM_TIMEOUT,
                                          headers={"Accept": "text/event-stream"})
        if response.status != 200:
            try:
                await self._json(response)
            finally:
                response.release()
            raise BridgeError(f"the event stream answered HTTP {response.status}")
        return response

    @staticmethod
    async def events(response: aiohttp.ClientResponse) -> AsyncIterator[Tuple[Optional[str], str]]:
        """Each event as (its id, its data unparsed: the provider says what is
        wrong with one it cannot read); ends when the bridge closes the stream."""
        parser = SseParser()
        try:
            while True:
                line = await response.content.readline()
                if not line:
                    return
                event = parser.feed(line.decode("utf-8", errors="replace"))
                if event is not None:
                    yield event
        finally:
            response.release()

    async def create_user(self, devicetype: str) -> dict:
        """POST /api: {"username", "clientkey"} once the link button was pressed;
        raises LinkButtonNotPressed (error 101) before."""
        async with self.session.post(f"{self.base}/api", json={"devicetype": devicetype, "generateclientkey": True},
                                     timeout=REQUEST_TIMEOUT) as response:
            document = await self._json(response)
        item = document[0] if isinstance(document, list) and document else {}
        if isinstance(item, dict) and isinstance(item.get("success"), dict) and item["success"].get("username"):
            return item["success"]
        error = item.get("error") if isinstance(item, dict) else None
        if isinstance(error, dict) and error.get("type") == 101:
            raise LinkButtonNotPressed(error.get("description", "link button not pressed"))
        raise BridgeError(f"POST /api: {error.get('description') if isinstance(error, dict) else document!r}")


class LinkButtonNotPressed(BridgeError):
    pass

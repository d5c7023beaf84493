"""Pairing with a bridge: its certificate pinned, then POST /api until the
link button is pressed (error 101 before) or the time is up; the application
key saved (keyfile.py, mode 0600) only once the bridge gave it."""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from typing import Optional

from . import keyfile
from .bridge import Bridge, BridgeError, LinkButtonNotPressed, certificate_sha256, split_address, tls

log = logging.getLogger("homed-hue.pairing")


class PairingFailed(Exception):
    """A pairing that did not happen, with the sentence a person needs."""


async def pair(address: str, key_file: str, timeout: float = 60.0, interval: float = 1.0,
               cafile: Optional[str] = None) -> keyfile.Pairing:
    try:
        host, port = split_address(address)
    except ValueError as error:
        raise PairingFailed(str(error)) from None
    try:
        sha256 = "" if cafile else await certificate_sha256(host, port)
        check = tls(sha256, cafile)
    except (OSError, asyncio.TimeoutError) as error:
        raise PairingFailed(f"cannot reach the bridge at {address}: {error}") from None
    devicetype = f"homed#{socket.gethostname()[:19]}"  # the bridge takes at most 19 characters after the '#'
    deadline = time.monotonic() + timeout
    told = False
    async with Bridge(address, "", check) as bridge:
        while True:
            try:
                answer = await bridge.create_user(devicetype)
                break
            except LinkButtonNotPressed:
                if not told:
                    log.warning("press the link button on the bridge at %s (waiting up to %.0f s)", address, timeout)
                    told = True
            except BridgeError as error:
                raise PairingFailed(f"the bridge at {address} refused: {error}") from None
            except (OSError, asyncio.TimeoutError) as error:
                raise PairingFailed(f"cannot reach the bridge at {address}: {error}") from None
            if time.monotonic() + interval > deadline:
                raise PairingFailed(f"the link button of the bridge at {address} was not pressed within "
                                    f"{timeout:g} s; press it, then pair again")
            await asyncio.sleep(interval)
    pairing = keyfile.Pairing(address, answer["username"], str(answer.get("clientkey", "")), sha256)
    try:
        keyfile.save(key_file, pairing)
    except OSError as error:
        raise PairingFailed(f"the bridge paired, but {key_file} could not be written: {error.strerror or error}")
    return pairing

"""The setup code and the X-HM:// setup URI (what the Home app's QR code holds).
No I/O: randomness comes from the caller.

The URI is HAP's setup payload: version, category, flags (2: IP) and the
setup code packed into 45 bits, in base 36, then the 4-character setup id that
the accessory also advertises (as a hash) so that the Home app finds the right
one on the network.
"""

from __future__ import annotations

import random
import string

# Codes the HAP specification forbids (too easy to guess).
FORBIDDEN = {"000-00-000", "111-11-111", "222-22-222", "333-33-333", "444-44-444", "555-55-555",
             "666-66-666", "777-77-777", "888-88-888", "999-99-999", "123-45-678", "876-54-321"}
SETUP_ID_ALPHABET = string.digits + string.ascii_uppercase
FLAG_IP = 2


def new_pincode(rng: random.Random) -> str:
    while True:
        digits = f"{rng.randrange(10 ** 8):08d}"
        code = f"{digits[:3]}-{digits[3:5]}-{digits[5:]}"
        if code not in FORBIDDEN:
            return code


def new_setup_id(rng: random.Random) -> str:
    return "".join(rng.choice(SETUP_ID_ALPHABET) for _ in range(4))


def valid_pincode(code: str) -> bool:
    parts = code.split("-")
    return ([len(p) for p in parts] == [3, 2, 3] and all(p.isdigit() for p in parts)
            and code not in FORBIDDEN)


def _base36(number: int) -> str:
    out = ""
    while True:
        number, digit = divmod(number, 36)
        out = SETUP_ID_ALPHABET[digit] + out
        if number == 0:
            return out


def setup_uri(category: int, pincode: str, setup_id: str) -> str:
    payload = 0                       # version 0, reserved 0
    payload = (payload << 4) | 0
    payload = (payload << 8) | (category & 0xFF)
    payload = (payload << 4) | FLAG_IP
    payload = (payload << 27) | (int(pincode.replace("-", ""), 10) & 0x7FFFFFF)
    return "X-HM://" + _base36(payload).rjust(9, "0") + setup_id


def qr_text(uri: str) -> str:
    """The QR code of ``uri`` for a terminal (pyqrcode, which HAP-python's
    [QRCode] extra installs), or "" without it."""
    try:
        from pyqrcode import QRCode
    except ImportError:
        return ""
    return QRCode(uri).terminal(quiet_zone=1)

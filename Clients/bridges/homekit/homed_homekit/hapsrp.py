"""Pair-setup's SRP session key as controllers compute it.

HAP-python 5.0's SRP server drops leading zero bytes where controllers keep
them: it sends its public key B as a number's bytes (383 bytes when B begins
with a zero byte, which a controller then hashes unpadded into u), hashes the
premaster secret S without padding it to the group's length, and uses the
session key K (a SHA-512 digest) as a number, so that a K beginning with a zero
byte is 63 bytes long in the proof M and in the HKDF inputs of steps 3 to 5.
aiohomekit pads (its PR #150, after real accessories failed to pair), as RFC
5054 and accessories do; with HAP-python's server about one pairing in 85 then
fails with the right setup code ("wrong code"). Measured here: 1 failure in 150
pairings of aiohomekit with a plain HAP-python accessory; see the README for
the figures with this module.

``PaddedSrpServer`` sends B as 384 bytes and computes S, K, M and H(AMK) with
the padding; ``PairSetupSteps`` (mixed into the bridge's request handler) runs
HAP-python's steps 1 and 3 to 5 with those bytes; everything else is HAP-python's.
``use_padded_verifier`` puts a ``PaddedSrpServer`` where the driver keeps its
verifier: an attribute up to HAP-python 5.1, a read-only property over
``_srp_verifier`` from 5.2 (assigning to it there raised in step 1, so that every
pairing ended in "M2: Accessory did not send public key").
"""

from __future__ import annotations

import hashlib
import uuid
from http import HTTPStatus

from chacha20poly1305_reuseable import ChaCha20Poly1305Reusable as ChaCha20Poly1305
from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519
from pyhap import tlv
from pyhap.const import HAP_PERMISSIONS, HAP_SERVER_STATUS
from pyhap.hap_crypto import hap_hkdf
from pyhap.hap_handler import HAP_TLV_STATES, HAP_TLV_TAGS
from pyhap.hsrp import Server, bytes_to_long
from pyhap.params import get_srp_context
from pyhap.util import long_to_bytes


class PaddedSrpServer(Server):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.Bb = self._padN(long_to_bytes(self.B))   # sent, and hashed into M, as 384 bytes

    def set_A(self, bytes_A) -> None:
        self.A = bytes_to_long(bytes_A)
        self.Ab = bytes_A
        self.S = self._derive_premaster_secret()
        self.Sb = long_to_bytes(self.S)
        self.Kb = self._digest(self._padN(self.Sb))   # K = H(PAD(S)), all 64 bytes
        self.K = bytes_to_long(self.Kb)
        self.M = self._get_M()                        # uses Kb
        self.HAMK = self._get_HAMK()                  # uses Kb

    def session_key_bytes(self) -> bytes:
        return self.Kb


def use_padded_verifier(driver) -> None:
    """What an ``AccessoryDriver.setup_srp_verifier`` override calls: HAP's
    3072-bit group with SHA-512, the driver's setup code, padded as controllers pad."""
    verifier = PaddedSrpServer(get_srp_context(3072, hashlib.sha512, 16), b"Pair-Setup", driver.state.pincode)
    if isinstance(getattr(type(driver), "srp_verifier", None), property):
        driver._srp_verifier = verifier  # HAP-python >= 5.2: the property reads this
    else:
        driver.srp_verifier = verifier


class PairSetupSteps:
    """HAP-python's pair-setup steps 1 and 3 to 5 (hap_handler.py), with B and
    the session key as padded bytes instead of through ``long_to_bytes``."""

    def _session_key(self) -> bytes:
        return self.accessory_handler.srp_verifier.session_key_bytes()

    def _pairing_one(self) -> None:
        self.accessory_handler.setup_srp_verifier()
        verifier = self.accessory_handler.srp_verifier
        self._send_tlv_pairing_response(tlv.encode(HAP_TLV_TAGS.SEQUENCE_NUM, HAP_TLV_STATES.M2, HAP_TLV_TAGS.SALT,
                                                   verifier.s, HAP_TLV_TAGS.PUBLIC_KEY, verifier.Bb))

    def _pairing_three(self, tlv_objects) -> None:
        encrypted_data = tlv_objects[HAP_TLV_TAGS.ENCRYPTED_DATA]
        hkdf_enc_key = hap_hkdf(self._session_key(), self.PAIRING_3_SALT, self.PAIRING_3_INFO)
        cipher = ChaCha20Poly1305(hkdf_enc_key)
        try:
            decrypted_data = cipher.decrypt(self.PAIRING_3_NONCE, bytes(encrypted_data), b"")
        except InvalidTag:
            self._send_authentication_error_tlv_response(HAP_TLV_STATES.M6)
            return
        dec_tlv_objects = tlv.decode(bytes(decrypted_data))
        self._pairing_four(dec_tlv_objects[HAP_TLV_TAGS.USERNAME], dec_tlv_objects[HAP_TLV_TAGS.PUBLIC_KEY],
                           dec_tlv_objects[HAP_TLV_TAGS.PROOF], hkdf_enc_key)

    def _pairing_four(self, client_username_bytes, client_ltpk, client_proof, encryption_key) -> None:
        output_key = hap_hkdf(self._session_key(), self.PAIRING_4_SALT, self.PAIRING_4_INFO)
        verifying_key = ed25519.Ed25519PublicKey.from_public_bytes(client_ltpk)
        try:
            verifying_key.verify(client_proof, output_key + client_username_bytes + client_ltpk)
        except InvalidSignature:
            self._send_authentication_error_tlv_response(HAP_TLV_STATES.M6)
            return
        self._pairing_five(client_username_bytes, client_ltpk, encryption_key)

    def _pairing_five(self, client_username_bytes, client_ltpk, encryption_key) -> None:
        output_key = hap_hkdf(self._session_key(), self.PAIRING_5_SALT, self.PAIRING_5_INFO)
        server_public = self.state.public_key.public_bytes(encoding=serialization.Encoding.Raw,
                                                           format=serialization.PublicFormat.Raw)
        mac = self.state.mac.encode()
        server_proof = self.state.private_key.sign(output_key + mac + server_public)
        message = tlv.encode(HAP_TLV_TAGS.USERNAME, mac, HAP_TLV_TAGS.PUBLIC_KEY, server_public,
                             HAP_TLV_TAGS.PROOF, server_proof)
        aead_message = bytes(ChaCha20Poly1305(encryption_key).encrypt(self.PAIRING_5_NONCE, bytes(message), b""))
        uuid.UUID(client_username_bytes.decode("utf-8"))  # a controller's id is a UUID: refuse anything else
        if not self.accessory_handler.pair(client_username_bytes, client_ltpk, HAP_PERMISSIONS.ADMIN):
            self.send_response_with_status(HTTPStatus.INTERNAL_SERVER_ERROR,
                                           HAP_SERVER_STATUS.INVALID_VALUE_IN_REQUEST)
            return
        tlv_data = tlv.encode(HAP_TLV_TAGS.SEQUENCE_NUM, HAP_TLV_STATES.M6, HAP_TLV_TAGS.ENCRYPTED_DATA, aead_message)
        self.response.pairing_changed = True
        self._send_tlv_pairing_response(tlv_data)

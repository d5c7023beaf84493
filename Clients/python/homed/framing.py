"""The whole framing of the homed wire: a 4-byte big-endian length, then that
many bytes of one serialized ``home.v1.Frame``. Everything else is protobuf."""

import struct

HEADER = struct.Struct(">I")
DEFAULT_MAX_FRAME_SIZE = 4 * 1024 * 1024


class FrameTooLarge(ValueError):
    """A length prefix above the negotiated maximum; the connection is unusable."""


def encode_frame(body: bytes) -> bytes:
    """Length-prefix one serialized Frame."""
    return HEADER.pack(len(body)) + body


class FrameDecoder:
    """Incremental decoder: feed it bytes as they arrive, in any split, and get
    back the complete frame bodies. A length above ``max_frame_size`` raises
    FrameTooLarge before anything is allocated for it."""

    def __init__(self, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE):
        self.max_frame_size = max_frame_size
        self._buf = bytearray()

    def feed(self, data: bytes) -> list:
        self._buf += data
        frames, pos = [], 0
        while len(self._buf) - pos >= HEADER.size:
            (length,) = HEADER.unpack_from(self._buf, pos)
            if length > self.max_frame_size:
                raise FrameTooLarge(f"frame of {length} bytes exceeds the maximum of {self.max_frame_size}")
            if len(self._buf) - pos - HEADER.size < length:
                break
            start = pos + HEADER.size
            frames.append(bytes(self._buf[start:start + length]))
            pos = start + length
        del self._buf[:pos]
        return frames

    @property
    def pending(self) -> int:
        """Bytes held towards an incomplete frame (non-zero at EOF = truncated)."""
        return len(self._buf)


def read_frames(sock, decoder: FrameDecoder, bufsize: int = 65536):
    """Yield frame bodies from a blocking socket until the peer closes it."""
    while True:
        data = sock.recv(bufsize)
        if not data:
            if decoder.pending:
                raise EOFError(f"connection closed inside a frame ({decoder.pending} bytes pending)")
            return
        yield from decoder.feed(data)

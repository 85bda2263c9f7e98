"""The one zstd binding weir's Python package uses: the standard library's
``compression.zstd`` (PEP 784, Python 3.14), or its backport ``backports.zstd``
on older Pythons, the same code on libzstd. Chosen over ``zstandard`` and
``pyzstd`` because it is the API Python itself ships from 3.14 on (pyzstd is
now built on it), so the dependency disappears with time; it decodes a frame
and says where the frame ended, which is all the reader needs."""

from __future__ import annotations

import bisect
import sys
from typing import TYPE_CHECKING

from weir.errors import FormatError

if TYPE_CHECKING:
    from weir.frames import Frame

if sys.version_info >= (3, 14):
    from compression.zstd import ZstdDecompressor, ZstdError
else:
    from backports.zstd import ZstdDecompressor, ZstdError

__all__ = ["FrameDecoding", "ZstdError", "measure_frame"]


def measure_frame(data: bytes, where: str = "a zstd frame") -> int:
    """The content size of the one frame ``data`` holds, by decoding it in
    pieces of 1 MiB (the frame may be far larger than memory allows twice);
    ``where`` names the frame in errors (``frame N at offset O``)."""
    decompressor = ZstdDecompressor()
    total = 0
    try:
        total += len(decompressor.decompress(data, _PIECE))
        while not decompressor.eof and not decompressor.needs_input:
            total += len(decompressor.decompress(b"", _PIECE))
    except ZstdError as error:
        raise FormatError(f"{where} does not decode: {error}") from error
    if not decompressor.eof:
        raise FormatError(f"{where} is cut short")
    return total


# Bytes decoded per call: libzstd's output in pieces of 1 MiB stays in the
# CPU's cache and needs no buffer grown by copies (measured: an 8 MiB frame
# decoded in 1 MiB pieces took about half the time of one 8 MiB call).
_PIECE = 1 << 20


class FrameDecoding:
    """One frame, decoded whole at its first read and checked before any of
    its bytes is returned: it must end exactly at the end of its compressed
    bytes, its checksum (when it stores one) must match, which libzstd
    checks as it reads the frame's last bytes, and it must decode to the
    size its index gives, a byte more or fewer fails. So no byte a check has
    not passed reaches the caller, and no read joins bytes across a frame
    boundary that a lying seek table put in the wrong place. The content is
    kept in the pieces libzstd returned, never copied into one buffer (8 MiB
    copied per frame cost as much as a third of decoding it)."""

    def __init__(self, data: bytes, frame: Frame) -> None:
        self._data = data
        self._frame = frame
        self._pieces: list[bytes] = []
        self._starts: list[int] = []
        self._checked = False
        self.decoded = 0
        self.length = frame.length
        self.offset = frame.offset

    def read(self, start: int, end: int) -> bytes:
        """Content bytes ``[start, end)`` (the whole frame is decoded first)."""
        if not self._checked:
            self._decode()
        first = max(0, bisect.bisect_right(self._starts, start) - 1)
        parts = []
        for index in range(first, len(self._pieces)):
            piece_start = self._starts[index]
            if piece_start >= end:
                break
            piece = self._pieces[index]
            low, high = max(start - piece_start, 0), min(end - piece_start, len(piece))
            parts.append(piece if (low, high) == (0, len(piece)) else piece[low:high])
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def _decode(self) -> None:
        frame, where = self._frame, self._frame.where()
        decompressor = ZstdDecompressor()
        pieces, starts, total = [], [], 0
        try:
            piece = decompressor.decompress(self._data, _PIECE)
            while True:
                if total + len(piece) <= frame.length:
                    starts.append(total)
                    pieces.append(piece)
                total += len(piece)  # past the size listed: counted, not kept
                if decompressor.eof or decompressor.needs_input:
                    break
                piece = decompressor.decompress(b"", _PIECE)
        except ZstdError as error:
            raise FormatError(f"{where} does not decode: {error}") from error
        if not decompressor.eof:
            raise FormatError(f"{where} is cut short: its {frame.size} bytes end inside it")
        if decompressor.unused_data:
            raise FormatError(
                f"{where} ends {len(decompressor.unused_data)} bytes before the {frame.size} its index gives it"
            )
        if total != frame.length:
            listed = {
                "header": "its header declares",
                "seek table entry": "its seek table entry lists",
            }.get(frame.sized_by, "it decoded to when indexed (the file changed since)")
            raise FormatError(f"{where} decodes to {total} bytes of content, but {listed} {frame.length}")
        self._pieces, self._starts, self.decoded, self._data = pieces, starts, total, b""
        self._checked = True

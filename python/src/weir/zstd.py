"""The one zstd binding weir's Python package uses: the standard library's
``compression.zstd`` (PEP 784, Python 3.14), or its backport ``backports.zstd``
on older Pythons, the same code on libzstd. Chosen over ``zstandard`` and
``pyzstd`` because it is the API Python itself ships from 3.14 on (pyzstd is
now built on it), so the dependency disappears with time; it decodes a frame
and says where the frame ended, which is all the reader needs."""

from __future__ import annotations

import bisect
import sys

if sys.version_info >= (3, 14):
    from compression.zstd import ZstdDecompressor, ZstdError
else:
    from backports.zstd import ZstdDecompressor, ZstdError

__all__ = ["FrameDecoding", "ZstdError", "measure_frame"]


def measure_frame(data: bytes) -> int:
    """The content size of the one frame ``data`` holds, by decoding it in
    pieces of 1 MiB (the frame may be far larger than memory allows twice)."""
    from weir.frames import FormatError

    decompressor = ZstdDecompressor()
    total = 0
    try:
        total += len(decompressor.decompress(data, 1 << 20))
        while not decompressor.eof:
            piece = decompressor.decompress(b"", 1 << 20)
            if not piece and decompressor.needs_input:
                break  # cut short: nothing more to decode
            total += len(piece)
    except ZstdError as error:
        raise FormatError(f"a zstd frame does not decode: {error}") from error
    if not decompressor.eof:
        raise FormatError("a zstd frame is cut short")
    return total


# Bytes decoded per call: libzstd's output in pieces of 1 MiB stays in the
# CPU's cache and needs no buffer grown by copies (measured: an 8 MiB frame
# decoded in 1 MiB pieces took about half the time of one 8 MiB call).
_PIECE = 1 << 20


class FrameDecoding:
    """One frame decoded as far as reads have needed, and no further: a read
    at the start of a frame does not pay for its end, and the next read of
    the same frame goes on where the last stopped. The frame's checksum and
    size are checked when its end is reached. The content is kept in the
    pieces libzstd returned, never copied into one buffer (8 MiB copied per
    frame cost as much as a third of decoding it)."""

    def __init__(self, data: bytes, length: int, offset: int) -> None:
        self._data = data
        self._decompressor = ZstdDecompressor()
        self._fed = False
        self._pieces: list[bytes] = []
        self._starts: list[int] = []
        self.decoded = 0
        self.length = length
        self.offset = offset

    def read(self, start: int, end: int) -> bytes:
        """Content bytes ``[start, end)``, decoding as far as ``end``."""
        self._decode_to(end)
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

    def _decode_to(self, end: int) -> None:
        from weir.frames import FormatError

        end = min(end, self.length)
        try:
            while self.decoded < end:
                want = min(end - self.decoded, _PIECE)
                piece = self._decompressor.decompress(b"" if self._fed else self._data, want)
                self._fed = True
                if not piece and (self._decompressor.eof or self._decompressor.needs_input):
                    break
                self._starts.append(self.decoded)
                self._pieces.append(piece)
                self.decoded += len(piece)
        except ZstdError as error:
            raise FormatError(f"the zstd frame at offset {self.offset} does not decode: {error}") from error
        if self.decoded < end or (self.decoded == self.length and not self._finish()):
            raise FormatError(
                f"the zstd frame at offset {self.offset} decodes to {self.decoded} bytes where its index "
                f"says {self.length}"
            )

    def _finish(self) -> bool:
        """Whether the frame ends where its size says (libzstd checks the
        checksum as it reads the frame's last bytes)."""
        if not self._decompressor.eof and self._decompressor.decompress(b"", 1):
            return False
        if self._decompressor.eof:
            self._data = b""
        return self._decompressor.eof

"""The one zstd binding weir's Python package uses: the standard library's
``compression.zstd`` (PEP 784, Python 3.14), or its backport ``backports.zstd``
on older Pythons, the same code on libzstd. Chosen over ``zstandard`` and
``pyzstd`` because it is the API Python itself ships from 3.14 on (pyzstd is
now built on it), so the dependency disappears with time; it decodes a frame
and says where the frame ended, which is all the reader needs."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 14):
    from compression.zstd import ZstdDecompressor, ZstdError
else:
    from backports.zstd import ZstdDecompressor, ZstdError

__all__ = ["ZstdError", "decode_frame", "measure_frame"]


def decode_frame(data: bytes, length: int, offset: int) -> bytes:
    """The content of the one frame ``data`` holds, which must be ``length``
    bytes (what the index says); ``offset`` is the frame's place in the file,
    for messages. A frame's checksum is checked by libzstd as it decodes."""
    from weir.frames import FormatError

    decompressor = ZstdDecompressor()
    try:
        content = decompressor.decompress(data)
    except ZstdError as error:
        raise FormatError(f"the zstd frame at offset {offset} does not decode: {error}") from error
    if not decompressor.eof or len(content) != length:
        raise FormatError(
            f"the zstd frame at offset {offset} decodes to {len(content)} bytes where its index says {length}"
        )
    return content


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

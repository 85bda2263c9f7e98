#!/usr/bin/env python3
"""write_zeros.py SIZE FILE -- the bench's write limit (issue 41): SIZE zero
bytes written to FILE the way weir's writer writes a decoded file (the
OrderedWriter): writes of 128 KiB placed 4 KiB past each multiple of 128 KiB,
and every 32 MiB the kernel asked to start writing them back
(sync_file_range), so that the limit measures the page cache and the disk
rather than one tool's way of writing (dd's 1 MiB writes were slower here than
weir decoding the same bytes). The caller syncs FILE after it, as it syncs
every decoder's output."""
import ctypes
import os
import sys

PIECE, PHASE, STEP = 128 << 10, 4 << 10, 32 << 20
SYNC_FILE_RANGE_WRITE = 2


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: write_zeros.py SIZE FILE")
    size, path = int(sys.argv[1]), sys.argv[2]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.sync_file_range.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
    zeros = memoryview(bytes(PIECE))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    position, started = 0, 0
    try:
        while position < size:
            # The next cut: 4 KiB past the next multiple of 128 KiB.
            end = min(size, (position - PHASE) // PIECE * PIECE + PIECE + PHASE if position >= PHASE else PHASE)
            while position < end:
                position += os.write(fd, zeros[:end - position])
            if position - started >= STEP:
                libc.sync_file_range(fd, started, position - started, SYNC_FILE_RANGE_WRITE)
                started = position
    finally:
        os.close(fd)


if __name__ == "__main__":
    main()

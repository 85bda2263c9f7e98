#!/usr/bin/env python3
"""Sets an ELF file's GNU build id to the SHA-1 of the file with that id
zeroed: a build id that depends on the bytes shipped alone (the linker's
covers sections that strip removed, such as .swift_modhash, which changes
from build to build)."""
import hashlib
import struct
import sys

path = sys.argv[1]
data = bytearray(open(path, "rb").read())
assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, "64-bit little-endian ELF only"
shoff, = struct.unpack_from("<Q", data, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
names_offset = struct.unpack_from("<Q", data, shoff + shstrndx * shentsize + 0x18)[0]
for index in range(shnum):
    header = shoff + index * shentsize
    name_index, = struct.unpack_from("<I", data, header)
    name = bytes(data[names_offset + name_index:data.index(b"\0", names_offset + name_index)])
    if name != b".note.gnu.build-id":
        continue
    offset, = struct.unpack_from("<Q", data, header + 0x18)
    namesz, descsz, kind = struct.unpack_from("<III", data, offset)
    assert kind == 3 and data[offset + 12:offset + 16] == b"GNU\0", "not a GNU build id note"
    start = offset + 12 + ((namesz + 3) & ~3)
    data[start:start + descsz] = bytes(descsz)
    data[start:start + descsz] = hashlib.sha1(data).digest()[:descsz].ljust(descsz, b"\0")
    open(path, "wb").write(data)
    break
else:
    sys.exit(f"{path}: no .note.gnu.build-id section")

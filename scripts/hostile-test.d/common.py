"""What the hostile suite's parts share: the level it runs at, a record's
hashes and lines, a file's seek table."""
import hashlib
import os
import struct

LEVEL = ["-3", "-B128K", "-T2"]
TIMEOUT = 60


def fnv(data, h=0xCBF29CE484222325):
    for byte in data:
        h ^= byte
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def digest(path):
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def seek_table(data):
    """The entries (compressed, decompressed, checksum) of weir's seek table."""
    frames, descriptor, magic = struct.unpack("<IBI", data[-9:])
    assert magic == 0x8F92EAB1, "no seek table"
    size = 12 if descriptor & 0x80 else 8
    start = len(data) - 9 - frames * size
    entries = []
    for i in range(frames):
        fields = struct.unpack("<III" if size == 12 else "<II", data[start + i * size:start + (i + 1) * size])
        entries.append((fields[0], fields[1], fields[2] if size == 12 else 0))
    return entries


def identity(path):
    s = os.stat(path)
    return f"{s.st_dev} {s.st_ino} {s.st_size} {s.st_mtime_ns} {s.st_ctime_ns}"


def record_text(identity_line, options, part_line, entries, checkpoints=True):
    """A record as weir writes it: header, then the frames and one checkpoint."""
    header = f"weir-resume 2\nidentity {identity_line}\noptions {options}\npart {part_line}\n".encode()
    if not checkpoints or not entries:
        return header
    h = fnv(header)
    body = "".join(f"frame {c} {d} {k}\n" for c, d, k in entries)
    body += f"checkpoint {len(entries)} {sum(e[0] for e in entries)} {sum(e[1] for e in entries)} "
    stated = fnv(body.encode(), h)
    return header + body.encode() + f"{stated}\n".encode()

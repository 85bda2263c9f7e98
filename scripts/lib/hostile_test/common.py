"""What the hostile suite's parts share: the level it runs at, a record's
hashes and lines, a file's seek table's entries (read by python/'s reader,
weirtools.formats)."""
import os
import struct

from weirtools.formats import read_seek_table

LEVEL = ["-3", "-B128K", "-T2"]


def fnv(data, h=0xCBF29CE484222325):
    for byte in data:
        h ^= byte
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def seek_table(data):
    """The entries (compressed, decompressed, checksum) of the seek table that
    ends `data` (checksum 0 in a table without them), as a record lists its
    frames. ValueError when there is none ("no seek table") or it is not one
    (why: python/src/weir/seek_table.py's find_seek_table)."""
    return [(c, d, k or 0) for c, d, k in read_seek_table(data).entries]


def identity(path):
    s = os.stat(path)
    return f"{s.st_dev} {s.st_ino} {s.st_size} {s.st_mtime_ns} {s.st_ctime_ns}"


_P1, _P2, _P3, _P4, _P5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x85EBCA77C2B2AE63,
                           0x27D4EB2F165667C5)
_M = 0xFFFFFFFFFFFFFFFF


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & _M


def _round(acc, lane):
    return (_rotl((acc + lane * _P2) & _M, 31) * _P1) & _M


def xxh64(data, seed=0):
    """XXH64, the hash whose low 32 bits a zstd frame stores and of each
    frame's bytes a compression's record keeps (ResumeRecord.swift)."""
    n = len(data)
    i = 0
    if n >= 32:
        v = [(seed + _P1 + _P2) & _M, (seed + _P2) & _M, seed, (seed - _P1) & _M]
        while i + 32 <= n:
            lanes = struct.unpack_from("<4Q", data, i)
            v = [_round(a, b) for a, b in zip(v, lanes, strict=True)]
            i += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M
        for a in v:
            h = ((h ^ _round(0, a)) * _P1 + _P4) & _M
    else:
        h = (seed + _P5) & _M
    h = (h + n) & _M
    while i + 8 <= n:
        h = (_rotl(h ^ _round(0, struct.unpack_from("<Q", data, i)[0]), 27) * _P1 + _P4) & _M
        i += 8
    if i + 4 <= n:
        h = (_rotl(h ^ (struct.unpack_from("<I", data, i)[0] * _P1) & _M, 23) * _P2 + _P3) & _M
        i += 4
    while i < n:
        h = (_rotl(h ^ (data[i] * _P5) & _M, 11) * _P1) & _M
        i += 1
    h ^= h >> 33
    h = (h * _P2) & _M
    h ^= h >> 29
    h = (h * _P3) & _M
    return h ^ (h >> 32)


def record_text(identity_line, options, part_line, entries, checkpoints=True, frames=None):
    """A record as weir writes it: header, then the frames and one checkpoint.
    `frames`: a compression's output the entries describe from its start,
    whose bytes the record hashes (version 3's PART_HASH); none for a
    decompression's record."""
    header = f"weir-resume 3\nidentity {identity_line}\noptions {options}\npart {part_line}\n".encode()
    if not checkpoints or not entries:
        return header
    h = fnv(header)
    hashes = []
    at = 0
    for c, _, _ in entries:
        if frames is not None:
            hashes.append(f" {xxh64(frames[at:at + c])}")
        at += c
    body = "".join(f"frame {c} {d} {k}{hashes[i] if hashes else ''}\n" for i, (c, d, k) in enumerate(entries))
    body += f"checkpoint {len(entries)} {sum(e[0] for e in entries)} {sum(e[1] for e in entries)} "
    stated = fnv(body.encode(), h)
    return header + body.encode() + f"{stated}\n".encode()

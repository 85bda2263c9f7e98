"""Item 5 of issue 49: sizes that weir's own multi-member files state in
headers are hints. gzip members carry their whole size in a `Wr` extra
field; weir's lz4 frames declare their content size. Each case crafts a
file from weir's own output -- a field that lies, a trailer or a block
damaged, another tool's member in front -- and reads it as the format's
own tool does (`gzip -dc`, `lz4 -dc`) and as weir does: on -T2 and -T1,
from a pipe, with -t, and to a file.

Right: where the tool exits 0, weir exits 0 with the same bytes; where the
tool fails, weir fails with a message (or, where gzip only warns, exits 0
with gzip's bytes); nothing hangs."""
import os
import shutil
import struct

from weirtools.binaries import TIMEOUT
from weirtools.proc import run, run_bounded

P1, P2, P3, P4, P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
MASK = 0xFFFFFFFF


def xxh32(data: bytes) -> int:
    """XXH32 with seed 0: lz4's header checksum is its second byte."""
    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & MASK
    at, n = 0, len(data)
    if n >= 16:
        v = [(P1 + P2) & MASK, P2, 0, (-P1) & MASK]
        while at + 16 <= n:
            for k in range(4):
                v[k] = rotl((v[k] + struct.unpack_from("<I", data, at + 4 * k)[0] * P2) & MASK, 13) * P1 & MASK
            at += 16
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & MASK
    else:
        h = P5
    h = (h + n) & MASK
    while at + 4 <= n:
        h = rotl((h + struct.unpack_from("<I", data, at)[0] * P3) & MASK, 17) * P4 & MASK
        at += 4
    while at < n:
        h = rotl((h + data[at] * P5) & MASK, 11) * P1 & MASK
        at += 1
    h ^= h >> 15
    h = h * P2 & MASK
    h ^= h >> 13
    h = h * P3 & MASK
    return h ^ (h >> 16)


def gzip_members(data: bytes) -> list[tuple[int, int]]:
    """(start, size) of each of weir's gzip members, by their Wr fields."""
    members, at = [], 0
    while at < len(data):
        size = struct.unpack_from("<Q", data, at + 16)[0]
        members.append((at, size))
        at += size
    return members


def lz4_frames(data: bytes) -> list[tuple[int, int]]:
    """(start, size) of each lz4 frame, by its block headers."""
    frames, at = [], 0
    while at < len(data):
        flags = data[at + 4]
        end = at + 7 + (8 if flags & 0x08 else 0)
        while True:
            header = struct.unpack_from("<I", data, end)[0]
            end += 4
            if header == 0:
                break
            end += (header & 0x7FFFFFFF) + (4 if flags & 0x10 else 0)
        end += 4 if flags & 0x04 else 0
        frames.append((at, end - at))
        at = end
    return frames


def lz4_with_size(frame: bytes, size: int | None) -> bytes:
    """`frame` (which declares a content size) declaring `size` instead, or
    none (the flag cleared, the field taken out); its header checksum agrees."""
    descriptor = bytearray(frame[4:14])
    rest = frame[15:]
    if size is None:
        descriptor[0] &= ~0x08 & 0xFF
        descriptor = descriptor[:2]
    else:
        descriptor[2:10] = struct.pack("<Q", size)
    return frame[:4] + bytes(descriptor) + bytes([(xxh32(bytes(descriptor)) >> 8) & 0xFF]) + rest


def with_wr(member: bytes, size: int) -> bytes:
    """A stock gzip member (no flags) given a Wr field stating `size`."""
    assert member[3] == 0, "a member with flags"
    return member[:3] + b"\x04" + member[4:10] + struct.pack("<H2sHQ", 12, b"Wr", 8, size) + member[10:]


class HintedSizes:
    def __init__(self, suite):
        self.suite = suite
        base = os.path.join(suite.root, "hinted")
        os.mkdir(base)
        with open(os.path.join(base, "x"), "wb") as f:
            f.write(suite.content)
        for form in ("gzip", "lz4"):
            suite.run_weir(["-q", "-B128K", "-T2", f"--format={form}", "x"], cwd=base, check=True)
        with open(os.path.join(base, "x.gz"), "rb") as f:
            self.gz = f.read()
        with open(os.path.join(base, "x.lz4"), "rb") as f:
            self.lz4 = f.read()
        self.members = gzip_members(self.gz)
        self.frames = lz4_frames(self.lz4)
        assert len(self.members) >= 8 and len(self.frames) >= 8

    def cases(self):
        for i in range(26):
            self.suite.case(f"gzip size hint #{i}", lambda i=i: self.read_case(f"gzip size hint #{i}", "x.gz",
                                                                        self.gzip_case(i), ["gzip", "-dc"]))
        for i in range(14):
            self.suite.case(f"lz4 size hint #{i}", lambda i=i: self.read_case(f"lz4 size hint #{i}", "x.lz4",
                                                                       self.lz4_case(i), ["lz4", "-dc"]))

    def gzip_case(self, i: int):
        def make() -> bytes:
            r = self.suite.rng
            data = bytearray(self.gz)
            members = self.members
            k = r.randrange(len(members) - 1)
            start, size = members[k]

            def claim(value: int) -> None:
                data[start + 16:start + 24] = struct.pack("<Q", value & 0xFFFFFFFFFFFFFFFF)
            kind = i % 13
            if kind == 0:  # this member and the next (the case)
                claim(size + members[k + 1][1])
            elif kind == 1:  # to the file's end
                claim(len(data) - start)
            elif kind == 2:  # a few bytes more or less
                claim(size + r.choice([-64, -9, -1, 1, 3, 40]))
            elif kind == 3:  # anywhere
                claim(r.randrange(32, len(data)))
            elif kind == 4:  # absurd
                claim(r.choice([0, 31, 1 << 40, (1 << 63) + 5]))
            elif kind == 5:  # ISIZE off by one (gzip refuses)
                at = start + size - 4
                data[at:at + 4] = struct.pack("<I", (struct.unpack_from("<I", data, at)[0] + 1) & MASK)
            elif kind == 6:  # CRC flipped
                data[start + size - 8 + r.randrange(4)] ^= 1 << r.randrange(8)
            elif kind == 7:  # a bit of deflate data
                data[r.randrange(start + 24, start + size - 8)] ^= 1 << r.randrange(8)
            elif kind in (8, 9):  # gzip's own member in front, with a Wr field, true or not
                stock = run(["gzip", "-c", "-6"], input=self.suite.content[:200_000], check=True).stdout
                stated = len(stock) + 14 + (0 if kind == 8 else r.choice([-100, 7, size]))
                return with_wr(stock, stated) + bytes(data)
            elif kind == 10:  # the last member claims two
                last_start, last_size = members[-1]
                data[last_start + 16:last_start + 24] = struct.pack("<Q", last_size + size)
            elif kind == 11:  # two fields swapped
                other, other_size = members[k + 1]
                claim(other_size)
                data[other + 16:other + 24] = struct.pack("<Q", size)
            else:  # the next member's size (often equal: looks right)
                claim(members[k + 1][1])
            return bytes(data)
        return make

    def lz4_case(self, i: int):
        def make() -> bytes:
            r = self.suite.rng
            frames = [self.lz4[s:s + n] for s, n in self.frames]
            k = r.randrange(len(frames))
            declared = struct.unpack_from("<Q", frames[k], 6)[0]
            kind = i % 7
            if kind == 0:  # 0: no size to liblz4
                frames[k] = lz4_with_size(frames[k], 0)
            elif kind == 1:  # every frame 0
                frames = [lz4_with_size(f, 0) for f in frames]
            elif kind == 2:  # off a little (lz4 refuses)
                frames[k] = lz4_with_size(frames[k], declared + r.choice([-1, 1, 4096]))
            elif kind == 3:  # absurd
                frames[k] = lz4_with_size(frames[k], r.choice([1 << 40, 1]))
            elif kind == 4:  # a bit of block data
                body = bytearray(frames[k])
                body[r.randrange(19, len(body) - 8)] ^= 1 << r.randrange(8)
                frames[k] = bytes(body)
            elif kind == 5:  # no size at all
                frames[k] = lz4_with_size(frames[k], None)
            else:  # lz4's own frame in front
                stock = run(["lz4", "-q", "-c"], input=self.suite.content[:200_000], check=True).stdout
                frames.insert(0, stock)
            return b"".join(frames)
        return make

    def read_case(self, name: str, file: str, make, tool: list[str]) -> None:
        suite = self.suite
        folder = suite.folder(name)
        path = os.path.join(folder, file)
        with open(path, "wb") as f:
            f.write(make())
        reference = run(tool + [file], cwd=folder, timeout=TIMEOUT)
        # gzip's 2 is a warning (trailing garbage): its bytes are all there.
        reads = reference.returncode == 0 or (tool[0] == "gzip" and reference.returncode == 2)
        weir = f"'{suite.weir}'"
        for how, command in (("-T2", f"{weir} -dc -T2 {file}"), ("-T1", f"{weir} -dc -T1 {file}"),
                             ("pipe", f"cat {file} | {weir} -dc -T2"), ("-t", f"{weir} -q -t -T2 {file}"),
                             ("-o", f"{weir} -q -d -T2 {file} -o out && cat out")):
            label = f"{name} {how}"
            if os.path.exists(os.path.join(folder, "out")):
                os.unlink(os.path.join(folder, "out"))
            ran = run_bounded(["bash", "-o", "pipefail", "-c", command], TIMEOUT, cwd=folder)
            if ran is None:
                suite.verdict(label, "timed out (hung)")
                continue
            stderr = ran.stderr.decode(errors="replace")
            if ran.returncode == 0 and not reads:
                suite.verdict(label, f"exit 0 where {tool[0]} fails", stderr)
            elif ran.returncode == 0 and how != "-t" and ran.stdout != reference.stdout:
                suite.verdict(label, f"exit 0 with {len(ran.stdout)} bytes where {tool[0]} gives "
                                     f"{len(reference.stdout)}", stderr)
            elif ran.returncode != 0 and reference.returncode == 0:
                suite.verdict(label, f"refused a file {tool[0]} reads", stderr)
            elif ran.returncode != 0 and "weir:" not in stderr:
                suite.verdict(label, f"exit {ran.returncode} without a message", stderr)
            elif ran.returncode != 0 and how == "-o" and os.path.exists(os.path.join(folder, "out")):
                suite.verdict(label, "a failed run left its output", stderr)
            else:
                suite.verdict(label, None)
        if not suite.keep:
            shutil.rmtree(folder, ignore_errors=True)


def cases(suite) -> None:
    """Queues this module's cases on `suite` (after its prepare())."""
    HintedSizes(suite).cases()

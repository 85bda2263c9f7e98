"""Real GNU tar archives compressed by the real weir, with the member index
it writes; and indexes built here from docs/members.md (``tarfile`` finding
the members), in version 1's rows or version 2's columns, edited to make
indexes that lie."""

from __future__ import annotations

import io
import os
import struct
import subprocess
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

from conftest import run_weir

from weir.members import INDEX_TAG, MEMBER_INDEX_MAGIC, read_member_index
from weir.seek_table import SEEK_FOOTER_SIZE, SKIPPABLE_HEADER_SIZE

if sys.version_info >= (3, 14):
    from compression.zstd import CompressionParameter, compress
else:
    from backports.zstd import CompressionParameter, compress

# Names over 100 bytes (ustar's name field) and over 255 (ustar's name and prefix).
LONG_FOLDER = "f" * 120
DEEP_PATH = "/".join(["g" * 90] * 3) + "/deep.txt"


def uvarint(value: int) -> bytes:
    assert value >= 0, value
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def string(value: bytes) -> bytes:
    return uvarint(len(value)) + value


def front_coded(value: bytes, previous: bytes) -> bytes:
    shared = next(
        (n for n, (a, b) in enumerate(zip(value, previous, strict=False)) if a != b), min(len(value), len(previous))
    )
    return uvarint(shared) + string(value[shared:])


def tar_members(tar: bytes) -> tuple[list[dict], int]:
    """Each member of ``tar`` as docs/members.md records it (absolute
    offsets), and where its end blocks begin."""
    with tarfile.open(fileobj=io.BytesIO(tar), mode="r:") as archive:
        infos = archive.getmembers()
        end_offset = archive.offset
    members = []
    for number, info in enumerate(infos):
        following = infos[number + 1].offset if number + 1 < len(infos) else end_offset
        members.append(
            {
                "header_offset": info.offset,
                "header_length": info.offset_data - info.offset,
                "data_length": following - info.offset_data,
                "size": info.size,
                "mtime": int(info.mtime),
                "mode": info.mode,
                "uid": info.uid,
                "gid": info.gid,
                "type": info.type,
                "path": info.name.encode("utf-8", "surrogateescape") + (b"/" if info.isdir() else b""),
                "link": info.linkname.encode("utf-8", "surrogateescape"),
                "uname": info.uname.encode(),
                "gname": info.gname.encode(),
                "devmajor": info.devmajor if info.ischr() or info.isblk() else 0,
                "devminor": info.devminor if info.ischr() or info.isblk() else 0,
            }
        )
    return members, end_offset


def record_list(tar: bytes, edit: Callable[[list[dict]], None] | None = None) -> bytes:
    """docs/members.md's record list of ``tar``; ``edit`` may change the
    members first (to make an index that lies)."""
    members, end_offset = tar_members(tar)
    if edit is not None:
        edit(members)
    records = []
    end = 0
    previous: dict = {"path": b"", "uname": b"", "gname": b""}
    for member in members:
        mtime = member["mtime"]
        records.append(
            uvarint(member["header_offset"] - end)
            + uvarint(member["header_length"])
            + uvarint(member["data_length"])
            + uvarint(member["size"])
            + uvarint(mtime << 1 if mtime >= 0 else (-mtime << 1) - 1)
            + uvarint(member["mode"])
            + uvarint(member["uid"])
            + uvarint(member["gid"])
            + member["type"]
            + front_coded(member["path"], previous["path"])
            + string(member["link"])
            + front_coded(member["uname"], previous["uname"])
            + front_coded(member["gname"], previous["gname"])
        )
        previous = member
        end = member["header_offset"] + member["header_length"] + member["data_length"]
    header = uvarint(1) + uvarint(0) + uvarint(len(members)) + uvarint(end_offset) + uvarint(len(tar))
    return header + b"".join(records)


def index_frame(records: bytes) -> bytes:
    """The skippable frame holding the version 1 ``records``."""
    frame = compress(
        records, options={CompressionParameter.checksum_flag: 1, CompressionParameter.content_size_flag: 1}
    )
    return skippable_index(frame)


def skippable_index(content: bytes) -> bytes:
    """The index's skippable frame of ``content`` (what follows ``WEIRTARI``)."""
    content = INDEX_TAG + content
    return struct.pack("<II", MEMBER_INDEX_MAGIC, len(content)) + content


# Version 2's columns (docs/members.md, "Version 2"), by their numbers there.
GAP, HEADER_BLOCKS, DATA_EXTRA, SIZE0, SIZE1, SIZE2, SIZE_HIGH, MTIME, TYPE = range(9)
MODE, UID, GID, PATH_POP, PATH_REST, LINK, UNAME, GNAME, DEVICE = range(9, 18)


def svarint(value: int) -> bytes:
    return uvarint(value << 1 if value >= 0 else (-value << 1) - 1)


def column_blocks(members: list[dict], per_block: int) -> list[tuple[int, list[bytearray]]]:
    """Each block's member count and 18 columns, ``per_block`` members a
    block, every member coded against the one before it (across blocks)."""
    blocks = []
    end = mtime = 0
    path = b""
    names: dict[str, bytes | None] = {"uname": None, "gname": None}
    for first in range(0, len(members), per_block):
        chunk = members[first : first + per_block]
        columns = [bytearray() for _ in range(18)]
        for member in chunk:
            size, kind = member["size"], member["type"]
            predicted = (size + 511) & ~511 if kind in (b"0", b"1") else 0
            columns[GAP] += uvarint(member["header_offset"] - end)
            columns[HEADER_BLOCKS] += uvarint(member["header_length"] // 512 - 1)
            columns[DATA_EXTRA] += svarint(member["data_length"] - predicted)
            for column, shift in ((SIZE0, 0), (SIZE1, 8), (SIZE2, 16)):
                columns[column].append(size >> shift & 0xFF)
            columns[SIZE_HIGH] += uvarint(size >> 24)
            columns[MTIME] += svarint(member["mtime"] - mtime)
            columns[TYPE] += kind
            for column, key in ((MODE, "mode"), (UID, "uid"), (GID, "gid")):
                columns[column] += uvarint(member[key])
            # The folders both paths share are kept; the rest is written.
            shared = 0
            while shared < min(len(path), len(member["path"])) and path[shared] == member["path"][shared]:
                shared += 1
            cut = member["path"].rfind(b"/", 0, shared) + 1
            columns[PATH_POP] += uvarint(path.count(b"/") - member["path"][:cut].count(b"/"))
            columns[PATH_REST] += member["path"][cut:] + b"\0"
            columns[LINK] += member["link"] + b"\0"
            for column, key in ((UNAME, "uname"), (GNAME, "gname")):
                if names[key] == member[key]:
                    columns[column].append(0)
                else:
                    columns[column] += b"\1" + member[key] + b"\0"
                    names[key] = member[key]
            if kind in (b"3", b"4"):
                columns[DEVICE] += uvarint(member["devmajor"]) + uvarint(member["devminor"])
            end = member["header_offset"] + member["header_length"] + member["data_length"]
            mtime, path = member["mtime"], member["path"]
        blocks.append((len(chunk), columns))
    return blocks


def pack_blocks(blocks: list[tuple[int, list[bytearray]]]) -> bytes:
    """The decoded stream of version 2: each block's count, column lengths, columns."""
    return b"".join(
        uvarint(count) + b"".join(uvarint(len(c)) for c in columns) + b"".join(columns) for count, columns in blocks
    )


def columns_content(
    raw: bytes,
    count: int,
    end_offset: int,
    content_size: int,
    *,
    version: int = 2,
    checksum: bool = True,
    with_size: bool = False,
) -> bytes:
    """What follows ``WEIRTARI`` in version 2: the header, then the zstd
    frame of ``raw`` (weir writes it without its content size)."""
    options = {
        CompressionParameter.checksum_flag: int(checksum),
        CompressionParameter.content_size_flag: int(with_size),
    }
    head = uvarint(version) + uvarint(0) + uvarint(count) + uvarint(end_offset) + uvarint(content_size)
    return head + compress(raw, options=options)


def with_index(archive: bytes, frame: bytes) -> bytes:
    """``archive`` (weir's, with a member index) with ``frame`` as its index
    frame, the seek table's entry for it resized."""
    count, descriptor, _ = struct.unpack("<IBI", archive[-SEEK_FOOTER_SIZE:])
    entry_size = 12 if descriptor & 0x80 else 8
    table = bytearray(archive[-(SKIPPABLE_HEADER_SIZE + count * entry_size + SEEK_FOOTER_SIZE) :])
    last = SKIPPABLE_HEADER_SIZE + (count - 1) * entry_size
    old = struct.unpack_from("<I", table, last)[0]
    struct.pack_into("<I", table, last, len(frame))
    start = len(archive) - len(table) - old
    assert struct.unpack_from("<I", archive, start)[0] == MEMBER_INDEX_MAGIC, "no member index before the table"
    return archive[:start] + frame + bytes(table)


def member_index_offset(path: Path) -> int:
    """Where the member index weir wrote into ``path`` starts."""
    with path.open("rb") as handle:

        def read_at(offset: int, length: int) -> bytes:
            handle.seek(offset)
            return handle.read(length)

        index = read_member_index(read_at, path.stat().st_size, str(path))
    assert index is not None, f"weir wrote no member index into {path}"
    return index.offset


def indexed_archive(weir_bin: Path, tar: Path, out: Path, *flags: str, records: bytes | None = None) -> Path:
    """``tar`` compressed by weir from a pipe into ``out``, with the member
    index weir writes; or, to make an index that lies, the index frame of
    ``records`` in its place (the seek table's entry for it resized)."""
    out.write_bytes(run_weir(weir_bin, "-q", "-c", *flags, stdin=tar.read_bytes()))
    member_index_offset(out)
    if records is not None:
        out.write_bytes(with_index(out.read_bytes(), index_frame(records)))
    return out


def make_tree(root: Path, csv: bytes) -> Path:
    """A folder of every kind of member tar stores: files, an empty one, a
    folder in a folder, an empty folder, long names, a symbolic and a hard
    link, a non-ASCII name and a sparse file."""
    tree = root / "tree"
    (tree / "data").mkdir(parents=True)
    (tree / "data" / "x.csv").write_bytes(csv)
    (tree / "data" / "empty.txt").write_bytes(b"")
    (tree / "dir" / "sub").mkdir(parents=True)
    (tree / "dir" / "sub" / "note.txt").write_bytes(b"a note\n" * 100)
    (tree / "nothing").mkdir()
    (tree / "café.txt").write_bytes("déjà vu\n".encode())
    (tree / "link.csv").symlink_to("data/x.csv")
    os.link(tree / "data" / "x.csv", tree / "hard.csv")
    with (tree / "sparse.bin").open("wb") as handle:
        handle.truncate(3 << 20)
        handle.seek(2 << 20)
        handle.write(b"after the hole\n" * 1000)
    return tree


def add_long_names(tree: Path) -> None:
    (tree / LONG_FOLDER).mkdir()
    (tree / LONG_FOLDER / "long.txt").write_bytes(b"a long name's content\n" * 50)
    deep = tree / DEEP_PATH
    deep.parent.mkdir(parents=True)
    deep.write_bytes(b"deep\n" * 3000)


def gnu_tar(tree: Path, out: Path, fmt: str) -> Path:
    flags = ["--sparse"] if fmt != "ustar" else []
    subprocess.run(
        ["tar", f"--format={fmt}", *flags, "-cf", str(out), "-C", str(tree.parent), tree.name],
        check=True,
        capture_output=True,
    )
    return out


ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def csv_bytes(rows: int) -> bytes:
    lines = [b"id,name,score"] + [f"{n},name{n % 97},{n * 7 % 1000}".encode() for n in range(rows)]
    return b"\n".join(lines) + b"\n"


def files_under(tree: Path) -> dict[str, Path]:
    """Each regular file and link in ``tree``, by its name in the archive."""
    return {str(p.relative_to(tree.parent)): p for p in sorted(tree.rglob("*")) if p.is_file()}

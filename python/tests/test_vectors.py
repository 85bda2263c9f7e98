"""The shared test vectors (testdata/vectors, issue 69), read by the Python
package: every seek-table case through ``weir.frames`` (the chain of tables
from the end, then the index that checks them against the frames; a good
table as ``weir.dask_tasks`` writes one, the same bytes), every
member-index case through ``weir.members`` and, where an index lies, the
``weir-tar://`` reader that must refuse the member. The same cases are read
by the Swift, Java and script tests: a case added there is tested here."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from weir import FormatError
from weir.dask_tasks import seek_table as written_table
from weir.frames import build_index
from weir.members import read_member_index
from weir.seek_table import find_seek_table

VECTORS = Path(__file__).resolve().parents[2] / "testdata" / "vectors"


def cases(folder: str) -> list[Any]:
    found = sorted((VECTORS / folder).glob("*.json"))
    assert found, f"no vectors in {VECTORS / folder}"
    return [pytest.param(json.loads(path.read_text()), id=path.stem) for path in found]


def reader(path: Path):
    data = path.read_bytes()

    def read_at(offset: int, length: int) -> bytes:
        return data[offset : offset + length] if offset >= 0 else b""

    return read_at, len(data)


def chain(read_at, size: int) -> tuple[str, list[dict[str, Any]]]:
    """The reading of the seek tables from the end: "ok" and the tables in
    file order, or "no-table", or "corrupt-table"."""
    tables = []
    end = size
    while True:
        found = find_seek_table(read_at, end)
        if found is None or isinstance(found, str):
            if tables:  # the chain stops where no valid table ends
                break
            return ("no-table" if found is None else "corrupt-table"), []
        offset, frames = found.data_start, []
        for compressed, content, checksum in found.entries:
            frames.append({"offset": offset, "compressed": compressed, "content": content, "checksum": checksum})
            offset += compressed
        checksums = bool(found.entries) and found.entries[0][2] is not None
        tables.append({"offset": found.table_offset, "checksums": checksums, "frames": frames})
        if found.data_start == 0:
            break
        end = found.data_start
    tables.reverse()
    for table in tables:  # a table of no entries does not say whether it has checksums
        if not table["frames"]:
            table["checksums"] = None
    return "ok", tables


def without_empty_flags(tables: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**table, "checksums": table["checksums"] if table["frames"] else None} for table in tables]


@pytest.mark.parametrize("case", cases("seek-table"))
def test_seek_table_vector(case: dict[str, Any]) -> None:
    path = VECTORS / "seek-table" / case["file"]
    read_at, size = reader(path)
    reading, tables = chain(read_at, size)
    expected = case["reading"]
    if expected in ("no-table", "corrupt-table"):
        assert reading == expected
        return
    assert reading == "ok"
    assert tables == without_empty_flags(case["tables"])
    if expected == "ok":
        index = build_index(read_at, size)
        assert "seek-table" in index.source
        first = tables[0]["frames"][0]["offset"] if tables[0]["frames"] else 0
        listed = [(f["offset"], f["compressed"], f["content"]) for t in tables for f in t["frames"] if f["content"]]
        indexed = [(f.offset, f.size, f.length) for f in index.frames if f.offset >= first]
        assert indexed == listed
        # The table the Dask writer would write for these frames (checksums when every frame has one,
        # none for one frame), where that is the vector's table: the same bytes.
        frames = tables[-1]["frames"]
        if len(tables) == 1 and len(frames) > 1 and tables[0]["checksums"] and all(f["content"] for f in frames):
            table = written_table([(f["compressed"], f["content"], f["checksum"]) for f in frames])
            assert read_at(size - len(table), len(table)) == table
        return
    with pytest.raises(FormatError) as refused:
        build_index(read_at, size)
    message = str(refused.value)
    assert any(f"entry {entry} lists" in message for entry in case["entries"]), message
    assert ("more than any zstd frame" in message) == (expected == "impossible-entry")


def as_expected(member) -> dict[str, Any]:
    return {
        "path": member.path.decode(),
        "header_offset": member.header_offset,
        "header_length": member.header_length,
        "data_length": member.data_length,
        "size": member.size,
        "type": member.type.decode(),
        "link": member.link.decode(),
        "mtime": member.mtime,
        "mode": member.mode,
        "uid": member.uid,
        "gid": member.gid,
        "uname": member.uname.decode(),
        "gname": member.gname.decode(),
    }


@pytest.mark.parametrize("case", cases("member-index"))
def test_member_index_vector(case: dict[str, Any]) -> None:
    path = VECTORS / "member-index" / case["file"]
    read_at, size = reader(path)
    expected = case["reading"]
    if expected == "corrupt-index":
        with pytest.raises(FormatError, match=f"member index at offset {case['offset']} is damaged"):
            read_member_index(read_at, size, path.name)
        return
    index = read_member_index(read_at, size, path.name)
    if expected == "no-index":
        assert index is None
        return
    assert index is not None
    assert (index.offset, index.end_offset, index.content_size, index.ended_early) == (
        case["offset"],
        case["end_offset"],
        case["content_size"],
        case["ended_early"],
    )
    assert [as_expected(member) for member in index.members] == case["members"]
    lie = case.get("lies-about")
    if lie is None:
        return
    import fsspec

    opened = fsspec.open(f"weir-tar://{lie}::{os.fspath(path)}", "rb")
    with pytest.raises(FormatError, match="member index disagrees"), opened as handle:
        handle.read()

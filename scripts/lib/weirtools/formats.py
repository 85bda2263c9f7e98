"""The formats weir writes, read by python/'s own package (python/src/weir),
never parsed again here: the seek table (``weir.seek_table``), and where a
member index's frame lies before it.

python/src/weir/seek_table.py uses only the standard library, so it is loaded
from its file as ``weir.seek_table`` without running ``weir/__init__.py``
(which needs fsspec and the installed package); the member index's readers
(``weir.members``) need ``backports.zstd``, which the system's Python the
harnesses run on may lack, so they are not loaded here (scripts/harness/member-index-test
keeps its own reader and writer of the index: it crafts the lies)."""

from __future__ import annotations

import importlib.util
import struct
import sys
from types import ModuleType

from weirtools import ROOT

PACKAGE = ROOT / "python" / "src" / "weir"


def _python_module(name: str) -> ModuleType:
    """python/'s ``weir.<name>``: the one already imported (an installed
    package), else loaded from its file alone."""
    full = f"weir.{name}"
    if full in sys.modules:
        return sys.modules[full]
    spec = importlib.util.spec_from_file_location(full, PACKAGE / f"{name}.py")
    if spec is None or spec.loader is None:
        raise ImportError(f"no {PACKAGE / name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[full] = module
    spec.loader.exec_module(module)
    return module


seek_table = _python_module("seek_table")
SeekTable = seek_table.SeekTable

MEMBER_INDEX_MAGIC = 0x184D2A5B
"""The skippable frame of the member index (docs/members.md; python's weir.members.MEMBER_INDEX_MAGIC)."""
INDEX_TAG = b"WEIRTARI"


def _reader(data: bytes) -> seek_table.ReadAt:
    return lambda offset, length: data[offset : offset + length]


def find_seek_table(data: bytes) -> SeekTable | str | None:
    """The seek table that ends ``data``; None without its footer's magic;
    why not (a sentence), when the magic is there but the rest is not a table."""
    return seek_table.find_seek_table(_reader(data), len(data))


def read_seek_table(data: bytes) -> SeekTable:
    """The seek table that ends ``data``; ValueError with why when there is none."""
    found = find_seek_table(data)
    if found is None:
        raise ValueError("no seek table")
    if isinstance(found, str):
        raise ValueError(found)
    return found


def member_index_offset(data: bytes, table: SeekTable | None = None) -> int | None:
    """Where the member index's skippable frame starts in ``data`` (the
    seek table's last entry, of no content, with the index's magic and tag);
    None when the file has none."""
    table = table or find_seek_table(data)
    if not isinstance(table, SeekTable) or not table.entries:
        return None
    compressed, decompressed, _ = table.entries[-1]
    offset = table.table_offset - compressed
    if decompressed != 0 or compressed < 16:
        return None
    if struct.unpack_from("<I", data, offset)[0] != MEMBER_INDEX_MAGIC or data[offset + 8 : offset + 16] != INDEX_TAG:
        return None
    return offset

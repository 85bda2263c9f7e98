"""fsspec's ``weir`` protocol: the decompressed content of a zstd file at any
fsspec URL, as a random-access file of its true size.

``weir::s3://bucket/big.log.zst`` (or ``weir::/data/big.log.zst``) opens the
content of the file: its size is the content's, a seek costs nothing, and a
read fetches and decodes only the frames that hold the bytes asked for (see
:mod:`weir.frames` for how they are found). That is what lets Dask, pandas,
DuckDB and every fsspec reader cut one compressed file into many splits::

    dask.bag.read_text("weir::s3://b/big.log.zst", blocksize="64MiB")

The file system is layered over another (``target_protocol`` and
``target_options``, or ``fs``), as fsspec's caching file systems are: a path
is the compressed file's path on the target, listings and ``info`` give the
content's sizes. It is read-only; weir (the command) writes the files.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, ClassVar

from fsspec import AbstractFileSystem, filesystem
from fsspec.implementations.chained import ChainedFileSystem
from fsspec.spec import AbstractBufferedFile

from weir.frames import FormatError, Frame, FrameIndex, build_index, decode

# Indexes kept per process, by the compressed file's path, size and
# modification (or ETag): a Dask worker opening the file for each of its
# partitions reads the table (or measures the frames) once.
_INDEX_CACHE_ENTRIES = 64
_index_cache: OrderedDict[tuple[Any, ...], FrameIndex] = OrderedDict()
_index_lock = threading.Lock()


class WeirFileSystem(ChainedFileSystem):
    """The content of zstd files on another fsspec file system."""

    protocol: ClassVar[str | tuple[str, ...]] = "weir"
    root_marker = ""

    def __init__(
        self,
        target_protocol: str | None = None,
        target_options: dict[str, Any] | None = None,
        fs: AbstractFileSystem | None = None,
        fo: str | None = None,
        frame_cache: int = 2,
        **kwargs: Any,
    ) -> None:
        """Layers the ``weir`` protocol over ``fs``, or over a new file system
        of ``target_protocol`` made with ``target_options`` (default: local).

        ``fo`` is the path fsspec passes when it unchains ``weir::URL``; paths
        come with each call. ``frame_cache`` is how many decoded frames each
        open file keeps (a sequential reader asks for one frame's bytes in
        many reads)."""
        super().__init__(**kwargs)
        if fs is not None and target_protocol is not None:
            raise ValueError("give the target file system (fs) or its protocol (target_protocol), not both")
        self.target = fs if fs is not None else filesystem(target_protocol or "file", **(target_options or {}))
        self.frame_cache = frame_cache

    @classmethod
    def _strip_protocol(cls, path: Any) -> Any:
        if isinstance(path, list):
            return [cls._strip_protocol(p) for p in path]
        text = str(path)
        if text.startswith("weir://"):
            text = text[len("weir://") :]
        elif text.startswith("weir::"):
            text = text[len("weir::") :]
        return text

    def index(self, path: str) -> FrameIndex:
        """The frame index of the compressed file at ``path`` on the target."""
        path = self.target._strip_protocol(path)
        details = self.target.info(path)
        key = (
            self.target.fsid if _has_fsid(self.target) else id(self.target),
            path,
            details.get("size"),
            _version_of(details),
        )
        with _index_lock:
            cached = _index_cache.get(key)
            if cached is not None:
                _index_cache.move_to_end(key)
                return cached
        size = details["size"]
        with self.target.open(path, "rb") as handle:
            try:
                index = build_index(_reader(handle), size)
            except FormatError as error:
                raise FormatError(f"{path}: {error}") from error
        with _index_lock:
            _index_cache[key] = index
            while len(_index_cache) > _INDEX_CACHE_ENTRIES:
                _index_cache.popitem(last=False)
        return index

    def info(self, path: str, **kwargs: Any) -> dict[str, Any]:
        path = self._strip_protocol(path)
        details = dict(self.target.info(path, **kwargs))
        if details.get("type") != "file":
            return details
        index = self.index(path)
        details["compressed_size"] = details.get("size")
        details["size"] = index.size
        details["frames"] = len(index.frames)
        return details

    def ls(self, path: str, detail: bool = True, **kwargs: Any) -> list[Any]:
        path = self._strip_protocol(path)
        entries = self.target.ls(path, detail=True, **kwargs)
        if not detail:
            return [entry["name"] for entry in entries]
        return [self.info(entry["name"]) if entry.get("type") == "file" else entry for entry in entries]

    def ukey(self, path: str) -> str:
        return str(self.target.ukey(self._strip_protocol(path)))

    def modified(self, path: str) -> Any:
        return self.target.modified(self._strip_protocol(path))

    def _open(
        self,
        path: str,
        mode: str = "rb",
        block_size: Any = None,
        autocommit: bool = True,
        cache_options: Any = None,
        **kwargs: Any,
    ) -> WeirFile:
        if mode != "rb":
            raise NotImplementedError(f"weir:// opens files for reading only, not {mode!r}: write them with weir")
        path = self._strip_protocol(path)
        return WeirFile(self, path, self.index(path), frame_cache=self.frame_cache)


class WeirFile(AbstractBufferedFile):
    """The content of one compressed file: reads go to the frames that hold
    them, each fetched in one ranged read and decoded once while it is among
    the last ``frame_cache`` frames read."""

    def __init__(self, fs: WeirFileSystem, path: str, index: FrameIndex, frame_cache: int = 2) -> None:
        self.index = index
        self._frames: OrderedDict[int, bytes] = OrderedDict()
        self._frame_cache = max(1, frame_cache)
        self._compressed = fs.target.open(path, "rb", cache_type="none")
        # No cache of fsspec's own: the decoded frames are the cache.
        super().__init__(fs, path, mode="rb", cache_type="none", size=index.size)

    def _fetch_range(self, start: int, end: int) -> bytes:
        frames = self.index.covering(start, min(end, self.size))
        if not frames:
            return b""
        pieces = []
        missing = [frame for frame in frames if frame.offset not in self._frames]
        fetched = self._fetch_compressed(missing)
        for frame in frames:
            content = self._frames.get(frame.offset)
            if content is None:
                try:
                    content = decode(frame, fetched[frame.offset])
                except FormatError as error:
                    raise FormatError(f"{self.path}: {error}") from error
                self._frames[frame.offset] = content
                while len(self._frames) > self._frame_cache:
                    self._frames.popitem(last=False)
            else:
                self._frames.move_to_end(frame.offset)
            low = max(start, frame.start) - frame.start
            high = min(end, frame.start + frame.length) - frame.start
            pieces.append(content[low:high] if (low, high) != (0, frame.length) else content)
        return b"".join(pieces)

    def _fetch_compressed(self, frames: list[Frame]) -> dict[int, bytes]:
        """The compressed bytes of ``frames`` (in file order): neighbours are
        fetched in one read, as one ranged request on an object store."""
        fetched: dict[int, bytes] = {}
        run: list[Frame] = []
        for frame in [*frames, None]:
            if run and (frame is None or frame.offset != run[-1].offset + run[-1].size):
                first, last = run[0], run[-1]
                self._compressed.seek(first.offset)
                data = self._compressed.read(last.offset + last.size - first.offset)
                for item in run:
                    fetched[item.offset] = data[item.offset - first.offset : item.offset - first.offset + item.size]
                run = []
            if frame is not None:
                run.append(frame)
        return fetched

    def close(self) -> None:
        if not self.closed:
            self._compressed.close()
            self._frames.clear()
        super().close()


def _reader(handle: Any) -> Any:
    def read_at(offset: int, length: int) -> bytes:
        handle.seek(offset)
        return bytes(handle.read(length))

    return read_at


def _has_fsid(fs: AbstractFileSystem) -> bool:
    try:
        fs.fsid  # noqa: B018 -- a property that raises on file systems without one
    except NotImplementedError:
        return False
    return True


def _version_of(details: dict[str, Any]) -> Any:
    for key in ("mtime", "LastModified", "last_modified", "ETag", "etag", "created"):
        if key in details:
            return str(details[key])
    return None

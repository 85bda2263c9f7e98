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

import io
import threading
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any, ClassVar

from fsspec import AbstractFileSystem, filesystem
from fsspec.implementations.chained import ChainedFileSystem
from fsspec.spec import AbstractBufferedFile

from weir.errors import FormatError
from weir.frames import Frame, FrameIndex, build_index
from weir.zstd import FrameDecoding

# Indexes kept per process, by the compressed file's path, size and
# modification (or ETag): a Dask worker opening the file for each of its
# partitions reads the table (or measures the frames) once.
_INDEX_CACHE_ENTRIES = 64
_index_cache: OrderedDict[tuple[Any, ...], FrameIndex] = OrderedDict()
_index_lock = threading.Lock()


def _without_prefix(path: str) -> str:
    """``path`` without ``weir://`` or ``weir::``."""
    for prefix in ("weir://", "weir::"):
        if path.startswith(prefix):
            path = path[len(prefix) :]
    return path


class WeirFileSystem(ChainedFileSystem):
    """The content of zstd files on another fsspec file system.

    A file is named by its content, as ``weir -d`` names its output: the
    target's ``big.log.zst`` is ``big.log`` here (so that readers which guess
    a compression from the name, as Dask and pandas do, see none), and
    ``weir::…/big.log.zst`` and ``weir::…/big.log`` open the same file. A
    name that does not end in ``.zst`` (``x.zstd``, ``x.tzst``) is the
    target's file of that name, unless the target has the name with ``.zst``
    added: ``big.log`` beside ``big.log.zst`` is that file's content anyway.
    """

    protocol: ClassVar[str | tuple[str, ...]] = "weir"
    root_marker = ""
    # The suffix taken off a name (the only zstd suffix fsspec infers from).
    suffix = ".zst"

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
        """The content's name: without ``weir://`` and without ``.zst``."""
        if isinstance(path, list):
            return [cls._strip_protocol(p) for p in path]
        text = _without_prefix(str(path))
        if text.endswith(cls.suffix) and len(text) > len(cls.suffix):
            text = text[: -len(cls.suffix)]
        return text

    def compressed_path(self, path: str) -> str:
        """The target's path of the compressed file whose content is ``path``.
        ``path`` has lost one ``.zst`` already when it came through fsspec's
        ``open`` (``_strip_protocol``): it loses none here, so that
        ``x.zst.zst`` is ``x.zst``'s file, not ``x``'s."""
        path = self.target._strip_protocol(_without_prefix(str(path)))
        with_suffix = path + self.suffix
        return with_suffix if self.target.isfile(with_suffix) else path

    def _content_name(self, target_path: str) -> str:
        return target_path[: -len(self.suffix)] if target_path.endswith(self.suffix) else target_path

    def index(self, path: str) -> FrameIndex:
        """The frame index of the compressed file whose content is ``path``."""
        return self._index(self.compressed_path(path))

    def _index(self, path: str, details: dict[str, Any] | None = None) -> FrameIndex:
        details = details or self.target.info(path)
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
        # Walking block headers reads 3 bytes at a time: through fsspec's
        # read-ahead cache. A table's checks read a few bytes per frame,
        # frames apart: uncached (see _pieces_reader).
        with self.target.open(path, "rb") as handle, self.target.open(path, "rb", cache_type="none") as pieces:
            try:
                index = build_index(_reader(handle), details["size"], self._pieces_reader(path, pieces))
            except FormatError as error:
                raise FormatError(f"{path}: {error}") from error
        with _index_lock:
            _index_cache[key] = index
            while len(_index_cache) > _INDEX_CACHE_ENTRIES:
                _index_cache.popitem(last=False)
        return index

    def _pieces_reader(self, path: str, handle: Any) -> Any:
        """Reads many small pieces of ``path``: concurrent ranged requests
        on an asynchronous file system (S3, GCS, HTTP), else through
        ``handle`` one after the other (a local file: a few microseconds each)."""
        if not getattr(self.target, "async_impl", False):
            reader = _reader(handle)
            return lambda pieces: [reader(offset, length) if length else b"" for offset, length in pieces]

        def read_many(pieces: list[tuple[int, int]]) -> list[bytes]:
            got = self.target.cat_ranges(
                [path] * len(pieces), [offset for offset, _ in pieces], [offset + n for offset, n in pieces]
            )
            for piece in got:
                if isinstance(piece, Exception):
                    raise piece
            return [bytes(piece) for piece in got]

        return read_many

    def info(self, path: str, **kwargs: Any) -> dict[str, Any]:
        compressed = self.compressed_path(path)
        return self._described(dict(self.target.info(compressed, **kwargs)))

    def _described(self, details: dict[str, Any]) -> dict[str, Any]:
        if details.get("type") != "file":
            return details
        index = self._index(details["name"], details)
        details["compressed_name"] = details["name"]
        details["compressed_size"] = details.get("size")
        details["name"] = self._content_name(details["name"])
        details["size"] = index.size
        details["frames"] = len(index.frames)
        return details

    def ls(self, path: str, detail: bool = True, **kwargs: Any) -> list[Any]:
        """The folder's ``.zst`` files, by their contents' names and sizes,
        and its folders (other files are not listed: they may not be zstd)."""
        path = self.target._strip_protocol(_without_prefix(str(path)))
        entries = [
            entry
            for entry in self.target.ls(path, detail=True, **kwargs)
            if entry.get("type") != "file" or entry["name"].endswith(self.suffix)
        ]
        if not detail:
            return [self._content_name(entry["name"]) for entry in entries]
        return [self._described(dict(entry)) for entry in entries]

    def ukey(self, path: str) -> str:
        return str(self.target.ukey(self.compressed_path(path)))

    def modified(self, path: str) -> Any:
        return self.target.modified(self.compressed_path(path))

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
        compressed = self.compressed_path(path)
        return WeirFile(self, compressed, self._index(compressed), frame_cache=self.frame_cache)


class WeirFile(AbstractBufferedFile):
    """The content of one compressed file: reads go to the frames that hold
    them, fetched in one ranged read per run of neighbours and decoded whole
    and checked (:class:`weir.zstd.FrameDecoding`) before a byte of them is
    returned; the last ``frame_cache`` frames read are kept. Lines
    (``readline``, iteration) come from a buffer of ``_LINE_BUFFER`` bytes of
    content, as text mode's do, not from a block fetched per line."""

    # Content bytes buffered for lines: one fetch serves every line in it.
    _LINE_BUFFER = 256 << 10

    def __init__(self, fs: WeirFileSystem, path: str, index: FrameIndex, frame_cache: int = 2) -> None:
        """``path`` is the compressed file's path on ``fs.target``."""
        self.index = index
        # The name of the content, which archive file systems (fsspec's
        # tar://) guess a compression from before ``path``: ``a.tar``, not
        # ``a.tar.zst``, whose content is not zstd (fsspec's "original").
        self.original = fs._content_name(path)
        self._frames: OrderedDict[int, FrameDecoding] = OrderedDict()
        self._frame_cache = max(1, frame_cache)
        self._compressed = fs.target.open(path, "rb", cache_type="none")
        # Content from ``_line_start`` on, for readuntil.
        self._line_buffer = b""
        self._line_start = 0
        # The buffer's next lines, split at once for iteration, valid while
        # the position is ``_lines_loc``.
        self._lines: list[bytes] = []
        self._lines_at = 0
        self._lines_loc = -1
        # No cache of fsspec's own: the decoded frames are the cache.
        super().__init__(fs, path, mode="rb", cache_type="none", size=index.size)

    def _fetch_range(self, start: int, end: int) -> bytes:
        frames = self.index.covering(start, min(end, self.size))
        # This read's frames are held here, whatever the cache drops meanwhile.
        decodings = {frame.offset: self._frames[frame.offset] for frame in frames if frame.offset in self._frames}
        fetched = self._fetch_compressed([frame for frame in frames if frame.offset not in decodings])
        for frame in frames:
            if frame.offset not in decodings:
                decodings[frame.offset] = FrameDecoding(fetched.pop(frame.offset), frame)
        pieces = []
        for frame in frames:
            decoding = decodings[frame.offset]
            self._frames[frame.offset] = decoding
            self._frames.move_to_end(frame.offset)
            while len(self._frames) > self._frame_cache:
                self._frames.popitem(last=False)
            low = max(start, frame.start) - frame.start
            high = min(end, frame.start + frame.length) - frame.start
            try:
                pieces.append(decoding.read(low, high))
            except FormatError as error:
                raise FormatError(f"{self.path}: {error}") from error
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)

    def readuntil(self, char: bytes = b"\n", blocks: int | None = None) -> bytes:
        """The content from here to the first ``char`` (included) or the end,
        from the line buffer (fsspec's own fetches a block per call)."""
        if self.closed:
            raise ValueError("I/O operation on closed file.")
        if len(char) != 1:
            return bytes(super().readuntil(char, blocks))
        parts = []
        while self.loc < self.size:
            at = self.loc - self._line_start
            if not 0 <= at < len(self._line_buffer):
                self._line_start, at = self.loc, 0
                self._line_buffer = self._fetch_range(self.loc, min(self.size, self.loc + self._LINE_BUFFER))
            found = self._line_buffer.find(char, at)
            end = found + 1 if found >= 0 else len(self._line_buffer)
            parts.append(self._line_buffer[at:end])
            self.loc += end - at
            if found >= 0:
                break
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def __iter__(self) -> Iterator[bytes]:
        """The lines from here on: each batch ``__next__`` splits is handed
        out by this generator, the position kept right line by line; a read
        or seek in between ends the batch (``__next__`` starts another)."""
        while True:
            try:
                yield self.__next__()
            except StopIteration:
                return
            lines, at, loc = self._lines, self._lines_at, self.loc
            self._lines = []
            for line in lines[at:] if at else lines:
                if self.loc != loc:
                    break
                loc += len(line)
                self.loc = loc
                yield line

    def __next__(self) -> bytes:
        """The next line: the line buffer's whole lines are split at once (in
        C), then handed out one per call while no read or seek moved the
        position meanwhile."""
        if self._lines_at < len(self._lines) and self.loc == self._lines_loc:
            line = self._lines[self._lines_at]
            self._lines_at += 1
            self.loc += len(line)
            self._lines_loc = self.loc
            return line
        line = self.readuntil(b"\n")
        if not line:
            raise StopIteration
        lines = io.BytesIO(self._line_buffer[self.loc - self._line_start :]).readlines()
        if lines and not lines[-1].endswith(b"\n"):
            lines.pop()  # the buffer ends inside it: readuntil joins it to what follows
        self._lines, self._lines_at, self._lines_loc = lines, 0, self.loc
        return line

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
            self._line_buffer = b""
            self._lines = []
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

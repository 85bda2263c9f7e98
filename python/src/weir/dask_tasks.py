"""The tasks of ``weir.dask.compress``, run on the Dask workers: a task's
ranges of SRC (one block, or every n-th frame) through one ``weir``
executable into a part, and the join of the frames, in SRC's order, each
from the part that holds it, into DST with one seek table (a tar's member index before it, by ``weir
--index``, from SRC's headers where the join sees SRC as a path). Dask
pickles them by name: the workers import this module from the weir package
installed on them."""

from __future__ import annotations

import contextlib
import os
import struct
import subprocess
import tempfile
import uuid
from typing import Any, Literal

import fsspec
from fsspec.implementations.local import LocalFileSystem

from weir.frames import walk_frames
from weir.seek_table import SEEK_FOOTER_MAGIC, SEEK_TABLE_MAGIC

# Bytes read from SRC and written to weir's standard input at a time.
_PIPE_PIECE = 1 << 20

# A tar's header block: weir looks for ``ustar`` in the first one.
TAR_BLOCK = 512

# Attempts at removing the parts' folder while late tasks write into it.
_REMOVAL_ROUNDS = 20

Ending = Literal["table", "index", "none"]
"""What ``join_parts`` ends DST with (see there)."""

Entry = tuple[int, int, int | None]
"""(compressed size, decompressed size, checksum) of one frame of a part."""

Range = tuple[int, int]
"""(offset, length) of a range of SRC."""

Span = tuple[int, int, int]
"""(part number, offset in that part, bytes) of frames to copy into DST."""


def seek_table(entries: list[Entry]) -> bytes:
    """weir's seek table for ``entries``: empty for a single frame (weir
    writes none), with checksums when every frame carries one."""
    if len(entries) <= 1:
        return b""
    checksums = all(checksum is not None for _, _, checksum in entries)
    body = b"".join(
        struct.pack("<III", compressed, decompressed, checksum or 0)
        if checksums
        else struct.pack("<II", compressed, decompressed)
        for compressed, decompressed, checksum in entries
    )
    footer = struct.pack("<IBI", len(entries), 0x80 if checksums else 0, SEEK_FOOTER_MAGIC)
    return struct.pack("<II", SEEK_TABLE_MAGIC, len(body) + len(footer)) + body + footer


def compress_ranges(
    src: str, ranges: list[Range], part: str, command: list[str], options: dict[str, Any]
) -> list[Entry]:
    """On a worker: the ``ranges`` of ``src`` (offset, length), in order, through
    one weir into the part file ``part``; returns the part's frames.

    Every range but the task's last must be a multiple of weir's ``-B``: weir
    cuts its input every ``-B`` bytes, so its frames then end where the ranges
    do and are the frames ``weir SRC`` writes there (``frame_spans`` checks)."""
    length = sum(size for _, size in ranges)
    fs, path = fsspec.core.url_to_fs(part, **options)
    local = isinstance(fs, LocalFileSystem)
    if local:
        scratch = f"{path}.tmp-{uuid.uuid4().hex[:8]}"
    else:
        with tempfile.NamedTemporaryFile(prefix="weir-part-", delete=False) as handle:
            scratch = handle.name
    try:
        with open(scratch, "wb") as output, tempfile.TemporaryFile() as errors:
            process = subprocess.Popen(
                [*command, f"--stream-size={length}"], stdin=subprocess.PIPE, stdout=output, stderr=errors
            )
            assert process.stdin is not None
            try:
                _feed(src, ranges, options, process.stdin)
            except BrokenPipeError:
                pass  # weir stopped reading: its status and message say why
            except BaseException:
                process.kill()  # SRC failed us (it shrank): weir's half a part is no use
                process.wait()
                raise
            finally:
                with contextlib.suppress(BrokenPipeError):
                    process.stdin.close()
            status = process.wait()
            if status != 0:
                errors.seek(0)
                message = errors.read().decode(errors="replace").strip()
                raise RuntimeError(f"{' '.join(command)} on {src} {describe(ranges)} exited {status}: {message}")
        entries = _entries(scratch, length)
        if local:
            os.replace(scratch, path)
        else:
            fs.put_file(scratch, path)
        return entries
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(scratch)


def describe(ranges: list[Range]) -> str:
    """``bytes 0+8388608``, or ``3 ranges, 20000000 bytes from 0`` for several."""
    if len(ranges) == 1:
        return f"bytes {ranges[0][0]}+{ranges[0][1]}"
    return f"{len(ranges)} ranges, {sum(size for _, size in ranges)} bytes from {ranges[0][0]}"


def _feed(src: str, ranges: list[Range], options: dict[str, Any], sink: Any) -> None:
    """Writes the ``ranges`` of ``src``, in order, into weir's standard input."""
    fs, path = fsspec.core.url_to_fs(src, **options)
    if isinstance(fs, LocalFileSystem) and hasattr(os, "splice"):
        # A local (or shared) file: the kernel moves the pages into the pipe,
        # this process copies nothing.
        with open(path, "rb") as source:
            for offset, length in ranges:
                done = 0
                while done < length:
                    moved = os.splice(
                        source.fileno(), sink.fileno(), min(_PIPE_PIECE, length - done), offset_src=offset + done
                    )
                    if moved == 0:
                        raise RuntimeError(f"{src} ended at {offset + done}, before {offset + length}: did it shrink?")
                    done += moved
        return
    with fs.open(path, "rb") as source:
        for offset, length in ranges:
            source.seek(offset)
            left = length
            while left > 0:
                piece = source.read(min(_PIPE_PIECE, left))
                if not piece:
                    at = offset + length - left
                    raise RuntimeError(f"{src} ended at {at}, before {offset + length}: did it shrink?")
                sink.write(piece)
                left -= len(piece)


def _entries(part: str, length: int) -> list[Entry]:
    """The frames of a part weir wrote, checked against its range's size."""
    size = os.path.getsize(part)
    with open(part, "rb") as handle:

        def read_at(at: int, count: int) -> bytes:
            return os.pread(handle.fileno(), count, at)

        frames = walk_frames(read_at, 0, size)
    if sum(frame.length for frame in frames) != length:
        raise RuntimeError(f"weir's part {part} holds {sum(f.length for f in frames)} bytes, not {length}")
    if not frames:  # an empty input: weir writes one empty frame
        return [(size, 0, None)]
    # The join copies a part's frames by their sizes: nothing between them
    # (after them, a single part's index and table, which it copies whole).
    at = 0
    for frame in frames:
        if frame.offset != at:
            raise RuntimeError(f"weir's part {part} holds {frame.offset - at} other bytes before its frame at {at}")
        at += frame.size
    return [(frame.size, frame.length, frame.checksum) for frame in frames]


def prepare(src: str, dst: str, parts_dir: str, force: bool, options: dict[str, Any]) -> tuple[int, bool]:
    """On a worker: refuses an existing DST, makes the parts' folder; SRC's
    size, and whether it starts as a tar (``starts_tar``)."""
    dst_fs, dst_path = fsspec.core.url_to_fs(dst, **options)
    if not force and dst_fs.exists(dst_path):
        raise FileExistsError(f"{dst} exists: give force=True (-f) to replace it")
    parts_fs, parts_path = fsspec.core.url_to_fs(parts_dir, **options)
    parts_fs.makedirs(parts_path, exist_ok=True)
    src_fs, src_path = fsspec.core.url_to_fs(src, **options)
    size = int(src_fs.info(src_path)["size"])
    if size < TAR_BLOCK:
        return size, False
    with src_fs.open(src_path, "rb") as source:
        return size, starts_tar(source.read(TAR_BLOCK))


def starts_tar(head: bytes) -> bool:
    """Whether weir's compressor takes a content starting with ``head`` for
    a tar, and writes its member index: ``ustar`` at offset 257 of a first
    512-byte block (weir's ``TarScanner.startsTar`` on its first chunk, at
    least 1 KiB by -B's bounds; docs/members.md)."""
    return len(head) >= TAR_BLOCK and head[257:262] == b"ustar"


def frame_spans(ranges: list[list[Range]], entries: list[list[Entry]]) -> tuple[list[Span], list[Entry]]:
    """Where SRC's frames lie in the parts, in SRC's order: the spans of the
    parts to copy into DST one after the other (adjacent spans of a part
    merged), and the frames in that order. ``ranges[n]`` are part n's ranges
    of SRC, ``entries[n]`` its frames (``compress_ranges``'s). Each range must
    be whole frames of its part: weir cut its input where it ended."""
    pieces: list[tuple[int, int, int, list[Entry]]] = []  # (SRC offset, part, offset in the part, frames)
    for number, (task, frames) in enumerate(zip(ranges, entries, strict=True)):
        at = 0
        taken = 0
        for place, (offset, length) in enumerate(task):
            last = place == len(task) - 1
            start = taken
            content = 0
            while taken < len(frames) and (last or content < length):
                content += frames[taken][1]
                taken += 1
            if content != length or (last and taken != len(frames)):
                raise RuntimeError(
                    f"part {number}'s frames do not end where its range of SRC at {offset} (+{length}) does"
                )
            held = frames[start:taken]
            pieces.append((offset, number, at, held))
            at += sum(size for size, _, _ in held)
    pieces.sort(key=lambda piece: piece[0])
    spans: list[Span] = []
    ordered: list[Entry] = []
    for _, number, at, held in pieces:
        size = sum(compressed for compressed, _, _ in held)
        if spans and spans[-1][0] == number and spans[-1][1] + spans[-1][2] == at:
            spans[-1] = (number, spans[-1][1], spans[-1][2] + size)
        else:
            spans.append((number, at, size))
        ordered.extend(held)
    return spans, ordered


def join_parts(
    dst: str,
    parts_dir: str,
    parts: list[str],
    ranges: list[list[Range]],
    entries: list[list[Entry]],
    force: bool,
    options: dict[str, Any],
    ending: Ending = "table",
    index_command: list[str] | None = None,
) -> tuple[int, int]:
    """On a worker: SRC's frames, in SRC's order, from the parts into DST
    (``ranges[n]``: part n's ranges of SRC, ``entries[n]``: its frames), then
    its end, by ``ending``: ``"table"``, one seek table made here;
    ``"index"``, a tar's member index and the table, which ``index_command``
    (``weir -q --index -LEVEL``, with ``--index-from SRC`` when SRC is a
    path) appends to the joined file, as weir's compressor writes them;
    ``"none"``, nothing (one part that is weir's whole output already).
    Returns DST's size and its zstd frames."""
    spans, every = frame_spans(ranges, entries)
    if ending == "none":  # the part is weir's whole output: its index and table too
        part_fs, part_path = fsspec.core.url_to_fs(parts[0], **options)
        spans = [(0, 0, int(part_fs.info(part_path)["size"]))]
    # An empty frame of an empty part is a frame only when it is the file's only one.
    frames = [entry for entry in every if entry[1] > 0] or every[:1]
    table = seek_table(frames) if ending == "table" else b""
    fs, path = fsspec.core.url_to_fs(dst, **options)
    folder, name = os.path.split(path)
    temporary = f"{folder}/.{name}.weir-dask-{uuid.uuid4().hex[:8]}" if folder else f".{name}.weir-dask"
    try:
        if isinstance(fs, LocalFileSystem):
            join_local(temporary, [fsspec.core.url_to_fs(p, **options)[1] for p in parts], spans, table)
            if ending == "index":
                add_member_index(index_command, temporary)
            if force:
                os.replace(temporary, path)
            else:
                os.link(temporary, path)  # fails if DST appeared meanwhile: never replaced
                os.unlink(temporary)
            _sync_folder(folder or ".")
        elif ending == "index":
            # weir appends in place to a local file: the parts are joined in
            # this worker's temporary folder, indexed there, then uploaded.
            with tempfile.TemporaryDirectory(prefix="weir-join-") as scratch:
                joined = os.path.join(scratch, name or "joined")
                with open(joined, "wb") as output:
                    _copy_spans(parts, spans, options, output)
                add_member_index(index_command, joined)
                fs.put_file(joined, temporary)
            fs.mv(temporary, path)
        else:
            with fs.open(temporary, "wb") as output:
                _copy_spans(parts, spans, options, output)
                output.write(table)
            fs.mv(temporary, path)
    except BaseException:
        with contextlib.suppress(Exception):
            fs.rm(temporary)
        raise
    remove_parts(dst, parts_dir, options)
    return int(fs.info(path)["size"]), len(frames)


def _copy_spans(parts: list[str], spans: list[Span], options: dict[str, Any], output: Any) -> None:
    """The spans of the parts, through fsspec, one after the other into ``output``."""
    with contextlib.ExitStack() as stack:
        opened: dict[int, Any] = {}
        for number, at, size in spans:
            if number not in opened:
                opened[number] = stack.enter_context(fsspec.open(parts[number], "rb", **options))
            piece = opened[number]
            piece.seek(at)
            left = size
            while left > 0:
                data = piece.read(min(8 << 20, left))
                if not data:
                    raise OSError(f"{parts[number]} ended with {left} bytes of its frames left")
                output.write(data)
                left -= len(data)


def add_member_index(command: list[str] | None, path: str) -> None:
    """Has weir append a tar's member index and the seek table to the joined
    frames at ``path``, the bytes ``weir SRC`` writes: with ``--index-from
    SRC``, the index from SRC's tar headers once SRC matches every frame's
    size and content checksum (a SRC changed since its ranges were read
    fails here); without, the joined content decoded once, through the
    compressor's own scanner."""
    if not command:
        raise ValueError("a tar's join needs the weir --index command")
    process = subprocess.run([*command, path], capture_output=True, check=False)
    if process.returncode != 0:
        message = process.stderr.decode(errors="replace").strip()
        raise RuntimeError(f"{' '.join(command)} on the joined parts exited {process.returncode}: {message}")


def join_local(temporary: str, parts: list[str], spans: list[Span], table: bytes) -> None:
    """The spans of the local parts into a new file ``temporary``, then ``table``; synced."""
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        with contextlib.ExitStack() as stack:
            opened: dict[int, int] = {}
            for number, at, size in spans:
                if number not in opened:
                    opened[number] = stack.enter_context(open(parts[number], "rb")).fileno()
                done = 0
                while done < size:
                    # In the kernel, and shared extents where the file system has them.
                    copied = os.copy_file_range(
                        opened[number], descriptor, min(size - done, 1 << 30), offset_src=at + done
                    )
                    if copied == 0:
                        raise OSError(f"copy_file_range from {parts[number]} stopped with {size - done} bytes left")
                    done += copied
        os.write(descriptor, table)
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _sync_folder(folder: str) -> None:
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def remove_parts(dst: str, parts_dir: str, options: dict[str, Any]) -> None:
    """Removes the parts' folder. Tasks of a failed run may still be writing
    into it (Dask does not stop a running task it cancels): no task creates
    the folder, so once it is gone they fail to write; a part written between
    the listing and the removal of the folder is caught by another round."""
    fs, path = fsspec.core.url_to_fs(parts_dir, **options)
    for _ in range(_REMOVAL_ROUNDS):
        try:
            fs.rm(path, recursive=True)
        except FileNotFoundError:
            return
        except OSError:
            continue  # a file appeared while the folder was emptied
        if not fs.exists(path):
            return

"""One file compressed across a Dask cluster, byte for byte what ``weir SRC``
writes on one machine.

The file is cut into whole frames (the level's frame size: 8 MiB at levels
up to 6) and planned into tasks (``plan_tasks``): by default one task per
worker thread, task i of n taking every n-th frame (frames i, i + n, ...) so
that each task is an even mix of the file and the tasks end together; with
a ``blocksize``, contiguous blocks of that many bytes. Each task runs on a
worker: it reads its ranges where the worker sees SRC (a shared path or any
fsspec URL) and pipes them, in order, into the ``weir`` executable installed
on it (``weir -c --no-seek-table -B FRAME --stream-size=LENGTH``), which
cuts them into the frames ``weir SRC`` cuts there, and writes them as a part
beside DST. weir stays the one compressor: nothing here compresses. A last
task joins the frames in SRC's order, each from the part that holds it,
into a hidden file beside DST (``copy_file_range`` on a shared file system,
fsspec streams elsewhere), ends it with one seek table (zstd's seekable
format, as weir writes it), syncs it and only then gives it its name.

A tar SRC (``ustar`` at offset 257 of its first 512 bytes: weir's own test)
gets weir's member index before the table, as ``weir SRC`` writes it: one
task's weir writes both itself; with several, the join has ``weir --index``
append both to the joined frames, at the run's level. When SRC is a path the
join worker sees (no URL), ``weir --index --index-from SRC`` reads the index
from SRC's tar headers and checks SRC against every frame's size and content
checksum instead of decoding the joined content (a SRC changed since its
ranges were read fails the run); a URL SRC is decoded once instead, on that
worker. A DST that is an fsspec URL is then joined and indexed in the join
worker's temporary folder, which needs room for DST, and uploaded.

Dask retries a failed task (``retries``) and reschedules those of a worker
that died; a task writes its part under a temporary name and renames it, so a
retry never sees half a part. A run that fails removes its parts and leaves
no DST.

This module plans and submits; the tasks are weir.dask_tasks's.

    python -m weir.dask compress --scheduler tcp://10.0.0.1:8786 big.log big.log.zst
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import time
import uuid
from dataclasses import dataclass
from typing import Any

from weir.dask_tasks import Ending, Range, compress_ranges, join_parts, prepare, remove_parts, seek_table

__all__ = [
    "Result",
    "compress",
    "default_blocksize",
    "frame_size",
    "level_flags",
    "main",
    "parse_size",
    "plan_tasks",
    "seek_table",
]

# The largest frame weir cuts (--ultra -21 and -22); -B takes at most 1 GiB.
_MAX_FRAME = 1 << 30


def frame_size(level: int) -> int:
    """weir's frame size (``-B``'s default) at ``level``: 8 MiB up to -6 and
    with --fast, 16 MiB at -7 and -8, 32 MiB at -9 to -16, 64 MiB at -17 to
    -19, 256 MiB at -20, 512 MiB at -21 and -22 (weir's
    ``CompressionOptions.defaultChunkSize(level:)``, README's table)."""
    if level <= 6:
        return 8 << 20
    if level <= 8:
        return 16 << 20
    if level <= 16:
        return 32 << 20
    if level <= 19:
        return 64 << 20
    return 256 << 20 if level == 20 else 512 << 20


def default_blocksize(size: int, frame: int, slots: int) -> int:
    """The most input bytes a task gets when no block size is given:
    ``size`` shared evenly between the cluster's ``slots`` (its workers'
    threads), rounded up to whole frames. Each task costs a weir process,
    its pipe and its part; on the Linux tarball (1.3 GB, 2 workers) 21
    tasks of 64 MiB took 1.8x as long as 2 tasks of 680 MiB
    (bench/results/2026-11-26-cluster-dask-2.md)."""
    frames = -(-size // frame)  # ceiling
    return max(1, -(-frames // max(1, slots))) * frame


def plan_tasks(size: int, frame: int, slots: int, blocksize: int | None = None) -> list[list[Range]]:
    """The ranges of SRC (offset, length) each task compresses, in the order
    its weir reads them.

    With a ``blocksize``, each task is one range of that many bytes, in
    order. Without, there is one task per slot (the workers' threads; fewer
    when SRC has fewer frames), and task i gets every n-th frame of SRC
    (frames i, i + n, i + 2n, ...; n tasks): each an even mix of the file,
    so that the tasks end together where contiguous halves would not (the
    Linux tarball's second half costs 1.6 times its first's CPU,
    bench/results/2026-11-29-dask-interleave.md). Each range but SRC's
    last is one whole frame, so the task's weir cuts its frames where the
    ranges end: the frames ``weir SRC`` writes there. An empty SRC is one
    empty task."""
    if size == 0:
        return [[(0, 0)]]
    if blocksize is not None:
        return [[(offset, min(blocksize, size - offset))] for offset in range(0, size, blocksize)]
    frames = -(-size // frame)  # ceiling
    count = max(1, min(slots, frames))
    tasks = []
    for first in range(count):
        ranges: list[Range] = []
        for number in range(first, frames, count):
            offset = number * frame
            length = min(frame, size - offset)
            if ranges and sum(ranges[-1]) == offset:  # one task: SRC whole, one range
                ranges[-1] = (ranges[-1][0], ranges[-1][1] + length)
            else:
                ranges.append((offset, length))
        tasks.append(ranges)
    return tasks


def level_flags(level: int) -> list[str]:
    """weir's flags for ``level``: ``-3``, ``--ultra -22``, ``--fast=5``."""
    if level < 0:
        return [f"--fast={-level}"]
    if level == 0:
        return []
    if level > 19:
        return ["--ultra", f"-{level}"]
    return [f"-{level}"]


@dataclass(frozen=True)
class Result:
    """What a compression across the cluster did."""

    source_size: int
    """The bytes of SRC."""
    output_size: int
    """The bytes of DST."""
    parts: int
    """The tasks it ran (one part each)."""
    frames: int
    """The zstd frames in DST."""
    seconds: float


def compress(
    src: str,
    dst: str,
    *,
    scheduler: str | None = None,
    client: Any = None,
    level: int = 3,
    blocksize: int | None = None,
    frame: int | None = None,
    weir: str = "weir",
    threads: int = 1,
    retries: int = 2,
    force: bool = False,
    storage_options: dict[str, Any] | None = None,
    member_index: bool = True,
) -> Result:
    """Compresses ``src`` into ``dst`` on the Dask cluster at ``scheduler``
    (or through ``client``): by default one task per worker thread, each
    every n-th frame of ``src``; with ``blocksize``, one task a block.

    Args:
        src: the file to compress, a path the workers see or an fsspec URL.
        dst: the output, a path the workers see or an fsspec URL; refused if
            it exists, unless ``force``.
        level: weir's level (negative: ``--fast``).
        blocksize: input bytes per task, in contiguous blocks; by default
            SRC's frames dealt out between the workers' threads (one task per
            thread, task i of n frames i, i + n, ...: ``plan_tasks``). DST is
            byte for byte ``weir -LEVEL SRC``'s (a tar's member index
            included) by default and with a multiple of ``frame``.
        frame: input bytes per frame (weir's ``-B``); by default the level's.
        weir: the weir executable on the workers (a name on their PATH).
        threads: weir's ``-T`` in each task (one task per Dask thread).
        retries: how many times Dask runs a failed task again.
        storage_options: fsspec options for ``src`` and ``dst`` URLs.
        member_index: a tar SRC gets weir's member index (False: none, as
            weir's ``--no-member-index``).

    Raises:
        FileExistsError: ``dst`` exists and ``force`` is not given.
        RuntimeError: a task failed after its retries (weir's message in it).
    """
    from distributed import Client

    started = time.perf_counter()
    src, dst = _absolute(src), _absolute(dst)
    frame = frame or frame_size(level)
    if not 0 < frame <= _MAX_FRAME or (blocksize is not None and blocksize <= 0):
        raise ValueError(f"frame size {frame} and block size {blocksize} must be positive, the frame at most 1 GiB")
    options = storage_options or {}
    own_client = client is None
    if own_client:
        client = Client(scheduler)
    try:
        token = uuid.uuid4().hex[:12]
        parts_dir = _parts_dir(dst, token)
        prepared = client.submit(prepare, src, dst, parts_dir, force, options, pure=False, retries=retries)
        size, tar = prepared.result()
        tasks = plan_tasks(size, frame, sum(client.nthreads().values()), blocksize)
        parts = [_join_path(parts_dir, f"part-{number:08d}") for number in range(len(tasks))]
        # A tar's member index is weir's to write, from the whole content:
        # one task's weir writes it with the table; else the join has weir
        # add both to the joined frames (docs/members.md).
        ending: Ending = "table"
        if tar and member_index:
            ending = "none" if len(tasks) == 1 else "index"
        table_flags = ["--no-seek-table"] if ending != "none" else []
        command = [weir, "-c", "-q", f"-T{threads}", *table_flags, "-B", str(frame), *level_flags(level)]
        futures = [
            client.submit(
                compress_ranges,
                src,
                ranges,
                part,
                command,
                options,
                key=f"weir-compress-{token}-{number}",
                retries=retries,
                pure=False,
            )
            for number, (ranges, part) in enumerate(zip(tasks, parts, strict=True))
        ]
        # The join's weir --index compresses the index at the run's level, as
        # weir SRC does; a SRC it can read in place spares it the decode.
        index_command = [weir, "-q", "--index", *level_flags(level)]
        if not _is_url(src):
            index_command += ["--index-from", src]
        joined = client.submit(
            join_parts,
            dst,
            parts_dir,
            parts,
            tasks,
            futures,
            force,
            options,
            ending,
            index_command,
            key=f"weir-join-{token}",
            retries=retries,
            pure=False,
        )
        try:
            output_size, frames = joined.result()
        except BaseException:
            with contextlib.suppress(Exception):
                client.cancel([*futures, joined])
                client.submit(remove_parts, dst, parts_dir, options, pure=False).result()
            raise
        return Result(size, output_size, len(tasks), frames, time.perf_counter() - started)
    finally:
        if own_client:
            client.close()


def _is_url(path: str) -> bool:
    """Whether ``path`` is an fsspec URL (``s3://…``, ``simplecache::…``),
    not a plain path."""
    return "://" in path or "::" in path


def _absolute(path: str) -> str:
    """A local path as the caller means it: relative to the caller's folder,
    not to the workers' (a URL is left as it is)."""
    return path if _is_url(path) else os.path.abspath(path)


def _parts_dir(dst: str, token: str) -> str:
    head, _, name = dst.rstrip("/").rpartition("/")
    return f"{head}/.{name}.weir-dask-{token}" if head else f".{name}.weir-dask-{token}"


def _join_path(folder: str, name: str) -> str:
    return f"{folder}/{name}"


# ----------------------------------------------------------------- command line

_SIZE = re.compile(r"^(\d+)\s*([KMGT]?)(I?B)?$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """``64M``, ``64MiB``, ``64MB`` (powers of 1024, as weir's), ``1048576``."""
    match = _SIZE.match(text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (a number, then K, M, G or T)")
    return int(match.group(1)) << (10 * " KMGT".index(match.group(2).upper() or " "))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m weir.dask", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("compress", help="compress SRC into DST on a Dask cluster")
    run.add_argument("--scheduler", required=True, help="the scheduler's address (tcp://HOST:PORT)")
    run.add_argument("src", metavar="SRC", help="a path the workers see, or an fsspec URL")
    run.add_argument("dst", metavar="DST", help="a path the workers see, or an fsspec URL")
    run.add_argument("--level", type=int, default=3, help="weir's level (negative: --fast); default 3")
    run.add_argument(
        "--blocksize",
        type=parse_size,
        help="input bytes per task, contiguous (default: each of the n worker threads every n-th frame)",
    )
    run.add_argument("--frame-size", type=parse_size, help="input bytes per frame, weir's -B (default: the level's)")
    run.add_argument("--weir", default="weir", help="the weir executable on the workers (default: weir)")
    run.add_argument("--threads", type=int, default=1, help="weir's -T in each task (default 1)")
    run.add_argument("--retries", type=int, default=2, help="runs of a failed task after the first (default 2)")
    run.add_argument("-f", "--force", action="store_true", help="replace DST if it exists")
    run.add_argument(
        "--no-member-index", action="store_true", help="no member index for a tar SRC (weir's --no-member-index)"
    )
    args = parser.parse_args(argv)
    try:
        result = compress(
            args.src,
            args.dst,
            scheduler=args.scheduler,
            level=args.level,
            blocksize=args.blocksize,
            frame=args.frame_size,
            weir=args.weir,
            threads=args.threads,
            retries=args.retries,
            force=args.force,
            member_index=not args.no_member_index,
        )
    except (OSError, RuntimeError, ValueError) as error:
        print(f"weir.dask: {args.src}: {error}", file=sys.stderr)
        return 1
    print(
        f"{args.src} -> {args.dst}: {result.source_size} -> {result.output_size} bytes, "
        f"{result.parts} tasks, {result.frames} frames, {result.seconds:.2f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

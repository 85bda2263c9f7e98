"""Running a command: weir (through :class:`weirtools.binaries.Weir`), the
reference tools (zstd, gzip, tar) and the system's (mount, mkfs). One
:func:`run` for all: its output captured unless told where it goes, standard
input closed unless given, no shell."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from typing import IO, Any

Stream = int | IO[Any] | None
Completed = subprocess.CompletedProcess[bytes]


def run(
    argv: Sequence[str],
    *,
    input: bytes | None = None,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = False,
    timeout: float | None = None,
    stdin: Stream = subprocess.DEVNULL,
    stdout: Stream = subprocess.PIPE,
    stderr: Stream = subprocess.PIPE,
) -> Completed:
    """Runs ``argv`` and waits for it. ``check``: a non-zero exit raises
    CalledProcessError; ``timeout``: a run past it raises TimeoutExpired
    (:func:`run_bounded` returns None instead). ``input`` replaces ``stdin``."""
    return subprocess.run(
        list(argv),
        input=input,
        stdin=None if input is not None else stdin,
        stdout=stdout,
        stderr=stderr,
        cwd=cwd,
        env=None if env is None else dict(env),
        check=check,
        timeout=timeout,
    )


def run_bounded(argv: Sequence[str], timeout: float, **options: Any) -> Completed | None:
    """:func:`run`, or None when the command is still running after
    ``timeout`` seconds (it is killed): a hang is a suite's verdict, not a crash of the suite."""
    try:
        return run(argv, timeout=timeout, **options)
    except subprocess.TimeoutExpired:
        return None


def output(argv: Sequence[str], stderr: bool = True, timeout: float = 60) -> str:
    """What ``argv`` prints (with its standard error unless ``stderr`` is
    False), stripped; ``unavailable (why)`` when it cannot run: a version or a
    machine's description for a report, never a check."""
    try:
        done = run(argv, stderr=subprocess.STDOUT if stderr else subprocess.DEVNULL, timeout=timeout)
    except (OSError, subprocess.SubprocessError) as error:
        return f"unavailable ({error})"
    return done.stdout.decode(errors="replace").strip()


def decode(path: str, gzip: bool = False) -> bytes | None:
    """The real zstd's (or gzip's) decoding of ``path``: the reference a
    harness holds weir's output to; None when it refuses the file."""
    command = ["gzip", "-dc", path] if gzip else ["zstd", "-q", "-d", "-c", path]
    done = run(command, stderr=subprocess.DEVNULL)
    return done.stdout if done.returncode == 0 else None

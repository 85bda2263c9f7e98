"""Log lines on standard error, each naming the harness that writes it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import NoReturn


def say(message: str) -> None:
    """``message`` on standard error, flushed at once (a harness's lines interleave with its tools')."""
    print(message, file=sys.stderr, flush=True)


def logger(name: str) -> Callable[[str], None]:
    """A ``log(message)`` whose lines start with ``name: ``."""

    def log(message: str) -> None:
        say(f"{name}: {message}")

    return log


def die(name: str, message: str, status: int = 2) -> NoReturn:
    """Ends the harness ``name`` with ``name: error: message`` and ``status``."""
    say(f"{name}: error: {message}")
    sys.exit(status)

"""The weir binary a harness runs: where it is by default, its option, and
running it (:meth:`Weir.run`)."""

from __future__ import annotations

import argparse
import os
import subprocess
from collections.abc import Mapping, Sequence

from weirtools import ROOT
from weirtools.proc import Completed, run_bounded

RELEASE = str(ROOT / ".build" / "release" / "weir")
"""The release build (scripts/test builds it first; `swift build -c release`)."""
HOOKED = str(ROOT / ".build-hooks" / "release" / "weir")
"""The release build with the WEIR_TEST_* hooks, as scripts/test copies it."""
TIMEOUT = 60
"""Seconds a case's run may take before it counts as hung."""


def add_weir_option(parser: argparse.ArgumentParser, required: bool = False, default: str | None = None) -> None:
    """``--weir PATH``: required, or defaulting to ``default``, else
    $WEIR_BIN, else :data:`RELEASE`."""
    if required:
        parser.add_argument("--weir", required=True, help="the weir binary under test")
    else:
        fallback = default or os.environ.get("WEIR_BIN") or RELEASE
        parser.add_argument("--weir", default=fallback, help=f"the weir binary under test (default: {fallback})")


class Weir:
    """A weir binary, run as a user runs it: standard input closed, its output captured, bounded in time."""

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)

    def command(self, arguments: Sequence[str]) -> list[str]:
        return [self.path, *arguments]

    def run(
        self,
        arguments: Sequence[str],
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        input: bytes | None = None,
        timeout: float = TIMEOUT,
    ) -> Completed | None:
        """weir with ``arguments``; None when it is still running after ``timeout`` seconds (hung)."""
        return run_bounded(self.command(arguments), timeout, cwd=cwd, env=env, input=input, stdin=subprocess.DEVNULL)

"""What scripts/' Python harnesses share: running weir and the reference tools
(:mod:`weirtools.proc`), their log lines (:mod:`weirtools.log`), the files they
hash and read (:mod:`weirtools.files`), Markdown tables (:mod:`weirtools.tables`),
the seek table as python/'s package reads it (:mod:`weirtools.formats`), the
shared test vectors (:mod:`weirtools.vectors`), the corpora
(:mod:`weirtools.corpora`), FUSE mounts and private mount namespaces
(:mod:`weirtools.mounts`), a suite's verdicts (:mod:`weirtools.verdicts`) and the
weir binary a harness runs (:mod:`weirtools.binaries`).

A harness puts ``scripts/lib`` on ``sys.path`` (one line: the harnesses are run
as files, not installed) and imports from here. This package imports only the
standard library and itself, nothing of a harness's, and no module of scripts/
imports another in a loop: :mod:`weirtools.imports` checks both (scripts/test).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
"""The repository's root (scripts/lib/weirtools/ is three folders below it)."""

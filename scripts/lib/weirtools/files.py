"""A file's bytes and digests, as the harnesses compare outputs."""

from __future__ import annotations

import hashlib


def sha(data: bytes) -> str:
    """The SHA-256 of ``data``, in hex."""
    return hashlib.sha256(data).hexdigest()


def read(path: str) -> bytes:
    """The whole of the file at ``path``."""
    with open(path, "rb") as f:
        return f.read()


def digest(path: str) -> str | None:
    """The SHA-256 of the file at ``path`` in hex, or None when it cannot be read."""
    try:
        return sha(read(path))
    except OSError:
        return None

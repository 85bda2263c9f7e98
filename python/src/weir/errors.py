"""The package's one error type, in a module of its own so that every other
module imports it at the top (frames.py and zstd.py import each other's
names otherwise)."""

from __future__ import annotations

__all__ = ["FormatError"]


class FormatError(ValueError):
    """The bytes are not a zstd file, or a table or frame does not fit it."""

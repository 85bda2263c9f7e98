"""weir's Python package: the ``weir`` fsspec protocol, which presents the
content of any zstd file (weir's seekable files best) as a random-access file
that Dask, pandas and DuckDB split; the ``weir-tar`` protocol, the members of a
``.tar.zst`` read from its member index; and :func:`weir.dask.compress`, which
compresses one file across a Dask cluster with the ``weir`` executable."""

from importlib.metadata import version

from weir.archive import WeirTarFileSystem
from weir.errors import FormatError
from weir.filesystem import WeirFile, WeirFileSystem
from weir.frames import Frame, FrameIndex, build_index

__all__ = ["FormatError", "Frame", "FrameIndex", "WeirFile", "WeirFileSystem", "WeirTarFileSystem", "build_index"]
# Written once, in pyproject.toml (scripts/drift-check holds it equal to weir's own).
__version__ = version("weir")

"""The shared test vectors (testdata/vectors, issue 69): each case of a
folder (``seek-table``, ``member-index``) as its JSON says it, and the file
it describes, as every reader of scripts/ walks them (hostile-test,
member-index-test, seekable-interop)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from weirtools import ROOT

FOLDER = ROOT / "testdata" / "vectors"


def cases(kind: str) -> list[tuple[str, dict[str, Any]]]:
    """(name, JSON) of each case of the folder ``kind``, by name; the name is the JSON's stem."""
    return [(path.stem, json.loads(path.read_text())) for path in sorted((FOLDER / kind).glob("*.json"))]


def file(kind: str, case: dict[str, Any]) -> Path:
    """The file the case ``case`` of the folder ``kind`` describes."""
    return FOLDER / kind / case["file"]

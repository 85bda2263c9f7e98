"""Tables as the harnesses report them: Markdown (bench/results, a report's
sections) and plain aligned columns (a suite's summary on a terminal)."""

from __future__ import annotations

from collections.abc import Sequence


def render(header: Sequence[str], rows: Sequence[Sequence[object]], left: int = 2) -> str:
    """A Markdown table: ``header``, then ``rows`` (each cell ``str()``-ed);
    the first ``left`` columns aligned left (names), the rest right (numbers)."""
    rule = "|" + "|".join(["---"] * left + ["--:"] * (len(header) - left)) + "|"
    lines = ["| " + " | ".join(header) + " |", rule]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def columns(rows: Sequence[Sequence[object]], left: int = 1) -> str:
    """``rows`` as plain text, each column as wide as its widest cell; the
    first ``left`` columns aligned left, the rest right."""
    cells = [[str(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in cells if i < len(row)) for i in range(max(map(len, cells), default=0))]
    lines = []
    for row in cells:
        aligned = (cell.ljust(widths[i]) if i < left else cell.rjust(widths[i]) for i, cell in enumerate(row))
        lines.append(" ".join(aligned).rstrip())
    return "\n".join(lines) + "\n"

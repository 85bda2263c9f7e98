"""The report's formatting, shared by report.py, the sections' report() and chart.py: finding a case and its
medians in the results (find, med, vs), numbers as the report prints them (f_*: – for what was not measured),
markdown tables of cases (spec_table, on weirtools.tables.render), the commands of a section, the targets as a
list. Standard library only."""

from collections.abc import Callable, Iterable
from typing import Any

from weirtools.tables import render

Case = dict[str, Any]
"""One case of a section's results: its tool, family, group, runs and their "median"."""

MODE_TITLE = {"file": "file→file", "null": "file→/dev/null", "stdio": "stdin→stdout", "pipe": "pipe→stdout",
              "pipenull": "pipe→/dev/null", "overwrite": "file→existing file (-f)",
              "disk": "file→file, then sync"}  # disk: before every file output was synced (old results)


def cases(data: dict, section: str) -> list[Case]:
    """The cases of SECTION in the results DATA ([] when it did not run)."""
    return data.get("sections", {}).get(section, {}).get("cases", [])


def find(data: dict, section: str, **kw: object) -> Case | None:
    """The first case of SECTION whose fields equal KW, or None."""
    return next((c for c in cases(data, section) if all(c.get(k) == v for k, v in kw.items())), None)


def med(c: Case | None, key: str) -> Any:
    """The case's median KEY (None when not measured)."""
    return (c.get("median") or {}).get(key) if c else None


def ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


def vs(a: Case | None, b: Case | None, key: str = "mbps") -> float | None:
    """A's median KEY over B's."""
    return ratio(med(a, key), med(b, key))


def dash(f: Callable[..., str]) -> Callable[..., str]:
    """f, printing – for what was not measured."""
    return lambda v, *a: "–" if v is None else f(v, *a)


human = dash(lambda n: next(("%.3g %s" % (n / d, u) for u, d in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)) if n >= d),
                            "%d B" % n))
f_mbps = dash(lambda v: "%.0f" % v if v >= 100 else "%.1f" % v)
f_num = dash(lambda v, fmt="%.2f": fmt % v)
f_ratio = dash(lambda v, digits=2: "%.*f×" % (digits, v))
f_bytes = dash(lambda v: f"{int(v):,}")
f_len = dash(lambda n: "%d MiB" % (n >> 20) if n >= 1 << 20 and n % (1 << 20) == 0 else "%s bytes" % f_bytes(n))
f_mib = dash(lambda kb: "%.1f" % (kb / 1024))
f_ms = dash(lambda v: "%.1f" % (v * 1000) if v < 10 else "%.0f" % (v * 1000))


def f_spread(c: Case) -> str:
    m = c.get("median")
    return "%.1f%%" % (100 * (m["wall_max"] - m["wall_min"]) / m["wall"]) if m and m.get("wall") else "–"


def f_ok(c: Case) -> str:
    return "%d/%d" % (c.get("ok_runs", 0), c.get("n_runs", 0)) + " **FAILED**" * (c.get("ok_runs", 0) < c.get(
        "n_runs", 0)) + " **WRONG OUTPUT**" * ((c.get("verify_once") or {}).get("ok") is False)


def f_tool(c: Case) -> str:
    return ("**%s**" % c["tool"]) if c["family"] == "weir" else c["tool"]


COLS = {"MB/s": lambda c: f_mbps(med(c, "mbps")), "Wall s": lambda c: f_num(med(c, "wall")), "Spread": f_spread,
        "CPU s": lambda c: f_num(med(c, "cpu")), "Peak RSS MiB": lambda c: f_mib(med(c, "rss_kb")),
        "Output bytes": lambda c: f_bytes(med(c, "out_bytes")), "Runs ok": f_ok, "Tool": f_tool}
BASIC = ("MB/s", "Wall s", "Spread", "CPU s", "Peak RSS MiB")
cells = lambda c, names: [COLS[k](c) for k in names]  # noqa: E731
Column = tuple[str, Callable[[Case], object]]  # a table's column: its header, and its cell of a case


def stat(fmt: Callable[..., str], key: str) -> Callable[[Case], str]:
    """A cell: the case's median KEY, formatted by FMT."""
    return lambda c: fmt(med(c, key))


def col(*names: str) -> list[Column]:
    """The shared columns NAMES (COLS), as a table spec's columns."""
    return [(name, COLS[name]) for name in names]


def spec_table(cs: list[Case], spec: list[Column]) -> str:
    """A markdown table of the cases CS, one row each, its columns declared by SPEC."""
    return render([header for header, _ in spec], [[cell(c) for _, cell in spec] for c in cs])


def in_groups(cs: list[Case], key: Callable[[Case], object]) -> list[Case]:
    """CS ordered group by group (key), the groups in the order they first appear."""
    return [c for gc in grouped(cs, key).values() for c in gc]


def grouped(cs: list[Case], key: Callable[[Case], object]) -> dict[object, list[Case]]:
    """{group: its cases}, in the order the groups first appear."""
    return {g: [c for c in cs if key(c) == g] for g in dict.fromkeys(map(key, cs))}


def of(cs: list[Case], family: str) -> Case | None:
    """The first case of FAMILY (weir, zstd...)."""
    return next((c for c in cs if c["family"] == family), None)


def commands(cs: list[Case], extra: Iterable[str] = ()) -> str:
    """The commands the cases ran (and EXTRA lines first), folded in a <details> block."""
    lines = list(extra) + list(dict.fromkeys(c["cmd"] for c in cs))
    return "<details><summary>Commands</summary>\n\n```sh\n" + "\n".join(lines) + "\n```\n</details>\n"


def target_list(targets: list[dict]) -> str:
    """The targets, one Markdown bullet each, with their status and value."""
    mark = {"met": "✅ met", "missed": "❌ missed", "not measured": "➖ not measured"}
    out = []
    for t in targets:
        val = ("" if t["value"] is None else ": **%.1f ms**" % t["value"] if t.get("unit") == "ms" else
               ": **%.2f MiB**" % t["value"] if t.get("unit") == "MiB" else
               ": **%.2f B**" % t["value"] if t.get("unit") == "B" else
               ": **%.3f×** (%+.1f%%)" % (t["value"], 100 * (t["value"] - 1)) if t["op"] == "within" else
               ": **%s**" % f_ratio(t["value"], 3))
        out.append("- %s — %s%s — %s (issue %d)\n" % (mark[t["status"]], t["target"], val, t["basis"], t["issue"]))
    return "".join(out)


def per_round(runs: list[dict]) -> str:
    """Compression/decompression MB/s of each round."""
    return ", ".join("%s/%s" % (f_mbps(r.get("comp_mbps")), f_mbps(r.get("dec_mbps"))) if r.get("ok") else "failed"
                     for r in runs) or "–"

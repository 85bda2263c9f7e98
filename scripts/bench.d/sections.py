"""The sections of scripts/bench: one module each, one line each in SECTIONS below.

A section's module (compress.py, seek.py, adapt.py ...) has
  measure(bench)  measures: runner.py calls it when the section is chosen (--sections, --skip), with its Bench (bench.a:
                the arguments; bench.N: the threads; bench.work: a scratch folder; bench.main: the corpus), and it
                stores its results as bench.data["sections"][NAME]: a dict with a "title" and, if it has any, its
                "cases" (each with its "runs", "n_runs" and "ok_runs"): harness.section(bench, NAME, ...) runs cases
                in rounds and stores them so;
  report(data)    its part of the report, markdown, from the results of the run (data["sections"][NAME]).
Adding a section: its module NAME.py in scripts/bench.d/, and a line (NAME, its place in the report) below; NAME is
then a word of --sections. The targets it is judged on, if any, go in targets.json and targets.py."""

import ast
import importlib
import os
import re
import textwrap

# (NAME, place in the report), in the order the sections run: the report puts the compression tables first and
# lean, which quotes the tree's -r row, last.
SECTIONS = [
    ("ceiling", 3),
    ("compress", 1),
    ("levels", 2),
    ("decompress", 4),
    ("oneframe", 21),
    ("scaling", 5),
    ("small", 6),
    ("memory", 7),
    ("tree", 8),
    ("seek", 9),
    ("members", 17),
    ("index", 18),
    ("indexwork", 18.5),
    ("lean", 14),
    ("verify", 10),
    ("formats", 11),
    ("resume", 12),
    ("adapt", 13),
    ("cluster", 15),
    ("patch", 16),
    ("mount", 19),
    ("remote", 20),
]
NAMES = [name for name, _ in SECTIONS]
# The default run: every section but cluster, which starts Spark and Dask clusters, mount, which mounts on FUSE
# as root and pip-installs ratarmount, remote, which starts nginx, and indexwork, which runs weir under valgrind
# for ten minutes (all asked for by name).
DEFAULT = [name for name in NAMES if name not in ("cluster", "mount", "remote", "indexwork")]


def module(name):
    """The module of the section NAME (imported when first asked for)."""
    return importlib.import_module(name)


def in_report_order():
    return [name for name, _ in sorted(SECTIONS, key=lambda row: row[1])]


def describe():
    """--help's list of the sections: each module's docstring, up to where it says who calls it."""
    here, out = os.path.dirname(os.path.abspath(__file__)), ["sections (each case alternating between tools, "
                                                             "median of --runs):"]
    for name in NAMES:
        doc = ast.get_docstring(ast.parse(open(os.path.join(here, name + ".py")).read())) or ""
        doc = re.split(r"\s(?:runner\.py calls|Standalone:|Alone:)", doc.split("\n\n")[0])[0]
        doc = re.sub(r"^(?:scripts/bench's \w+ section|The `\w+` section)\s*", "", " ".join(doc.split()))
        out += textwrap.wrap(doc.lstrip(":").strip(), 104, initial_indent="  %-11s " % name,
                             subsequent_indent=" " * 14)
    return "\n".join(out)

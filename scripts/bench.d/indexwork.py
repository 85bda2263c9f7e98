"""scripts/bench's indexwork section: the member index's work counted rather than timed: the instructions that weir
-TN executes (valgrind's callgrind) with the index and without it (--no-member-index), at -1 and -3, file→/dev/null and
pipe→/dev/null, on the index section's tars but the whole tarball (under callgrind, an hour). Asked for by name: it
takes about 10 minutes, one run a case (a count does not move with the machine's load: two runs differ by 0.01%).

Why: the index section's goal (speed with the index ≥ 0.98× without) is a 2% difference, inside one bench run's
spread on a 2-core VM (±5% between runs of unchanged code, ±10% on the 20 MB inputs, whose runs take 0.1-0.3 s).
The work ratio says what the index costs the cores before any noise; its extra instructions a member say where to
look (issue 82)."""

import re
import shlex
import shutil
import subprocess
import time

import index
from formatting import f_bytes, f_num, f_ratio
from timing import die, log
from weirtools.tables import render

LEVELS, MODES = (1, 3), ("file", "pipe")
MODE_NAME = {"file": "file→/dev/null", "pipe": "pipe→/dev/null"}
COLLECTED = re.compile(rb"Collected : (\d+)")


def count(bench, valgrind, tar, level, mode, without):
    """The instructions of one run of weir on `tar`, and its command line as a user would type it."""
    argv = [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", bench.a.weir, "-q", "-%d" % level,
            "-T%d" % bench.N] + bench.weir_extra + (["--no-member-index"] if without else []) + ["-c"]
    shown = " ".join(shlex.quote(bench.disp_path(x)) for x in argv)
    if mode == "file":
        p = subprocess.run(argv + [tar], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        shown += " %s > /dev/null" % shlex.quote(bench.disp_path(tar))
    else:
        # A pipe with a producer: a file as stdin would be read as a file (mapped), not as a pipe.
        cat = subprocess.Popen(["cat", tar], stdout=subprocess.PIPE)
        p = subprocess.run(argv, stdin=cat.stdout, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        cat.stdout.close()
        if cat.wait() != 0:
            die("indexwork: cat %s failed" % tar)
        shown = "cat %s | %s > /dev/null" % (shlex.quote(bench.disp_path(tar)), shown)
    found = COLLECTED.findall(p.stderr)
    if p.returncode != 0 or not found:
        die("indexwork: %s failed (exit %d): %s" % (shown, p.returncode, p.stderr.decode("utf-8", "replace")[-400:]))
    return int(found[-1]), shown


def measure(bench):
    valgrind = shutil.which("valgrind")
    if not valgrind:
        die("indexwork: valgrind is not installed (apt-get install valgrind)")
    t0, rows = time.time(), []
    for role, tar in index.inputs(bench):
        if role == "whole":
            continue
        listing = subprocess.run(["tar", "tf", tar], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        members = listing.stdout.count(b"\n")
        for level in LEVELS:
            for mode in MODES:
                (with_, cmd), (without, _) = (count(bench, valgrind, tar, level, mode, w) for w in (False, True))
                rows.append({"role": role, "path": bench.disp_path(tar), "members": members, "level": level,
                             "mode": mode, "with": with_, "without": without, "command": cmd})
                log("  indexwork  %s -%d %s: %s instructions with the index, %s without (%.4f×)" % (
                    role, level, mode, f"{with_:,}", f"{without:,}", without / with_))
    bench.data["sections"]["indexwork"] = {
        "title": "The member index's work: instructions with it and without it (callgrind)",
        "threads": bench.N, "rows": rows, "seconds": time.time() - t0}


def report(data):
    s = data["sections"]["indexwork"]
    table = render(
        ["Input, weir -T%d" % s["threads"], "Members (`tar tf`)", "Instructions with the index", "without",
         "Work ratio (without ÷ with)", "Extra instructions a member"],
        [["%s (`%s`), -%d %s" % (index.ROLES[r["role"]], r["path"], r["level"], MODE_NAME[r["mode"]]),
          f_bytes(r["members"]), f_bytes(r["with"]), f_bytes(r["without"]), f_ratio(r["without"] / r["with"], 4),
          f_num((r["with"] - r["without"]) / r["members"] if r["members"] else None, "%.0f")] for r in s["rows"]])
    return (table + "\n- The work ratio is the speed the index leaves on cores that do nothing else (the index "
            "section's goal: ≥ 0.98×); the counts include the process's start (about 44 million instructions), "
            "alike in both.\n- A cut tar gets no index: its extra instructions are the walk alone.\n\nCommands "
            "(the second of each pair adds `--no-member-index`):\n\n" +
            "".join("- `%s`\n" % r["command"] for r in s["rows"]))

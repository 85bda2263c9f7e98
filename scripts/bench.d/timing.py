"""Running one command and measuring it, for scripts/bench: wall seconds from a monotonic clock around it, user and
system CPU seconds and peak RSS from rtime.c (GNU time's -f TIME_FMT line, the CPU to the microsecond), and the
share of the machine other processes took meanwhile (/proc/stat); also the log and the exit on an error
(weirtools.log's, named "bench"). Standard library."""

import argparse
import contextlib
import functools
import json
import os
import shlex
import statistics
import subprocess
import sys
import time

import weirtools.log
from weirtools import ROOT as ROOT_PATH
from weirtools.binaries import add_weir_option
from weirtools.corpora import LINUX

TIME_FMT = "%e %U %S %M %x"

log = weirtools.log.say
die = functools.partial(weirtools.log.die, "bench")

ROOT = str(ROOT_PATH)


def standalone_parser(doc: str, work: str) -> argparse.ArgumentParser:
    """A standalone section's options (cluster_*.py): the corpus, weir, its scratch folder, the runs, where to write."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--corpus", default=LINUX)
    add_weir_option(parser)
    parser.add_argument("--work", default=os.path.join(ROOT, "bench", "work", work))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", help="write every run here")
    parser.add_argument("--report", help="write the Markdown report here (else standard output)")
    return parser


def packed(weir: str, corpus: str, work: str) -> str:
    """weir -T2's file of CORPUS in WORK, made untimed: the file a standalone section's cases read."""
    path = os.path.join(work, os.path.basename(corpus) + ".zst")
    if os.path.exists(path):
        os.unlink(path)
    subprocess.run([weir, "-q", "-T2", corpus, "-o", path], check=True)
    return path


def standalone(data: dict, text: str, json_path: str | None, report_path: str | None) -> int:
    """A standalone section's end (cluster_*.py): DATA to JSON_PATH, TEXT to REPORT_PATH or standard output; the
    exit status, 1 when a check failed."""
    if json_path:
        with open(json_path, "w") as out:
            json.dump(data, out, indent=1)
    with open(report_path, "w") if report_path else contextlib.nullcontext(sys.stdout) as out:
        out.write(text)
    return 1 if data["checks"] else 0


def busy_seconds() -> float | None:
    """CPU seconds the whole machine has spent busy (all cores; steal included)."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:9]]
        return (sum(v) - v[3] - v[4]) / CLK_TCK
    except (OSError, ValueError, IndexError):
        return None


CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def synced(argv: list[str], target: list[str]) -> list[str]:
    """argv, then `sync TARGET` (fsync of a file; `-f FOLDER`: syncfs), as one
    command: every tool's timed run lasts until its output is on disk (weir
    syncs its outputs itself; zstd and pzstd leave them in the page cache)."""
    return ["sh", "-c", shlex.join(argv) + " && exec sync " + shlex.join(target)]


def median(values: list[float | None]) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def peak_rss_mib(pid: int) -> float | None:
    """A running process's peak RSS in MiB (VmHWM), or None."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def precise_timer(folder: str) -> str:
    """rtime.c (beside this file) built into FOLDER with the system's cc, once: GNU time's `-f TIME_FMT -o FILE`
    with the CPU seconds to the microsecond, where GNU time prints hundredths (a 0.1 s run's CPU came in steps of
    10%). TIME_BIN (--time) names another timer that writes the same line."""
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rtime.c")
    binary = os.path.join(folder, "rtime")
    if not os.path.exists(binary) or os.path.getmtime(binary) < os.path.getmtime(source):
        os.makedirs(folder, exist_ok=True)
        built = subprocess.run(["cc", "-O2", "-Wall", "-o", binary + ".tmp", source], capture_output=True, text=True)
        if built.returncode != 0:
            die("could not build %s: %s" % (source, built.stderr.strip()))
        os.replace(binary + ".tmp", binary)
    return binary


def run_timed(bench, argv: list[str], stdin: str | None = None, stdout: str | None = None, prefix: str | None = None,
              keep_stderr: bool = False) -> dict:
    """Run argv under the timer (precise_timer; GNU time with TIME_BIN).  stdout None means /dev/null; keep_stderr:
    its standard error in m["stderr"].

    prefix is a shell pipeline feeding the command (e.g. a generator
    ending in '|'); the command then runs under bash.  Wall time is taken
    with a monotonic clock around the whole child (better resolution than
    time's %e), user/sys CPU and peak RSS come from the timer."""
    tfile = os.path.join(bench.work, "time.txt")
    efile = os.path.join(bench.work, "stderr.txt")
    if os.path.exists(tfile):
        os.unlink(tfile)
    timed = [bench.a.time, "-f", TIME_FMT, "-o", tfile, *argv]
    with open(efile, "wb") as ferr, open(stdin or os.devnull, "rb") as fin, open(stdout or os.devnull, "wb") as fout:
        b0 = busy_seconds()
        t0 = time.perf_counter()
        p = subprocess.run(["bash", "-c", prefix + " " + shlex.join(timed)] if prefix else timed, stdin=fin,
                           stdout=fout, stderr=ferr)
        wall = time.perf_counter() - t0
        b1 = busy_seconds()
    m = {"wall": wall, "user": None, "sys": None, "cpu": None, "rss_kb": None,
         "exit": p.returncode, "time_e": None, "ok": False, "error": None, "other_load": None}
    try:
        lines = [line for line in open(tfile).read().splitlines() if line.strip()]
        e, u, s, rss, x = lines[-1].split()
        m.update(time_e=float(e), user=float(u), sys=float(s),
                 cpu=float(u) + float(s), rss_kb=int(rss), exit=int(x))
        if len(lines) > 1:
            m["error"] = " / ".join(lines[:-1])
    except (OSError, ValueError, IndexError) as e:
        m["error"] = "could not parse the timer's output: %s" % e
    # CPU that other processes took while this ran: the machine's busy time
    # minus the tool's own user+sys, as a fraction of all cores' wall time
    # (/proc/stat counts in clock ticks: meaningless for runs shorter than half a second)
    if b0 is not None and b1 is not None and m["cpu"] is not None and wall >= 0.5:
        m["other_load"] = max(0.0, (b1 - b0 - m["cpu"]) / (wall * bench.ncpu))
    with open(efile, "rb") as f:
        err = f.read().decode("utf-8", "replace")
    if keep_stderr:
        m["stderr"] = err
    if p.returncode != 0 or m["exit"] != 0:
        m["error"] = (m["error"] or "") + " exit %s: %s" % (p.returncode, err.strip()[-500:])
    else:
        m["ok"] = m["error"] is None
    return m

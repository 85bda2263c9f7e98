#!/usr/bin/env python3
"""Measurement runner behind scripts/bench (run `scripts/bench --help`): the arguments, the run's state (Bench) and
the run loop; the sections it runs are modules of their own (sections.py lists them).

Prepares the corpus slices (corpus.py), runs each chosen section's cases (harness.py, timing.py), verifies every
output (verification.py), writes the raw measurements as JSON, then the report (report.py) and the chart (chart.py).
Python 3 standard library only."""

import argparse
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [HERE, os.path.join(ROOT, "scripts", "lib")]
sys.dont_write_bytecode = True  # no __pycache__ in scripts/
import corpus  # noqa: E402  (same folder)
import report  # noqa: E402
import sections  # noqa: E402
from corpus import file_size  # noqa: E402
from formatting import human  # noqa: E402
from targets import compute_targets  # noqa: E402
from timing import TIME_FMT, die, log, median, precise_timer  # noqa: E402
from weirtools.proc import output  # noqa: E402

MODES = ["file", "null", "stdio", "pipe", "pipenull", "overwrite"]


USAGE = """Benchmarks weir against zstd, pzstd and the other tools of each section on the Linux 6.1 source tarball
and writes bench/results/DATE.md (report) and DATE.json (every run); the chart (matplotlib) goes to bench/work/charts/.
How each run is timed and its output verified: scripts/bench.d/method.md (also in every report); the targets it
judges: targets.json. Sizes are decimal (5M = 5,000,000 bytes). Not for CI: a full run takes about 30 minutes.

scripts/bench only (not passed on): --no-install (fail rather than apt-get install what is missing), --no-build
(use WEIR_BIN or the last build), --no-download (fail if the corpus is missing), --prepare-only (install, build,
cache the corpus, stop). The corpus: Debian's linux-source-6.1 (BENCH_SOURCE_PKG names another), unpacked once
into bench/corpus/linux-6.1.tar. Environment: WEIR_BIN (default: a release build in .build-bench, stripped as the
packages strip it), ZSTD_BIN, PZSTD_BIN, TIME_BIN, PYTHON.

Examples:
  scripts/bench --quick                      # harness check, ~3 minutes
  scripts/bench --sections lean,tree         # issue 31's table, ~12 min
  scripts/bench --sections compress --runs 5 --weir-args '--chunk-size 16M' --label chunk16M"""


def parse_size(text):
    """'100M' -> 100_000_000; 'MiB'/'Mi' suffixes are binary; plain = bytes."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)([iI]?)[bB]?\s*", text)
    if not m:
        raise argparse.ArgumentTypeError("bad size %r (examples: 5M, 100MB, 1G, 64MiB)" % text)
    number, unit, binary = m.groups()
    base = 1024 if binary else 1000
    exp = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4}[unit.lower()]
    return int(float(number) * base ** exp)


def listed(parse):
    """A comma list of what PARSE reads (an argparse type)."""
    def parse_list(text):
        try:
            return [parse(t.strip()) for t in text.split(",") if t.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError("expected a comma-separated list, got %r" % text) from None
    return parse_list


def parse_lean_levels(text):
    """'fast3,1,3,9,19,22' -> [(level, flags, label)]: fastN (or fast=N) is
    --fast=N (level -N), levels above 19 get --ultra."""
    out = []
    for t in (t.strip() for t in text.split(",")):
        if not t:
            continue
        m = re.fullmatch(r"(?:--)?fast=?(\d+)|-?(\d+)", t)
        if not m:
            raise argparse.ArgumentTypeError("bad level %r (examples: fast3, 1, 19, 22)" % t)
        if m.group(1):
            k = int(m.group(1))
            out.append((-k, ["--fast=%d" % k], "--fast=%d" % k))
        else:
            k = int(m.group(2))
            flags = (["--ultra"] if k > 19 else []) + ["-%d" % k]
            out.append((k, flags, " ".join(flags)))
    return out


def parse_choice_list(choices):
    def parse(text):
        items = [t.strip() for t in text.split(",") if t.strip()]
        bad = [t for t in items if t not in choices]
        if bad:
            raise argparse.ArgumentTypeError(
                "unknown %s (choose from %s)" % (", ".join(bad), ", ".join(choices)))
        return items
    return parse


def field(path: str, key: str, sep: str) -> str | None:
    """The value of the first line of PATH starting with KEY (after SEP), or None."""
    try:
        with open(path) as f:
            return next((line.split(sep, 1)[1].strip() for line in f if line.startswith(key)), None)
    except OSError:
        return None


def loadavg() -> list[str] | None:
    return open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else None


class Bench:
    """One run's arguments and state, handed to every section's run(bench): the arguments (a), the threads (N),
    the scratch folder (work), the corpus (main, slice, small: corpus.prepare), the outputs already verified by a
    round trip (refs: verification.py), the results (data); and how a command is shown in the report."""

    def __init__(self, a):
        self.a = a
        self.N = a.threads
        # scripts/bench holds a lock, so one fixed folder is safe (and gives readable commands)
        self.work = os.path.join(a.work_dir, "run")
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work, exist_ok=True)
        self.corpus_dir = a.corpus_dir
        os.makedirs(self.corpus_dir, exist_ok=True)
        self.weir_extra = shlex.split(a.weir_args) if a.weir_args else []
        # --weir-variant NAME=ARGS: weir with ARGS as a tool of its own (family weir:NAME).
        self.variants = []
        # NAME@PATH=ARGS: another weir binary (an earlier build, for before/after in one run).
        for v in a.weir_variant:
            name, _, args = v.partition("=")
            name, _, binary = name.partition("@")
            self.variants.append((name, shlex.split(args), binary or None))
        self.short = {a.weir: "weir", a.zstd: "zstd", a.pzstd: "pzstd"}
        self.refs = {}
        self.ncpu = os.cpu_count() or 1
        self.data = {"sections": {}, "corpus": {}}
        self.started = time.time()

    # --- display -----------------------------------------------------------
    def disp_path(self, p):
        if p in self.short:
            return self.short[p]
        if os.path.isabs(p) and p.startswith(ROOT + os.sep):
            return os.path.relpath(p, ROOT)
        return p

    def disp(self, argv, stdin=None, stdout=None, prefix=None):
        s = " ".join(shlex.quote(self.disp_path(x)) for x in argv)
        if prefix:
            s = self.disp_prefix(prefix) + " " + s
        if stdin:
            s += " < " + shlex.quote(self.disp_path(stdin))
        s += " > " + (shlex.quote(self.disp_path(stdout)) if stdout else "/dev/null")
        return s

    def disp_prefix(self, prefix):
        out = prefix
        for real, short in sorted(self.short.items(), key=lambda kv: -len(kv[0])):
            out = out.replace(shlex.quote(real), short)
        return out.replace(ROOT + os.sep, "")

    # --- meta ------------------------------------------------------------------
    def meta(self):
        a = self.a
        cpu, mem, osname = field("/proc/cpuinfo", "model name", ":"), field("/proc/meminfo", "MemTotal:", ":"), \
            field("/etc/os-release", "PRETTY_NAME=", "=")
        cpu, mem = cpu or "unknown", int(mem.split()[0]) * 1024 if mem else None
        osname = osname.strip('"') if osname else platform.system()
        git = output(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], stderr=False)
        dirty = output(["git", "-C", ROOT, "status", "--porcelain", "--", "Sources", "Package.swift"],
                           stderr=False)
        now = datetime.datetime.now(datetime.UTC)
        return {
            "date": now.strftime("%Y-%m-%d"),
            "datetime_utc": now.strftime("%Y-%m-%d %H:%M:%S UTC"),
            "nproc": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
            "cpu_model": cpu,
            "mem_bytes": mem,
            "kernel": platform.release(),
            "os": osname,
            "zstd_version": output([a.zstd, "-V"]),
            "pzstd_version": output([a.pzstd, "-V"]),
            "weir_version": output([a.weir, "--version"]),
            "weir_bin": os.path.relpath(a.weir, ROOT) if a.weir.startswith(ROOT + os.sep) else a.weir,
            "weir_args": a.weir_args or "",
            "git_commit": git + (" (Sources/ modified)" if dirty else ""),
            "python": platform.python_version(),
            "threads": self.N,
            "runs": a.runs,
            "small_runs": a.small_runs,
            "memory_runs": a.memory_runs,
            "quick": a.quick,
            "command": a.command_line or "scripts/bench",
            "time_format": TIME_FMT,
            "modes": a.modes,
            "outputs_synced": True,  # every file output timed until `sync` on it returns
            "loadavg_start": loadavg(),
        }

    # --- main ------------------------------------------------------------------
    def run(self):
        a = self.a
        corpus.prepare(self)
        self.data["meta"] = self.meta()
        log("bench: weir %s, %d threads, corpus %s (%s)" % (
            self.data["meta"]["weir_version"], self.N, self.disp_path(self.main), human(file_size(self.main))))
        try:
            for name in sections.NAMES:
                if name in a.sections:
                    sections.module(name).measure(self)
        finally:
            if not a.keep_work:
                shutil.rmtree(self.work, ignore_errors=True)
        self.data["meta"]["elapsed_seconds"] = time.time() - self.started
        loads = [r["other_load"] for sec in self.data["sections"].values() for c in sec.get("cases", [])
                 for r in c["runs"] if r.get("other_load") is not None]
        self.data["meta"]["other_load_median"] = median(loads)
        self.data["meta"]["other_load_max"] = max(loads) if loads else None
        self.data["meta"]["loadavg_end"] = loadavg()
        self.data["targets"] = compute_targets(self.data)
        return self.data


def unique_stem(out_dir, base):
    stem, i = base, 2
    while any(os.path.exists(os.path.join(out_dir, stem + ext)) for ext in (".md", ".json")):
        stem = "%s-%d" % (base, i)
        i += 1
    return stem


def publish(data, json_path, args):
    """Write the markdown report next to the JSON, and the chart into bench/work/charts/ (pictures stay out of
    git: the report says how to draw them again)."""
    stem = os.path.splitext(json_path)[0]
    chart_stem = os.path.join(ROOT, "bench", "work", "charts", os.path.basename(stem))
    os.makedirs(os.path.dirname(chart_stem), exist_ok=True)
    chart_files = []
    chart_cmd = [args.chart_python or sys.executable, os.path.join(HERE, "chart.py"), json_path, chart_stem]
    p = subprocess.run(chart_cmd, stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    if p.returncode == 0:
        chart_files = [x for x in p.stdout.split() if x]
    else:
        log("bench: warning: the chart failed (%s; it needs python3-matplotlib); the report is written anyway"
            % " ".join(chart_cmd))
    md_path = stem + ".md"
    with open(md_path, "w") as f:
        rel = os.path.relpath(json_path, ROOT) if json_path.startswith(ROOT + os.sep) else json_path
        f.write(report.document(data, os.path.basename(json_path), chart_files, json_rel=rel))
    return md_path, chart_files


def main():
    nproc = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    p = argparse.ArgumentParser(prog="scripts/bench", formatter_class=argparse.RawDescriptionHelpFormatter,
                                description=USAGE, epilog=sections.describe())
    p.add_argument("--quick", action="store_true",
                   help="check the harness in a few minutes: a 200 MB corpus (the tarball's head, or a tar of "
                        '/usr/include etc. when it is not cached), 1 run, 20 MB slice, 100 MB memory stream, 5 '
                        'small-file runs; results to bench/work/results/')
    p.add_argument("--runs", type=int, help='runs per case; the median is reported (default 3)')
    p.add_argument("--small-runs", type=int, help='runs of the small-file case (default 15; quick 5)')
    p.add_argument("--memory-runs", type=int, default=1,
                   help='runs per memory case (default 1: RSS barely varies)')
    p.add_argument("--threads", "-T", type=int, default=nproc,
                   help='N for -TN / -pN (default: nproc, here %(default)s)')
    p.add_argument("--sections", type=parse_choice_list(sections.NAMES), default=list(sections.DEFAULT),
                   help='comma list of sections to run (default: all but cluster, which starts Spark and Dask; see '
                        'below)')
    p.add_argument("--skip", type=parse_choice_list(sections.NAMES), default=[],
                   help='sections to leave out')
    p.add_argument("--modes", type=parse_choice_list(MODES), default=["file", "null", "stdio", "pipe"],
                   help='I/O modes of compress and decompress (default file,null,stdio,pipe; also pipenull, '
                        'overwrite): file = TOOL IN -o OUT, null = TOOL -c IN > /dev/null, stdio = TOOL < IN > OUT, '
                        'pipe = cat IN | TOOL > OUT, overwrite = TOOL -f IN -o OUT onto its own earlier output')
    p.add_argument("--levels", type=listed(int), default=[1, 19],
                   help='levels of the levels section (default 1,19)')
    p.add_argument("--level-modes", type=parse_choice_list(MODES), default=["file"],
                   help='modes of the levels section (default file)')
    p.add_argument("--scaling-threads", type=listed(int),
                   help='thread counts of scaling (default 1,2,4,...,N)')
    p.add_argument("--slice-size", type=parse_size,
                   help='the slice for levels 1 and 19 (default 100M; quick 20M)')
    p.add_argument("--small-size", type=parse_size, default=parse_size("5M"),
                   help='the small file (default 5M)')
    p.add_argument("--lean-size", type=parse_size,
                   help='lean: the slice for level 3 and the limit (default 300M; quick 50M)')
    p.add_argument("--adapt-size", type=parse_size, help='adapt: the input (default 1G; quick 50M)')
    p.add_argument("--adapt-rates", type=listed(parse_size), default=[20 * 10 ** 6, 100 * 10 ** 6, 400 * 10 ** 6, 0],
                   help='adapt: pv -L rates per second, 0 unthrottled (default 20M,100M,400M,0)')
    p.add_argument("--adapt-levels", type=listed(int), default=[1, 3, 5, 7, 9, 12],
                   help='adapt: the fixed levels beside --adapt (default 1,3,5,7,9,12)')
    p.add_argument("--lean-rss-size", type=parse_size, default=parse_size("20M"),
                   help='lean: the slice for peak RSS at each level (default 20M)')
    p.add_argument("--lean-levels", type=parse_lean_levels, default=parse_lean_levels("fast3,1,3,9,19,22"),
                   help='lean: levels (default fast3,1,3,9,19,22; fastN is --fast=N, above 19 --ultra)')
    p.add_argument("--lean-mode", choices=["null", "file"], default="null",
                   help="lean: the RSS rows' mode (default null)")
    p.add_argument("--quick-size", type=parse_size, default=parse_size("200M"),
                   help='the corpus with --quick (default 200M)')
    p.add_argument("--memory-sizes", type=listed(parse_size),
                   help='stream sizes of memory, e.g. 1G,10G (default 1G; quick 100M)')
    p.add_argument("--memory-scaling", action="store_true",
                   help='also the 10 GB stream (quick: 1 GB) for the flat-RSS target')
    p.add_argument("--ceiling-seconds", type=int,
                   help="zstd -b -i S of ceiling and lean's limit (default 3; quick 1)")
    p.add_argument("--corpus", help="FILE as the main corpus instead of the Linux tarball")
    p.add_argument("--tarball", default=os.path.join(ROOT, "bench", "corpus", "linux-6.1.tar"), help=argparse.SUPPRESS)
    p.add_argument("--corpus-dir", default=os.path.join(ROOT, "bench", "corpus"), help=argparse.SUPPRESS)
    p.add_argument("--work-dir", default=os.path.join(ROOT, "bench", "work"), help=argparse.SUPPRESS)
    p.add_argument("--out-dir", help='where results go (default bench/results; quick: bench/work/results)')
    p.add_argument("--label", default="", help="appended to the result files' names")
    p.add_argument("--weir-args", default="",
                   help="extra arguments of every weir command, e.g. '--chunk-size 4M'")
    p.add_argument("--weir-variant", action="append", default=[],
                   help='NAME=ARGS: weir with ARGS as a tool of its own in compress, decompress and tree '
                        '(repeatable); NAME@PATH=ARGS runs the binary at PATH')
    p.add_argument("--tree-rm", action="store_true", help='the tree with --rm (every tool)')
    p.add_argument("--tree-on-disk", action="store_true",
                   help="the tree's fresh ext4 on a loop file under bench/work (the disk), not /dev/shm")
    p.add_argument("--keep-work", action="store_true", help='keep the outputs under bench/work/')
    p.add_argument("--report-only", metavar="JSON",
                   help='re-render the report and chart from a results JSON')
    p.add_argument("--weir", default=os.environ.get("WEIR_BIN", os.path.join(ROOT, ".build-bench", "release", "weir")),
                   help=argparse.SUPPRESS)
    p.add_argument("--zstd", default=os.environ.get("ZSTD_BIN", "zstd"), help=argparse.SUPPRESS)
    p.add_argument("--pzstd", default=os.environ.get("PZSTD_BIN", "pzstd"), help=argparse.SUPPRESS)
    p.add_argument("--time", default=os.environ.get("TIME_BIN"), help=argparse.SUPPRESS)
    p.add_argument("--chart-python", default=os.environ.get("BENCH_CHART_PYTHON"), help=argparse.SUPPRESS)
    p.add_argument("--command-line", default=os.environ.get("BENCH_COMMAND_LINE"), help=argparse.SUPPRESS)
    p.add_argument("--parse-only", action="store_true", help=argparse.SUPPRESS)  # scripts/bench's early check
    a = p.parse_args()
    if a.parse_only:
        return

    if a.report_only:
        data = json.load(open(a.report_only))
        md, charts = publish(data, os.path.abspath(a.report_only), a)
        print(md)
        for c in charts:
            print(c)
        return

    # defaults that depend on --quick
    a.runs = a.runs or (1 if a.quick else 3)
    a.small_runs = a.small_runs or (5 if a.quick else max(15, a.runs))
    a.slice_size = a.slice_size or parse_size("20M" if a.quick else "100M")
    a.lean_size = a.lean_size or parse_size("50M" if a.quick else "300M")
    a.adapt_size = a.adapt_size or parse_size("50M" if a.quick else "1G")
    a.adapt_rates = [r or None for r in a.adapt_rates]  # 0: unthrottled
    a.ceiling_seconds = a.ceiling_seconds or (1 if a.quick else 3)
    a.memory_sizes = a.memory_sizes or [parse_size(x) for x in (("100M", "1G") if a.quick else ("1G", "10G"))][
        :1 + a.memory_scaling]
    a.scaling_threads = a.scaling_threads or [1 << i for i in range(a.threads.bit_length()) if 1 << i < a.threads] + [
        a.threads]
    a.sections = [s for s in a.sections if s not in a.skip]
    if a.runs < 1 or a.threads < 1:
        die("--runs and --threads must be at least 1")
    if a.runs < 3 and not a.quick:
        log("bench: warning: --runs %d; the issue asks for the median of at least 3" % a.runs)
    a.time = a.time or precise_timer(os.path.join(ROOT, "bench", "work"))
    for tool in (a.weir, a.zstd, a.pzstd, a.time):
        if not shutil.which(tool):
            die("%s not found" % tool)
    a.weir, a.zstd, a.pzstd, a.time = (os.path.abspath(shutil.which(t)) if os.sep in t else shutil.which(t)
                                       for t in (a.weir, a.zstd, a.pzstd, a.time))
    a.out_dir = a.out_dir or os.path.join(ROOT, "bench", "work" if a.quick else "", "results").replace("//", "/")
    os.makedirs(a.out_dir, exist_ok=True)

    data = Bench(a).run()
    base = data["meta"]["date"] + ("-quick" if a.quick else "") + \
        ("-" + re.sub(r"[^A-Za-z0-9._-]+", "-", a.label) if a.label else "")
    stem = unique_stem(a.out_dir, base)
    json_path = os.path.join(a.out_dir, stem + ".json")
    with open(json_path, "w") as f:
        json.dump(data, f, indent=1, sort_keys=False)
        f.write("\n")
    md, charts = publish(data, json_path, a)
    log("bench: done in %.0f s" % data["meta"]["elapsed_seconds"])
    failed = [c for s in data["sections"].values() for c in s.get("cases", []) if c["ok_runs"] < c["n_runs"]]
    for c in failed:
        log("bench: FAILED runs: %s %s %s" % (c["section"], c["tool"], c.get("mode")))
    print(md)
    print(json_path)
    for c in charts:
        print(c)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

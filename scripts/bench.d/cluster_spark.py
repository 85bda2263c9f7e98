"""scripts/bench's cluster section, Spark's half (issue 51): one weir file read by every core of a
Spark cluster through weir's Hadoop codec. Standalone:

    python3 scripts/bench.d/cluster_spark.py --corpus bench/corpus/linux-6.1.tar --weir .build/release/weir \\
        --runs 3 --json bench/results/DATE-cluster-spark.json --report bench/results/DATE-cluster-spark.md

or imported by runner.py (measure(runner)) and report.py (report(data)). Needs pyspark and a JDK
(scripts/harness/spark-test installs pyspark); builds the jar with hadoop/build. The cluster is real processes
on 127.0.0.1: a Spark standalone master and one worker with 2 cores (hadoop/tests/spark_cluster.py), started once
and stopped at the end.

Goals (issue 51, part 3), each against a peer measured in the same run, medians of --runs rounds, the cases of a
round alternating. Counting the tarball's lines (spark.read.text with lineSep "\\n", .count()):
  builtin   weir's file through weir's codec, split at frames, >= 1.5x as fast as Spark's own read of the same
            file (no codec jar: Spark's zstd reader, one partition);
  plain     and within 1.3x of the time to count the plain tarball.
Each session reads with Spark's default split size (spark.sql.files.maxPartitionBytes, 128 MiB) unless --split.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))  # weirtools

import timing
from timing import median, peak_rss_mib, standalone

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "hadoop", "tests"))

MiB = 1 << 20
GOALS = {"builtin": 1.5, "plain": 1.3}
CASES = ("weir's file, weir's codec (split at frames)", "weir's file, Spark's own zstd read",
         "plain tarball")




def line_truth(path):
    """Lines of the file split at '\\n', as Spark's text source with lineSep "\\n" counts them."""
    breaks, last = 0, b""
    with open(path, "rb") as f:
        while chunk := f.read(16 * MiB):
            breaks += chunk.count(b"\n")
            last = chunk[-1:]
    return breaks + (1 if last not in (b"", b"\n") else 0)


def executor_cpu_seconds(worker_pid):
    """User and system CPU seconds of the worker's children (the executor JVM) so far; 0 without one."""
    import psutil

    total = 0.0
    for child in psutil.Process(worker_pid).children(recursive=True):
        try:
            times = child.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


def count_lines(spark, path, worker_pid=None):
    """(seconds, partitions, lines, executor CPU seconds or None) of counting PATH's lines."""
    df = spark.read.option("lineSep", "\n").text(path)
    cpu = executor_cpu_seconds(worker_pid) if worker_pid else None
    started = time.perf_counter()
    count = df.count()
    seconds = time.perf_counter() - started
    if cpu is not None:
        cpu = executor_cpu_seconds(worker_pid) - cpu
    return seconds, df.rdd.getNumPartitions(), count, cpu


def session_main(master_url, jar, worker_pid, split, warm, cases):
    """One Spark session in this process (a clean driver: pyspark's builder keeps options, and a
    driver JVM keeps the classes, of earlier sessions): an untimed count of `warm`, then each
    (name, path) case timed; prints one JSON object."""
    from spark_cluster import session

    extra = {"spark.sql.files.maxPartitionBytes": split} if split else {}
    spark = session(master_url, jar or None, app="weir-bench-spark", extra=extra)
    spark.sparkContext.setLogLevel("ERROR")
    out = {"cases": []}
    try:
        count_lines(spark, warm)  # executors up, JIT warm
        for name, path in cases:
            seconds, parts, count, cpu = count_lines(spark, path, worker_pid)
            out["cases"].append({"name": name, "seconds": seconds, "partitions": parts, "lines": count,
                                 "executor_cpu_s": cpu})
        import psutil

        peaks = []
        for child in psutil.Process(worker_pid).children(recursive=True):  # the executor JVM
            peak = peak_rss_mib(child.pid)
            if peak:
                peaks.append(peak)
        out["executor_peak_rss_mib"] = round(max(peaks or [0]), 1)
    finally:
        spark.stop()
    print(json.dumps(out), flush=True)


def measure_cases(corpus, weir, work, jar=None, runs=3, split=None, log=print):
    """Every case of the section, `runs` rounds; returns the data report() draws."""
    from spark_cluster import StandaloneCluster

    os.makedirs(work, exist_ok=True)
    if jar is None:
        jar = subprocess.run([os.path.join(ROOT, "hadoop", "build"), "--out", work], check=True,
                             capture_output=True, text=True).stdout.strip()
    size = os.path.getsize(corpus)
    packed = timing.packed(weir, corpus, work)
    expected = line_truth(corpus)
    warm = os.path.join(work, "warm.txt")  # each session's untimed first read: executors up, JIT warm
    with open(corpus, "rb") as src, open(warm, "wb") as dst:
        dst.write(src.read(64 * MiB))
    data = {"corpus": corpus, "corpus_bytes": size, "weir_file_bytes": os.path.getsize(packed), "runs": runs,
            "split": split or "Spark's default", "machine": platform.node(), "cpus": os.cpu_count(),
            "python": platform.python_version(), "jar": os.path.basename(jar), "expected_lines": expected,
            "loads": [], "checks": [], "lines": {}, "executor_peak_rss_mib": {}}
    times = {name: [] for name in CASES}
    cpus = {name: [] for name in CASES}
    partitions = {}
    with StandaloneCluster(cores=2, work=os.path.join(work, "cluster")) as cluster:
        def in_session(with_jar, cases):
            """A session in a new Python process: weir's (the jar and its setting) or Spark's alone."""
            spec = json.dumps({"master_url": cluster.master_url, "jar": jar if with_jar else "",
                               "worker_pid": cluster.procs[1].pid, "split": split, "warm": warm, "cases": cases})
            done = subprocess.run([sys.executable, os.path.abspath(__file__), "--session", spec],
                                  capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise RuntimeError(f"a Spark session failed ({done.returncode}):\n{done.stderr[-3000:]}")
            result = json.loads(done.stdout.strip().splitlines()[-1])
            for case in result["cases"]:
                times[case["name"]].append(case["seconds"])
                cpus[case["name"]].append(case["executor_cpu_s"])
                partitions[case["name"]] = case["partitions"]
                if case["lines"] != expected:
                    data["checks"].append(f"{case['name']}: {case['lines']} lines, the corpus has {expected}")
                log(f"cluster_spark: {case['name']}: {case['seconds']:.2f} s, {case['partitions']} partitions")
            key = "weir's codec session" if with_jar else "Spark-only session"
            peaks = data["executor_peak_rss_mib"]
            peaks[key] = max(result["executor_peak_rss_mib"], peaks.get(key, 0))

        for round_number in range(runs):
            log(f"cluster_spark: round {round_number + 1} of {runs}")
            data["loads"].append(round(os.getloadavg()[0], 2))
            forward = round_number % 2 == 0
            for with_jar in ([True, False] if forward else [False, True]):
                if with_jar:
                    in_session(True, [(CASES[0], packed), (CASES[2], corpus)][:: 1 if forward else -1])
                else:
                    in_session(False, [(CASES[1], packed)])
    data["lines"] = {name: {"median_s": median(values), "runs": values, "partitions": partitions.get(name),
                            "mb_s": size / median(values) / 1e6, "executor_cpu_s": median(cpus[name])}
                     for name, values in times.items()}
    split_s = data["lines"][CASES[0]]["median_s"]
    data["goals"] = {"builtin": data["lines"][CASES[1]]["median_s"] / split_s,
                     "plain": split_s / data["lines"][CASES[2]]["median_s"]}
    os.unlink(packed)
    os.unlink(warm)
    return data


def report(data):
    """The section's report, in Markdown."""
    goals = data["goals"]
    builtin_met = goals["builtin"] >= GOALS["builtin"]
    plain_met = goals["plain"] <= GOALS["plain"]
    out = [
        (f"Corpus {os.path.basename(data['corpus'])}: {data['corpus_bytes']:,} bytes, {data['expected_lines']:,} "
        f"lines at '\\n'; its weir file (weir -T2, level 3, 8 MiB frames): {data['weir_file_bytes']:,} bytes. "
        f"A Spark standalone master and one 2-core worker on 127.0.0.1, {data['cpus']} cores; split size: "
        f"{data['split']}; jar {data['jar']}. Medians of {data['runs']} rounds; 1-minute load average at each "
        f"round's start: {data['loads']}."),
        "",
        "| goal | measured | verdict |",
        "| --- | --: | --- |",
        (f"| counting lines: weir's codec, split, vs Spark's own one-partition read of the same file | "
         f"{goals['builtin']:.2f}x as fast | {'met' if builtin_met else 'MISSED'} (>= {GOALS['builtin']}) |"),
        (f"| counting lines: weir's codec vs the plain tarball | {goals['plain']:.2f}x the time | "
         f"{'met' if plain_met else 'MISSED'} (<= {GOALS['plain']}) |"),
        "",
        ("| spark.read.option(\"lineSep\", \"\\n\").text(F).count() | partitions | median s | MB/s of content | "
         "executor CPU s | runs s |"),
        "| --- | --: | --: | --: | --: | --- |",
    ]
    for name, row in data["lines"].items():
        cpu = row.get("executor_cpu_s")
        out.append(f"| {name} | {row['partitions']} | {row['median_s']:.2f} | {row['mb_s']:.0f} | "
                   f"{'-' if cpu is None else f'{cpu:.2f}'} | {', '.join(f'{v:.2f}' for v in row['runs'])} |")
    out += ["", f"Peak RSS of the executor JVM (MiB): {data['executor_peak_rss_mib']}."]
    if data["checks"]:
        out += ["", "Checks that FAILED:", *[f"- {check}" for check in data["checks"]]]
    else:
        out += ["", f"Checks: every read counted the corpus's {data['expected_lines']:,} lines."]
    return "\n".join(out) + "\n"


def measure(runner, busy_seconds=None):
    """For runner.py: measures on its corpus and weir, into runner.data['sections']['cluster_spark']."""
    a = runner.a
    corpus = getattr(a, "corpus", None) or os.path.join(ROOT, "bench", "corpus", "linux-6.1.tar")
    runner.data["sections"]["cluster_spark"] = measure_cases(corpus, a.weir, os.path.join(runner.work, "cluster-spark"),
                                                       runs=a.runs)


def main(argv=None):
    parser = timing.standalone_parser(__doc__, "cluster-spark")
    parser.add_argument("--jar", help="the codec's jar (default: built by hadoop/build into --work)")
    parser.add_argument("--split", help="spark.sql.files.maxPartitionBytes for every read (default: Spark's)")
    parser.add_argument("--session", help=argparse.SUPPRESS)  # internal: one session, JSON in and out
    args = parser.parse_args(argv)
    if args.session:
        spec = json.loads(args.session)
        session_main(spec["master_url"], spec["jar"], spec["worker_pid"], spec["split"], spec["warm"],
                     [tuple(case) for case in spec["cases"]])
        return 0
    data = measure_cases(args.corpus, args.weir, args.work, jar=args.jar, runs=args.runs, split=args.split,
                   log=lambda m: print(m, file=sys.stderr, flush=True))
    return standalone(data, report(data), args.json, args.report)


if __name__ == "__main__":
    sys.exit(main())

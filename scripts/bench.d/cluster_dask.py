"""scripts/bench's cluster section, Dask's half (issue 52): weir's files split by Dask through the weir:// protocol,
random access in an open process, and one file compressed on two Dask workers. Standalone:

    python3 scripts/bench.d/cluster_dask.py --corpus bench/corpus/linux-6.1.tar --weir .build/release/weir \\
        --runs 3 --json bench/results/DATE-cluster-dask.json --report bench/results/DATE-cluster-dask.md

or a section of scripts/bench (sections.py: measure(bench), report(data)). Needs the weir Python package and
Dask (scripts/harness/python-test installs them). The cluster is real processes on 127.0.0.1: `dask scheduler`
and `dask worker --nworkers 2 --nthreads 1` (weir.localcluster), started once and stopped at the end.

Goals (issue 52, part 4), each against a peer measured in the same run, medians of --runs rounds, the cases of a
round alternating:
  lines     counting the tarball's lines with dask.bag.read_text("weir::FILE.zst", blocksize=64 MiB) on the
            2 workers >= 1.5x as fast as a one-partition read of the same file (dask's own zstd reader,
            compression="zstd"; also weir:// with blocksize=None, and the plain tarball in 64 MiB blocks);
  seek      a seek to 1 GB and a 1 MiB read <= 30 ms in an open process (the index built from the table on
            open, no frame cached); peers pyzstd's SeekableZstdFile and weir -d --range (a new process);
  compress  weir.dask.compress (its own block size: SRC over the worker threads) on the 2 workers >= 0.8x
            as fast as weir -T2 file->file on one machine, the output byte for byte the same (checked every run).
"""

from __future__ import annotations

import os
import platform
import resource
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))  # weirtools

import timing
from timing import median, peak_rss_mib, standalone

MiB = 1 << 20
GOALS = {"lines": 1.5, "seek_ms": 30.0, "compress": 0.8}




def _workerpeak_rss_mib(processes):
    """Peak RSS (MiB) of each worker process of the cluster (the nanny's children)."""
    import psutil

    peaks = []
    for process in processes:
        try:
            for child in psutil.Process(process.pid).children(recursive=True):
                if "worker" in " ".join(child.cmdline()) or child.name().startswith("python"):
                    peak = peak_rss_mib(child.pid)
                    if peak:
                        peaks.append(round(peak, 1))
        except psutil.Error:
            continue
    return peaks


def _load():
    return os.getloadavg()[0]


def count_lines(url, blocksize, compression=None):
    import dask.bag

    bag = dask.bag.read_text(url, blocksize=blocksize, compression=compression, encoding="latin-1")
    return bag.npartitions, bag.count().compute()


def seek_weir(path, offset):
    """open + seek + 1 MiB read through weir://, the index cache emptied first (as a new file would be)."""
    import fsspec
    import weir.filesystem

    weir.filesystem._index_cache.clear()
    started = time.perf_counter()
    with fsspec.open(f"weir::{path}", "rb") as handle:
        handle.seek(offset)
        data = handle.read(MiB)
    return time.perf_counter() - started, data


def seek_weir_open(handle, offset):
    """seek + 1 MiB read in a weir:// file already open, its frames' cache emptied."""
    handle._frames.clear()
    started = time.perf_counter()
    handle.seek(offset)
    data = handle.read(MiB)
    return time.perf_counter() - started, data


def seek_pyzstd(path, offset):
    import pyzstd

    started = time.perf_counter()
    with pyzstd.SeekableZstdFile(path, "rb") as handle:
        handle.seek(offset)
        data = handle.read(MiB)
    return time.perf_counter() - started, data


def seek_cli(weir, path, offset):
    started = time.perf_counter()
    data = subprocess.run([weir, "-d", "-q", f"--range={offset}:+{MiB}", "-c", path], capture_output=True,
                          check=True).stdout
    return time.perf_counter() - started, data


def timed_process(command):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, check=True, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_maxrss / 1024, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure_cases(corpus, weir, work, runs=3, workers=2, blocksize=64 * MiB, seek_offset=10 ** 9, log=print,
            one_partition_weir=False):
    """Every case of the section, `runs` rounds; returns the data report() draws."""
    from weir.dask import compress
    from weir.localcluster import LocalProcessCluster

    os.makedirs(work, exist_ok=True)
    size = os.path.getsize(corpus)
    if seek_offset + MiB > size:
        seek_offset = size // 2  # a corpus too small for the offset (a slice): its middle
    packed = timing.packed(weir, corpus, work)
    with open(corpus, "rb") as plain:
        plain.seek(seek_offset)
        expected_range = plain.read(MiB)
    data = {"corpus": corpus, "corpus_bytes": size, "weir_file_bytes": os.path.getsize(packed), "runs": runs,
            "workers": workers, "blocksize": blocksize, "seek_offset": seek_offset, "machine": platform.node(),
            "cpus": os.cpu_count(), "python": platform.python_version(), "lines": {}, "seek": {}, "compress": {},
            "loads": [], "checks": []}
    lines = {"weir:// 64 MiB blocks, 2 workers": [], "dask zstd, 1 partition": [],
             "weir://, 1 partition": [], "plain tarball, 64 MiB blocks": []}
    if not one_partition_weir:
        del lines["weir://, 1 partition"]
    counts = {}
    seek = {"weir:// open+seek+read": [], "weir:// seek+read (open file)": [], "pyzstd SeekableZstdFile": [],
            "weir -d --range (new process)": []}
    comp = {"weir.dask.compress, 2 workers": [], "weir -T2 file->file": []}
    rss = {"weir -T2 file->file": []}
    cluster = LocalProcessCluster(workers=workers, path=[os.path.dirname(os.path.abspath(weir))])
    with cluster as address:
        from distributed import Client

        with Client(address) as client:
            for round_number in range(runs):
                log(f"cluster_dask: round {round_number + 1} of {runs}")
                data["loads"].append(round(_load(), 2))
                for name, call in [
                    ("weir:// 64 MiB blocks, 2 workers", lambda: count_lines(f"weir::{packed}", blocksize)),
                    ("dask zstd, 1 partition", lambda: count_lines(packed, None, "zstd")),
                    ("weir://, 1 partition", lambda: count_lines(f"weir::{packed}", None)),
                    ("plain tarball, 64 MiB blocks", lambda: count_lines(corpus, blocksize)),
                ][:: 1 if round_number % 2 == 0 else -1]:
                    if name not in lines:
                        continue
                    started = time.perf_counter()
                    partitions, count = call()
                    lines[name].append(time.perf_counter() - started)
                    counts[name] = (partitions, count)
                for name, call in [
                    ("weir:// open+seek+read", lambda: seek_weir(packed, seek_offset)),
                    ("pyzstd SeekableZstdFile", lambda: seek_pyzstd(packed, seek_offset)),
                    ("weir -d --range (new process)", lambda: seek_cli(weir, packed, seek_offset)),
                ]:
                    for _ in range(5):  # five of each per round: they are short
                        seconds, got = call()
                        seek[name].append(seconds)
                        if got != expected_range:
                            data["checks"].append(f"{name}: the range at {seek_offset} differs from the corpus")
                import fsspec

                with fsspec.open(f"weir::{packed}", "rb") as handle:
                    for _ in range(5):
                        seconds, got = seek_weir_open(handle, seek_offset)
                        seek["weir:// seek+read (open file)"].append(seconds)
                        if got != expected_range:
                            data["checks"].append("open file: the range differs from the corpus")
                reference = os.path.join(work, "reference.zst")
                distributed_out = os.path.join(work, "distributed.zst")
                for name in (list(comp) if round_number % 2 == 0 else list(comp)[::-1]):
                    for path in (reference, distributed_out):
                        if name.startswith("weir -T2") == (path == reference) and os.path.exists(path):
                            os.unlink(path)
                    if name.startswith("weir -T2"):
                        wall, peak, _cpu = timed_process([weir, "-q", "-T2", corpus, "-o", reference])
                        comp[name].append(wall)
                        rss[name].append(peak)
                    else:
                        # compress's own block size: SRC over the workers' threads, in whole frames
                        # (64 MiB tasks cost 1.8x: a weir process, a pipe and a part each).
                        result = compress(corpus, distributed_out, client=client)
                        data.setdefault("compress_tasks", result.parts)
                        comp[name].append(result.seconds)
                with open(reference, "rb") as one, open(distributed_out, "rb") as other:
                    same = True
                    while same:
                        a, b = one.read(16 * MiB), other.read(16 * MiB)
                        same = a == b
                        if not a:
                            break
                if not same:
                    data["checks"].append(f"round {round_number + 1}: the distributed output differs from weir -T2's")
                data["compress_identical"] = data.get("compress_identical", True) and same
            data["worker_peak_rss_mib"] = _workerpeak_rss_mib(cluster.processes)
    if len({count for _, count in counts.values()}) != 1:
        data["checks"].append(f"line counts differ: {counts}")
    data["line_counts"] = {name: {"partitions": p, "lines": c} for name, (p, c) in counts.items()}
    data["lines"] = {name: {"median_s": median(values), "runs": values} for name, values in lines.items()}
    data["seek"] = {name: {"median_ms": median(values) * 1000, "runs_ms": [v * 1000 for v in values]}
                    for name, values in seek.items()}
    data["compress"] = {name: {"median_s": median(values), "runs": values,
                               "mb_s": size / median(values) / 1e6} for name, values in comp.items()}
    data["compress"]["weir -T2 file->file"]["peak_rss_mib"] = median(rss["weir -T2 file->file"])
    split = data["lines"]["weir:// 64 MiB blocks, 2 workers"]["median_s"]
    data["goals"] = {
        "lines": data["lines"]["dask zstd, 1 partition"]["median_s"] / split,
        "lines_weir_one_partition": data["lines"]["weir://, 1 partition"]["median_s"] / split
        if "weir://, 1 partition" in data["lines"] else None,
        "lines_vs_plain": split / data["lines"]["plain tarball, 64 MiB blocks"]["median_s"],
        "seek_ms": data["seek"]["weir:// open+seek+read"]["median_ms"],
        "compress": data["compress"]["weir -T2 file->file"]["median_s"]
        / data["compress"]["weir.dask.compress, 2 workers"]["median_s"],
    }
    for path in (packed, os.path.join(work, "reference.zst"), os.path.join(work, "distributed.zst")):
        if os.path.exists(path):
            os.unlink(path)
    return data


def report(data):
    """The section's part of the report, in Markdown, from data["sections"]["cluster_dask"] (or, standalone, from
    what measure_cases() returned)."""
    data = data["sections"]["cluster_dask"] if "sections" in data else data
    goals = data["goals"]

    def verdict(name, value, at_least=True):
        goal = GOALS[name]
        met = value >= goal if at_least else value <= goal
        return f"{'met' if met else 'MISSED'} ({value:.2f} {'>=' if at_least else '<='} {goal})"

    out = [
        f"Corpus {os.path.basename(data['corpus'])}: {data['corpus_bytes']:,} bytes; its weir file (weir -T2, "
        f"level 3): {data['weir_file_bytes']:,} bytes. {data['workers']} Dask workers (dask worker --nworkers "
        f"{data['workers']} --nthreads 1) and the scheduler on 127.0.0.1, {data['cpus']} cores. Medians of "
        f"{data['runs']} rounds; 1-minute load average at each round's start: {data['loads']}.",
        "",
        "| goal | measured | verdict |",
        "| --- | --: | --- |",
        f"| counting lines: weir:// in 64 MiB blocks on 2 workers vs dask's one-partition zstd read | "
        f"{goals['lines']:.2f}x | {verdict('lines', goals['lines'])} |",
        f"| a seek to 1 GB and a 1 MiB read in an open process (open, index, decode) | {goals['seek_ms']:.1f} ms | "
        f"{verdict('seek_ms', goals['seek_ms'], at_least=False)} |",
        f"| compression on 2 workers vs weir -T2 on one machine (identical output: "
        f"{'yes' if data.get('compress_identical') else 'NO'}) | {goals['compress']:.2f}x | "
        f"{verdict('compress', goals['compress'])} |",
        "",
        "| counting the lines (dask.bag.read_text(...).count()) | partitions | median s | runs s |",
        "| --- | --: | --: | --- |",
    ]
    for name, row in data["lines"].items():
        partitions = data["line_counts"][name]["partitions"]
        out.append(f"| {name} | {partitions} | {row['median_s']:.2f} | "
                   f"{', '.join(f'{v:.2f}' for v in row['runs'])} |")
    one = goals.get("lines_weir_one_partition")
    out += ["", f"Every case counted {next(iter(data['line_counts'].values()))['lines']:,} lines; weir:// split "
            + (f"is {one:.2f}x as fast as weir:// in one partition and " if one else "")
            + f"takes {goals['lines_vs_plain']:.2f}x the plain tarball's time.", "",
            f"| 1 MiB at {data['seek_offset']:,} | median ms | runs ms |", "| --- | --: | --- |"]
    for name, row in data["seek"].items():
        out.append(f"| {name} | {row['median_ms']:.1f} | {', '.join(f'{v:.1f}' for v in row['runs_ms'])} |")
    out += ["", "| compressing the corpus, level 3 | median s | MB/s | runs s | peak RSS MiB |",
            "| --- | --: | --: | --- | --: |"]
    for name, row in data["compress"].items():
        peak = row.get("peak_rss_mib")
        out.append(f"| {name} | {row['median_s']:.2f} | {row['mb_s']:.0f} | "
                   f"{', '.join(f'{v:.2f}' for v in row['runs'])} | {f'{peak:.1f}' if peak else '—'} |")
    out += ["", f"Peak RSS of the Dask worker processes over the whole section (MiB): "
            f"{data.get('worker_peak_rss_mib')}."]
    if data["checks"]:
        out += ["", "Checks that FAILED:", *[f"- {check}" for check in data["checks"]]]
    else:
        out += ["", "Checks: every range equal to the corpus's bytes, every line count equal, the distributed "
                    "output byte for byte weir -T2's in every round."]
    return "\n".join(out) + "\n"


def measure(bench):
    """For runner.py (sections.py): measures on bench.main with bench.a.weir, bench.a.runs rounds, into
    bench.data["sections"]["cluster_dask"]."""
    results = measure_cases(os.path.abspath(bench.main), os.path.abspath(bench.a.weir),
                      os.path.join(bench.work, "cluster-dask"), runs=bench.a.runs,
                      log=lambda message: print("bench: " + message, file=sys.stderr, flush=True))
    bench.data["sections"]["cluster_dask"] = {"title": "Dask: weir's files split, and compressed on 2 workers",
                                              **results}


def main(argv=None):
    parser = timing.standalone_parser(__doc__, "cluster-dask")
    parser.add_argument("--one-partition-weir", action="store_true",
                        help="also count through weir:// in one partition (slow: as dask's own zstd read)")
    args = parser.parse_args(argv)
    data = measure_cases(os.path.abspath(args.corpus), os.path.abspath(args.weir), args.work, runs=args.runs,
                         log=lambda m: print(m, file=sys.stderr), one_partition_weir=args.one_partition_weir)
    return standalone(data, report(data), args.json, args.report)


if __name__ == "__main__":
    sys.exit(main())

"""scripts/bench's memory section: peak RSS compressing a stream generated through a pipe (1 GB; 10 GB with
--memory-scaling), each output checked with sha256."""

import os
import shlex
import subprocess

import harness
from corpus import sha256_file
from formatting import col, commands, f_ratio, grouped, human, spec_table, vs
from timing import log
from weirtools.tables import render


def stream_prefix(bench, size):
    return "while cat %s; do :; done | head -c %d |" % (shlex.quote(bench.main), size)


def stream_digest(bench, size: int) -> str:
    """sha256 of the SIZE-byte stream, computed once and cached beside the corpus."""
    cache = os.path.join(bench.corpus_dir, "stream-%s-%d-%s.sha256" % (
        os.path.splitext(os.path.basename(bench.main))[0], size, sha256_file(bench.main)[:12]))
    if not os.path.exists(cache):
        log("bench: checksum of the %s generated stream (once, cached)" % human(size))
        p = subprocess.run(["bash", "-c", stream_prefix(bench, size) + " sha256sum"], stdout=subprocess.PIPE,
                           text=True, check=True)
        with open(cache, "w") as f:
            f.write(p.stdout.split()[0] + "\n")
    with open(cache) as f:
        return f.read().strip()


def measure(bench):
    harness.grid(bench, "memory", "Peak memory on a generated stream through a pipe, level 3", [
        ("pipe", bench.main, harness.comp_tools(bench, with_single=False), {
            "level": 3, "threads": bench.N, "group": "%s pipe" % human(size), "data_bytes": size, "verify": "stream",
            "feed": stream_prefix(bench, size), "extra": {"input": "generated stream (%s)" % human(size),
                                                          "stream_bytes": size,
                                                          "stream_sha256": stream_digest(bench, size)}})
        for size in bench.a.memory_sizes], bench.a.memory_runs,
        notes=["The stream repeats the main corpus: `%s`." % bench.disp_prefix(
            "while cat %s; do :; done | head -c SIZE |" % shlex.quote(bench.main))])


def report(data):
    s = data["sections"]["memory"]
    cs, cols = s["cases"], ("Peak RSS MiB", "MB/s", "Wall s", "CPU s", "Output bytes", "Runs ok")
    flat = [[fc[0]["tool"], "%s → %s" % (human(fc[0]["stream_bytes"]), human(fc[-1]["stream_bytes"])),
             f_ratio(vs(fc[-1], fc[0], "rss_kb"), 3)] for fc in (sorted(g, key=lambda c: c["stream_bytes"]) for g in
                                                              grouped(cs, lambda c: c["family"]).values()) if fc[1:]]
    out = spec_table(cs, [("Stream", lambda c: human(c["stream_bytes"])), *col("Tool", *cols)])
    out += ("\nRSS growth with the stream size (1.00× is flat):\n\n" + render(["Tool", "Streams", "RSS ratio"], flat)
            if flat else "\nOnly one stream size: run with `--memory-scaling` to compare 1 GB with 10 GB.\n")
    return out + "".join("\n" + note + "\n" for note in s.get("notes", [])) + "\n" + commands(cs)

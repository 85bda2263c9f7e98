"""scripts/bench's ceiling section: libzstd's one-core speed in memory (zstd -b3 -T1), N copies of it at once, and weir
-TN -> /dev/null in the same rounds. at_once and limit_run also make the lean section's limit."""

import re
import shlex
import subprocess
import time

import harness
import verification
from corpus import warm
from formatting import MODE_TITLE, f_mbps, f_num, find, med, per_round, ratio
from timing import log, median
from weirtools.tables import render

CEILING_PAT = re.compile(r"(\d+)\s*->\s*(\d+)\s*\(x?\s*([\d.]+)\)\s*,\s*([\d.]+)\s*MB/s\s*,\s*([\d.]+)\s*MB/s")


def ceiling_argv(bench, path):
    """libzstd's one-core speed on PATH in memory, level 3: compression and decompression."""
    return [bench.a.zstd, "-b3", "-e3", "-i%d" % bench.a.ceiling_seconds, "-T1", path]


def at_once(bench, argv, count):
    """Runs `count` copies of argv (a zstd -b) together; each one's output
    and its last result line (src, dst, ratio, comp, dec), None when it failed."""
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
             for _ in range(count)]
    results = []
    for p in procs:
        text = p.communicate()[0].decode("utf-8", "replace")
        hits = CEILING_PAT.findall(text)
        results.append((text, hits[-1] if p.returncode == 0 and hits else None))
    return results


def limit_run(bench, argv, count):
    """One measurement of the limit: `count` copies of argv at once, their
    compression and decompression MB/s added up."""
    found = [hit for _, hit in at_once(bench, argv, count)]
    if None in found:
        return {"ok": False}
    return {"ok": True, "comp_mbps": sum(float(f[3]) for f in found),
            "dec_mbps": sum(float(f[4]) for f in found),
            "each_comp_mbps": [float(f[3]) for f in found], "each_dec_mbps": [float(f[4]) for f in found]}


def measure(bench):
    a = bench.a
    argv = ceiling_argv(bench, bench.main)
    log("bench: section ceiling: %s" % " ".join(map(bench.disp_path, argv)))
    t0 = time.time()
    warm(bench.main)
    # weir -TN → /dev/null runs in the same rounds, between the ceiling's
    # own runs, so that the fraction of the ceiling compares figures taken
    # at the same time (this VM's speed drifts by a third within minutes).
    fam, tool, base = harness.comp_tools(bench, with_single=False)[0]
    weir = harness.make_case(bench, "ceiling", "compress", fam, tool, base, "null", bench.main, level=3,
                             threads=bench.N, group="ceiling")
    weir["runs"] = []
    runs = []
    for rnd in range(a.runs):
        [(text, found)] = at_once(bench, argv, 1)
        if not found:
            runs.append({"ok": False, "error": text[-300:]})
            log("  ceiling FAILED: %s" % text[-300:])
            continue
        src, dst, ratio, comp, dec = found
        runs.append({"ok": True, "comp_mbps": float(comp), "dec_mbps": float(dec),
                     "ratio": float(ratio), "in_bytes": int(src), "out_bytes": int(dst)})
        log("  ceiling    zstd -b3 -T1: compress %s MB/s, decompress %s MB/s (one core)" % (comp, dec))
        harness.one_run(bench, weir, rnd)
    ok = [r for r in runs if r["ok"]]
    harness.verify_once(bench, weir)
    harness.summarize(weir)
    verification.drop_refs(bench)
    # What N cores give N one-core processes at once: on a VM whose cores
    # share a physical core or its caches, less than N times one alone.
    together = []
    if bench.N > 1:
        for _ in range(a.runs):
            r = limit_run(bench, argv, bench.N)
            together.append({k: v for k, v in r.items() if not k.startswith("each_")})
            if not r["ok"]:
                log("  ceiling    %d at once FAILED" % bench.N)
                continue
            log("  ceiling    %d x zstd -b3 -T1 at once: compress %.0f MB/s, decompress %.0f MB/s together"
                % (bench.N, r["comp_mbps"], r["dec_mbps"]))
    both = [r for r in together if r["ok"]]
    bench.data["sections"]["ceiling"] = {
        "title": "In-memory ceiling (libzstd, one core, level 3)",
        "cmd": " ".join(shlex.quote(bench.disp_path(x)) for x in argv),
        "threads": bench.N, "runs": runs, "cases": [harness.public(weir)],
        "single_comp_mbps": median(r["comp_mbps"] for r in ok),
        "single_dec_mbps": median(r["dec_mbps"] for r in ok),
        "together_runs": together,
        "together_comp_mbps": median(r["comp_mbps"] for r in both),
        "together_dec_mbps": median(r["dec_mbps"] for r in both),
        "seconds": time.time() - t0,
    }


def report(data):
    s = data["sections"]["ceiling"]
    n, single, dsingle = s["threads"], s.get("single_comp_mbps"), s.get("single_dec_mbps")
    ceil, dceil = n * single if single else None, n * dsingle if dsingle else None
    at_once = "%d × zstd -b3 -T1 at the same time, together" % n
    c, lim = find(data, "ceiling", family="weir"), find(data, "decompress", family="limit")
    comp = ([(at_once, s["together_comp_mbps"])] if s.get("together_comp_mbps") else []) + (
        [("%s, %s, in the same rounds" % (c["tool"], MODE_TITLE["null"]), med(c, "mbps"))] if c else []) + [
        ("%s, %s" % (c["tool"], MODE_TITLE[c["mode"]]), med(c, "mbps")) for c in (
            find(data, "compress", family=f, mode=m) for f, m in (("weir", "null"), ("weir", "file"), ("zstd", "null"),
                                                                  ("pzstd", "null"))) if c]
    dec = ([(at_once + ", decompress", s["together_dec_mbps"])] if s.get("together_dec_mbps") else []) + (
        [("Page cache's write limit: %s to a file, until on disk" % lim["tool"], med(lim, "mbps"))] if lim else []) + [
        ("%s on %s, file→/dev/null" % (c["tool"], c["source_label"]), med(c, "mbps")) for c in (
            find(data, "decompress", source=src, family="weir", mode="null") for src in ("weir", "zstd")) if c]
    rows = ([["libzstd, one core, compress (zstd -b3 -T1)", f_mbps(single), ""],
             ["libzstd, one core, decompress", f_mbps(dsingle), ""],
             ["**Compression ceiling, %d cores**" % n, f_mbps(ceil), "1.00"]] +
            [[label, f_mbps(v), f_num(ratio(v, ceil))] for label, v in comp] +
            [["Decompression ceiling, %d cores (weir's own frames)" % n, f_mbps(dceil), "1.00"]] +
            [[label, f_mbps(v), f_num(ratio(v, dceil))] for label, v in dec])
    return (render(["", "MB/s", "Fraction of ceiling"], rows) +
            "\nSingle-core figures are the median over %d run(s) of `%s` (compress/decompress MB/s per run: %s)%s.\n"
            % (len(s["runs"]), s["cmd"], per_round(s["runs"]), "; the at-the-same-time rows, %d copies of it started "
               "together, their figures added up (%s)" % (n, per_round(s["together_runs"])) if s.get("together_runs")
               else ""))

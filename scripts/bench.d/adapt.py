"""scripts/bench's adapt section (issue 40): weir --adapt against fixed levels and zstd --adapt -TN, each writing
to standard output through `pv -q -L RATE` into /dev/null, at several rates and unthrottled. runner.py calls
run(bench), report.py render(data), targets.py ratios(data); no third-party modules.

Each round runs every case once, in order (rate by rate, tools alternating); a case's wall is the median of its
rounds. weir --adapt runs with -v, and its level changes ("--adapt: level A → B at SIZE (S s)") are kept per run:
the report draws the levels over time from the median run. One untimed run per rate checks weir --adapt's output
(zstd -d | cmp against the input)."""

import os
import re
import resource
import shlex
import statistics
import subprocess
import sys
import time

from corpus import describe, head
from formatting import f_num, table
from timing import busy_seconds as machine_busy_seconds

STEP = 0.25  # seconds per column of the levels over time
CHANGE = re.compile(r"--adapt: level (-?\d+) → (-?\d+) at .*\(([\d.]+) s\)")


def rate_label(rate):
    return "unthrottled" if rate is None else "%d MB/s" % (rate // 10 ** 6)


def shell(producer, rate):
    """PRODUCER's standard output through pv at RATE bytes/s (None: no limit) into /dev/null."""
    limit = "" if rate is None else " -L %d" % rate
    return "%s | pv -q%s > /dev/null" % (producer, limit)


def run_once(script, stderr_path, busy_seconds=None):
    """Runs SCRIPT under bash; wall seconds, the pipeline's CPU (every process of it, from getrusage) and the
    share of the machine's CPU other processes took meanwhile (busy_seconds: timing.py's /proc/stat reader)."""
    ncpu = os.cpu_count() or 1
    with open(stderr_path, "wb") as err:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        b0 = busy_seconds() if busy_seconds else None
        t0 = time.perf_counter()
        p = subprocess.run(["bash", "-o", "pipefail", "-c", script], stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=err)
        wall = time.perf_counter() - t0
        b1 = busy_seconds() if busy_seconds else None
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    other = max(0.0, (b1 - b0 - cpu) / (wall * ncpu)) if b0 is not None and b1 is not None and wall >= 0.5 else None
    text = open(stderr_path, "rb").read().decode("utf-8", "replace")
    return {"wall": wall, "cpu": cpu, "ok": p.returncode == 0, "exit": p.returncode,
            "error": None if p.returncode == 0 else text[-500:],
            "changes": [[float(s), int(a), int(b)] for a, b, s in CHANGE.findall(text)], "other_load": other}


def run(runner, busy_seconds=machine_busy_seconds):
    a, n = runner.a, runner.N
    corpus = head(runner, a.adapt_size)
    runner.data["corpus"]["adapt"] = describe(runner, corpus, "adapt: input")
    weir = [a.weir, "-T%d" % n] + runner.weir_extra
    q = shlex.quote(corpus)
    tools = [("weir --adapt", "weir", " ".join(map(shlex.quote, weir)) + " --adapt -v -c " + q)]
    tools += [("weir -%d" % lv, "weir-fixed", " ".join(map(shlex.quote, weir)) + " -q -%d -c %s" % (lv, q))
              for lv in a.adapt_levels]
    tools.append(("zstd --adapt -T%d" % n, "zstd", "%s -q --adapt -T%d -c %s" % (shlex.quote(a.zstd), n, q)))
    cases = [{"section": "adapt", "mode": None, "rate": rate, "rate_label": rate_label(rate), "tool": tool,
              "family": fam, "group": rate_label(rate),
              "cmd": shell(producer, rate), "runs": []}
             for rate in a.adapt_rates for tool, fam, producer in tools]
    err = os.path.join(runner.work, "adapt.stderr")
    t0 = time.time()
    for rate in a.adapt_rates:  # the output checked once per rate, untimed
        check = "%s --adapt -q -c %s | pv -q%s | %s -dcq | cmp - %s" % (
            " ".join(map(shlex.quote, weir)), q, "" if rate is None else " -L %d" % rate, shlex.quote(a.zstd), q)
        res = run_once(check, err)
        if not res["ok"]:
            for c in cases:
                if c["rate"] == rate and c["family"] == "weir":
                    c["check_error"] = res["error"] or "zstd -d | cmp failed"
    for rnd in range(a.runs):
        print("bench: adapt: round %d of %d (%d cases)" % (rnd + 1, a.runs, len(cases)), file=sys.stderr, flush=True)
        for c in cases:
            r = run_once(c["cmd"], err, busy_seconds)
            if c.get("check_error"):
                r["ok"], r["error"] = False, "output check: " + c["check_error"]
            c["runs"].append(r)
    for c in cases:
        ok = [r for r in c["runs"] if r["ok"]]
        c["n_runs"], c["ok_runs"] = len(c["runs"]), len(ok)
        c["median"] = {"wall": statistics.median(r["wall"] for r in ok), "mbps": None} if ok else None
        if ok:
            c["median"]["mbps"] = runner.data["corpus"]["adapt"]["bytes"] / 1e6 / c["median"]["wall"]
            mid = sorted(ok, key=lambda r: r["wall"])[len(ok) // 2]
            c["median_changes"] = mid["changes"]
    runner.data["sections"]["adapt"] = {
        "title": "--adapt through a throttled pipe (issue 40)", "runs": a.runs, "cases": cases,
        "rates": [rate_label(r) for r in a.adapt_rates], "levels": a.adapt_levels, "notes": [],
        "seconds": time.time() - t0}


def _cases(data):
    return data.get("sections", {}).get("adapt", {}).get("cases", [])


def ratios(data):
    """{rate label: (weir --adapt wall ÷ best fixed wall, best fixed tool, weir ÷ zstd --adapt wall)}"""
    out = {}
    for label in data.get("sections", {}).get("adapt", {}).get("rates", []):
        cs = [c for c in _cases(data) if c["rate_label"] == label and c.get("median")]
        w = next((c for c in cs if c["family"] == "weir"), None)
        fixed = [c for c in cs if c["family"] == "weir-fixed"]
        z = next((c for c in cs if c["family"] == "zstd"), None)
        if not w or not fixed:
            continue
        best = min(fixed, key=lambda c: c["median"]["wall"])
        out[label] = (w["median"]["wall"] / best["median"]["wall"], best["tool"],
                      w["median"]["wall"] / z["median"]["wall"] if z else None)
    return out


def levels_over_time(changes, start, end, step):
    """The level at each STEP seconds from 0 to END, from the changes [(seconds, from, to)]."""
    level, out, i, t = start, [], 0, 0.0
    while t <= end + 1e-9:
        while i < len(changes) and changes[i][0] <= t:
            level = changes[i][2]
            i += 1
        out.append(level)
        t += step
    return out


def render(data):
    """The section's markdown: walls per rate and tool, the ratios, the levels weir chose over time."""
    sec = data["sections"]["adapt"]
    cs = _cases(data)
    tools = list(dict.fromkeys(c["tool"] for c in cs))
    rows = []
    for label in sec["rates"]:
        row = [label]
        for tool in tools:
            c = next((c for c in cs if c["rate_label"] == label and c["tool"] == tool), None)
            row.append(f_num(c["median"]["wall"]) if c and c.get("median") else "failed")
        r = ratios(data).get(label)
        row += ["%.3f (%s)" % (r[0], r[1]) if r else "–", "%.3f" % r[2] if r and r[2] else "–"]
        rows.append(row)
    out = [table(["Rate"] + ["%s, s" % t for t in tools] + ["weir --adapt ÷ best fixed", "÷ zstd --adapt"], rows)]
    out.append("\nWall seconds, median of %d rounds, of `TOOL -c INPUT | pv -q -L RATE > /dev/null` (MB = 10^6 "
               "bytes of compressed output per second; the input is %s bytes).\n\n" % (
                   sec["runs"], "{:,}".format(data["corpus"]["adapt"]["bytes"])))
    out.append("Levels weir --adapt chose over time (its median run, from `-v`; one column per %.2f s, "
               "the level of the chunks starting then; start level 3):\n\n```\n" % STEP)
    for label in sec["rates"]:
        c = next((c for c in cs if c["rate_label"] == label and c["family"] == "weir"), None)
        if not c or not c.get("median"):
            continue
        seq = levels_over_time(c.get("median_changes", []), 3, c["median"]["wall"], STEP)
        out.append("%-12s %s\n" % (label, " ".join("%3d" % v for v in seq)))
    out.append("```\n\nEvery change of the median runs (seconds: from → to):\n\n")
    for label in sec["rates"]:
        c = next((c for c in cs if c["rate_label"] == label and c["family"] == "weir"), None)
        if c and c.get("median"):
            out.append("- %s: %s\n" % (label, ", ".join("%.2f: %d → %d" % tuple(x) for x in c["median_changes"])
                                       or "none"))
    out.append("\nCommands:\n\n" + "".join("- `%s`\n" % c["cmd"] for c in cs if c["rate_label"] == sec["rates"][0]))
    return "".join(out)

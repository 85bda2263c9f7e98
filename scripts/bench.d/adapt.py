"""scripts/bench's adapt section (issue 40): weir --adapt against fixed levels and zstd --adapt -TN, each writing
to standard output through `pv -q -L RATE` into /dev/null, at several rates and unthrottled.

Each round runs every case once, in order (rate by rate, tools alternating); a case's wall is the median of its
rounds. weir --adapt runs with -v, and its level changes ("--adapt: level A → B at SIZE (S s)") are kept per run:
the report draws the levels over time from the median run. One untimed run per rate checks weir --adapt's output
(zstd -d | cmp against the input)."""

import re
import shlex
import time

import harness
from corpus import describe, file_size, head
from formatting import f_num
from timing import log, run_timed
from weirtools.tables import render

STEP = 0.25  # seconds per column of the levels over time
CHANGE = re.compile(r"--adapt: level (-?\d+) → (-?\d+) at .*\(([\d.]+) s\)")


def rate_label(rate):
    return "unthrottled" if rate is None else "%d MB/s" % (rate // 10 ** 6)


def shell(producer, rate):
    """PRODUCER's standard output through pv at RATE bytes/s (None: no limit) into /dev/null."""
    limit = "" if rate is None else " -L %d" % rate
    return "%s | pv -q%s > /dev/null" % (producer, limit)


def measure(bench):
    a, n = bench.a, bench.N
    corpus = head(bench, a.adapt_size)
    bench.data["corpus"]["adapt"] = describe(bench, corpus, "adapt: input")
    weir = [a.weir, "-T%d" % n] + bench.weir_extra
    q = shlex.quote(corpus)
    tools = [("weir --adapt", "weir", " ".join(map(shlex.quote, weir)) + " --adapt -v -c " + q)]
    tools += [("weir -%d" % lv, "weir-fixed", " ".join(map(shlex.quote, weir)) + " -q -%d -c %s" % (lv, q))
              for lv in a.adapt_levels]
    tools.append(("zstd --adapt -T%d" % n, "zstd", "%s -q --adapt -T%d -c %s" % (shlex.quote(a.zstd), n, q)))
    cases = [{"section": "adapt", "mode": None, "rate": rate, "rate_label": rate_label(rate), "tool": tool,
              "family": fam, "group": rate_label(rate), "data_bytes": file_size(corpus),
              "cmd": shell(producer, rate), "runs": []}
             for rate in a.adapt_rates for tool, fam, producer in tools]
    t0 = time.time()
    for rate in a.adapt_rates:  # the output checked once per rate, untimed
        check = "%s --adapt -q -c %s | pv -q%s | %s -dcq | cmp - %s" % (
            " ".join(map(shlex.quote, weir)), q, "" if rate is None else " -L %d" % rate, shlex.quote(a.zstd), q)
        res = run_timed(bench, ["bash", "-o", "pipefail", "-c", check])
        for c in cases if not res["ok"] else []:
            if c["rate"] == rate and c["family"] == "weir":
                c["check_error"] = res["error"] or "zstd -d | cmp failed"
    for rnd in range(a.runs):  # every case in order: the rates, the tools of each alternating
        log("bench: adapt: round %d of %d (%d cases)" % (rnd + 1, a.runs, len(cases)))
        for c in cases:
            r = run_timed(bench, ["bash", "-o", "pipefail", "-c", c["cmd"]], keep_stderr=True)
            r["changes"] = [[float(s), int(x), int(y)] for x, y, s in CHANGE.findall(r.pop("stderr"))]
            r["out_bytes"] = None
            if c.get("check_error"):
                r["ok"], r["error"] = False, "output check: " + c["check_error"]
            c["runs"].append(r)
    for c in cases:
        harness.summarize(c)
        ok = sorted((r for r in c["runs"] if r["ok"]), key=lambda r: r["wall"])
        if ok:  # the levels over time: the median run's
            c["median_changes"] = ok[len(ok) // 2]["changes"]
    bench.data["sections"]["adapt"] = {
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


def report(data):
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
    out = [render(["Rate"] + ["%s, s" % t for t in tools] + ["weir --adapt ÷ best fixed", "÷ zstd --adapt"], rows)]
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

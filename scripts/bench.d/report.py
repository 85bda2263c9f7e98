#!/usr/bin/env python3
"""Markdown report for scripts/bench: `report.py RESULTS.json > RESULTS.md`. Standard library only.
The run's header (machine, corpus, load), the targets (targets.py), the method (method.md), then each section's
report() (sections.py lists them)."""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))  # weirtools

import sections
from formatting import MODE_TITLE, cases, f_bytes, human, target_list
from targets import compute_targets
from weirtools.tables import render

MODE_HOW = {"pipe": "`cat IN | TOOL > OUT`", "pipenull": "`cat IN | TOOL > /dev/null`", "overwrite": "`TOOL -f IN "
            "-o OUT` where OUT is the same command's output, made untimed before each run (then `sync`)",
            "disk": "`TOOL IN -o OUT` timed until a `sync` after it returns: until the output is on disk"}

HERE = os.path.dirname(os.path.abspath(__file__))
METHOD = open(os.path.join(HERE, "method.md"), encoding="utf-8").read()  # the Method section, the same for every run
SYNC = {True: "Every command that writes a file, for every tool, is timed until its data is on disk: `COMMAND && "
              "sync OUT` (the tree: `sync -f TREE`) runs under the timer (rtime) as one command",
        False: "File outputs were timed until the tool exited, not until on disk"}


def chart_section(json_rel):
    """Where the chart is: drawn on demand from the JSON, into bench/work/charts/, never kept in git."""
    stem = os.path.splitext(os.path.basename(json_rel))[0]
    return ("## Chart\n\nThroughput per tool, drawn from this run's JSON on demand (pictures are not kept in git): "
            "`scripts/bench.d/chart.py %s bench/work/charts/%s` writes its SVG and PNG.\n\n" % (json_rel, stem))


def document(data, json_name, chart_files, json_rel=None):
    m, corpus, secs = data["meta"], data.get("corpus", {}), data.get("sections", {})
    n = m["threads"]  # the issues state their targets for 2
    L = ["# weir benchmark — %s%s\n\n" % (m["date"], " (quick run)" if m.get("quick") else "")]
    if m.get("quick"):
        L.append("> **Quick run** (`--quick`): small corpus and %d run(s) per case. It checks the harness; "
                 "its numbers are not the benchmark.\n\n" % m["runs"])
    rows = [["Date", m["datetime_utc"]],
            ["Machine", "%s, %d cores (nproc), %s RAM" % (m["cpu_model"], m["nproc"], "%.1f GiB" % (
                m["mem_bytes"] / 2 ** 30) if m.get("mem_bytes") else "?")],
            ["OS, kernel", "%s, Linux %s" % (m["os"], m["kernel"])],
            ["weir", "%s — `%s`, commit %s%s" % (m["weir_version"], m["weir_bin"], m["git_commit"], (
                ", extra args `%s`" % m["weir_args"]) if m.get("weir_args") else "")],
            ["zstd / pzstd", "%s / %s" % (m["zstd_version"].replace("*", "").strip(), m["pzstd_version"])]]
    for key, title in (("main", "Corpus"), ("slice", "Slice (levels 1, 19)"), ("small", "Small file"),
                       ("lean", "Slice (lean, level 3)"), ("lean_rss", "Slice (lean, peak RSS)")):
        c = corpus.get(key)
        if c:
            rows.append([title, "`%s`, %s bytes (%s)%s, sha256 `%s…`" % (
                c["path"], f_bytes(c["bytes"]), human(c["bytes"]), (", " + c["source"]) if c.get("source") else "",
                c["sha256"][:16])])
    rows += [["Threads N", str(n)],
             ["Other load", "%s; load average %s at the start, %s at the end" % (
                 ("while the tools ran, other processes used a median %.0f%% (max %.0f%%) of the machine's CPU" % (
                     100 * m["other_load_median"], 100 * m["other_load_max"]))
                 if m.get("other_load_median") is not None else "not measured",
                 " ".join(m.get("loadavg_start") or ["?"]), " ".join(m.get("loadavg_end") or ["?"])) + (
                 " — **the machine was busy with other work: timings, most of all the multi-threaded ones, are not "
                 "reliable**" if (m.get("other_load_median") or 0) > 0.10 else "")],
             ["Runs", "median of %d per case (small file: %d, memory: %d); tools alternate within each round" % (
                 m["runs"], m["small_runs"], m["memory_runs"])],
             ["Command", "`%s` (took %.0f min)" % (m["command"], m.get("elapsed_seconds", 0) / 60)]]
    L.append(render(["", ""], rows) + "\n")
    failed = [c for s in secs.values() for c in s.get("cases", []) if c.get("ok_runs", 0) < c.get("n_runs", 0)]
    if failed:
        L.append("> **%d case(s) failed or produced wrong output; their medians leave the failed runs out:** %s\n\n"
                 % (len(failed), "; ".join("%s %s %s: %s" % (
                     c["section"], c["tool"], MODE_TITLE.get(c.get("mode"), ""),
                     next((r.get("error") for r in c["runs"] if not r["ok"]), "") or "") for c in failed)))

    targets = compute_targets(data)
    top = [t for t in targets if t["section"] != "lean"]
    L.append("## Targets%s\n\n%s%s\n" % (" (lean at every level, issue 31: in its section)" if "lean" in secs else "",
                                        "" if n == 2 else "The targets are stated for 2 cores; this run used N = %d."
                                        "\n\n" % n, target_list(top)))
    if chart_files:
        L.append(chart_section(json_rel or json_name))
    modes = "".join("; %s is %s" % (MODE_TITLE[k], MODE_HOW[k]) for k in MODE_HOW if k in m.get("modes", []))
    L.append(METHOD.format(time_format=m.get("time_format", "%e %U %S %M %x"), modes=modes, sync=SYNC[
        bool(m.get("outputs_synced"))]))
    run = [name for name in sections.in_report_order() if name in secs]
    for num, name in enumerate(run, 1):
        L.append("## %d. %s\n\n" % (num, secs[name].get("title", name)))
        loads = sorted(r["other_load"] for c in cases(data, name) for r in c.get("runs", [])
                       if r.get("other_load") is not None) if name != "ceiling" else []
        if loads:
            L.append("_Other processes used a median %.0f%% (max %.0f%%) of the machine's CPU during these runs._"
                     "\n\n" % (100 * loads[len(loads) // 2], 100 * loads[-1]))
        L.append(sections.module(name).report(data) + "\n")
    L.append("---\nRaw measurements (every run): [%s](%s). Regenerate this page with "
             "`scripts/bench --report-only %s`.\n" % (json_name, json_name, json_rel or json_name))
    return "".join(L)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: report.py RESULTS.json > RESULTS.md")
    sys.stdout.write(document(json.load(open(sys.argv[1])), os.path.basename(sys.argv[1]), []))

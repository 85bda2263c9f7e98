#!/usr/bin/env python3
"""Markdown report for scripts/bench: `report.py RESULTS.json > RESULTS.md`. Standard library only.
compute_targets(data) judges a run against targets.json, the one table of the issues' thresholds."""

import json
import os
import sys

import adapt  # same folder

MODE_TITLE = {"file": "file→file", "null": "file→/dev/null", "stdio": "stdin→stdout", "pipe": "pipe→stdout",
              "pipenull": "pipe→/dev/null", "overwrite": "file→existing file (-f)",
              "disk": "file→file, then sync"}  # disk: before every file output was synced (old results)
MODE_HOW = {"pipe": "`cat IN | TOOL > OUT`", "pipenull": "`cat IN | TOOL > /dev/null`", "overwrite": "`TOOL -f IN "
            "-o OUT` where OUT is the same command's output, made untimed before each run (then `sync`)",
            "disk": "`TOOL IN -o OUT` timed until a `sync` after it returns: until the output is on disk"}

HERE = os.path.dirname(os.path.abspath(__file__))
METHOD = open(os.path.join(HERE, "method.md"), encoding="utf-8").read()  # the Method section, the same for every run
SYNC = {True: "Every command that writes a file, for every tool, is timed until its data is on disk: `COMMAND && "
              "sync OUT` (the tree: `sync -f TREE`) runs under `/usr/bin/time` as one command",
        False: "File outputs were timed until the tool exited, not until on disk"}
# The issues' targets, every threshold in one table (key, issue, op, threshold, the issue's wording).
TARGETS = {t["key"]: t for t in json.load(open(os.path.join(HERE, "targets.json"), encoding="utf-8"))["targets"]}


def cases(data, section):
    return data.get("sections", {}).get(section, {}).get("cases", [])


def find(data, section, **kw):
    return next((c for c in cases(data, section) if all(c.get(k) == v for k, v in kw.items())), None)


def med(c, key):
    return (c.get("median") or {}).get(key) if c else None


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def vs(a, b, key="mbps"):
    return ratio(med(a, key), med(b, key))


def dash(f):
    """f, printing – for what was not measured."""
    return lambda v, *a: "–" if v is None else f(v, *a)


human = dash(lambda n: next(("%.3g %s" % (n / d, u) for u, d in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)) if n >= d),
                            "%d B" % n))
f_mbps = dash(lambda v: "%.0f" % v if v >= 100 else "%.1f" % v)
f_num = dash(lambda v, fmt="%.2f": fmt % v)
f_ratio = dash(lambda v, digits=2: "%.*f×" % (digits, v))
f_bytes = dash(lambda v: "{:,}".format(int(v)))
f_len = dash(lambda n: "%d MiB" % (n >> 20) if n >= 1 << 20 and n % (1 << 20) == 0 else "%s bytes" % f_bytes(n))
f_mib = dash(lambda kb: "%.1f" % (kb / 1024))
f_ms = dash(lambda v: "%.1f" % (v * 1000) if v < 10 else "%.0f" % (v * 1000))


def f_spread(c):
    m = c.get("median")
    return "%.1f%%" % (100 * (m["wall_max"] - m["wall_min"]) / m["wall"]) if m and m.get("wall") else "–"


def f_ok(c):
    return "%d/%d" % (c.get("ok_runs", 0), c.get("n_runs", 0)) + " **FAILED**" * (c.get("ok_runs", 0) < c.get(
        "n_runs", 0)) + " **WRONG OUTPUT**" * ((c.get("verify_once") or {}).get("ok") is False)


def f_tool(c):
    return ("**%s**" % c["tool"]) if c["family"] == "weir" else c["tool"]


COLS = {"MB/s": lambda c: f_mbps(med(c, "mbps")), "Wall s": lambda c: f_num(med(c, "wall")), "Spread": f_spread,
        "CPU s": lambda c: f_num(med(c, "cpu")), "Peak RSS MiB": lambda c: f_mib(med(c, "rss_kb")),
        "Output bytes": lambda c: f_bytes(med(c, "out_bytes")), "Runs ok": f_ok}
BASIC = ("MB/s", "Wall s", "Spread", "CPU s", "Peak RSS MiB")
cells = lambda c, names: [COLS[k](c) for k in names]  # noqa: E731


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * 2 + ["--:"] * (len(header) - 2)) + "|"]
    return "\n".join(lines + ["| " + " | ".join(str(x) for x in r) + " |" for r in rows]) + "\n"


def grouped(cs, key):  # {group: its cases}, in the order the groups first appear
    return {g: [c for c in cs if key(c) == g] for g in dict.fromkeys(map(key, cs))}


def of(cs, family):
    return next((c for c in cs if c["family"] == family), None)


def commands(cs, extra=()):
    lines = list(extra) + list(dict.fromkeys(c["cmd"] for c in cs))
    return "<details><summary>Commands</summary>\n\n```sh\n" + "\n".join(lines) + "\n```\n</details>\n"


def measures(data):
    """[(target, value, weir cases, fields for its wording and basis)]: what each target is judged on, in order."""
    n, secs, got = data["meta"]["threads"], data.get("sections", {}), []

    def put(key, value, judged=(), **fields):  # judged: weir's cases, which must not have failed
        got.append((TARGETS[key], value, judged, fields))

    cw, cz, cp = (find(data, "compress", family=f, mode="file") for f in ("weir", "zstd", "pzstd"))
    put("comp-zstd", vs(cw, cz), [cw])
    put("comp-pzstd", vs(cw, cp), [cw])
    ceil = secs.get("ceiling", {})  # with what n one-core runs made at the same time: what this machine gives
    single, both, paired = ceil.get("single_comp_mbps"), ceil.get("together_comp_mbps"), find(data, "ceiling",
                                                                                              family="weir")
    wn = paired or find(data, "compress", family="weir", mode="null") or find(data, "scaling", family="weir", threads=n)
    put("ceiling", ratio(med(wn, "mbps"), n * single if single else None), [wn], ceiling="%.0f" % (n * single)
        if single else "?", paired=" (%s MB/s, in the ceiling's rounds)" % f_mbps(med(wn, "mbps")) if paired else "",
        note="; for comparison, %d × zstd -b3 -T1 run at the same time made %s MB/s together%s" % (
            n, f_mbps(both), ", and weir %s× that" % f_num(ratio(med(wn, "mbps"), both)) if med(wn, "mbps") else "")
        if both and n >= 2 else "")
    put("size", vs(cw, cz, "out_bytes"), [cw])
    put("rss", vs(cw, cz, "rss_kb"), [cw])
    mem_all = [c for c in cases(data, "memory") if c["family"] == "weir"]
    mem = sorted([c for c in mem_all if c.get("median")], key=lambda c: c["stream_bytes"])
    if len(mem) >= 2 and mem[-1]["stream_bytes"] > mem[0]["stream_bytes"]:
        put("rss-flat", vs(mem[-1], mem[0], "rss_kb"), mem_all, small=human(mem[0]["stream_bytes"]),
            big=human(mem[-1]["stream_bytes"]))
    else:
        put("rss-flat", None, mem_all, small="1 GB", big="10 GB",
            basis="needs two stream sizes: run with --memory-scaling")
    for src, key in (("weir", "dec-weir"), ("zstd", "dec-single")):
        dw, dz = (find(data, "decompress", source=src, family=f, mode="null") for f in ("weir", "zstd"))
        put(key, vs(dw, dz), [dw])
    dw, lim = find(data, "decompress", source="weir", family="weir", mode="file"), find(data, "decompress",
                                                                                        family="limit")
    put("dec-file", vs(dw, lim), [dw], weir=f_mbps(med(dw, "mbps")), limit=f_mbps(med(lim, "mbps")))
    cs = find(data, "compress", family="weir", mode="stdio")
    put("stdio", vs(cs, cw), [cs, cw])
    tn = 2 if find(data, "scaling", family="weir", threads=2) else n
    s1, s2 = (find(data, "scaling", family="weir", threads=t) for t in (1, tn))
    if tn == 1:
        put("scaling", None, t=2, basis="needs weir -T1 and -T2 in the scaling section (--threads 2 or "
            "--scaling-threads 1,2)")
    else:
        put("scaling", vs(s2, s1), [s1, s2], t=tn, note="; the machine itself: %d × zstd -b3 -T1 at the same time "
            "made %s× one alone" % (tn, f_num(ratio(both, single))) if single and both and tn == ceil.get("threads")
            else "")
    sw, sz = find(data, "small", family="weir"), find(data, "small", family="zstd")
    put("small", vs(sw, sz, "wall"), [sw], size=human(data.get("corpus", {}).get("small", {}).get("bytes")))
    tw, tz, tree = find(data, "tree", family="weir"), find(data, "tree", family="zstd"), secs.get("tree")
    if tree:
        put("tree", vs(tz, tw, "wall"), [tw], files=tree.get("files"), archive=tree.get("archive"),
            fresh=", a fresh ext4 per run" if tree.get("fresh_fs") else "")
    seek = secs.get("seek")
    for key in ("range-weir", "range-pzstd", "index-pzstd", "list-cat8") if seek else ():
        wall = med(find(data, "seek", key=key), "wall")
        put(key, None if wall is None else wall * 1000, [find(data, "seek", key=key)], range="%s at byte %s" % (
            f_len(seek.get("length")), "{:,}".format(seek.get("offset", 0))), pzstd=human(next(
                (x["bytes"] for x in seek.get("inputs", []) if x["name"] == "pzstd.zst"), None)))
    for level in (3, 19):
        w, v = (find(data, "verify", group="level %d" % level, family=f) for f in ("weir", "weir:verify"))
        for key, k in (("verify-wall", "wall"), ("verify-cpu", "cpu")):
            if "verify" in secs:
                put("%s-%d" % (key, level), vs(v, w, k), [v], level=level)
    if "resume" in secs:  # issue 42
        rw, rn, rr = (find(data, "resume", family=f) for f in ("weir", "weir:no-resume", "weir:resumed"))
        kept = (rr or {}).get("kept") or []
        put("resume-80", vs(rr, rw, "wall"), [rr], kept="%.0f–%.0f%%" % (100 * min(kept), 100 * max(kept))
            if kept else "?")
        put("resume-sync", vs(rw, rn, "wall"), [rw])
    if "formats" in secs:  # issue 40
        g6 = {f: find(data, "formats", group="gzip -6", family=f) for f in ("weir", "pigz")}
        put("gz6-speed", vs(g6["weir"], g6["pigz"]), [g6["weir"]])
        put("gz6-size", vs(g6["weir"], g6["pigz"], "out_bytes"), [g6["weir"]])
        gw = find(data, "formats", group="gunzip", family="weir")
        for key, fam in (("gunzip-gzip", "gzip"), ("gunzip-pigz", "pigz")):
            put(key, vs(gw, find(data, "formats", group="gunzip", family=fam)), [gw])
    if "adapt" in secs:  # issue 40: the worst rate decides
        r = adapt.ratios(data)
        worst = max(r.items(), key=lambda kv: kv[1][0]) if r else None
        put("adapt-fixed", worst[1][0] if worst else None, [], rate=worst[0] if worst else "?",
            best=worst[1][1] if worst else "?")
        vz = [(k, v[2]) for k, v in r.items() if v[2] is not None]
        wz = max(vz, key=lambda kv: kv[1]) if vz else None
        put("adapt-zstd", wz[1] if wz else None, [], rate=wz[0] if wz else "?")
    if "lean" not in secs:
        return got
    s = secs["lean"]
    lc, ld = s.get("limit_comp_mbps"), s.get("limit_dec_mbps")
    for key, row, limit in (("lean-file", "file", lc), ("lean-pipe", "pipe", lc), ("lean-dec", "dec", ld)):
        w = find(data, "lean", row=row, family="weir")
        put(key, ratio(med(w, "mbps"), limit), [w], slice=human(s.get("slice_bytes")), weir=f_mbps(med(w, "mbps")),
            limit=f_mbps(limit))
    mode = MODE_TITLE.get(s.get("rss_mode"), s.get("rss_mode"))
    for label in s.get("levels", []):
        w, z = (find(data, "lean", row="level", level_label=label, family=f) for f in ("weir", "zstd"))
        high = w is not None and (w.get("level") or 0) >= 19  # issue 41: no more than zstd from -19
        for key, k, f in (("lean-rss-high" if high else "lean-rss", "rss_kb", f_mib), ("lean-speed", "mbps", f_mbps),
                          ("lean-size", "out_bytes", f_bytes)):
            put(key, vs(w, z, k), [w], level=label, slice=human(s.get("rss_slice_bytes")), mode=mode,
                weir=f(med(w, k)), zstd=f(med(z, k)))
    w, z = find(data, "lean", row="small", family="weir"), find(data, "lean", row="small", family="zstd")
    put("lean-small", vs(w, z, "rss_kb"), [w], size=human(s.get("small_bytes")), mode=mode,
        weir=f_mib(med(w, "rss_kb")), zstd=f_mib(med(z, "rss_kb")))
    for what in ("--version", "-c"):
        w, z = (find(data, "lean", row="start", level_label=what, family=f) for f in ("weir", "zstd"))
        rss = med(w, "rss_kb")
        put("lean-start", rss / 1024 if rss else None, [w], what=what if what == "--version" else "-c EMPTY",
            cmd=w["cmd"] if w else "?", weir=f_mib(rss), zstd=f_mib(med(z, "rss_kb")))
    basis = ("the tree section: %s files of %s, wall, user+sys CPU and peak RSS of weir -T%d -r and zstd -T%d -r" % (
        tree.get("files"), tree.get("archive"), n, n) if tree else
        "from the tree section, which did not run: `--sections lean,tree`")
    for key, a, b, k in (("lean-r-cpu", tw, tz, "cpu"), ("lean-r-speed", tz, tw, "wall"),
                         ("lean-r-rss", tw, tz, "rss_kb")):
        put(key, vs(a, b, k), [tw], tree=basis)
    return got


def compute_targets(data):
    """Every target this run measured or should have, judged: met, missed or not measured."""
    n, out = data["meta"]["threads"], []
    for t, value, weir, fields in measures(data):
        basis = fields.pop("basis", None) or t["basis"].format(n=n, **fields)
        broken = [c for c in weir if c and c.get("ok_runs", 0) < c.get("n_runs", 0)]
        if broken:  # a fast but wrong (or crashing) weir must not pass
            status = "missed"
            basis += " — **weir failed or gave wrong output in %d run(s)**" % sum(
                c["n_runs"] - c["ok_runs"] for c in broken)
        elif value is None:
            status = "not measured"
        else:
            status = "met" if {">=": value >= t["threshold"], "<=": value <= t["threshold"],
                               "within": abs(value - 1) <= t["threshold"]}[t["op"]] else "missed"
        out.append(dict(t, target=t["wording"].format(n=n, **fields), value=value, status=status, basis=basis,
                        section="lean" if t["key"].startswith("lean-") else None))
    return out


def target_list(targets):
    mark = {"met": "✅ met", "missed": "❌ missed", "not measured": "➖ not measured"}
    out = []
    for t in targets:
        val = ("" if t["value"] is None else ": **%.1f ms**" % t["value"] if t.get("unit") == "ms" else
               ": **%.2f MiB**" % t["value"] if t.get("unit") == "MiB" else
               ": **%.3f×** (%+.1f%%)" % (t["value"], 100 * (t["value"] - 1)) if t["op"] == "within" else
               ": **%s**" % f_ratio(t["value"], 3))
        out.append("- %s — %s%s — %s (issue %d)\n" % (mark[t["status"]], t["target"], val, t["basis"], t["issue"]))
    return "".join(out)


def variants(groups):  # weir beside its --weir-variant runs of the same case
    rows = [[label, c["tool"]] + [f_ratio(ratio(med(of(gc, "weir"), k), med(c, k))) for k in ("wall", "cpu", "rss_kb")]
            for label, gc in groups.items() for c in gc if of(gc, "weir") and c["family"].startswith("weir:")]
    return ("\nweir ÷ its variants, same run (wall: >1 means weir as shipped takes longer):\n\n" + table(
        ["Case", "Variant", "Wall ÷ variant", "CPU ÷ variant", "RSS ÷ variant"], rows)) if rows else ""


def sec_compression(data, section, keys):  # keys: the groups (mode, or level and mode)
    n, cs = data["meta"]["threads"], cases(data, section)
    groups = grouped(cs, lambda c: " ".join(("level %s" % c[k]) if k == "level" else MODE_TITLE.get(c[k], str(c[k]))
                                            for k in keys))
    peer = {"zstd": "zstd -T%d" % n, "pzstd": "pzstd -p%d" % n, "zstd-T1": "zstd -T1"}
    spec = [("Speed", "mbps", "zstd"), ("Speed", "mbps", "pzstd"), ("Speed", "mbps", "zstd-T1"), ("CPU", "cpu", "zstd"),
            ("RSS", "rss_kb", "zstd"), ("RSS", "rss_kb", "pzstd"), ("Size", "out_bytes", "zstd"),
            ("Size", "out_bytes", "pzstd")]
    rows = [[label, f_tool(c)] + cells(c, BASIC + ("Output bytes",)) + [
        f_ratio(vs(c, of(gc, "zstd"), "out_bytes"), 4), f_ok(c)] for label, gc in groups.items() for c in gc]
    peers = [[label] + [f_ratio(vs(of(gc, "weir"), of(gc, f), k), 4 if k == "out_bytes" else 2) for _, k, f in spec]
             for label, gc in groups.items() if of(gc, "weir")]
    return "".join([
        table(["Case", "Tool", "MB/s", "Wall s", "Spread", "CPU s", "Peak RSS MiB", "Output bytes",
               "Size ÷ zstd -T%d" % n, "Runs ok"], rows),
        "\nweir ÷ peers, same run (speed: >1 means weir is faster; CPU, RSS, size: <1 means weir uses less):\n\n",
        table(["Case"] + ["%s ÷ %s" % (what, peer[f]) for what, _, f in spec], peers),
        variants(groups), "\n", commands(cs)])


def sec_ceiling(data):
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
    return (table(["", "MB/s", "Fraction of ceiling"], rows) +
            "\nSingle-core figures are the median over %d run(s) of `%s` (compress/decompress MB/s per run: %s)%s.\n"
            % (len(s["runs"]), s["cmd"], per_round(s["runs"]), "; the at-the-same-time rows, %d copies of it started "
               "together, their figures added up (%s)" % (n, per_round(s["together_runs"])) if s.get("together_runs")
               else ""))


def per_round(runs):
    return ", ".join("%s/%s" % (f_mbps(r.get("comp_mbps")), f_mbps(r.get("dec_mbps"))) if r.get("ok") else "failed"
                     for r in runs) or "–"


def sec_decompress(data):
    n, s, lim = data["meta"]["threads"], data["sections"]["decompress"], find(data, "decompress", family="limit")
    groups = grouped([c for c in s["cases"] if c is not lim], lambda c: "%s, %s" % (c["source_label"],
                                                                                    MODE_TITLE[c["mode"]]))
    rows = [[label, f_tool(c)] + cells(c, BASIC + ("Runs ok",)) for label, gc in groups.items() for c in gc] + (
        [["the write limit, file", lim["tool"]] + cells(lim, BASIC + ("Runs ok",))] if lim else [])
    peers = [[label] + [f_ratio(vs(of(gc, "weir"), of(gc, f), k)) for k, f in (
        ("mbps", "zstd"), ("mbps", "pzstd"), ("cpu", "zstd"), ("rss_kb", "zstd"))] + (
        [f_ratio(vs(of(gc, "weir"), lim) if gc[0]["mode"] == "file" else None)] if lim else [])
        for label, gc in groups.items()]
    out = [table(["Input", "Bytes", "Frames (zstd -l)", "Made with"], [
        [x["label"], f_bytes(x["bytes"]), x.get("frames") or "–", "`%s`" % x["cmd"]] for x in s.get("sources", [])]),
        "\n", table(["Input, mode", "Decoder", "MB/s", "Wall s", "Spread", "CPU s", "Peak RSS MiB", "Runs ok"], rows),
        "\nweir -d ÷ peers on the same input (speed: >1 means weir is faster):\n\n",
        table(["Input, mode", "Speed ÷ zstd -d", "Speed ÷ pzstd -d -p%d" % n, "CPU ÷ zstd -d", "RSS ÷ zstd -d"] + (
            ["Speed ÷ the write limit"] if lim else []), peers)]
    if lim:
        dsingle = data.get("sections", {}).get("ceiling", {}).get("single_dec_mbps")
        out.append("\nEvery decoder's file output is bounded by the page cache's write limit: writing as many bytes "
                   "of zeros to a file as weir's writer writes them (128 KiB writes, writeback started every 32 MiB), "
                   "until on disk, %s MB/s here (in the same rounds), beside the decoding "
                   "limit, %d × zstd -b3 -T1's decompression (the ceiling section): %s MB/s." % (
                       f_mbps(med(lim, "mbps")), n, f_mbps(n * dsingle if dsingle else None)))
    return "".join(out) + "\n\n" + commands(s["cases"], ["# inputs"] + [x["cmd"] for x in s.get("sources", [])]
                                              + ["# timed"])


def sec_scaling(data):
    cs = cases(data, "scaling")
    rows = []
    for fc in grouped(cs, lambda c: c["family"]).values():
        base = next((c for c in fc if c["threads"] == 1), None)
        for c in sorted(fc, key=lambda c: c["threads"]):
            sp = ratio(med(c, "mbps"), med(base, "mbps"))
            rows.append([f_tool(c), c["threads"]] + cells(c, BASIC) + [f_ratio(sp), f_num(
                sp / c["threads"] if sp else None), f_ok(c)])
    return table(["Tool", "Threads", "MB/s", "Wall s", "Spread", "CPU s", "Peak RSS MiB", "Speed-up vs 1 thread",
                  "Efficiency", "Runs ok"], rows) + "\n" + commands(cs)


def sec_small(data):
    n = data["meta"]["threads"]
    cs, z = cases(data, "small"), find(data, "small", family="zstd")
    rows = [[f_tool(c)] + [f_ms(med(c, k)) for k in ("wall", "wall_min", "wall_max", "cpu")] + [
        f_mib(med(c, "rss_kb")), f_bytes(med(c, "out_bytes")), f_ratio(vs(c, z, "wall")), f_ok(c)] for c in cs]
    return table(["Tool", "Wall ms (median)", "Min", "Max", "CPU ms", "Peak RSS MiB", "Output bytes",
                  "Wall ÷ zstd -T%d" % n, "Runs ok"], rows) + "\n" + commands(cs)


def sec_tree(data):
    n = data["meta"]["threads"]
    s, cs, z = data["sections"]["tree"], cases(data, "tree"), find(data, "tree", family="zstd")
    rows = [[f_tool(c)] + [f_num(med(c, k)) for k in ("wall", "wall_min", "wall_max", "user", "sys")] + [
        f_mib(med(c, "rss_kb")), f_bytes(med(c, "out_bytes")), f_ratio(vs(z, c, "wall")), f_ok(c)] for c in cs]
    where = (("a fresh ext4 file system (a loop device on %s, made for the run)" % (
        "a file on the machine's disk" if s.get("on_disk") else "/dev/shm")) if s.get("fresh_fs")
        else "a fresh folder (not root: no fresh file system; earlier runs' freed inodes may slow this one)")
    return (table(["Tool", "Wall s (median)", "Min", "Max", "User s", "Sys s", "Peak RSS MiB", "Output bytes",
                   "Speed ÷ zstd -T%d -r" % n, "Runs ok"], rows) +
            "\nBefore every run, `%s` is extracted into %s and synced (untimed): %s files, %s bytes%s.\n" % (
                s.get("archive"), where, s.get("files"), f_bytes(s.get("bytes")),
                "; with `--rm`, every input must be gone" if s.get("rm") else "")
            + variants({"tree": cs}) + "\n" + commands(cs))


def sec_seek(data):
    s = data["sections"]["seek"]
    cs, pipe, all_w, all_z = s["cases"], *(find(data, "seek", key=k) for k in ("pipe-zstd", "all-weir", "all-zstd"))

    times, code = dash(lambda v: "%.1f×" % v if v < 10 else "%.0f×" % v), lambda text: "`%s`" % text.replace(
        "|", "\\|").replace("\n", " ")  # code: a command in a table cell
    rows = []
    for c in cs:
        wall, ranged = med(c, "wall"), c.get("verify") == "range" and c is not pipe
        label = c["case_label"].replace("|", "\\|")
        rows.append([("**%s**" % label) if c["family"] == "weir" else label, code(c["cmd"].split("\n")[-1]),
                     f_ms(wall), f_spread(c), f_mib(med(c, "rss_kb")),
                     times(ratio(med(pipe, "wall"), wall)) if ranged else "–",
                     "%s / %s" % (times(ratio(med(all_w, "wall"), wall)), times(ratio(med(all_z, "wall"), wall)))
                     if ranged else "–", f_ok(c)])
    inputs = [[x["label"], f_bytes(x["bytes"]), "–" if x.get("frames") is None else x["frames"],
               "–" if x.get("skippable") is None else x["skippable"],
               x["made"].replace("|", "\\|") if x.get("made") else code(x["cmd"])] for x in s.get("inputs", [])]
    return ("Range: %s at byte offset %s of the %s corpus.\n\n" % (
        f_len(s.get("length")), "{:,}".format(s.get("offset", 0)), human(s.get("corpus_bytes"))) +
        table(["Input", "Bytes", "Frames (zstd -l)", "Skippable frames", "Made with"], inputs) + "\n" +
        table(["Case", "Command", "Wall ms (median)", "Spread", "Peak RSS MiB", "zstd -dc \\| tail \\| head ÷ this",
               "Decode everything ÷ this (weir -dc / zstd -dc)", "Runs ok"], rows) +
        "".join("\n- " + note for note in s.get("notes", [])) + "\n\n" +
        commands(cs, ["# inputs (untimed)"] + [x["cmd"] for x in s.get("inputs", [])] + ["# timed"]))


def sec_memory(data):
    s = data["sections"]["memory"]
    cs, cols = s["cases"], ("Peak RSS MiB", "MB/s", "Wall s", "CPU s", "Output bytes", "Runs ok")
    flat = [[fc[0]["tool"], "%s → %s" % (human(fc[0]["stream_bytes"]), human(fc[-1]["stream_bytes"])),
             f_ratio(vs(fc[-1], fc[0], "rss_kb"), 3)] for fc in (sorted(g, key=lambda c: c["stream_bytes"]) for g in
                                                              grouped(cs, lambda c: c["family"]).values()) if fc[1:]]
    out = table(("Stream", "Tool") + cols, [[human(c["stream_bytes"]), f_tool(c)] + cells(c, cols) for c in cs])
    out += ("\nRSS growth with the stream size (1.00× is flat):\n\n" + table(["Tool", "Streams", "RSS ratio"], flat)
            if flat else "\nOnly one stream size: run with `--memory-scaling` to compare 1 GB with 10 GB.\n")
    return out + "".join("\n" + note + "\n" for note in s.get("notes", [])) + "\n" + commands(cs)


def sec_lean(data, targets):
    n, s, secs = data["meta"]["threads"], data["sections"]["lean"], data.get("sections", {})
    cs, lc, ld, small = s["cases"], s.get("limit_comp_mbps"), s.get("limit_dec_mbps"), human(s.get("small_bytes"))
    mode = MODE_TITLE.get(s.get("rss_mode"), s.get("rss_mode"))

    def get(row, fam, label=None):
        return find(data, "lean", row=row, family=fam, **({"level_label": label} if label else {}))

    def cell(c, text, bold=False, after=lambda m: ""):  # text, after: from the case's medians
        if not c or not c.get("median"):
            return "–" if c is None else f_ok(c)
        return (("**%s**" if bold else "%s") % text(c["median"]) + after(c["median"]) +
                ("" if c.get("ok_runs") == c.get("n_runs") else " (**%s**)" % f_ok(c)))

    def speed(c, limit=None, bold=False):
        return cell(c, lambda m: "%s MB/s" % f_mbps(m["mbps"]), bold, lambda m: "; %s the limit" % f_ratio(
            ratio(m["mbps"], limit)) if limit else "") if med(c, "mbps") else "–"

    def mem(c, bold=False):
        return cell(c, lambda m: "%s MiB" % f_mib(m["rss_kb"]), bold, lambda m: " (%s MB/s)" % f_mbps(m["mbps"]))

    def start(c, bold=False):
        return cell(c, lambda m: "%s MiB" % f_mib(m["rss_kb"]), bold)

    def tree(c, bold=False):
        return cell(c, lambda m: "wall %s s, CPU %s s, %s MiB" % (f_num(m["wall"]), f_num(m["cpu"]),
                                                                  f_mib(m["rss_kb"])), bold)

    pipe = ["%s: pipe ÷ file %s%s" % (speed(get("pipe", f), None, f == "weir"), f_ratio(vs(get("pipe", f), get(
        "file", f))), "; %s the limit" % f_ratio(ratio(med(get("pipe", f), "mbps"), lc)) if f == "weir" else "")
        if get("pipe", f) else "–" for f in ("weir", "zstd")]
    def size(w, z):  # output bytes of weir ÷ zstd's, same input and level (issue 41)
        return f_ratio(vs(w, z, "out_bytes"), 4) if med(w, "out_bytes") and med(z, "out_bytes") else "–"

    t = secs.get("tree")
    rows = [["Compress the %s slice, file→/dev/null, level 3" % human(s.get("slice_bytes")),
             speed(get("file", "weir"), lc, True), speed(get("file", "zstd")), speed(get("file", "pzstd")),
             "%s MB/s (%d × `zstd -b3 -T1` at once)" % (f_mbps(lc), n), size(get("file", "weir"), get("file", "zstd"))],
            ["Decompress weir's file of it → /dev/null", speed(get("dec", "weir"), ld, True),
             "zstd -d: " + speed(get("dec", "zstd")), "pzstd -d, its own file: " + speed(get("dec", "pzstd")),
             "%s MB/s (%d × `zstd -b3 -T1` at once, decompression)" % (f_mbps(ld), n), "–"],
            ["Compress through a pipe (`cat SLICE \\| TOOL -c > /dev/null`)", pipe[0], pipe[1], "–",
             "%s MB/s" % f_mbps(lc), "–"]] + [
        ["Peak RSS, %s slice, `%s`" % (human(s.get("rss_slice_bytes")), label), mem(get("level", "weir", label), True),
         mem(get("level", "zstd", label)), mem(get("level", "pzstd", label)) if get("level", "pzstd", label)
         else "– (no `--fast`)", "–", size(get("level", "weir", label), get("level", "zstd", label))]
        for label in s.get("levels", [])] + [
        ["Peak RSS, %s file, `-3`" % small, mem(get("small", "weir"), True), mem(get("small", "zstd")),
         mem(get("small", "pzstd")), "–", size(get("small", "weir"), get("small", "zstd"))]] + [
        ["Start-up: peak RSS of `TOOL %s`" % ("--version" if what == "--version" else "-c EMPTY > /dev/null"),
         start(get("start", "weir", what), True), start(get("start", "zstd", what)), "–", "–", "–"]
        for what in ("--version", "-c")] + [
        ["`-r` on the tree of `%s` (%s files, %s; the tree section's runs)" % (
            t.get("archive"), "{:,}".format(t.get("files") or 0), human(t.get("bytes"))),
         tree(find(data, "tree", family="weir"), True), tree(find(data, "tree", family="zstd")), "–", "–",
         size(find(data, "tree", family="weir"), find(data, "tree", family="zstd"))] if t else
        ["`-r` on the Linux tree", "not run here: the tree section measures it (`--sections lean,tree`)", "", "", "",
         ""]]
    detail = [[c["group"].replace("RSS small", "RSS %s file" % small), f_tool(c), MODE_TITLE.get(c["mode"], c["mode"]),
               f_mbps(med(c, "mbps")), f_num(med(c, "wall"), "%.3f"), f_spread(c), f_num(med(c, "cpu"), "%.3f"),
               f_mib(med(c, "rss_kb")), f_bytes(med(c, "out_bytes")), f_ok(c)] for c in cs]
    return "".join([
        table(["Case", "weir -T%d" % n, "zstd -T%d" % n, "pzstd -p%d" % n, "The limit",
               "Size ÷ zstd -T%d" % n], rows),
        "\nMedians of %d run(s) per case, tools alternating; the limit measured at the start of every round; peak "
        "RSS from GNU time. The RSS rows are %s; MB/s in brackets.\n\n" % (s["runs"], mode),
        "Targets (issues 31 and 41):\n\n" + target_list(targets) + "\n",
        "Every case:\n\n" + table(["Case", "Tool", "Mode", "MB/s", "Wall s", "Spread", "CPU s", "Peak RSS MiB",
                                   "Output bytes", "Runs ok"], detail),
        "\nThe limit per round (compression/decompression MB/s, together): %s.\n" % per_round(s.get("limit_runs", [])),
        "".join("\n- " + note for note in s.get("notes", [])), "\n\n",
        commands(cs, ["# inputs (untimed)"] + [x["cmd"] for x in s.get("sources", [])] + [
            "# the limit, %d at once, at the start of every round" % n, s.get("limit_cmd", ""), "# timed"])])


def sec_verify(data):
    n, rows = data["meta"]["threads"], []
    for group, cs in grouped(cases(data, "verify"), lambda c: c["group"]).items():
        plain, z = of(cs, "weir"), of(cs, "zstd")
        for c in cs:
            rows.append([group, f_tool(c), f_mbps(med(c, "mbps")), f_num(med(c, "wall")), f_num(med(c, "cpu")),
                         f_mib(med(c, "rss_kb")), f_ratio(vs(c, plain, "wall")), f_ratio(vs(c, plain, "cpu")),
                         f_ratio(vs(c, z)), f_ok(c)])
    return table(["Level", "Tool", "MB/s", "Wall s", "CPU s", "Peak RSS MiB", "Wall ÷ weir", "CPU ÷ weir",
                  "MB/s ÷ zstd -T%d" % n, "Runs ok"], rows) + "\n" + commands(cases(data, "verify"))


def sec_formats(data):
    """Issue 40: each format's group, speed and size beside weir's."""
    rows = []
    for group, cs in grouped(cases(data, "formats"), lambda c: c["group"]).items():
        w = of(cs, "weir")
        for c in cs:
            rows.append([group, f_tool(c), f_mbps(med(c, "mbps")), f_num(med(c, "wall")), f_num(med(c, "cpu")),
                         f_mib(med(c, "rss_kb")), f_bytes(med(c, "out_bytes")), f_ratio(vs(w, c)),
                         f_ratio(vs(w, c, "out_bytes"), 3), f_ok(c)])
    return table(["Case", "Tool", "MB/s", "Wall s", "CPU s", "Peak RSS MiB", "Output bytes", "weir's speed ÷",
                  "weir's size ÷", "Runs ok"], rows) + "\nSpeeds are of the uncompressed bytes; weir's output is "\
        "decoded by the format's own tool (gzip, xz, lz4) and compared with the input.\n\n" + commands(
            cases(data, "formats"))


def sec_resume(data):
    """Issue 42: the resumable run beside --no-resume and zstd, and the run resumed at 80%."""
    n, rows = data["meta"]["threads"], []
    cs = cases(data, "resume")
    plain, z = of(cs, "weir"), of(cs, "zstd")
    for c in cs:
        rows.append([c["group"], f_tool(c), f_mbps(med(c, "mbps")), f_num(med(c, "wall")), f_num(med(c, "cpu")),
                     f_mib(med(c, "rss_kb")), f_ratio(vs(c, plain, "wall")), f_ratio(vs(z, c, "wall")), f_ok(c)])
    resumed = of(cs, "weir:resumed") or {}
    kept = ", ".join("%.1f%%" % (100 * k) for k in resumed.get("kept", []))
    return table(["Case", "Tool", "MB/s", "Wall s", "CPU s", "Peak RSS MiB", "Wall ÷ weir", "zstd -T%d's wall ÷" % n,
                  "Runs ok"], rows) + "\nMB/s of the whole input, also for the resumed run (which compresses the "\
        "last fifth). Before each resumed run, untimed, the same command was stopped by SIGTERM once its "\
        "NAME.part held the frames of 80%% of the input; the record then kept, of the input: %s. \"The last N%% "\
        "alone\" compresses the bytes after those frames as a file of its own: the floor of a resumed run "\
        "(its MB/s also of the whole input); the resumed run took %s× its wall.\n\n" % (
            kept or "?", f_num(vs(resumed or None, of(cs, "weir:rest"), "wall"))) \
        + commands(cs)


SECTIONS = [("compress", lambda d: sec_compression(d, "compress", ["mode"])),
            ("levels", lambda d: sec_compression(d, "levels", ["level", "mode"])),
            ("ceiling", sec_ceiling), ("decompress", sec_decompress), ("scaling", sec_scaling), ("small", sec_small),
            ("memory", sec_memory), ("tree", sec_tree), ("seek", sec_seek), ("verify", sec_verify),
            ("formats", sec_formats), ("resume", sec_resume), ("adapt", lambda d: adapt.render(d, table, f_num))]


def render(data, json_name, chart_files, json_rel=None):
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
    L.append(table(["", ""], rows) + "\n")
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
    if chart_files:  # the SVG first
        charts = sorted(chart_files, key=lambda c: not c.endswith(".svg"))
        L.append("## Chart\n\n![Throughput per tool](%s)\n\n%s" % (charts[0], "Also: %s.\n\n" % ", ".join(
            "[%s](%s)" % (c, c) for c in charts[1:]) if charts[1:] else ""))
    modes = "".join("; %s is %s" % (MODE_TITLE[k], MODE_HOW[k]) for k in MODE_HOW if k in m.get("modes", []))
    L.append(METHOD.format(time_format=m.get("time_format", "%e %U %S %M %x"), modes=modes, sync=SYNC[
        bool(m.get("outputs_synced"))]))
    run = [(name, body) for name, body in SECTIONS + [("lean", lambda d: sec_lean(d, [
        t for t in targets if t["section"] == "lean"]))] if name in secs]
    for num, (name, body) in enumerate(run, 1):
        L.append("## %d. %s\n\n" % (num, secs[name]["title"]))
        loads = sorted(r["other_load"] for c in cases(data, name) for r in c.get("runs", [])
                       if r.get("other_load") is not None) if name != "ceiling" else []
        if loads:
            L.append("_Other processes used a median %.0f%% (max %.0f%%) of the machine's CPU during these runs._"
                     "\n\n" % (100 * loads[len(loads) // 2], 100 * loads[-1]))
        L.append(body(data) + "\n")
    L.append("---\nRaw measurements (every run): [%s](%s). Regenerate this page with "
             "`scripts/bench --report-only %s`.\n" % (json_name, json_name, json_rel or json_name))
    return "".join(L)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: report.py RESULTS.json > RESULTS.md")
    sys.stdout.write(render(json.load(open(sys.argv[1])), os.path.basename(sys.argv[1]), []))

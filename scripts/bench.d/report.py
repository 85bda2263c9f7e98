#!/usr/bin/env python3
"""Markdown report for scripts/bench: `report.py RESULTS.json > RESULTS.md`. Standard library only.
The run's header, the targets (targets.py, judged against targets.json), the method, then each section."""

import json
import os
import sys

import adapt  # same folder
from formatting import (BASIC, MODE_TITLE, cases, cells, commands, dash, f_bytes, f_len, f_mbps, f_mib, f_ms, f_num,
                        f_ok, f_ratio, f_spread, f_tool, find, grouped, human, med, of, per_round, ratio, table,
                        target_list, vs)
from targets import compute_targets

MODE_HOW = {"pipe": "`cat IN | TOOL > OUT`", "pipenull": "`cat IN | TOOL > /dev/null`", "overwrite": "`TOOL -f IN "
            "-o OUT` where OUT is the same command's output, made untimed before each run (then `sync`)",
            "disk": "`TOOL IN -o OUT` timed until a `sync` after it returns: until the output is on disk"}

HERE = os.path.dirname(os.path.abspath(__file__))
METHOD = open(os.path.join(HERE, "method.md"), encoding="utf-8").read()  # the Method section, the same for every run
SYNC = {True: "Every command that writes a file, for every tool, is timed until its data is on disk: `COMMAND && "
              "sync OUT` (the tree: `sync -f TREE`) runs under `/usr/bin/time` as one command",
        False: "File outputs were timed until the tool exited, not until on disk"}


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

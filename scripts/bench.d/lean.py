"""scripts/bench's lean section (issue 31, lean at every level): level 3 on a slice from a file and through a pipe,
decoding weir's file of it, each against the limit (N zstd -b3 -T1 at once, every round); peak RSS and speed at
each level, on the small file and at start-up. Its report holds its own targets."""

import os
import shlex
import shutil
import time

import ceiling
import corpus
import decompress
import harness
from corpus import file_size
from formatting import (
    MODE_TITLE,
    commands,
    f_bytes,
    f_mbps,
    f_mib,
    f_num,
    f_ok,
    f_ratio,
    f_spread,
    f_tool,
    find,
    human,
    med,
    per_round,
    ratio,
    target_list,
    vs,
)
from targets import compute_targets
from timing import log, median
from weirtools.tables import render


def measure(bench):
    """Issue 31's table from one run: level 3 on a 300 MB slice from a file
    and through a pipe, decoding weir's file of it, each against the limit
    (N zstd -b3 -T1 at once on the slice, measured at the start of every
    round); peak RSS and speed at each level on a 20 MB slice, and on the
    5 MB file.  The -r row comes from the tree section, when it runs."""
    a, n = bench.a, bench.N
    t0 = time.time()
    big = corpus.head(bench, a.lean_size)
    rss = corpus.head(bench, a.lean_rss_size)
    small = corpus.head(bench, a.small_size)
    bench.data["corpus"]["lean"] = corpus.describe(bench, big, "lean: slice for level 3 and the limit")
    bench.data["corpus"]["lean_rss"] = corpus.describe(bench, rss, "lean: slice for peak RSS at each level")
    src_dir = os.path.join(bench.work, "lean-inputs")
    os.makedirs(src_dir, exist_ok=True)
    tools = harness.comp_tools(bench, with_single=False)
    # decoding: weir's file of the slice by every decoder, pzstd's own file by pzstd -d
    sources = {fam: decompress.dec_input(bench, fam, base, big, src_dir) for fam, _, base in tools
               if fam in ("weir", "pzstd")}
    big_bytes = file_size(big)
    level3 = {"level": 3, "threads": n}
    cases = harness.grid_cases(bench, "lean", [
        ("null", big, tools, level3 | {"group": "L3 slice", "extra": {"row": "file"}}),
        # the pipe row compares weir with zstd -T2 (pzstd's figure: the compress section)
        ("pipenull", big, [t for t in tools if t[0] != "pzstd"], level3 | {"group": "L3 slice, pipe",
                                                                           "extra": {"row": "pipe"}})] + [
        ("null", src["path"], [t], {"op": "decompress", "threads": n, "group": "decode slice", "data_bytes": big_bytes,
                                    "verify": "plain", "orig": big, "extra": {
                                        "row": "dec", "source": src["family"], "source_label": src["label"],
                                        "input_bytes": src["bytes"]}})
        for t in harness.dec_tools(bench) for src in [sources["pzstd" if t[0] == "pzstd" else "weir"]]] + [
        (a.lean_mode, rss, [t for t in tools if t[0] != "pzstd" or level >= 1], {  # pzstd has no --fast
            "level": level, "threads": n, "group": "RSS %s" % label, "flags": flags, "tag": "L%s" % label,
            "extra": {"row": "level", "level_label": label, "level_flags": " ".join(flags)}})
        for level, flags, label in a.lean_levels] + [
        (a.lean_mode, small, tools, level3 | {"group": "RSS small", "tag": "small", "extra": {
            "row": "small", "level_label": "-3", "level_flags": "-3"}})])
    # start-up (issue 41): peak RSS of --version and of -c of an empty file, weir beside zstd
    empty = os.path.join(src_dir, "empty")
    open(empty, "wb").close()
    for fam, tool, base in tools:
        if fam not in ("weir", "zstd"):
            continue
        cases.append(harness.make_case(bench, "lean", "compress", fam, tool, base, "null", empty, level=3, threads=n,
                                       group="start -c", tag="start_c",
                                       extra={"row": "start", "level_label": "-c", "level_flags": "-c"}))
        c = harness.make_case(bench, "lean", "compress", fam, tool, base, "null", empty, level=3, threads=n,
                              group="start --version",
                              tag="start_version", verify="version",
                              extra={"row": "start", "level_label": "--version", "level_flags": "--version"})
        c["argv"] = [base[0], "--version"]
        c["cmd"] = bench.disp(c["argv"])
        cases.append(c)

    # the limit, at the start of every round, beside the tools' runs
    limit_argv = ceiling.ceiling_argv(bench, big)
    limit_runs = []

    def limit(rnd):
        r = ceiling.limit_run(bench, limit_argv, n)
        r["round"] = rnd
        limit_runs.append(r)
        if r["ok"]:
            log("  lean       limit: %d x zstd -b3 -T1 at once: compress %.0f MB/s, decompress %.0f MB/s "
                "together" % (n, r["comp_mbps"], r["dec_mbps"]))
        else:
            log("  lean       limit: %d x zstd -b3 -T1 at once FAILED" % n)

    mode_title = MODE_TITLE[a.lean_mode]
    try:
        harness.section(bench,
            "lean", "Lean at every level (issue 31)", cases, a.runs, t0=t0, before_round=limit,
            notes=[
                "The limit: %d copies of `%s` started together at the start of every round, their MB/s "
                "added up (compression and decompression, libzstd in memory on one core each, no I/O)."
                % (n, " ".join(shlex.quote(bench.disp_path(x)) for x in limit_argv)),
                "Decoding: weir -d and zstd -d decode weir's file of the slice, pzstd -d its own; both made "
                "once, untimed, and checked with `zstd -d | cmp`.",
                "Peak RSS at each level and for the small file: %s; pzstd has no `--fast`." % mode_title,
            ],
            extra={"limit_cmd": " ".join(shlex.quote(bench.disp_path(x)) for x in limit_argv),
                   "limit_runs": limit_runs,
                   "slice_bytes": big_bytes, "rss_slice_bytes": file_size(rss),
                   "small_bytes": file_size(small), "rss_mode": a.lean_mode,
                   "levels": [label for _, _, label in a.lean_levels],
                   "sources": [{k: v for k, v in s.items() if k != "path"} for s in sources.values()]})
    finally:
        if not a.keep_work:
            shutil.rmtree(src_dir, ignore_errors=True)
    sec = bench.data["sections"]["lean"]
    sec["limit_comp_mbps"] = median(r["comp_mbps"] for r in limit_runs if r["ok"])
    sec["limit_dec_mbps"] = median(r["dec_mbps"] for r in limit_runs if r["ok"])


def by_targets(data, targets):
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
        render(["Case", "weir -T%d" % n, "zstd -T%d" % n, "pzstd -p%d" % n, "The limit",
               "Size ÷ zstd -T%d" % n], rows),
        "\nMedians of %d run(s) per case, tools alternating; the limit measured at the start of every round; peak "
        "RSS from GNU time. The RSS rows are %s; MB/s in brackets.\n\n" % (s["runs"], mode),
        "Targets (issues 31 and 41):\n\n" + target_list(targets) + "\n",
        "Every case:\n\n" + render(["Case", "Tool", "Mode", "MB/s", "Wall s", "Spread", "CPU s", "Peak RSS MiB",
                                   "Output bytes", "Runs ok"], detail),
        "\nThe limit per round (compression/decompression MB/s, together): %s.\n" % per_round(s.get("limit_runs", [])),
        "".join("\n- " + note for note in s.get("notes", [])), "\n\n",
        commands(cs, ["# inputs (untimed)"] + [x["cmd"] for x in s.get("sources", [])] + [
            "# the limit, %d at once, at the start of every round" % n, s.get("limit_cmd", ""), "# timed"])])


def report(data):
    return by_targets(data, [t for t in compute_targets(data) if t["section"] == "lean"])

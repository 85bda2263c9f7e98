"""scripts/bench's seek section: random access, weir -d --range from weir's file against zstd -dc | tail | head and
decoding everything; the range from pzstd's file, weir --index, weir -l. Every range checked against the corpus."""

import os
import shlex
import shutil
import time

import harness
import verification
from corpus import file_size, warm
from formatting import commands, dash, f_bytes, f_len, f_mib, f_ms, f_ok, f_spread, find, human, med, ratio
from timing import synced
from weirtools.tables import render


def seek_range(bench, size):
    """(offset, length) of the range: 1 MiB at 1 GB (10^9), or with --quick
    or --corpus at min(1 GB, half the input)."""
    length = 1 << 20
    offset = 10 ** 9
    if bench.a.quick or bench.a.corpus or size < offset + length:
        offset = min(offset, size // 2)
    return offset, max(0, min(length, size - offset))


def seek_prepare(bench, script, path, label, tar):
    """One input of the section: SCRIPT (bash, untimed) makes PATH, which must decode to TAR."""
    return {"label": label, "name": os.path.basename(path)} | verification.prepared(
        bench, ["bash", "-c", "set -e; " + script], bench.disp_prefix(script), path, tar)


def measure(bench):
    a = bench.a
    t0 = time.time()
    tar = bench.main
    size = file_size(tar)
    offset, length = seek_range(bench, size)
    d = os.path.join(bench.work, "seek")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    q = shlex.quote
    wz, pz, cz = (os.path.join(d, x) for x in ("weir.zst", "pzstd.zst", "cat8.zst"))
    copy, indexed = os.path.join(d, "pzstd-copy.zst"), os.path.join(d, "pzstd-indexed.zst")
    weir_c = " ".join(q(x) for x in [a.weir, "-q", "-c"] + bench.weir_extra)
    warm(tar)
    inputs = [
        seek_prepare(bench, "%s %s > %s" % (weir_c, q(tar), q(wz)), wz, "weir's file (seek table)", tar),
        seek_prepare(bench, "%s -q -p %d -c %s > %s" % (q(a.pzstd), bench.N, q(tar), q(pz)), pz,
                     "pzstd's file (no seek table, frames without content size)", tar),
    ]
    # 8 equal pieces (the last one takes the remainder), each compressed by weir with
    # its own seek table, concatenated: the tables chain back from the end
    piece = size // 8
    parts = os.path.join(d, "part")
    script = ("P=%d; for i in 0 1 2 3 4 5 6 7; do if [ $i -lt 7 ]; then tail -c +$((i*P+1)) %s | head -c $P; "
              "else tail -c +$((7*P+1)) %s; fi > %s$i; %s %s$i > %s$i.zst; rm %s$i; done; "
              "cat %s[0-7].zst > %s; rm %s[0-7].zst") % (
        piece, q(tar), q(tar), q(parts), weir_c, q(parts), q(parts), q(parts), q(parts), q(cz), q(parts))
    inputs.append(seek_prepare(bench, script, cz, "8 weir files concatenated (8 equal pieces)", tar))
    inputs[-1]["made"] = ("8 pieces of P = %s bytes, `tail -c +$((i*P+1)) | head -c $P` (the last: to the "
                          "end), `%s` each, `cat` (the script is under Commands)" % (
                              f"{piece:,}", bench.disp_prefix(weir_c)))
    for x in inputs:
        warm(os.path.join(d, x["name"]))
    prep_seconds = time.time() - t0

    rng = "--range=%d:+%s" % (offset, "1M" if length == 1 << 20 else str(length))
    pipe = "%s -dc %s | tail -c +%d | head -c %d" % (q(a.zstd), q(wz), offset + 1, length)

    def case(key, label, group, family, argv, data_bytes, verify, inp, **extra):
        return harness.custom_case(bench, "seek", key, label, family, group, argv, verify, inp, tar, data_bytes,
                                   **extra)

    def ranged(key, label, group, family, argv, inp, cmd=None):
        return case(key, label, group, family, argv, length, "range", inp, cmd=cmd, range=(offset, length))

    def bare(argv):  # a command whose output is a file, not stdout
        return " ".join(q(bench.disp_path(x)) for x in argv)

    g_range, g_all = "weir.zst, a range", "weir.zst, everything"
    cases = [
        ranged("range-weir", "range, weir's file", g_range, "weir", [a.weir, "-d", rng, wz, "-c"], wz),
        ranged("pipe-zstd", "zstd -dc | tail | head", g_range, "zstd", ["sh", "-c", pipe], wz,
               cmd="sh -c %s > /dev/null" % q(bench.disp_prefix(pipe))),
        case("all-weir", "decode everything: weir -dc", g_all, "weir", [a.weir, "-dc", wz], size, "plain", wz),
        case("all-zstd", "decode everything: zstd -dc", g_all, "zstd", [a.zstd, "-dc", wz], size, "plain", wz),
        ranged("range-pzstd", "range, pzstd's file", "pzstd.zst, a range", "weir",
               [a.weir, "-d", rng, pz, "-c"], pz),
        case("index-pzstd", "--index pzstd's file", "pzstd.zst, --index", "weir",
             synced([a.weir, "--index", copy], [copy]), size, "indexed", pz, out=copy,
             cmd="cp %s %s  # untimed, before each run\n%s && sync %s" % (
                 q(bench.disp_path(pz)), q(bench.disp_path(copy)), bare([a.weir, "--index", copy]),
                 q(bench.disp_path(copy))),
             setup=lambda: shutil.copyfile(pz, copy), keep_as=indexed),
        ranged("range-indexed", "range, pzstd's file after --index", "pzstd.zst after --index, a range",
               "weir", [a.weir, "-d", rng, indexed, "-c"], indexed),
        case("list-cat8", "-l, 8 weir files concatenated", "-l", "weir", [a.weir, "-l", cz], file_size(cz),
             "listing", cz, list_expect=(cz, size)),
        case("list-pzstd", "-l, pzstd's file (scan)", "-l", "weir", [a.weir, "-l", pz], file_size(pz),
             "listing", pz, list_expect=(pz, None)),
    ]
    try:
        harness.section(bench,
            "seek", "Random access: 1 MiB at byte %s of the main corpus (%s)" % (
                f"{offset:,}", human(size)), cases, a.runs, warm_up=False, t0=t0,
            notes=[
                "Inputs made once, untimed, and checked with `zstd -d | cmp` against the corpus; read once "
                "before the rounds (warm page cache).",
                "`--index` runs on a fresh `cp` of pzstd's file made untimed before each run; after each run "
                "`weir -lv` must say `from the seek table`, and the first run's output must decode to the "
                "corpus (`zstd -dc | cmp`); that output is the input of the range after `--index`.",
                "`zstd -dc | tail | head`: `head` stops after the range and `tail` and `zstd` then die of "
                "SIGPIPE, as expected; the shell's status is `head`'s. Its peak RSS is the largest of the "
                "three processes'.",
                "Every range output is checked once (same command, stdout captured, untimed) against the "
                "same %d bytes of the corpus read at offset %d; the decode-everything outputs with `cmp`; "
                "`weir -l`'s row against `zstd -l`'s (and, for the concatenation, `weir -lv`'s content "
                "size against the corpus size)." % (length, offset),
            ],
            extra={"offset": offset, "length": length, "corpus_bytes": size, "inputs": inputs,
                   "prepare_seconds": prep_seconds})
    finally:
        if not a.keep_work:
            shutil.rmtree(d, ignore_errors=True)


def report(data):
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
        render(["Input", "Bytes", "Frames (zstd -l)", "Skippable frames", "Made with"], inputs) + "\n" +
        render(["Case", "Command", "Wall ms (median)", "Spread", "Peak RSS MiB", "zstd -dc \\| tail \\| head ÷ this",
               "Decode everything ÷ this (weir -dc / zstd -dc)", "Runs ok"], rows) +
        "".join("\n- " + note for note in s.get("notes", [])) + "\n\n" +
        commands(cs, ["# inputs (untimed)"] + [x["cmd"] for x in s.get("inputs", [])] + ["# timed"]))

"""scripts/bench's members section (issue 61): the tar member index. In one run, on one tar: compression speed and
size with and without the index; listing (`weir -l --members` against `pixz -l`); one member out (`weir -d
--member=PATH A | tar x` against `zstd -dc A | tar x PATH` and `pixz -x PATH < A.tpxz | tar x`); `weir --index`
on pzstd's tar and one member from it after. Every listing is checked against `tar tf`, every member against GNU
tar's own extraction of it."""

import os
import shlex
import shutil
import subprocess
import time

import harness
from corpus import file_size, members_tar, pick_member, warm
from formatting import commands, f_bytes, f_mbps, f_mib, f_ms, f_num, f_ok, f_spread, find, human, med, ratio
from timing import log, synced
from weirtools.tables import render


def measure(bench):
    a, q, n = bench.a, shlex.quote, bench.N
    t0 = time.time()
    tar = members_tar(bench)
    d = os.path.join(bench.work, "members")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    wz, pz, px = (os.path.join(d, x) for x in ("weir.tar.zst", "pzstd.tar.zst", "a.tpxz"))
    copy, indexed = os.path.join(d, "pzstd-copy.tar.zst"), os.path.join(d, "pzstd-indexed.tar.zst")
    listing, ref, out_dir = (os.path.join(d, x) for x in ("tar-tf.txt", "ref", "x"))
    member = pick_member(tar)
    weir = [a.weir, "-q", "-T%d" % n] + bench.weir_extra
    prepare = [
        "%s -c %s > %s" % (" ".join(map(q, weir)), q(tar), q(wz)),
        "%s -q -p %d -c %s > %s" % (q(a.pzstd), n, q(tar), q(pz)),
        "pixz -p %d < %s > %s" % (n, q(tar), q(px)),
        "tar tf %s > %s" % (q(tar), q(listing)),
        "mkdir -p %s && tar xf %s -C %s %s" % (q(ref), q(tar), q(ref), q(member)),
    ]
    warm(tar)
    for script in prepare:
        log("bench: members: preparing: %s" % bench.disp_prefix(script))
        subprocess.run(["bash", "-c", "set -e -o pipefail; " + script], check=True)
    shutil.copyfile(pz, indexed)
    subprocess.run([a.weir, "-q", "--index", indexed], check=True)
    for f in (wz, pz, px, indexed):
        warm(f)
    prep_seconds = time.time() - t0

    def fresh():  # each extraction into an empty folder
        shutil.rmtree(out_dir, ignore_errors=True)
        os.makedirs(out_dir)

    def case(key, label, group, family, script, verify, inp, data_bytes, argv=None, **extra):
        return harness.custom_case(bench, "members", key, label, family, group, argv or [
            "bash", "-c", "set -o pipefail; " + script], verify, inp, tar, data_bytes, mode="null",
            cmd=bench.disp_prefix(script), expect=listing, member=member, member_ref=os.path.join(ref, member),
            member_out=os.path.join(out_dir, member), **extra)

    x = "tar x -C %s" % q(out_dir)
    size = file_size(tar)
    comp = [harness.make_case(bench, "members", "compress", "weir", label, weir + flags, "file", tar, level=3,
                              group="compress", tag=tag, extra={"key": key})
            for key, label, flags, tag in (("compress-index", "weir -T%d (member index)" % n, [], "index"),
                                           ("compress-none", "weir -T%d --no-member-index" % n,
                                            ["--no-member-index"], "none"))]
    cases = comp + [
        case("list-weir", "weir -l --members", "list", "weir",
             "%s -l --members %s" % (q(a.weir), q(wz)), "member-list", wz, size),
        case("list-pixz", "pixz -l", "list", "pixz", "pixz -l %s" % q(px), "member-list", px, size),
        case("member-weir", "weir -d --member | tar x", "member", "weir",
             "%s -d --member=%s %s | %s" % (q(a.weir), q(member), q(wz), x), "member", wz, size, setup=fresh),
        case("member-zstd", "zstd -dc | tar x PATH", "member", "zstd",
             "%s -dc %s | %s %s" % (q(a.zstd), q(wz), x, q(member)), "member", wz, size, setup=fresh),
        case("member-pixz", "pixz -x PATH | tar x", "member", "pixz",
             "pixz -x %s < %s | %s" % (q(member), q(px), x), "member", px, size, setup=fresh),
        case("index-pzstd", "weir --index, pzstd's tar", "index", "weir", "cp %s %s  # untimed\n%s --index %s" % (
            q(pz), q(copy), q(a.weir), q(copy)), "member-indexed", pz, size, out=copy,
            argv=synced([a.weir, "-q", "--index", copy], [copy]), setup=lambda: shutil.copyfile(pz, copy)),
        case("member-indexed", "weir -d --member | tar x, pzstd's tar after --index", "member after --index",
             "weir", "%s -d --member=%s %s | %s" % (q(a.weir), q(member), q(indexed), x), "member", indexed, size,
             setup=fresh),
    ]
    try:
        harness.section(bench, "members", "Tar member index: %s, member %s" % (human(size), member), cases, a.runs,
                        warm_up=False, t0=t0, extra={
                            "tar": bench.disp_path(tar), "tar_bytes": size, "member": member,
                            "members": sum(1 for _ in open(listing, "rb")), "prepare_seconds": prep_seconds,
                            "inputs": [{"name": os.path.basename(f), "bytes": file_size(f)} for f in (wz, pz, px)],
                            "prepare": [bench.disp_prefix(s) for s in prepare]},
                        notes=["Inputs made once, untimed (commands below); read once before the rounds.",
                               "Listings checked against `tar tf` (pixz's: the same names, tar's end-of-archive "
                               "aside); each extraction, into an empty folder made untimed before the run, with "
                               "`cmp` against GNU tar's own extraction of the member.",
                               "A pipeline's peak RSS is the largest of its processes'."])
    finally:
        if not a.keep_work:
            shutil.rmtree(d, ignore_errors=True)


def report(data):
    s = data["sections"]["members"]
    cs = s["cases"]
    get = lambda key: find(data, "members", key=key)  # noqa: E731
    index, none = get("compress-index"), get("compress-none")
    comp = [[("**%s**" % c["tool"]), f_mbps(med(c, "mbps")), f_num(med(c, "cpu")), f_mib(med(c, "rss_kb")),
             f_bytes(med(c, "out_bytes")), f_ok(c)] for c in (index, none) if c]
    speed, grown = ratio(med(index, "mbps"), med(none, "mbps")), ratio(med(index, "out_bytes"), med(none, "out_bytes"))
    base = {"list": get("list-pixz"), "member": get("member-zstd"), "member after --index": get("member-zstd")}
    rows = []
    for c in cs:
        if c["group"] == "compress":
            continue
        b, wall = base.get(c["group"]), med(c, "wall")
        label = c["tool"].replace("|", "\\|")
        rows.append([("**%s**" % label) if c["family"] == "weir" else label, f_ms(wall), f_spread(c),
                     f_mib(med(c, "rss_kb")), "–" if b is None or b is c else "%.1f×" % (ratio(med(b, "wall"), wall)
                                                                                         or 0), f_ok(c)])
    return ("Tar: `%s`, %s bytes (%s), %s members; member `%s`.\n\n" % (
        s["tar"], f_bytes(s["tar_bytes"]), human(s["tar_bytes"]), f_bytes(s["members"]), s["member"]) +
        render(["Compression, level 3, file→file", "MB/s", "CPU s", "Peak RSS MiB", "Bytes", "Runs ok"], comp) +
        "\nWith the index: speed %s of without, size %s.\n\n" % (
            "–" if speed is None else "%.1f%%" % (100 * speed),
            "–" if grown is None else "+%.3f%%" % (100 * (grown - 1))) +
        render(["Case", "Wall ms (median)", "Spread", "Peak RSS MiB", "pixz -l or zstd -dc \\| tar x ÷ this",
               "Runs ok"], rows) + "".join("\n- " + note for note in s.get("notes", [])) + "\n\n" +
        commands(cs, ["# inputs (untimed)"] + s.get("prepare", []) + ["# timed"]))

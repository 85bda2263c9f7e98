"""The targets of scripts/bench: compute_targets(data) judges a run against targets.json, the one table of the
issues' thresholds (met, missed or not measured, with the measured value and what it was measured on). Standard
library only."""

import json
import os

import adapt
import index
from formatting import MODE_TITLE, cases, f_bytes, f_len, f_mbps, f_mib, f_num, f_ratio, find, human, med, ratio, vs

HERE = os.path.dirname(os.path.abspath(__file__))
# The issues' targets, every threshold in one table (key, issue, op, threshold, the issue's wording).
TARGETS = {t["key"]: t for t in json.load(open(os.path.join(HERE, "targets.json"), encoding="utf-8"))["targets"]}


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
    if "members" in secs:  # issue 61
        m, get = secs["members"], lambda key: find(data, "members", key=key)
        ms = lambda c: None if med(c, "wall") is None else med(c, "wall") * 1000  # noqa: E731
        names = dict(tar=m.get("tar"), members=f_bytes(m.get("members")), member=m.get("member"),
                     pixz=f_num(ms(get("list-pixz")), "%.0f"))
        put("members-list", ms(get("list-weir")), [get("list-weir")], **names)
        put("members-one", ms(get("member-weir")), [get("member-weir")],
            **dict(names, pixz=f_num(ms(get("member-pixz")), "%.0f"), zstd=f_num(ms(get("member-zstd")), "%.0f")))
        put("members-indexed", ms(get("member-indexed")), [get("member-indexed")], **names)
        put("members-speed", vs(get("compress-index"), get("compress-none")), [get("compress-index")], **names)
        put("members-size", vs(get("compress-index"), get("compress-none"), "out_bytes"), [get("compress-index")],
            **names)
    if "index" in secs:  # issue 68: on each input, the worst of -1 and -3, file and pipe, decides
        ms, tars = index.measures(data), {i["role"]: i for i in secs["index"].get("inputs", [])}
        show = {"cpu": lambda v: f_ratio(v, 3), "wall": lambda v: f_ratio(v, 3), "rss": lambda v: "%+.2f MiB" % v,
                "per_member": lambda v: "%.2f B" % v}
        for role in ("source", "piece", "whole"):
            rm, i = [m for m in ms if m["role"] == role], tars.get(role, {})
            fields = dict(input=index.ROLES[role], tar=i.get("path"), members=f_bytes(i.get("members")),
                          frames=", ".join("-%d %s" % (m["level"], f_ratio(m["frames"], 4)) for m in rm
                                           if m["mode"] == "file" and m["frames"] is not None) or "–")
            for key, k, worst in (("index-cpu", "cpu", min), ("index-wall", "wall", min), ("index-rss", "rss", max),
                                  ("index-size-" + role, "per_member", max)):
                if key not in TARGETS:  # the 20 MB piece has no size target
                    continue
                have = [m for m in rm if m[k] is not None]
                if not have:
                    put(key, None, [], **fields, basis="not measured: %s was not in this run%s" % (
                        index.ROLES[role], " (--quick leaves the whole tarball out)" if role == "whole" else ""))
                    continue
                put(key, worst(m[k] for m in have), [c for m in rm for c in (m["w"], m["x"])], **fields,
                    cases=", ".join("%s %s" % (m["case"], show[k](m[k])) for m in have))
    if "oneframe" in secs:  # issue 81: the input and mode where weir's peak is furthest above zstd -d's
        above = []
        for c in cases(data, "oneframe"):
            z = find(data, "oneframe", group=c["group"], family="zstd")
            if c["family"] == "weir" and med(c, "rss_kb") is not None and med(z, "rss_kb") is not None:
                above.append(((med(c, "rss_kb") - med(z, "rss_kb")) / 1024, c))
        put("oneframe-rss", max(a for a, _ in above) if above else None,
            [c for c in cases(data, "oneframe") if c["family"] == "weir"],
            cases=", ".join("%s %+.1f MiB" % (c["group"], a) for a, c in above) or "–")
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

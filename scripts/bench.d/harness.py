"""The cases of scripts/bench's sections and how they run. A case is one tool's command in one I/O mode on one input
(make_case, from comp_tools' and dec_tools' command lines); run_cases runs a section's cases in rounds, the tools of
a group alternating, each run timed (timing.py) and its output checked (verification.py), then their medians
(summarize); section() does that and stores the section's results. Standard library only."""

import os
import re
import shlex
import time

import timing
import verification
from corpus import file_size, warm
from formatting import MODE_TITLE
from timing import log, median, synced


def warm_up_run(bench, cases):
    """One untimed run of the first case that writes a file, before the
    rounds: on this VM the first run that writes a fresh 1.36 GB into the
    page cache after a while paid 5 s of system time instead of ~1 s (the
    host backing memory the guest had handed back), and that run was
    always the first tool's."""
    writes = [c for c in cases if c["out"]]
    if not writes or bench.a.quick:
        return
    c = writes[0]
    log("  warm-up    %s (untimed)" % c["tool"])
    timing.run_timed(bench, c["argv"], stdin=c.get("stdin"), stdout=c.get("stdout"), prefix=c.get("prefix"))
    if os.path.exists(c["out"]):
        os.unlink(c["out"])


def one_run(bench, case, rnd):
    out = case["out"]
    if out and os.path.exists(out):
        os.unlink(out)
    if case["mode"] == "overwrite":
        # The file to replace: this command's own output, made untimed
        # (as when a backup is restored over its last restore).
        timing.run_timed(bench, case["argv"], stdin=case.get("stdin"), stdout=case.get("stdout"),
                         prefix=case.get("prefix"))
    if case.get("setup"):
        case["setup"]()  # untimed preparation of this run's input (seek: a fresh copy to --index)
    os.sync()  # earlier runs' dirty pages must not be written back during this one
    m = timing.run_timed(bench, case["argv"], stdin=case.get("stdin"), stdout=case.get("stdout"),
                         prefix=case.get("prefix"))
    m["round"] = rnd
    m["out_bytes"] = None
    m["verified"] = None
    if case.get("check"):
        case["check"](m)  # a check of its own (the tree: every input's output), which also cleans up
    elif m["ok"] and out:
        m["out_bytes"] = file_size(out)
        ok, how = verification.check(bench, case, out)
        m["verified"] = how
        if not ok:
            m["ok"] = False
            m["error"] = how
    elif m["ok"]:
        m["verified"] = "output went to /dev/null; see the verification run"
    if out and os.path.exists(out) and not bench.a.keep_work:
        os.unlink(out)
    case["runs"].append(m)
    if case["section"] == "seek" or (case["section"] == "members" and case["group"] != "compress"):
        log("  %-10s %-34s %9.1f ms  rss %7.1f MiB  %s" % (
            case["section"], case["case_label"], m["wall"] * 1000, (m["rss_kb"] or 0) / 1024,
            "ok" if m["ok"] else "FAILED: %s" % m["error"]))
        return
    mbps = case["data_bytes"] / 1e6 / m["wall"] if m["wall"] else 0
    log("  %-10s %-22s %-16s %7.2f s %8.1f MB/s  cpu %6.2f s  rss %7.1f MiB  other load %3.0f%%  %s" % (
        case["section"], case["group"].replace(case["mode"], MODE_TITLE.get(case["mode"], case["mode"])),
        case["tool"], m["wall"], mbps, m["cpu"] or 0, (m["rss_kb"] or 0) / 1024, 100 * (m["other_load"] or 0),
        "ok" if m["ok"] else "FAILED: %s" % m["error"]))


def verify_once(bench, case):
    """Outputs sent to /dev/null cannot be checked: run the identical
    command once more (untimed) with stdout captured, and check that."""
    out = os.path.join(bench.work, "verify.out")
    if os.path.exists(out):
        os.unlink(out)
    if case.get("setup"):
        case["setup"]()  # members: an empty folder, so that no earlier run's extraction passes for this one's
    m = timing.run_timed(bench, case["argv"], stdin=case.get("stdin"), stdout=out, prefix=case.get("prefix"))
    res = {"ok": m["ok"], "how": None, "out_bytes": None}
    if m["ok"]:
        res["out_bytes"] = file_size(out)
        ok, how = verification.check(bench, case, out)
        res["ok"], res["how"] = ok, "same command, stdout captured (untimed): " + how
    else:
        res["how"] = "verification run failed: %s" % m["error"]
    if os.path.exists(out):
        os.unlink(out)
    case["verify_once"] = res
    if not res["ok"]:
        log("  VERIFICATION FAILED for %s: %s" % (case["tool"], res["how"]))
        for r in case["runs"]:
            r["ok"] = False
            r["error"] = res["how"]


def run_cases(bench, cases, runs, warm_up=True, before_round=None):
    """Alternate: every round runs each group's cases once, starting at a
    different tool each round, so drift hits every tool alike.
    before_round(rnd), if given, runs at the start of every round (lean:
    the limit, measured in the same rounds as the tools)."""
    for c in cases:
        c["runs"] = []
    if warm_up:
        warm_up_run(bench, cases)
    groups = []
    for c in cases:
        if c["group"] not in groups:
            groups.append(c["group"])
    for rnd in range(runs):
        log(" round %d/%d" % (rnd + 1, runs))
        if before_round:
            before_round(rnd)
        for g in groups:
            gc = [c for c in cases if c["group"] == g]
            k = rnd % len(gc)
            for c in gc[k:] + gc[:k]:
                one_run(bench, c, rnd)
    for c in cases:
        if c["out"] is None and not c.get("check"):
            verify_once(bench, c)
        summarize(c)
    verification.drop_refs(bench)


def comp_tools(bench, threads=None, with_single=True):
    n = threads or bench.N
    a = bench.a
    tools = [
        ("weir", "weir -T%d" % n, [a.weir, "-q", "-T%d" % n] + bench.weir_extra),
    ] + variant_tools(bench, "weir -T%d" % n, [a.weir, "-q", "-T%d" % n] + bench.weir_extra) + [
        ("zstd", "zstd -T%d" % n, [a.zstd, "-q", "-T%d" % n]),
        ("pzstd", "pzstd -p%d" % n, [a.pzstd, "-q", "-p%d" % n]),
    ]
    if with_single and n != 1:
        tools.append(("zstd-T1", "zstd -T1", [a.zstd, "-q", "-T1"]))
    return tools


def dec_tools(bench):
    a, n = bench.a, bench.N
    return [
        ("weir", "weir -d -T%d" % n, [a.weir, "-q", "-T%d" % n] + bench.weir_extra),
    ] + variant_tools(bench, "weir -d -T%d" % n, [a.weir, "-q", "-T%d" % n] + bench.weir_extra) + [
        ("zstd", "zstd -d", [a.zstd, "-q"]),
        ("pzstd", "pzstd -d -p%d" % n, [a.pzstd, "-q", "-p%d" % n]),
    ]


def variant_tools(bench, label, base):
    """The --weir-variant tools: weir with each variant's arguments."""
    tools = []
    for name, args, binary in bench.variants:
        shown = " ".join([label] + args + (["(%s)" % name] if binary else []))
        tools.append(("weir:%s" % name, shown, ([binary] + base[1:] if binary else base) + args))
    return tools


def make_case(bench, section, op, family, tool, base, mode, inp, level=None, threads=None,
              group=None, data_bytes=None, verify=None, orig=None, extra=None, flags=None, tag=None,
              feed=None):
    """Build the argv for one tool in one I/O mode; a mode that writes a
    file ends with `sync OUT` inside the timed command.  flags: the level's
    flags when not -LEVEL (e.g. --fast=3, --ultra -22); tag: a name for
    the output file when section/tool/mode/level do not make one unique;
    feed: the pipe modes' producer (default `cat IN |`)."""
    tag = re.sub(r"[^A-Za-z0-9]+", "_", "_".join(
        str(x) for x in (section, tool, mode, tag if tag is not None else
                         level if level is not None else extra and extra.get("source"))
        if x is not None))
    out = os.path.join(bench.work, tag + ".out")
    flags = list(flags) if flags else ["-%d" % level] if op == "compress" else ["-d"]
    stdout_flag = [] if family == "weir" else ["-c"]
    stdin = stdout = prefix = None
    if mode in ("file", "overwrite"):
        argv = base + flags + ["-f", inp, "-o", out]
    elif mode == "null":
        argv = base + flags + ["-c", inp]
        out = None
    elif mode == "stdio":
        argv = base + flags + stdout_flag
        stdin, stdout = inp, out
    elif mode in ("pipe", "pipenull"):
        argv = base + flags + stdout_flag
        prefix = feed or "cat %s |" % shlex.quote(inp)
        stdout = out if mode == "pipe" else None
        out = stdout
    else:
        raise ValueError(mode)
    case = {
        "section": section, "op": op, "family": family, "tool": tool, "mode": mode,
        "level": level, "threads": threads, "group": group or mode,
        "input": os.path.basename(inp), "data_bytes": data_bytes or file_size(inp),
        "argv": synced(argv, [out]) if out else argv, "stdin": stdin, "stdout": stdout, "prefix": prefix,
        "out": out, "cmd": bench.disp(argv, stdin, stdout, prefix) + (
            " && sync " + shlex.quote(bench.disp_path(out)) if out else ""),
        "verify": verify or ("compressed" if op == "compress" else "plain"),
        "orig": orig or inp,
        "verify_key": "%s|%s|%s|%s" % (section, tool, level, inp),
    }
    if extra:
        case.update(extra)
    return case


def custom_case(bench, section, key, label, family, group, argv, verify, inp, orig, data_bytes, out=None,
                cmd=None, mode=None, **extra):
    """A case whose command make_case does not build (a pipeline, a range, a listing, the write limit): KEY names
    it (its first word is its op), LABEL is its tool and row; its output is OUT, else stdout, sent to /dev/null."""
    return {"section": section, "op": key.split("-")[0], "key": key, "family": family, "tool": label,
            "case_label": label, "mode": mode or ("null" if out is None else "file"), "level": None, "threads": None,
            "group": group, "input": os.path.basename(inp), "data_bytes": data_bytes, "argv": argv, "stdin": None,
            "stdout": None, "prefix": None, "out": out, "cmd": cmd or bench.disp(argv), "verify": verify,
            "orig": orig, "runs": []} | extra


def grid_cases(bench, name, rows):
    """The section NAME's cases: for each row (mode, input, tools, make_case's keywords: op, level, threads, group
    ...) each tool's case, the inputs read once first (warm page cache)."""
    for inp in dict.fromkeys(row[1] for row in rows):
        warm(inp)
    return [make_case(bench, name, **{"op": "compress", **kw}, family=fam, tool=tool, base=base, mode=mode, inp=inp)
            for mode, inp, tools, kw in rows for fam, tool, base in tools]


def grid(bench, name, title, rows, runs, **section_kw):
    """A section of grid_cases' cases."""
    section(bench, name, title, grid_cases(bench, name, rows), runs, **section_kw)


def section(bench, name, title, cases, runs, notes=None, extra=None, warm_up=True, t0=None, before_round=None):
    log("bench: section %s: %s (%d cases x %d runs)" % (name, title, len(cases), runs))
    t0 = t0 or time.time()
    run_cases(bench, cases, runs, warm_up=warm_up, before_round=before_round)
    sec = {"title": title, "runs": runs, "cases": [public(c) for c in cases],
           "notes": notes or [], "seconds": time.time() - t0}
    if extra:
        sec.update(extra)
    bench.data["sections"][name] = sec


def public(case):
    """The JSON view of a case: no absolute paths or internal keys."""
    drop = {"argv", "stdin", "stdout", "prefix", "out", "orig", "verify_key", "stream_sha256", "setup", "check",
            "range", "keep_as", "list_expect", "expect", "member_ref", "member_out"}
    return {k: v for k, v in case.items() if k not in drop}


def summarize(c):
    ok = [r for r in c["runs"] if r["ok"]]
    c["n_runs"] = len(c["runs"])
    c["ok_runs"] = len(ok)
    if not ok:
        c["median"] = None
        return
    med = {k: median(r[k] for r in ok) for k in ("wall", "user", "sys", "cpu", "rss_kb")}
    med["wall_min"] = min(r["wall"] for r in ok)
    med["wall_max"] = max(r["wall"] for r in ok)
    med["mbps"] = c["data_bytes"] / 1e6 / med["wall"]
    out_bytes = median(r["out_bytes"] for r in ok)
    if out_bytes is None and c.get("verify_once"):
        out_bytes = c["verify_once"].get("out_bytes")
    med["out_bytes"] = out_bytes
    c["median"] = med

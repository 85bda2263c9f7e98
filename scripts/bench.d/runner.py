#!/usr/bin/env python3
"""Measurement runner behind scripts/bench (run `scripts/bench --help`).

Prepares the corpus slices, runs every case under /usr/bin/time -- tools
alternating, repeated -- verifies every output, writes the raw measurements
as JSON, then the markdown report (report.py) and the chart (chart.py).

Python 3 standard library only.  Sizes are decimal: 1 MB = 10^6 bytes and
MB/s is uncompressed bytes / 10^6 / wall seconds, for compression and for
decompression alike (zstd -b uses the same unit).
"""

import argparse
import datetime
import hashlib
import json
import os
import platform
import re
import shlex
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in scripts/
import adapt  # noqa: E402  (same folder)
import report  # noqa: E402  (same folder)
from report import MODE_TITLE, human  # noqa: E402

TIME_FMT = "%e %U %S %M %x"
SECTIONS = ["ceiling", "compress", "levels", "decompress", "scaling", "small", "memory", "tree", "seek", "lean",
            "verify", "formats", "resume", "adapt"]
MODES = ["file", "null", "stdio", "pipe", "pipenull", "overwrite"]


# ---------------------------------------------------------------- helpers

def log(msg):
    print(msg, file=sys.stderr, flush=True)


def die(msg):
    log("bench: error: " + msg)
    sys.exit(2)


def parse_size(text):
    """'100M' -> 100_000_000; 'MiB'/'Mi' suffixes are binary; plain = bytes."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)([iI]?)[bB]?\s*", text)
    if not m:
        raise argparse.ArgumentTypeError("bad size %r (examples: 5M, 100MB, 1G, 64MiB)" % text)
    number, unit, binary = m.groups()
    base = 1024 if binary else 1000
    exp = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4}[unit.lower()]
    return int(float(number) * base ** exp)


def parse_size_list(text):
    return [parse_size(t) for t in text.split(",") if t.strip()]


def parse_int_list(text):
    try:
        return [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError("expected comma-separated integers, got %r" % text)


def parse_lean_levels(text):
    """'fast3,1,3,9,19,22' -> [(level, flags, label)]: fastN (or fast=N) is
    --fast=N (level -N), levels above 19 get --ultra."""
    out = []
    for t in (t.strip() for t in text.split(",")):
        if not t:
            continue
        m = re.fullmatch(r"(?:--)?fast=?(\d+)|-?(\d+)", t)
        if not m:
            raise argparse.ArgumentTypeError("bad level %r (examples: fast3, 1, 19, 22)" % t)
        if m.group(1):
            k = int(m.group(1))
            out.append((-k, ["--fast=%d" % k], "--fast=%d" % k))
        else:
            k = int(m.group(2))
            flags = (["--ultra"] if k > 19 else []) + ["-%d" % k]
            out.append((k, flags, " ".join(flags)))
    return out


def parse_choice_list(choices):
    def parse(text):
        items = [t.strip() for t in text.split(",") if t.strip()]
        bad = [t for t in items if t not in choices]
        if bad:
            raise argparse.ArgumentTypeError(
                "unknown %s (choose from %s)" % (", ".join(bad), ", ".join(choices)))
        return items
    return parse


def file_size(path):
    return os.stat(path).st_size


def sha256_file(path, cache=True):
    """sha256 of a file, cached next to it as FILE.sha256 (keyed by size+mtime)."""
    st = os.stat(path)
    stamp = "%d %d" % (st.st_size, int(st.st_mtime))
    cache_path = path + ".sha256"
    if cache and os.path.exists(cache_path):
        try:
            digest, old_stamp = open(cache_path).read().split("\n")[:2]
            if old_stamp == stamp:
                return digest
        except ValueError:
            pass
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 22)
            if not b:
                break
            h.update(b)
    digest = h.hexdigest()
    if cache:
        with open(cache_path, "w") as f:
            f.write(digest + "\n" + stamp + "\n")
    return digest


def warm(path):
    """Read a file once so that every tool sees it in the page cache."""
    with open(path, "rb") as f:
        while f.read(1 << 23):
            pass


def cmd_output(argv, stderr=True):
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT if stderr else subprocess.DEVNULL,
                           text=True, timeout=60)
        return p.stdout.strip()
    except (OSError, subprocess.SubprocessError) as e:
        return "unavailable (%s)" % e


def busy_seconds():
    """CPU seconds the whole machine has spent busy (all cores; steal included)."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:9]]
        return (sum(v) - v[3] - v[4]) / CLK_TCK
    except (OSError, ValueError, IndexError):
        return None


CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def synced(argv, target):
    """argv, then `sync TARGET` (fsync of a file; `-f FOLDER`: syncfs), as one
    command: every tool's timed run lasts until its output is on disk (weir
    syncs its outputs itself; zstd and pzstd leave them in the page cache)."""
    return ["sh", "-c", shlex.join(argv) + " && exec sync " + shlex.join(target)]


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


# ---------------------------------------------------------------- runner

class Bench:
    def __init__(self, a):
        self.a = a
        self.N = a.threads
        # scripts/bench holds a lock, so one fixed folder is safe (and gives readable commands)
        self.work = os.path.join(a.work_dir, "run")
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work, exist_ok=True)
        self.corpus_dir = a.corpus_dir
        os.makedirs(self.corpus_dir, exist_ok=True)
        self.weir_extra = shlex.split(a.weir_args) if a.weir_args else []
        # --weir-variant NAME=ARGS: weir with ARGS as a tool of its own (family weir:NAME).
        self.variants = []
        # NAME@PATH=ARGS: another weir binary (an earlier build, for before/after in one run).
        for v in a.weir_variant:
            name, _, args = v.partition("=")
            name, _, binary = name.partition("@")
            self.variants.append((name, shlex.split(args), binary or None))
        self.short = {a.weir: "weir", a.zstd: "zstd", a.pzstd: "pzstd"}
        self.refs = {}
        self.ncpu = os.cpu_count() or 1
        self.data = {"sections": {}, "corpus": {}}
        self.started = time.time()

    # --- display -----------------------------------------------------------
    def disp_path(self, p):
        if p in self.short:
            return self.short[p]
        if os.path.isabs(p) and p.startswith(ROOT + os.sep):
            return os.path.relpath(p, ROOT)
        return p

    def disp(self, argv, stdin=None, stdout=None, prefix=None):
        s = " ".join(shlex.quote(self.disp_path(x)) for x in argv)
        if prefix:
            s = self.disp_prefix(prefix) + " " + s
        if stdin:
            s += " < " + shlex.quote(self.disp_path(stdin))
        s += " > " + (shlex.quote(self.disp_path(stdout)) if stdout else "/dev/null")
        return s

    def disp_prefix(self, prefix):
        out = prefix
        for real, short in sorted(self.short.items(), key=lambda kv: -len(kv[0])):
            out = out.replace(shlex.quote(real), short)
        return out.replace(ROOT + os.sep, "")

    # --- running one command ---------------------------------------------------
    def run_timed(self, argv, stdin=None, stdout=None, prefix=None):
        """Run argv under /usr/bin/time.  stdout None means /dev/null.

        prefix is a shell pipeline feeding the command (e.g. a generator
        ending in '|'); the command then runs under bash.  Wall time is taken
        with a monotonic clock around the whole child (better resolution than
        time's %e), user/sys CPU and peak RSS come from time -f."""
        tfile = os.path.join(self.work, "time.txt")
        efile = os.path.join(self.work, "stderr.txt")
        for f in (tfile,):
            if os.path.exists(f):
                os.unlink(f)
        timed = [self.a.time, "-f", TIME_FMT, "-o", tfile] + list(argv)
        with open(efile, "wb") as ferr:
            if prefix:
                script = prefix + " " + shlex.join(timed)
                script += " > " + (shlex.quote(stdout) if stdout else "/dev/null")
                b0 = busy_seconds()
                t0 = time.perf_counter()
                p = subprocess.run(["bash", "-c", script], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=ferr)
                wall = time.perf_counter() - t0
                b1 = busy_seconds()
            else:
                fin = open(stdin, "rb") if stdin else subprocess.DEVNULL
                fout = open(stdout, "wb") if stdout else subprocess.DEVNULL
                try:
                    b0 = busy_seconds()
                    t0 = time.perf_counter()
                    p = subprocess.run(timed, stdin=fin, stdout=fout, stderr=ferr)
                    wall = time.perf_counter() - t0
                    b1 = busy_seconds()
                finally:
                    if stdin:
                        fin.close()
                    if stdout:
                        fout.close()
        m = {"wall": wall, "user": None, "sys": None, "cpu": None, "rss_kb": None,
             "exit": p.returncode, "time_e": None, "ok": False, "error": None, "other_load": None}
        try:
            lines = [l for l in open(tfile).read().splitlines() if l.strip()]
            e, u, s, rss, x = lines[-1].split()
            m.update(time_e=float(e), user=float(u), sys=float(s),
                     cpu=float(u) + float(s), rss_kb=int(rss), exit=int(x))
            if len(lines) > 1:
                m["error"] = " / ".join(lines[:-1])
        except (OSError, ValueError, IndexError) as e:
            m["error"] = "could not parse /usr/bin/time output: %s" % e
        # CPU that other processes took while this ran: the machine's busy time
        # minus the tool's own user+sys, as a fraction of all cores' wall time
        # (/proc/stat counts in clock ticks: meaningless for runs shorter than half a second)
        if b0 is not None and b1 is not None and m["cpu"] is not None and wall >= 0.5:
            m["other_load"] = max(0.0, (b1 - b0 - m["cpu"]) / (wall * self.ncpu))
        if p.returncode != 0 or m["exit"] != 0:
            err = open(efile, "rb").read().decode("utf-8", "replace").strip()
            m["error"] = (m["error"] or "") + " exit %s: %s" % (p.returncode, err[-500:])
        else:
            m["ok"] = m["error"] is None
        return m

    # --- verification ------------------------------------------------------
    def roundtrip_ok(self, zpath, orig):
        d = subprocess.Popen([self.a.zstd, "-d", "-c", "-q", zpath],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        c = subprocess.run(["cmp", "-s", "-", orig], stdin=d.stdout)
        d.stdout.close()
        d.wait()
        return c.returncode == 0 and d.returncode == 0

    def same_file(self, a, b):
        return subprocess.run(["cmp", "-s", a, b]).returncode == 0

    def verify(self, case, out):
        """Check one output file.  Returns (ok, how)."""
        kind = case["verify"]
        if kind == "compressed":
            key = case["verify_key"]
            ref = self.refs.get(key)
            if ref and self.same_file(out, ref):
                return True, "identical to an output verified by round trip"
            if self.roundtrip_ok(out, case["orig"]):
                if not ref:
                    ref = os.path.join(self.work, "ref-%s.zst" % hashlib.sha1(key.encode()).hexdigest()[:12])
                    os.replace(out, ref)
                    self.refs[key] = ref
                return True, "round trip: zstd -d | cmp with the input"
            return False, "ROUND TRIP FAILED (zstd -d | cmp)"
        if kind == "plain":
            if self.same_file(out, case["orig"]):
                return True, "cmp with the original"
            return False, "OUTPUT DIFFERS from the original (cmp)"
        if kind == "decoded":
            # another format's output (issue 40): its own tool decodes it, compared with the input
            d = subprocess.Popen(case["decoder"] + [out], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            c = subprocess.run(["cmp", "-s", "-", case["orig"]], stdin=d.stdout)
            d.stdout.close()
            d.wait()
            if c.returncode == 0 and d.returncode == 0:
                return True, "%s | cmp with the input" % " ".join(case["decoder"][:2])
            return False, "ROUND TRIP FAILED (%s | cmp)" % " ".join(case["decoder"][:2])
        if kind == "version":
            # a start-up row's --version: one line naming the program
            with open(out, "rb") as f:
                text = f.read()
            if text.count(b"\n") == 1 and (b"weir" in text or b"Zstandard" in text):
                return True, "one line naming the program"
            return False, "NOT A VERSION LINE: %r" % text[:80]
        if kind == "zeros":
            if file_size(out) == case["data_bytes"] and subprocess.run(
                    ["cmp", "-s", "-n", str(file_size(out)), out, "/dev/zero"]).returncode == 0:
                return True, "%d zero bytes (cmp with /dev/zero)" % file_size(out)
            return False, "NOT %d ZERO BYTES" % case["data_bytes"]
        if kind == "stream":
            d = subprocess.Popen([self.a.zstd, "-d", "-c", "-q", out],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            h = hashlib.sha256()
            while True:
                b = d.stdout.read(1 << 22)
                if not b:
                    break
                h.update(b)
            d.wait()
            if d.returncode == 0 and h.hexdigest() == case["stream_sha256"]:
                return True, "zstd -d | sha256 equals the generated stream's"
            return False, "STREAM CHECKSUM DIFFERS (zstd -d | sha256)"
        if kind == "range":
            # the same bytes of the original, read directly (offset, length)
            offset, length = case["range"]
            with open(case["orig"], "rb") as f:
                f.seek(offset)
                want = f.read(length)
            got = open(out, "rb").read(length + 1)
            if got == want:
                return True, "equal to bytes %d..%d of %s (%d bytes, read directly)" % (
                    offset, offset + length, os.path.basename(case["orig"]), length)
            return False, "RANGE OUTPUT DIFFERS from bytes %d..%d of the original (%s)" % (
                offset, offset + length, "same length" if len(got) == length else
                "%s%d bytes instead of %d" % ("over " if len(got) > length else "", len(got), length))
        if kind == "indexed":
            # weir --index: the file now has a seek table that weir reads, and (checked on the
            # first run) still decodes to the original with zstd
            listing = cmd_output([self.a.weir, "-lv", out])
            if "from the seek table" not in listing:
                return False, "weir -lv shows no 'from the seek table' after --index: %s" % listing[-300:]
            keep = case.get("keep_as")
            if keep and not os.path.exists(keep):
                if not self.roundtrip_ok(out, case["orig"]):
                    return False, "ROUND TRIP FAILED after --index (zstd -dc | cmp with the original)"
                os.replace(out, keep)  # the first run's output: the input of the range-after-index case
                return True, "weir -lv: from the seek table; zstd -dc | cmp with the original"
            return True, "weir -lv: from the seek table (zstd -dc | cmp checked on the first run)"
        if kind == "listing":
            # weir -l: its row says what zstd -l's says (frames, skippable frames, sizes);
            # for a concatenation of weir files, weir -lv also knows the content size
            path, content_bytes = case["list_expect"]
            got = open(out, encoding="utf-8", errors="replace").read().splitlines()
            want = cmd_output([self.a.zstd, "-l", path]).splitlines()
            if len(got) < 2 or len(want) < 2 or got[1].split()[:-1] != want[1].split()[:-1]:
                return False, "weir -l differs from zstd -l: %r vs %r" % (
                    got[1] if len(got) > 1 else got, want[1] if len(want) > 1 else want)
            how = "row equal to zstd -l's (%s)" % " ".join(got[1].split()[:-1])
            if content_bytes is not None:
                verbose = cmd_output([self.a.weir, "-lv", path])
                if not re.search(r"Decompressed Size:.*\(%d B\)" % content_bytes, verbose):
                    return False, "weir -lv does not give the content size %d" % content_bytes
                how += "; weir -lv: content size %d B" % content_bytes
            return True, how
        raise ValueError(kind)

    def drop_refs(self):
        for ref in self.refs.values():
            if os.path.exists(ref):
                os.unlink(ref)
        self.refs = {}

    # --- cases ---------------------------------------------------------------
    def warm_up(self, cases):
        """One untimed run of the first case that writes a file, before the
        rounds: on this VM the first run that writes a fresh 1.36 GB into the
        page cache after a while paid 5 s of system time instead of ~1 s (the
        host backing memory the guest had handed back), and that run was
        always the first tool's."""
        writes = [c for c in cases if c["out"]]
        if not writes or self.a.quick:
            return
        c = writes[0]
        log("  warm-up    %s (untimed)" % c["tool"])
        self.run_timed(c["argv"], stdin=c.get("stdin"), stdout=c.get("stdout"), prefix=c.get("prefix"))
        if os.path.exists(c["out"]):
            os.unlink(c["out"])

    def one_run(self, case, rnd):
        out = case["out"]
        if out and os.path.exists(out):
            os.unlink(out)
        if case["mode"] == "overwrite":
            # The file to replace: this command's own output, made untimed
            # (as when a backup is restored over its last restore).
            self.run_timed(case["argv"], stdin=case.get("stdin"), stdout=case.get("stdout"),
                           prefix=case.get("prefix"))
        if case.get("setup"):
            case["setup"]()  # untimed preparation of this run's input (seek: a fresh copy to --index)
        os.sync()  # earlier runs' dirty pages must not be written back during this one
        m = self.run_timed(case["argv"], stdin=case.get("stdin"), stdout=case.get("stdout"),
                           prefix=case.get("prefix"))
        m["round"] = rnd
        m["out_bytes"] = None
        m["verified"] = None
        if m["ok"] and out:
            m["out_bytes"] = file_size(out)
            ok, how = self.verify(case, out)
            m["verified"] = how
            if not ok:
                m["ok"] = False
                m["error"] = how
        elif m["ok"]:
            m["verified"] = "output went to /dev/null; see the verification run"
        if out and os.path.exists(out) and not self.a.keep_work:
            os.unlink(out)
        case["runs"].append(m)
        if case["section"] == "seek":
            log("  seek       %-34s %9.1f ms  rss %7.1f MiB  %s" % (
                case["case_label"], m["wall"] * 1000, (m["rss_kb"] or 0) / 1024,
                "ok" if m["ok"] else "FAILED: %s" % m["error"]))
            return
        mbps = case["data_bytes"] / 1e6 / m["wall"] if m["wall"] else 0
        log("  %-10s %-22s %-16s %7.2f s %8.1f MB/s  cpu %6.2f s  rss %7.1f MiB  other load %3.0f%%  %s" % (
            case["section"], case["group"].replace(case["mode"], MODE_TITLE[case["mode"]]), case["tool"], m["wall"], mbps, m["cpu"] or 0, (m["rss_kb"] or 0) / 1024,
            100 * (m["other_load"] or 0),
            "ok" if m["ok"] else "FAILED: %s" % m["error"]))

    def verify_once(self, case):
        """Outputs sent to /dev/null cannot be checked: run the identical
        command once more (untimed) with stdout captured, and check that."""
        out = os.path.join(self.work, "verify.out")
        if os.path.exists(out):
            os.unlink(out)
        m = self.run_timed(case["argv"], stdin=case.get("stdin"), stdout=out, prefix=case.get("prefix"))
        res = {"ok": m["ok"], "how": None, "out_bytes": None}
        if m["ok"]:
            res["out_bytes"] = file_size(out)
            ok, how = self.verify(case, out)
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

    def run_cases(self, cases, runs, warm_up=True, before_round=None):
        """Alternate: every round runs each group's cases once, starting at a
        different tool each round, so drift hits every tool alike.
        before_round(rnd), if given, runs at the start of every round (lean:
        the limit, measured in the same rounds as the tools)."""
        for c in cases:
            c["runs"] = []
        if warm_up:
            self.warm_up(cases)
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
                    self.one_run(c, rnd)
        for c in cases:
            if c["out"] is None:
                self.verify_once(c)
            summarize(c)
        self.drop_refs()

    # --- tools ---------------------------------------------------------------
    def comp_tools(self, threads=None, with_single=True):
        n = threads or self.N
        a = self.a
        tools = [
            ("weir", "weir -T%d" % n, [a.weir, "-q", "-T%d" % n] + self.weir_extra),
        ] + self.variant_tools("weir -T%d" % n, [a.weir, "-q", "-T%d" % n] + self.weir_extra) + [
            ("zstd", "zstd -T%d" % n, [a.zstd, "-q", "-T%d" % n]),
            ("pzstd", "pzstd -p%d" % n, [a.pzstd, "-q", "-p%d" % n]),
        ]
        if with_single and n != 1:
            tools.append(("zstd-T1", "zstd -T1", [a.zstd, "-q", "-T1"]))
        return tools

    def dec_tools(self):
        a, n = self.a, self.N
        return [
            ("weir", "weir -d -T%d" % n, [a.weir, "-q", "-T%d" % n] + self.weir_extra),
        ] + self.variant_tools("weir -d -T%d" % n, [a.weir, "-q", "-T%d" % n] + self.weir_extra) + [
            ("zstd", "zstd -d", [a.zstd, "-q"]),
            ("pzstd", "pzstd -d -p%d" % n, [a.pzstd, "-q", "-p%d" % n]),
        ]

    def variant_tools(self, label, base):
        """The --weir-variant tools: weir with each variant's arguments."""
        tools = []
        for name, args, binary in self.variants:
            shown = " ".join([label] + args + (["(%s)" % name] if binary else []))
            tools.append(("weir:%s" % name, shown, ([binary] + base[1:] if binary else base) + args))
        return tools

    def make_case(self, section, op, family, tool, base, mode, inp, level=None, threads=None,
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
        out = os.path.join(self.work, tag + ".out")
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
            "out": out, "cmd": self.disp(argv, stdin, stdout, prefix) + (
                " && sync " + shlex.quote(self.disp_path(out)) if out else ""),
            "verify": verify or ("compressed" if op == "compress" else "plain"),
            "orig": orig or inp,
            "verify_key": "%s|%s|%s|%s" % (section, tool, level, inp),
        }
        if extra:
            case.update(extra)
        return case

    # --- corpus ----------------------------------------------------------------
    def head_file(self, src, n, dest):
        """dest = the first n bytes of src (cached)."""
        if os.path.exists(dest) and file_size(dest) == n:
            return dest
        if file_size(src) < n:
            die("%s has %d bytes, fewer than the %d requested" % (src, file_size(src), n))
        log("bench: writing %s (first %s of %s)" % (self.disp_path(dest), human(n), os.path.basename(src)))
        tmp = dest + ".tmp"
        with open(src, "rb") as fi, open(tmp, "wb") as fo:
            left = n
            while left:
                b = fi.read(min(left, 1 << 23))
                if not b:
                    break
                fo.write(b)
                left -= len(b)
        os.replace(tmp, dest)
        return dest

    def generated_corpus(self, n):
        """Real-world text and code without the Linux tarball: a tar of the
        system's headers and docs, repeated if it is shorter than n."""
        dest = os.path.join(self.corpus_dir, "generated-%d.tar" % n)
        if os.path.exists(dest) and file_size(dest) == n:
            return dest
        dirs = [d for d in ("/usr/include", "/usr/share/doc", "/usr/share/perl", "/usr/lib/python3",
                            "/usr/share/man", "/usr/share/common-licenses") if os.path.isdir(d)]
        if not dirs:
            die("no corpus: the Linux tarball is missing and there is nothing to tar; run without --quick")
        log("bench: generating %s from a tar of %s" % (self.disp_path(dest), " ".join(dirs)))
        script = ("set +o pipefail; tar --sort=name -cf - %s 2>/dev/null > %s.one || true; "
                  "while cat %s.one; do :; done | head -c %d > %s.tmp && mv %s.tmp %s; rm -f %s.one") % (
            " ".join(shlex.quote(d) for d in dirs), shlex.quote(dest), shlex.quote(dest), n,
            shlex.quote(dest), shlex.quote(dest), shlex.quote(dest), shlex.quote(dest))
        subprocess.run(["bash", "-c", script], check=True)
        if file_size(dest) != n:
            die("could not generate %s" % dest)
        with open(dest + ".source", "w") as f:
            f.write("generated: tar --sort=name of %s, repeated to %d bytes "
                    "(the Linux tarball was not cached)\n" % (" ".join(dirs), n))
        return dest

    def describe(self, path, role):
        info = {"role": role, "path": self.disp_path(path), "name": os.path.basename(path),
                "bytes": file_size(path), "sha256": sha256_file(path)}
        own = path + ".source"
        m = re.fullmatch(r"(.*)\.head-(\d+)\.tar", os.path.basename(path))
        if os.path.exists(own):
            info["source"] = open(own).read().strip()
        elif m:
            parent = os.path.join(os.path.dirname(path), m.group(1) + ".tar")
            info["source"] = "first %s bytes of %s" % (m.group(2), os.path.basename(parent))
            if role == "main corpus" and os.path.exists(parent + ".source"):
                info["source"] += " (" + open(parent + ".source").read().strip() + ")"
        return info

    def prepare_corpus(self):
        a = self.a
        stem = os.path.splitext(os.path.basename(a.tarball))[0]
        if a.corpus:
            main = a.corpus
        elif a.quick:
            if os.path.exists(a.tarball) and file_size(a.tarball) >= a.quick_size:
                main = self.head_file(a.tarball, a.quick_size,
                                      os.path.join(self.corpus_dir, "%s.head-%d.tar" % (stem, a.quick_size)))
            else:
                main = self.generated_corpus(a.quick_size)
        else:
            if not os.path.exists(a.tarball):
                die("corpus %s is missing (scripts/bench downloads it unless --no-download)" % a.tarball)
            main = a.tarball
        main_stem = os.path.splitext(os.path.basename(main))[0]
        if main == a.tarball or main_stem.startswith(stem + ".head-"):
            base, bstem = (a.tarball, stem) if os.path.exists(a.tarball) else (main, main_stem)
        else:
            base, bstem = main, main_stem

        self.main = main
        self.head_base = (base, bstem)
        head = self.corpus_head
        self.slice = head(a.slice_size)
        self.small = head(a.small_size)
        self.data["corpus"] = {
            "main": self.describe(self.main, "main corpus"),
            "slice": self.describe(self.slice, "slice for levels 1 and 19"),
            "small": self.describe(self.small, "small file"),
        }

    def corpus_head(self, n):
        """The main corpus's first n bytes (at most all of it), as a slice
        cut once and cached in bench/corpus/ (NAME.head-N.tar)."""
        base, bstem = self.head_base
        n = min(n, file_size(self.main))
        if n == file_size(self.main):
            return self.main
        return self.head_file(base, n, os.path.join(self.corpus_dir, "%s.head-%d.tar" % (bstem, n)))

    # --- sections --------------------------------------------------------------
    def section(self, name, title, cases, runs, notes=None, extra=None, warm_up=True, t0=None, before_round=None):
        log("bench: section %s: %s (%d cases x %d runs)" % (name, title, len(cases), runs))
        t0 = t0 or time.time()
        self.run_cases(cases, runs, warm_up=warm_up, before_round=before_round)
        sec = {"title": title, "runs": runs, "cases": [public(c) for c in cases],
               "notes": notes or [], "seconds": time.time() - t0}
        if extra:
            sec.update(extra)
        self.data["sections"][name] = sec

    CEILING_PAT = re.compile(r"(\d+)\s*->\s*(\d+)\s*\(x?\s*([\d.]+)\)\s*,\s*([\d.]+)\s*MB/s\s*,\s*([\d.]+)\s*MB/s")

    def ceiling_argv(self, path):
        """libzstd's one-core speed on PATH in memory, level 3: compression and decompression."""
        return [self.a.zstd, "-b3", "-e3", "-i%d" % self.a.ceiling_seconds, "-T1", path]

    def at_once(self, argv, count):
        """Runs `count` copies of argv (a zstd -b) together; each one's output
        and its last result line (src, dst, ratio, comp, dec), None when it failed."""
        procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                 for _ in range(count)]
        results = []
        for p in procs:
            text = p.communicate()[0].decode("utf-8", "replace")
            hits = self.CEILING_PAT.findall(text)
            results.append((text, hits[-1] if p.returncode == 0 and hits else None))
        return results

    def limit_run(self, argv, count):
        """One measurement of the limit: `count` copies of argv at once, their
        compression and decompression MB/s added up."""
        found = [hit for _, hit in self.at_once(argv, count)]
        if None in found:
            return {"ok": False}
        return {"ok": True, "comp_mbps": sum(float(f[3]) for f in found),
                "dec_mbps": sum(float(f[4]) for f in found),
                "each_comp_mbps": [float(f[3]) for f in found], "each_dec_mbps": [float(f[4]) for f in found]}

    def sec_ceiling(self):
        a = self.a
        argv = self.ceiling_argv(self.main)
        log("bench: section ceiling: %s" % " ".join(map(self.disp_path, argv)))
        t0 = time.time()
        warm(self.main)
        # weir -TN → /dev/null runs in the same rounds, between the ceiling's
        # own runs, so that the fraction of the ceiling compares figures taken
        # at the same time (this VM's speed drifts by a third within minutes).
        fam, tool, base = self.comp_tools(with_single=False)[0]
        weir = self.make_case("ceiling", "compress", fam, tool, base, "null", self.main, level=3,
                              threads=self.N, group="ceiling")
        weir["runs"] = []
        runs = []
        for rnd in range(a.runs):
            [(text, found)] = self.at_once(argv, 1)
            if not found:
                runs.append({"ok": False, "error": text[-300:]})
                log("  ceiling FAILED: %s" % text[-300:])
                continue
            src, dst, ratio, comp, dec = found
            runs.append({"ok": True, "comp_mbps": float(comp), "dec_mbps": float(dec),
                         "ratio": float(ratio), "in_bytes": int(src), "out_bytes": int(dst)})
            log("  ceiling    zstd -b3 -T1: compress %s MB/s, decompress %s MB/s (one core)" % (comp, dec))
            self.one_run(weir, rnd)
        ok = [r for r in runs if r["ok"]]
        self.verify_once(weir)
        summarize(weir)
        self.drop_refs()
        # What N cores give N one-core processes at once: on a VM whose cores
        # share a physical core or its caches, less than N times one alone.
        together = []
        if self.N > 1:
            for rnd in range(a.runs):
                r = self.limit_run(argv, self.N)
                together.append({k: v for k, v in r.items() if not k.startswith("each_")})
                if not r["ok"]:
                    log("  ceiling    %d at once FAILED" % self.N)
                    continue
                log("  ceiling    %d x zstd -b3 -T1 at once: compress %.0f MB/s, decompress %.0f MB/s together"
                    % (self.N, r["comp_mbps"], r["dec_mbps"]))
        both = [r for r in together if r["ok"]]
        self.data["sections"]["ceiling"] = {
            "title": "In-memory ceiling (libzstd, one core, level 3)",
            "cmd": " ".join(shlex.quote(self.disp_path(x)) for x in argv),
            "threads": self.N, "runs": runs, "cases": [public(weir)],
            "single_comp_mbps": median(r["comp_mbps"] for r in ok),
            "single_dec_mbps": median(r["dec_mbps"] for r in ok),
            "together_runs": together,
            "together_comp_mbps": median(r["comp_mbps"] for r in both),
            "together_dec_mbps": median(r["dec_mbps"] for r in both),
            "seconds": time.time() - t0,
        }

    def sec_compress(self):
        warm(self.main)
        cases = []
        for mode in self.a.modes:
            for fam, tool, base in self.comp_tools():
                cases.append(self.make_case("compress", "compress", fam, tool, base, mode, self.main,
                                            level=3, threads=self.N, group=mode))
        self.section("compress", "Compression, level 3, main corpus (%s)" % human(file_size(self.main)),
                     cases, self.a.runs)

    def sec_levels(self):
        warm(self.slice)
        cases = []
        for level in self.a.levels:
            for mode in self.a.level_modes:
                for fam, tool, base in self.comp_tools():
                    cases.append(self.make_case("levels", "compress", fam, tool, base, mode, self.slice,
                                                level=level, threads=self.N, group="%d/%s" % (level, mode)))
        self.section("levels", "Compression, levels %s, slice (%s)" % (
            " and ".join(map(str, self.a.levels)), human(file_size(self.slice))), cases, self.a.runs)

    def sec_decompress(self):
        """Decode each tool's level-3 output with each decoder."""
        warm(self.main)
        n = self.N
        src_dir = os.path.join(self.work, "dec-inputs")
        os.makedirs(src_dir, exist_ok=True)
        sources = []
        for fam, tool, base in self.comp_tools(with_single=False):
            if ":" in fam:
                continue  # a variant of weir: its output is weir's
            sources.append(self.dec_input(fam, base, self.main, src_dir))
        for s in sources:
            warm(s["path"])
        cases = []
        for s in sources:
            for mode in self.a.modes:
                for fam, tool, base in self.dec_tools():
                    c = self.make_case("decompress", "decompress", fam, tool, base, mode, s["path"],
                                       threads=n, group="%s/%s" % (s["family"], mode),
                                       data_bytes=file_size(self.main), verify="plain", orig=self.main,
                                       extra={"source": s["family"], "source_label": s["label"]})
                    c["input_bytes"] = s["bytes"]
                    cases.append(c)
        if "file" in self.a.modes:
            cases.append(self.write_limit(file_size(self.main)))
        self.section("decompress", "Decompression of each tool's level-3 output (%s uncompressed)" % human(
            file_size(self.main)), cases, self.a.runs,
            extra={"sources": [{k: v for k, v in s.items() if k != "path"} for s in sources]})
        if not self.a.keep_work:
            shutil.rmtree(src_dir, ignore_errors=True)

    def write_limit(self, size):
        """What writing SIZE bytes to a file costs here, until on disk (issue 41):
        the bound of every decoder's file output, timed as their runs are.
        Zeros written as weir's writer writes (write_zeros.py): dd's 1 MiB
        writes into the page cache were slower here than weir decoding."""
        out = os.path.join(self.work, "write_limit.out")
        argv = [sys.executable, os.path.join(HERE, "write_zeros.py"), str(size), out]
        return {"section": "decompress", "op": "write", "family": "limit", "tool": "zeros, written as weir writes",
                "mode": "file", "level": None, "threads": None, "group": "write limit", "input": "/dev/zero",
                "data_bytes": size, "argv": synced(argv, [out]), "stdin": None, "stdout": None, "prefix": None,
                "out": out, "cmd": " ".join(argv).replace(out, self.disp_path(out)) + " && sync " + self.disp_path(out),
                "verify": "zeros", "orig": None, "source": "limit", "source_label": "/dev/zero"}

    def dec_input(self, fam, base, inp, src_dir):
        """A decompression input, made once (untimed): INP compressed at level
        3 by one tool, checked with zstd -d | cmp.  Returns its description."""
        n = self.N
        path = os.path.join(src_dir, "%s.%s.zst" % (os.path.basename(inp), fam))
        argv = base + ["-3", "-f", inp, "-o", path]
        log("bench: preparing decompression input: %s" % self.disp(argv))
        m = self.run_timed(argv)
        if not m["ok"] or not self.roundtrip_ok(path, inp):
            die("could not prepare %s (%s)" % (path, m["error"] or "round trip failed"))
        frames = None
        listing = cmd_output([self.a.zstd, "-l", path])
        fm = re.search(r"^\s*(\d+)\s+(\d+)\s", listing.split("\n", 2)[1] if "\n" in listing else "", re.M)
        if fm:
            frames = int(fm.group(1)) - int(fm.group(2))
        label = {"weir": "weir -T%d output" % n, "zstd": "zstd -T%d output (single frame)" % n,
                 "pzstd": "pzstd -p%d output" % n}[fam]
        return {"family": fam, "label": label, "path": path, "bytes": file_size(path),
                "frames": frames, "cmd": self.disp(argv)}

    def sec_scaling(self):
        warm(self.main)
        cases = []
        for t in self.a.scaling_threads:
            for fam, tool, base in self.comp_tools(threads=t, with_single=False):
                cases.append(self.make_case("scaling", "compress", fam, tool, base, "null", self.main,
                                            level=3, threads=t, group="T%d" % t))
        self.section("scaling", "Thread scaling, level 3, main corpus → /dev/null", cases, self.a.runs)

    def sec_small(self):
        warm(self.small)
        cases = []
        for fam, tool, base in self.comp_tools():
            cases.append(self.make_case("small", "compress", fam, tool, base, "file", self.small,
                                        level=3, threads=self.N, group="small"))
        self.section("small", "Small file (%s), level 3, file→file" % human(file_size(self.small)),
                     cases, self.a.small_runs)

    def stream_prefix(self, size):
        return "while cat %s; do :; done | head -c %d |" % (shlex.quote(self.main), size)

    def sec_memory(self):
        warm(self.main)
        cases = []
        stem = os.path.splitext(os.path.basename(self.main))[0]
        for size in self.a.memory_sizes:
            prefix = self.stream_prefix(size)
            cache = os.path.join(self.corpus_dir, "stream-%s-%d-%s.sha256" % (
                stem, size, sha256_file(self.main)[:12]))
            if os.path.exists(cache):
                digest = open(cache).read().strip()
            else:
                log("bench: checksum of the %s generated stream (once, cached)" % human(size))
                p = subprocess.run(["bash", "-c", prefix + " sha256sum"], stdout=subprocess.PIPE, text=True,
                                   check=True)
                digest = p.stdout.split()[0]
                with open(cache, "w") as f:
                    f.write(digest + "\n")
            for fam, tool, base in self.comp_tools(with_single=False):
                c = self.make_case("memory", "compress", fam, tool, base, "pipe", self.main, level=3,
                                   threads=self.N, group="%s pipe" % human(size), data_bytes=size,
                                   verify="stream", feed=prefix,
                                   extra={"stream_bytes": size, "stream_sha256": digest})
                c["input"] = "generated stream (%s)" % human(size)
                cases.append(c)
        self.section("memory", "Peak memory on a generated stream through a pipe, level 3", cases,
                     self.a.memory_runs,
                     notes=["The stream repeats the main corpus: `%s`." % self.disp_prefix(
                         "while cat %s; do :; done | head -c SIZE |" % shlex.quote(self.main))])

    # --- tree: -r on many small files ------------------------------------------
    def tree_archive(self):
        """The tar whose files make the tree: the main corpus when it is a
        tar (the Linux tarball, or its head with --quick), else the tarball."""
        for path in (self.main, self.a.tarball):
            if path and os.path.exists(path) and path.endswith(".tar"):
                return path
        return None

    def fresh_tree(self, archive, fs):
        """Extracts `archive` into a new folder; with `fs`, on a new ext4 file
        system (a loop device backed by RAM, or with --tree-on-disk by a file
        on the machine's disk): no run inherits the inodes the previous run
        freed, nor its dirty pages.  Returns (folder, cleanup)."""
        mnt = os.path.join(self.work, "tree")
        os.makedirs(mnt, exist_ok=True)
        img = (os.path.join(self.a.work_dir, "weir-bench-tree.img") if self.a.tree_on_disk
               else os.path.join("/dev/shm", "weir-bench-tree.img"))

        def cleanup():
            if fs:
                subprocess.run(["umount", mnt], stderr=subprocess.DEVNULL)
                if os.path.exists(img):
                    os.unlink(img)
            shutil.rmtree(mnt, ignore_errors=True)

        if fs:
            with open(img, "wb") as f:
                f.truncate(max(1 << 30, 3 * file_size(archive)))
            subprocess.run(["mkfs.ext4", "-q", "-F", img], check=True)
            subprocess.run(["mount", "-o", "loop", img, mnt], check=True)
        # A --quick head of the tarball ends inside a member: tar complains, the rest is extracted.
        subprocess.run(["tar", "xf", archive, "-C", mnt], stderr=subprocess.DEVNULL)
        os.sync()
        return mnt, cleanup

    @staticmethod
    def tree_files(folder):
        """The regular files under `folder` (symbolic links are not followed, as -r without -f)."""
        found = []
        for d, _, names in os.walk(folder):
            for n in names:
                p = os.path.join(d, n)
                if not os.path.islink(p) and os.path.isfile(p):
                    found.append(p)
        return found

    def verify_tree(self, inputs, outputs, sums):
        """Every input has its .zst and nothing else appeared (with --tree-rm:
        and every input is gone), every .zst passes `zstd -t`, and 200 of
        them (spread over the tree) decompress to their input: compared with
        `cmp`, or with --tree-rm with the sha256 taken before the run."""
        expected = [p + ".zst" for p in inputs]
        if sorted(outputs) != sorted(expected):
            extra = sorted(set(outputs) - set(expected))
            missing = sorted(set(expected) - set(outputs))
            return False, "%d inputs, %d new files, e.g. %s" % (
                len(inputs), len(outputs), ("missing " + missing[0]) if missing else ("unexpected " + extra[0]))
        if self.a.tree_rm:
            left = [p for p in inputs if os.path.lexists(p)]
            if left:
                return False, "--rm left %d inputs, e.g. %s" % (len(left), left[0])
        for i in range(0, len(outputs), 2000):
            t = subprocess.run([self.a.zstd, "-t", "-q"] + outputs[i:i + 2000], stderr=subprocess.PIPE)
            if t.returncode != 0:
                return False, "zstd -t failed: %s" % t.stderr.decode("utf-8", "replace")[-300:]
        for inp, digest in sums.items():
            if digest is None:
                ok = self.roundtrip_ok(inp + ".zst", inp)
            else:
                d = subprocess.run([self.a.zstd, "-d", "-c", "-q", inp + ".zst"], stdout=subprocess.PIPE)
                ok = d.returncode == 0 and hashlib.sha256(d.stdout).hexdigest() == digest
            if not ok:
                return False, "ROUND TRIP FAILED for %s.zst" % inp
        return True, "every input has its output%s; zstd -t on all %d; zstd -d and compared on %d" % (
            " and is gone" if self.a.tree_rm else "", len(outputs), len(sums))

    def tree_samples(self, inputs):
        """200 inputs spread over the tree, with their sha256 when --tree-rm
        removes them (taken untimed before the run), else None (cmp after)."""
        step = max(1, len(inputs) // 200)
        sums = {}
        for p in sorted(inputs)[::step]:
            if self.a.tree_rm:
                with open(p, "rb") as f:
                    sums[p] = hashlib.sha256(f.read()).hexdigest()
            else:
                sums[p] = None
        return sums

    def sec_tree(self):
        archive = self.tree_archive()
        if not archive:
            log("bench: section tree skipped: no tar to extract (the main corpus is not a tar)")
            return
        fs = os.geteuid() == 0 and shutil.which("mkfs.ext4") is not None and os.path.isdir("/dev/shm")
        n = self.N
        a = self.a
        rm = ["--rm"] if a.tree_rm else []
        weir_base = [a.weir, "-q", "-T%d" % n] + self.weir_extra
        tools = ([("weir", "weir -T%d -r" % n, weir_base)] + self.variant_tools("weir -T%d -r" % n, weir_base)
                 + [("zstd", "zstd -T%d -r" % n, [a.zstd, "-q", "-T%d" % n])])
        cases = []
        mnt = os.path.join(self.work, "tree")  # where fresh_tree extracts the archive
        for fam, tool, base in tools:
            cases.append({"section": "tree", "op": "compress", "family": fam, "tool": tool + " ".join([""] + rm),
                          "mode": "tree", "level": 3, "threads": n, "group": "tree",
                          "input": os.path.basename(archive),
                          "argv": synced(base + ["-3", "-r"] + rm + [mnt], ["-f", mnt]),
                          "cmd": self.disp(base + ["-3", "-r"] + rm + ["TREE"]) + " && sync -f TREE",
                          "runs": []})
        where = ("into a fresh ext4 on %s" % ("the disk (bench/work)" if a.tree_on_disk else "/dev/shm")
                 if fs else "into a fresh folder")
        log("bench: section tree: %s extracted %s before every run (%d runs)" % (
            os.path.basename(archive), where, a.runs))
        t0 = time.time()
        files = data_bytes = None
        for rnd in range(a.runs):
            log(" round %d/%d" % (rnd + 1, a.runs))
            k = rnd % len(cases)
            for c in cases[k:] + cases[:k]:
                folder, cleanup = self.fresh_tree(archive, fs)
                try:
                    inputs = self.tree_files(folder)
                    files, data_bytes = len(inputs), sum(file_size(p) for p in inputs)
                    sums = self.tree_samples(inputs)
                    os.sync()
                    m = self.run_timed(c["argv"])
                    m["round"] = rnd
                    before = set(inputs)
                    outputs = [p for p in self.tree_files(folder) if p not in before]
                    m["out_bytes"] = sum(file_size(p) for p in outputs)
                    if m["ok"]:
                        ok, how = self.verify_tree(inputs, outputs, sums)
                        m["verified"] = how
                        if not ok:
                            m["ok"], m["error"] = False, how
                finally:
                    cleanup()
                c["runs"].append(m)
                c["data_bytes"] = data_bytes
                log("  tree       %-16s %7.2f s  user %6.2f  sys %6.2f  rss %7.1f MiB  %s" % (
                    c["tool"], m["wall"], m["user"] or 0, m["sys"] or 0, (m["rss_kb"] or 0) / 1024,
                    "ok" if m["ok"] else "FAILED: %s" % m["error"]))
        for c in cases:
            summarize(c)
        self.data["sections"]["tree"] = {
            "title": "A tree of small files (-r), level 3, each output beside its input",
            "runs": a.runs, "cases": [public(c) for c in cases], "seconds": time.time() - t0,
            "files": files, "bytes": data_bytes, "fresh_fs": fs, "archive": os.path.basename(archive),
            "on_disk": bool(a.tree_on_disk), "rm": bool(a.tree_rm),
            "notes": []}

    # --- seek: random access (--range, --index, -l) ------------------------------
    def seek_range(self, size):
        """(offset, length) of the range: 1 MiB at 1 GB (10^9), or with --quick
        or --corpus at min(1 GB, half the input)."""
        length = 1 << 20
        offset = 10 ** 9
        if self.a.quick or self.a.corpus or size < offset + length:
            offset = min(offset, size // 2)
        return offset, max(0, min(length, size - offset))

    def seek_prepare(self, script, path, label, tar):
        """Runs one preparation command (bash, untimed), checks that PATH
        decodes to TAR (zstd -d | cmp) and returns its description."""
        log("bench: preparing %s: %s" % (label, self.disp_prefix(script)))
        subprocess.run(["bash", "-c", "set -e; " + script], check=True)
        if not self.roundtrip_ok(path, tar):
            die("could not prepare %s: zstd -d | cmp with the corpus failed" % path)
        frames = skips = None
        listing = cmd_output([self.a.zstd, "-l", path]).split("\n")
        fm = re.match(r"\s*(\d+)\s+(\d+)\s", listing[1]) if len(listing) > 1 else None
        if fm:
            frames, skips = int(fm.group(1)) - int(fm.group(2)), int(fm.group(2))
        return {"label": label, "name": os.path.basename(path), "bytes": file_size(path), "frames": frames,
                "skippable": skips, "cmd": self.disp_prefix(script)}

    def sec_seek(self):
        a = self.a
        t0 = time.time()
        tar = self.main
        size = file_size(tar)
        offset, length = self.seek_range(size)
        d = os.path.join(self.work, "seek")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        q = shlex.quote
        wz, pz, cz = (os.path.join(d, x) for x in ("weir.zst", "pzstd.zst", "cat8.zst"))
        copy, indexed = os.path.join(d, "pzstd-copy.zst"), os.path.join(d, "pzstd-indexed.zst")
        weir_c = " ".join(q(x) for x in [a.weir, "-q", "-c"] + self.weir_extra)
        warm(tar)
        inputs = [
            self.seek_prepare("%s %s > %s" % (weir_c, q(tar), q(wz)), wz, "weir's file (seek table)", tar),
            self.seek_prepare("%s -q -p %d -c %s > %s" % (q(a.pzstd), self.N, q(tar), q(pz)), pz,
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
        inputs.append(self.seek_prepare(script, cz, "8 weir files concatenated (8 equal pieces)", tar))
        inputs[-1]["made"] = ("8 pieces of P = %s bytes, `tail -c +$((i*P+1)) | head -c $P` (the last: to the "
                              "end), `%s` each, `cat` (the script is under Commands)" % (
                                  "{:,}".format(piece), self.disp_prefix(weir_c)))
        for x in inputs:
            warm(os.path.join(d, x["name"]))
        prep_seconds = time.time() - t0

        rng = "--range=%d:+%s" % (offset, "1M" if length == 1 << 20 else str(length))
        pipe = "%s -dc %s | tail -c +%d | head -c %d" % (q(a.zstd), q(wz), offset + 1, length)

        def case(key, label, group, family, argv, data_bytes, verify, inp, out=None, cmd=None, **extra):
            c = {"section": "seek", "op": key.split("-")[0], "key": key, "family": family, "tool": label,
                 "case_label": label, "mode": "null" if out is None else "file", "level": None,
                 "threads": None, "group": group, "input": os.path.basename(inp), "data_bytes": data_bytes,
                 "argv": argv, "stdin": None, "stdout": None, "prefix": None, "out": out,
                 "cmd": cmd or self.disp(argv), "verify": verify, "orig": tar, "runs": []}
            c.update(extra)
            return c

        def ranged(key, label, group, family, argv, inp, cmd=None):
            return case(key, label, group, family, argv, length, "range", inp, cmd=cmd, range=(offset, length))

        def bare(argv):  # a command whose output is a file, not stdout
            return " ".join(q(self.disp_path(x)) for x in argv)

        g_range, g_all = "weir.zst, a range", "weir.zst, everything"
        cases = [
            ranged("range-weir", "range, weir's file", g_range, "weir", [a.weir, "-d", rng, wz, "-c"], wz),
            ranged("pipe-zstd", "zstd -dc | tail | head", g_range, "zstd", ["sh", "-c", pipe], wz,
                   cmd="sh -c %s > /dev/null" % q(self.disp_prefix(pipe))),
            case("all-weir", "decode everything: weir -dc", g_all, "weir", [a.weir, "-dc", wz], size, "plain", wz),
            case("all-zstd", "decode everything: zstd -dc", g_all, "zstd", [a.zstd, "-dc", wz], size, "plain", wz),
            ranged("range-pzstd", "range, pzstd's file", "pzstd.zst, a range", "weir",
                   [a.weir, "-d", rng, pz, "-c"], pz),
            case("index-pzstd", "--index pzstd's file", "pzstd.zst, --index", "weir",
                 synced([a.weir, "--index", copy], [copy]), size, "indexed", pz, out=copy,
                 cmd="cp %s %s  # untimed, before each run\n%s && sync %s" % (
                     q(self.disp_path(pz)), q(self.disp_path(copy)), bare([a.weir, "--index", copy]),
                     q(self.disp_path(copy))),
                 setup=lambda: shutil.copyfile(pz, copy), keep_as=indexed),
            ranged("range-indexed", "range, pzstd's file after --index", "pzstd.zst after --index, a range",
                   "weir", [a.weir, "-d", rng, indexed, "-c"], indexed),
            case("list-cat8", "-l, 8 weir files concatenated", "-l", "weir", [a.weir, "-l", cz], file_size(cz),
                 "listing", cz, list_expect=(cz, size)),
            case("list-pzstd", "-l, pzstd's file (scan)", "-l", "weir", [a.weir, "-l", pz], file_size(pz),
                 "listing", pz, list_expect=(pz, None)),
        ]
        try:
            self.section(
                "seek", "Random access: 1 MiB at byte %s of the main corpus (%s)" % (
                    "{:,}".format(offset), human(size)), cases, a.runs, warm_up=False, t0=t0,
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

    # --- lean: issue 31, lean at every level ---------------------------------------
    def sec_verify(self):
        """Issue 42: what --verify costs.  weir -TN with and without it, beside
        zstd -TN, file->/dev/null: level 3 on the main corpus, level 19 on the
        lean RSS slice (decoding costs the same; compressing, much more)."""
        a, n = self.a, self.N
        high = self.corpus_head(a.lean_rss_size)
        self.data["corpus"]["verify_high"] = self.describe(high, "verify: slice for level 19")
        weir = [a.weir, "-q", "-T%d" % n] + self.weir_extra
        tools = [("weir", "weir -T%d" % n, weir), ("weir:verify", "weir -T%d --verify" % n, weir + ["--verify"]),
                 ("zstd", "zstd -T%d" % n, [a.zstd, "-q", "-T%d" % n])]
        cases = []
        for level, inp in ((3, self.main), (19, high)):
            warm(inp)
            for fam, tool, base in tools:
                cases.append(self.make_case("verify", "compress", fam, tool, base, "null", inp, level=level,
                                            threads=n, group="level %d" % level))
        self.section("verify", "--verify: every frame decoded and compared before it is written", cases, a.runs)

    def sec_resume(self):
        """Issue 42, what resuming costs and saves, file->file at level 3 on
        the main corpus: weir -TN (resumable: the default) against weir -TN
        --no-resume (the checkpoints' syncs) beside zstd -TN, alternating; and
        the same weir command run again after a run of it was stopped
        (SIGTERM, untimed) once its NAME.part held the frames of 80% of the
        input (from the seek table of an untimed run)."""
        a, n = self.a, self.N
        inp = self.main
        warm(inp)
        weir = [a.weir, "-q", "-T%d" % n] + self.weir_extra
        tools = [("weir", "weir -T%d" % n, weir),
                 ("weir:no-resume", "weir -T%d --no-resume" % n, weir + ["--no-resume"]),
                 ("zstd", "zstd -T%d" % n, [a.zstd, "-q", "-T%d" % n])]
        cases = [self.make_case("resume", "compress", fam, tool, base, "file", inp, level=3, threads=n,
                                group="uninterrupted") for fam, tool, base in tools]
        resumed = self.make_case("resume", "compress", "weir:resumed", "weir -T%d, run again" % n, weir, "file",
                                 inp, level=3, threads=n, group="resumed at 80%", tag="resumed")
        out, share = resumed["out"], 0.8
        plain = weir + ["-3", "-f", inp, "-o", out]
        # Where 80% of the input is in the output: one run, untimed, whose
        # seek table gives the output bytes of the frames holding it.
        subprocess.run(plain, check=True)
        with open(out, "rb") as f:
            f.seek(-9, os.SEEK_END)
            count, descriptor = struct.unpack("<IB", f.read(5))
            size = 12 if descriptor & 0x80 else 8
            f.seek(-9 - count * size, os.SEEK_END)
            table = f.read(count * size)
        frames = [struct.unpack_from("<II", table, i * size) for i in range(count)]
        expected, held = 0, 0
        for compressed, decompressed in frames:  # the last frame boundary at or before 80%
            if held + decompressed > share * file_size(inp):
                break
            expected, held = expected + compressed, held + decompressed
        os.unlink(out)
        resumed["kept"] = []

        def stop_at_share():
            """A run of the same command, stopped by SIGTERM once OUT.part
            holds the frames of `share` of the input; what its record keeps."""
            record = os.path.join(os.path.dirname(out), "." + os.path.basename(out) + ".part.resume")
            for left in (out + ".part", record):
                if os.path.exists(left):
                    os.unlink(left)
            p = subprocess.Popen(plain, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            while p.poll() is None:
                if os.path.exists(out + ".part") and file_size(out + ".part") >= expected:
                    p.send_signal(signal.SIGTERM)
                    break
                time.sleep(0.002)
            p.wait()
            lines = open(record).read().splitlines() if os.path.exists(record) else []
            points = [line.split() for line in lines if line.startswith("checkpoint ")]
            resumed["kept"].append(int(points[-1][3]) / file_size(inp) if points else 0.0)
        # The floor: the bytes the resumed run compresses, as a file of their
        # own (the input after the kept frames' last boundary at or before 80%).
        rest = os.path.join(self.work, "resume-rest.in")
        with open(inp, "rb") as fi, open(rest, "wb") as fo:
            fi.seek(held)
            shutil.copyfileobj(fi, fo, 1 << 23)
        warm(rest)
        alone = self.make_case("resume", "compress", "weir:rest", "weir -T%d, the last %d%% alone" % (
            n, round(100 - 100 * held / file_size(inp))), weir, "file", rest, level=3, threads=n,
            group="resumed at 80%", tag="rest", data_bytes=file_size(inp))
        resumed["setup"] = stop_at_share
        resumed["cmd"] = "# untimed: the same command, SIGTERM once OUT.part holds %d bytes (80%% of the input)\n%s" % (
            expected, resumed["cmd"])
        self.section("resume", "Resume: the checkpoints' cost, and a run resumed at 80%", cases + [resumed, alone],
                     a.runs,
                     extra={"expected_bytes": expected, "share": share})

    def sec_formats(self):
        """Issue 40: the other formats, weir -TN --format=… beside each format's
        own tools, stdin->stdout (gzip, xz and lz4 write only to stdout with a
        name of their choosing), each output decoded by the format's own tool;
        and decoding a stock gzip -6 file, file->/dev/null.  xz on the slice:
        at level 6 it is 20x slower than the rest."""
        a, n = self.a, self.N
        weir = [a.weir, "-q", "-T%d" % n] + self.weir_extra
        groups = [  # (group, input, level, decoder, tools)
            ("gzip -6", self.main, 6, ["gzip", "-dc"], [
                ("weir", "weir -T%d --format=gzip" % n, weir + ["--format=gzip"]),
                ("pigz", "pigz -p%d" % n, ["pigz", "-p%d" % n]), ("gzip", "gzip", ["gzip"])]),
            ("gzip -1", self.main, 1, ["gzip", "-dc"], [
                ("weir", "weir -T%d --format=gzip" % n, weir + ["--format=gzip"]),
                ("pigz", "pigz -p%d" % n, ["pigz", "-p%d" % n])]),
            ("xz -6", self.slice, 6, ["xz", "-dc"], [
                ("weir", "weir -T%d --format=xz" % n, weir + ["--format=xz"]),
                ("xz", "xz -T%d" % n, ["xz", "-T%d" % n])]),
            ("lz4 -1", self.main, 1, ["lz4", "-dc"], [
                ("weir", "weir -T%d --format=lz4" % n, weir + ["--format=lz4"]), ("lz4", "lz4", ["lz4", "-q"])]),
        ]
        cases = []
        for group, inp, level, decoder, tools in groups:
            warm(inp)
            for fam, tool, base in tools:
                cases.append(self.make_case("formats", "compress", fam, tool, base, "stdio", inp, level=level,
                                            threads=n, group=group, verify="decoded",
                                            extra={"decoder": decoder}))
        stock = os.path.join(self.work, "stock.gz")
        log("bench: preparing the stock gzip file: gzip -6 -c %s > %s" % (self.disp_path(self.main), stock))
        with open(self.main, "rb") as fin, open(stock, "wb") as fout:
            subprocess.run(["gzip", "-6", "-c"], stdin=fin, stdout=fout, check=True)
        warm(stock)
        for fam, tool, base in (("weir", "weir -d -T%d" % n, weir), ("gzip", "gzip -d", ["gzip"]),
                                ("pigz", "pigz -d -p%d" % n, ["pigz", "-p%d" % n])):
            c = self.make_case("formats", "decompress", fam, tool, base, "null", stock, threads=n,
                               group="gunzip", data_bytes=file_size(self.main), verify="plain", orig=self.main)
            c["input_bytes"] = file_size(stock)
            cases.append(c)
        self.section("formats", "Other formats (issue 40): gzip, xz and lz4 beside their own tools", cases, a.runs)
        os.unlink(stock)

    def sec_adapt(self):
        """Issue 40: weir --adapt against fixed levels and zstd --adapt -TN through pv -L (adapt.py)."""
        adapt.run(self, busy_seconds)

    def sec_lean(self):
        """Issue 31's table from one run: level 3 on a 300 MB slice from a file
        and through a pipe, decoding weir's file of it, each against the limit
        (N zstd -b3 -T1 at once on the slice, measured at the start of every
        round); peak RSS and speed at each level on a 20 MB slice, and on the
        5 MB file.  The -r row comes from the tree section, when it runs."""
        a, n = self.a, self.N
        t0 = time.time()
        big = self.corpus_head(a.lean_size)
        rss = self.corpus_head(a.lean_rss_size)
        small = self.corpus_head(a.small_size)
        self.data["corpus"]["lean"] = self.describe(big, "lean: slice for level 3 and the limit")
        self.data["corpus"]["lean_rss"] = self.describe(rss, "lean: slice for peak RSS at each level")
        src_dir = os.path.join(self.work, "lean-inputs")
        os.makedirs(src_dir, exist_ok=True)
        tools = self.comp_tools(with_single=False)
        for path in (big, rss, small):
            warm(path)
        # decoding: weir's file of the slice by every decoder, pzstd's own file by pzstd -d
        sources = {fam: self.dec_input(fam, base, big, src_dir) for fam, _, base in tools
                   if fam in ("weir", "pzstd")}
        for s in sources.values():
            warm(s["path"])
        big_bytes = file_size(big)
        cases = []
        for fam, tool, base in tools:
            cases.append(self.make_case("lean", "compress", fam, tool, base, "null", big, level=3, threads=n,
                                        group="L3 slice", extra={"row": "file"}))
        for fam, tool, base in tools:
            if fam == "pzstd":
                continue  # the pipe row compares weir with zstd -T2 (pzstd's figure: the compress section)
            cases.append(self.make_case("lean", "compress", fam, tool, base, "pipenull", big, level=3,
                                        threads=n, group="L3 slice, pipe", extra={"row": "pipe"}))
        for fam, tool, base in self.dec_tools():
            src = sources["pzstd" if fam == "pzstd" else "weir"]
            c = self.make_case("lean", "decompress", fam, tool, base, "null", src["path"], threads=n,
                               group="decode slice", data_bytes=big_bytes, verify="plain", orig=big,
                               extra={"row": "dec", "source": src["family"], "source_label": src["label"]})
            c["input_bytes"] = src["bytes"]
            cases.append(c)
        for level, flags, label in a.lean_levels:
            for fam, tool, base in tools:
                if fam == "pzstd" and level < 1:
                    continue  # pzstd has no --fast
                cases.append(self.make_case(
                    "lean", "compress", fam, tool, base, a.lean_mode, rss, level=level, threads=n,
                    group="RSS %s" % label, flags=flags, tag="L%s" % label,
                    extra={"row": "level", "level_label": label, "level_flags": " ".join(flags)}))
        for fam, tool, base in tools:
            cases.append(self.make_case("lean", "compress", fam, tool, base, a.lean_mode, small, level=3,
                                        threads=n, group="RSS small", tag="small",
                                        extra={"row": "small", "level_label": "-3", "level_flags": "-3"}))
        # start-up (issue 41): peak RSS of --version and of -c of an empty file, weir beside zstd
        empty = os.path.join(src_dir, "empty")
        open(empty, "wb").close()
        for fam, tool, base in tools:
            if fam not in ("weir", "zstd"):
                continue
            cases.append(self.make_case("lean", "compress", fam, tool, base, "null", empty, level=3, threads=n,
                                        group="start -c", tag="start_c",
                                        extra={"row": "start", "level_label": "-c", "level_flags": "-c"}))
            c = self.make_case("lean", "compress", fam, tool, base, "null", empty, level=3, threads=n,
                               group="start --version",
                               tag="start_version", verify="version",
                               extra={"row": "start", "level_label": "--version", "level_flags": "--version"})
            c["argv"] = [base[0], "--version"]
            c["cmd"] = self.disp(c["argv"])
            cases.append(c)

        # the limit, at the start of every round, beside the tools' runs
        limit_argv = self.ceiling_argv(big)
        limit_runs = []

        def limit(rnd):
            r = self.limit_run(limit_argv, n)
            r["round"] = rnd
            limit_runs.append(r)
            if r["ok"]:
                log("  lean       limit: %d x zstd -b3 -T1 at once: compress %.0f MB/s, decompress %.0f MB/s "
                    "together" % (n, r["comp_mbps"], r["dec_mbps"]))
            else:
                log("  lean       limit: %d x zstd -b3 -T1 at once FAILED" % n)

        mode_title = MODE_TITLE[a.lean_mode]
        try:
            self.section(
                "lean", "Lean at every level (issue 31)", cases, a.runs, t0=t0, before_round=limit,
                notes=[
                    "The limit: %d copies of `%s` started together at the start of every round, their MB/s "
                    "added up (compression and decompression, libzstd in memory on one core each, no I/O)."
                    % (n, " ".join(shlex.quote(self.disp_path(x)) for x in limit_argv)),
                    "Decoding: weir -d and zstd -d decode weir's file of the slice, pzstd -d its own; both made "
                    "once, untimed, and checked with `zstd -d | cmp`.",
                    "Peak RSS at each level and for the small file: %s; pzstd has no `--fast`." % mode_title,
                ],
                extra={"limit_cmd": " ".join(shlex.quote(self.disp_path(x)) for x in limit_argv),
                       "limit_runs": limit_runs,
                       "slice_bytes": big_bytes, "rss_slice_bytes": file_size(rss),
                       "small_bytes": file_size(small), "rss_mode": a.lean_mode,
                       "levels": [label for _, _, label in a.lean_levels],
                       "sources": [{k: v for k, v in s.items() if k != "path"} for s in sources.values()]})
        finally:
            if not a.keep_work:
                shutil.rmtree(src_dir, ignore_errors=True)
        sec = self.data["sections"]["lean"]
        sec["limit_comp_mbps"] = median(r["comp_mbps"] for r in limit_runs if r["ok"])
        sec["limit_dec_mbps"] = median(r["dec_mbps"] for r in limit_runs if r["ok"])

    # --- meta ------------------------------------------------------------------
    def meta(self):
        a = self.a
        cpu = "unknown"
        try:
            for line in open("/proc/cpuinfo"):
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
        except OSError:
            pass
        mem = None
        try:
            for line in open("/proc/meminfo"):
                if line.startswith("MemTotal:"):
                    mem = int(line.split()[1]) * 1024
        except OSError:
            pass
        osname = platform.system()
        try:
            for line in open("/etc/os-release"):
                if line.startswith("PRETTY_NAME="):
                    osname = line.split("=", 1)[1].strip().strip('"')
        except OSError:
            pass
        git = cmd_output(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], stderr=False)
        dirty = cmd_output(["git", "-C", ROOT, "status", "--porcelain", "--", "Sources", "Package.swift"],
                           stderr=False)
        now = datetime.datetime.now(datetime.timezone.utc)
        return {
            "date": now.strftime("%Y-%m-%d"),
            "datetime_utc": now.strftime("%Y-%m-%d %H:%M:%S UTC"),
            "nproc": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
            "cpu_model": cpu,
            "mem_bytes": mem,
            "kernel": platform.release(),
            "os": osname,
            "zstd_version": cmd_output([a.zstd, "-V"]),
            "pzstd_version": cmd_output([a.pzstd, "-V"]),
            "weir_version": cmd_output([a.weir, "--version"]),
            "weir_bin": os.path.relpath(a.weir, ROOT) if a.weir.startswith(ROOT + os.sep) else a.weir,
            "weir_args": a.weir_args or "",
            "git_commit": git + (" (Sources/ modified)" if dirty else ""),
            "python": platform.python_version(),
            "threads": self.N,
            "runs": a.runs,
            "small_runs": a.small_runs,
            "memory_runs": a.memory_runs,
            "quick": a.quick,
            "command": a.command_line or "scripts/bench",
            "time_format": TIME_FMT,
            "modes": a.modes,
            "outputs_synced": True,  # every file output timed until `sync` on it returns
            "loadavg_start": open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else None,
        }

    # --- main ------------------------------------------------------------------
    def run(self):
        a = self.a
        self.prepare_corpus()
        self.data["meta"] = self.meta()
        log("bench: weir %s, %d threads, corpus %s (%s)" % (
            self.data["meta"]["weir_version"], self.N, self.disp_path(self.main), human(file_size(self.main))))
        try:
            for name in SECTIONS:
                if name in a.sections:
                    getattr(self, "sec_" + name)()
        finally:
            if not a.keep_work:
                shutil.rmtree(self.work, ignore_errors=True)
        self.data["meta"]["elapsed_seconds"] = time.time() - self.started
        loads = [r["other_load"] for sec in self.data["sections"].values() for c in sec.get("cases", [])
                 for r in c["runs"] if r.get("other_load") is not None]
        self.data["meta"]["other_load_median"] = median(loads)
        self.data["meta"]["other_load_max"] = max(loads) if loads else None
        self.data["meta"]["loadavg_end"] = open("/proc/loadavg").read().split()[:3] \
            if os.path.exists("/proc/loadavg") else None
        self.data["targets"] = report.compute_targets(self.data)
        return self.data


def public(case):
    """The JSON view of a case: no absolute paths or internal keys."""
    drop = {"argv", "stdin", "stdout", "prefix", "out", "orig", "verify_key", "stream_sha256", "setup",
            "range", "keep_as", "list_expect"}
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


def unique_stem(out_dir, base):
    stem, i = base, 2
    while any(os.path.exists(os.path.join(out_dir, stem + ext)) for ext in (".md", ".json")):
        stem = "%s-%d" % (base, i)
        i += 1
    return stem


def render(data, json_path, args):
    """Write the markdown report and the chart next to the JSON."""
    stem = os.path.splitext(json_path)[0]
    chart_files = []
    chart_cmd = [args.chart_python or sys.executable, os.path.join(HERE, "chart.py"), json_path, stem]
    p = subprocess.run(chart_cmd, stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    if p.returncode == 0:
        chart_files = [os.path.basename(x) for x in p.stdout.split() if x]
    else:
        log("bench: warning: the chart failed (%s; it needs python3-matplotlib); the report is written anyway"
            % " ".join(chart_cmd))
    md_path = stem + ".md"
    with open(md_path, "w") as f:
        rel = os.path.relpath(json_path, ROOT) if json_path.startswith(ROOT + os.sep) else json_path
        f.write(report.render(data, os.path.basename(json_path), chart_files, json_rel=rel))
    return md_path, [os.path.join(os.path.dirname(stem), c) for c in chart_files]


def main():
    nproc = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    p = argparse.ArgumentParser(prog="scripts/bench", description="See scripts/bench --help.")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--runs", type=int)
    p.add_argument("--small-runs", type=int)
    p.add_argument("--memory-runs", type=int, default=1)
    p.add_argument("--threads", "-T", type=int, default=nproc)
    p.add_argument("--sections", type=parse_choice_list(SECTIONS), default=list(SECTIONS))
    p.add_argument("--skip", type=parse_choice_list(SECTIONS), default=[])
    p.add_argument("--modes", type=parse_choice_list(MODES), default=["file", "null", "stdio", "pipe"])
    p.add_argument("--levels", type=parse_int_list, default=[1, 19])
    p.add_argument("--level-modes", type=parse_choice_list(MODES), default=["file"])
    p.add_argument("--scaling-threads", type=parse_int_list)
    p.add_argument("--slice-size", type=parse_size)
    p.add_argument("--small-size", type=parse_size, default=parse_size("5M"))
    p.add_argument("--lean-size", type=parse_size)
    p.add_argument("--adapt-size", type=parse_size)
    p.add_argument("--adapt-rates", type=parse_size_list, default=[20 * 10 ** 6, 100 * 10 ** 6, 400 * 10 ** 6, 0])
    p.add_argument("--adapt-levels", type=parse_int_list, default=[1, 3, 5, 7, 9, 12])
    p.add_argument("--lean-rss-size", type=parse_size, default=parse_size("20M"))
    p.add_argument("--lean-levels", type=parse_lean_levels, default=parse_lean_levels("fast3,1,3,9,19,22"))
    p.add_argument("--lean-mode", choices=["null", "file"], default="null")
    p.add_argument("--quick-size", type=parse_size, default=parse_size("200M"))
    p.add_argument("--memory-sizes", type=parse_size_list)
    p.add_argument("--memory-scaling", action="store_true")
    p.add_argument("--ceiling-seconds", type=int)
    p.add_argument("--corpus", help="use this file as the main corpus")
    p.add_argument("--tarball", default=os.path.join(ROOT, "bench", "corpus", "linux-6.1.tar"))
    p.add_argument("--corpus-dir", default=os.path.join(ROOT, "bench", "corpus"))
    p.add_argument("--work-dir", default=os.path.join(ROOT, "bench", "work"))
    p.add_argument("--out-dir")
    p.add_argument("--label", default="")
    p.add_argument("--weir-args", default="")
    p.add_argument("--weir-variant", action="append", default=[])
    p.add_argument("--tree-rm", action="store_true")
    p.add_argument("--tree-on-disk", action="store_true")
    p.add_argument("--keep-work", action="store_true")
    p.add_argument("--report-only", metavar="JSON")
    p.add_argument("--weir", default=os.environ.get("WEIR_BIN", os.path.join(ROOT, ".build-bench", "release", "weir")))
    p.add_argument("--zstd", default=os.environ.get("ZSTD_BIN", "zstd"))
    p.add_argument("--pzstd", default=os.environ.get("PZSTD_BIN", "pzstd"))
    p.add_argument("--time", default=os.environ.get("TIME_BIN", "/usr/bin/time"))
    p.add_argument("--chart-python", default=os.environ.get("BENCH_CHART_PYTHON"))
    p.add_argument("--command-line", default=os.environ.get("BENCH_COMMAND_LINE"))
    a = p.parse_args()

    if a.report_only:
        data = json.load(open(a.report_only))
        md, charts = render(data, os.path.abspath(a.report_only), a)
        print(md)
        for c in charts:
            print(c)
        return

    # defaults that depend on --quick
    a.runs = a.runs or (1 if a.quick else 3)
    a.small_runs = a.small_runs or (5 if a.quick else max(15, a.runs))
    a.slice_size = a.slice_size or parse_size("20M" if a.quick else "100M")
    a.lean_size = a.lean_size or parse_size("50M" if a.quick else "300M")
    a.adapt_size = a.adapt_size or parse_size("50M" if a.quick else "1G")
    a.adapt_rates = [r or None for r in a.adapt_rates]  # 0: unthrottled
    a.ceiling_seconds = a.ceiling_seconds or (1 if a.quick else 3)
    if not a.memory_sizes:
        if a.quick:
            a.memory_sizes = [parse_size("100M")] + ([parse_size("1G")] if a.memory_scaling else [])
        else:
            a.memory_sizes = [parse_size("1G")] + ([parse_size("10G")] if a.memory_scaling else [])
    if not a.scaling_threads:
        ts, t = [], 1
        while t < a.threads:
            ts.append(t)
            t *= 2
        a.scaling_threads = ts + [a.threads]
    a.sections = [s for s in a.sections if s not in a.skip]
    if a.runs < 1 or a.threads < 1:
        die("--runs and --threads must be at least 1")
    if a.runs < 3 and not a.quick:
        log("bench: warning: --runs %d; the issue asks for the median of at least 3" % a.runs)
    for tool in (a.weir, a.zstd, a.pzstd, a.time):
        if not shutil.which(tool):
            die("%s not found" % tool)
    a.weir, a.zstd, a.pzstd, a.time = (os.path.abspath(shutil.which(t)) if os.sep in t else shutil.which(t)
                                       for t in (a.weir, a.zstd, a.pzstd, a.time))
    a.out_dir = a.out_dir or os.path.join(ROOT, "bench", "work" if a.quick else "", "results").replace("//", "/")
    os.makedirs(a.out_dir, exist_ok=True)

    data = Bench(a).run()
    base = data["meta"]["date"] + ("-quick" if a.quick else "") + \
        ("-" + re.sub(r"[^A-Za-z0-9._-]+", "-", a.label) if a.label else "")
    stem = unique_stem(a.out_dir, base)
    json_path = os.path.join(a.out_dir, stem + ".json")
    with open(json_path, "w") as f:
        json.dump(data, f, indent=1, sort_keys=False)
        f.write("\n")
    md, charts = render(data, json_path, a)
    log("bench: done in %.0f s" % data["meta"]["elapsed_seconds"])
    failed = [c for s in data["sections"].values() for c in s.get("cases", []) if c["ok_runs"] < c["n_runs"]]
    for c in failed:
        log("bench: FAILED runs: %s %s %s" % (c["section"], c["tool"], c.get("mode")))
    print(md)
    print(json_path)
    for c in charts:
        print(c)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

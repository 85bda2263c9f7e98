"""Checking the outputs of scripts/bench's runs, by the case's "verify" kind: a compressed file decodes to its input
(zstd -d | cmp, or cmp with an output of the same command already checked so), a decoded file equals the original,
another format's output decodes with its own tool, a range equals the original's bytes, and so on. A wrong output
fails its run. Standard library only."""

import hashlib
import os
import re
import subprocess

from corpus import file_size
from timing import die, log
from weirtools.proc import output


def piped_cmp(argv: list[str], orig: str) -> bool:
    """Does ARGV's standard output equal the file ORIG (and ARGV succeed)?"""
    d = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    c = subprocess.run(["cmp", "-s", "-", orig], stdin=d.stdout)
    d.stdout.close()
    return d.wait() == 0 and c.returncode == 0


def roundtrip_ok(bench, zpath, orig):
    return piped_cmp([bench.a.zstd, "-d", "-c", "-q", zpath], orig)


def prepared(bench, argv: list[str], shown: str, path: str, orig: str) -> dict:
    """An input made once, untimed, by ARGV (SHOWN in the log and the report): PATH, checked to decode to ORIG
    (zstd -d | cmp); its bytes, and its frames and skippable frames as zstd -l counts them."""
    log("bench: preparing %s: %s" % (os.path.basename(path), shown))
    if subprocess.run(argv).returncode != 0 or not roundtrip_ok(bench, path, orig):
        die("could not prepare %s: it failed, or zstd -d | cmp with %s did" % (path, orig))
    listing = output([bench.a.zstd, "-l", path]).split("\n")
    fm = re.match(r"\s*(\d+)\s+(\d+)\s", listing[1]) if len(listing) > 1 else None
    return {"bytes": file_size(path), "frames": int(fm.group(1)) - int(fm.group(2)) if fm else None,
            "skippable": int(fm.group(2)) if fm else None, "cmd": shown}


def same_file(bench, a, b):
    return subprocess.run(["cmp", "-s", a, b]).returncode == 0


def check(bench, case, out):
    """Check one output file.  Returns (ok, how)."""
    kind = case["verify"]
    if kind == "compressed":
        key = case["verify_key"]
        ref = bench.refs.get(key)
        if ref and same_file(bench, out, ref):
            return True, "identical to an output verified by round trip"
        if roundtrip_ok(bench, out, case["orig"]):
            if not ref:
                ref = os.path.join(bench.work, "ref-%s.zst" % hashlib.sha1(key.encode()).hexdigest()[:12])
                os.replace(out, ref)
                bench.refs[key] = ref
            return True, "round trip: zstd -d | cmp with the input"
        return False, "ROUND TRIP FAILED (zstd -d | cmp)"
    if kind == "plain":
        if same_file(bench, out, case["orig"]):
            return True, "cmp with the original"
        return False, "OUTPUT DIFFERS from the original (cmp)"
    if kind == "decoded":
        # another format's output (issue 40): its own tool decodes it, compared with the input
        if piped_cmp(case["decoder"] + [out], case["orig"]):
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
        d = subprocess.Popen([bench.a.zstd, "-d", "-c", "-q", out],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        digest = hashlib.file_digest(d.stdout, "sha256").hexdigest()
        if d.wait() == 0 and digest == case["stream_sha256"]:
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
        listing = output([bench.a.weir, "-lv", out])
        if "from the seek table" not in listing:
            return False, "weir -lv shows no 'from the seek table' after --index: %s" % listing[-300:]
        keep = case.get("keep_as")
        if keep and not os.path.exists(keep):
            if not roundtrip_ok(bench, out, case["orig"]):
                return False, "ROUND TRIP FAILED after --index (zstd -dc | cmp with the original)"
            os.replace(out, keep)  # the first run's output: the input of the range-after-index case
            return True, "weir -lv: from the seek table; zstd -dc | cmp with the original"
        return True, "weir -lv: from the seek table (zstd -dc | cmp checked on the first run)"
    if kind == "listing":
        # weir -l: its row says what zstd -l's says (frames, skippable frames, sizes);
        # for a concatenation of weir files, weir -lv also knows the content size
        path, content_bytes = case["list_expect"]
        got = open(out, encoding="utf-8", errors="replace").read().splitlines()
        want = output([bench.a.zstd, "-l", path]).splitlines()
        if len(got) < 2 or len(want) < 2 or got[1].split()[:-1] != want[1].split()[:-1]:
            return False, "weir -l differs from zstd -l: %r vs %r" % (
                got[1] if len(got) > 1 else got, want[1] if len(want) > 1 else want)
        how = "row equal to zstd -l's (%s)" % " ".join(got[1].split()[:-1])
        if content_bytes is not None:
            verbose = output([bench.a.weir, "-lv", path])
            if not re.search(r"Decompressed Size:.*\(%d B\)" % content_bytes, verbose):
                return False, "weir -lv does not give the content size %d" % content_bytes
            how += "; weir -lv: content size %d B" % content_bytes
        return True, how
    if kind == "tar-index":
        # the index section: weir's output of a tar, its member index listing what tar tf does; then a round trip
        listed = subprocess.run([bench.a.weir, "-l", "--members", out], stdout=subprocess.PIPE)
        if listed.returncode != 0 or listed.stdout != open(case["expect"], "rb").read():
            return False, "weir -l --members differs from tar tf (or found no index)"
        ok, how = check(bench, dict(case, verify="compressed"), out)
        return ok, how + "; weir -l --members equals tar tf"
    if kind.startswith("member"):
        return member_check(bench, case, out)
    raise ValueError(kind)


def member_check(bench, case, out):
    """check's kinds for the members section (member-*). Returns (ok, how)."""
    kind = case["verify"]
    if kind == "member-indexed":
        p = subprocess.run([bench.a.weir, "-l", "--members", out], stdout=subprocess.PIPE)
        if p.returncode != 0 or p.stdout != open(case["expect"], "rb").read():
            return False, "weir -l --members after --index differs from tar tf"
        return True, "weir -l --members equals tar tf"
    if kind == "member-list":
        got = [line.rstrip(b"/") for line in open(out, "rb").read().splitlines()]
        want = [line.rstrip(b"/") for line in open(case["expect"], "rb").read().splitlines()]
        if got == want:
            return True, "equal to tar tf"
        return False, "LISTING DIFFERS from tar tf (%d names against %d)" % (len(got), len(want))
    if kind == "member":
        if subprocess.run(["cmp", "-s", case["member_out"], case["member_ref"]]).returncode == 0:
            return True, "cmp with tar's own extraction of %s" % case["member"]
        return False, "MEMBER DIFFERS from tar's own extraction (or is missing)"
    raise ValueError(kind)


def drop_refs(bench):
    for ref in bench.refs.values():
        if os.path.exists(ref):
            os.unlink(ref)
    bench.refs = {}

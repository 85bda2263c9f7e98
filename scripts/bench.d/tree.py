"""scripts/bench's tree section: weir -TN -r against zstd -TN -r on the files of the corpus tarball, extracted before
every run into a fresh ext4 (as root) or folder, every output checked."""

import hashlib
import os
import shutil
import subprocess

import compress
import harness
import verification
from corpus import file_size
from formatting import cases, col, commands, f_bytes, f_num, f_ratio, find, spec_table, stat, vs
from timing import log, synced


def tree_archive(bench):
    """The tar whose files make the tree: the main corpus when it is a
    tar (the Linux tarball, or its head with --quick), else the tarball."""
    for path in (bench.main, bench.a.tarball):
        if path and os.path.exists(path) and path.endswith(".tar"):
            return path
    return None


def fresh_tree(bench, archive, fs):
    """Extracts `archive` into a new folder; with `fs`, on a new ext4 file
    system (a loop device backed by RAM, or with --tree-on-disk by a file
    on the machine's disk): no run inherits the inodes the previous run
    freed, nor its dirty pages.  Returns (folder, cleanup)."""
    mnt = os.path.join(bench.work, "tree")
    os.makedirs(mnt, exist_ok=True)
    img = (os.path.join(bench.a.work_dir, "weir-bench-tree.img") if bench.a.tree_on_disk
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


def tree_files(folder):
    """The regular files under `folder` (symbolic links are not followed, as -r without -f)."""
    found = []
    for d, _, names in os.walk(folder):
        for n in names:
            p = os.path.join(d, n)
            if not os.path.islink(p) and os.path.isfile(p):
                found.append(p)
    return found


def verify_tree(bench, inputs, outputs, sums):
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
    if bench.a.tree_rm:
        left = [p for p in inputs if os.path.lexists(p)]
        if left:
            return False, "--rm left %d inputs, e.g. %s" % (len(left), left[0])
    for i in range(0, len(outputs), 2000):
        t = subprocess.run([bench.a.zstd, "-t", "-q"] + outputs[i:i + 2000], stderr=subprocess.PIPE)
        if t.returncode != 0:
            return False, "zstd -t failed: %s" % t.stderr.decode("utf-8", "replace")[-300:]
    for inp, digest in sums.items():
        if digest is None:
            ok = verification.roundtrip_ok(bench, inp + ".zst", inp)
        else:
            d = subprocess.run([bench.a.zstd, "-d", "-c", "-q", inp + ".zst"], stdout=subprocess.PIPE)
            ok = d.returncode == 0 and hashlib.sha256(d.stdout).hexdigest() == digest
        if not ok:
            return False, "ROUND TRIP FAILED for %s.zst" % inp
    return True, "every input has its output%s; zstd -t on all %d; zstd -d and compared on %d" % (
        " and is gone" if bench.a.tree_rm else "", len(outputs), len(sums))


def tree_samples(bench, inputs):
    """200 inputs spread over the tree, with their sha256 when --tree-rm
    removes them (taken untimed before the run), else None (cmp after)."""
    step = max(1, len(inputs) // 200)
    sums = {}
    for p in sorted(inputs)[::step]:
        if bench.a.tree_rm:
            with open(p, "rb") as f:
                sums[p] = hashlib.sha256(f.read()).hexdigest()
        else:
            sums[p] = None
    return sums


def measure(bench):
    archive = tree_archive(bench)
    if not archive:
        log("bench: section tree skipped: no tar to extract (the main corpus is not a tar)")
        return
    fs = os.geteuid() == 0 and shutil.which("mkfs.ext4") is not None and os.path.isdir("/dev/shm")
    n = bench.N
    a = bench.a
    rm = ["--rm"] if a.tree_rm else []
    weir_base = [a.weir, "-q", "-T%d" % n] + bench.weir_extra
    tools = ([("weir", "weir -T%d -r" % n, weir_base)] + harness.variant_tools(bench, "weir -T%d -r" % n, weir_base)
             + [("zstd", "zstd -T%d -r" % n, [a.zstd, "-q", "-T%d" % n])])
    mnt = os.path.join(bench.work, "tree")  # where fresh_tree extracts the archive
    tree = {}  # the run's tree: its folder, inputs, samples and cleanup

    def extract(c):  # before each run, untimed: a fresh tree, its files listed and sampled
        tree["folder"], tree["cleanup"] = fresh_tree(bench, archive, fs)
        tree["inputs"] = tree_files(tree["folder"])
        tree["sums"] = tree_samples(bench, tree["inputs"])
        tree["files"], c["data_bytes"] = len(tree["inputs"]), sum(file_size(p) for p in tree["inputs"])

    def check(m):  # after each run: every input's output; then the tree goes
        try:
            before = set(tree["inputs"])
            outputs = [p for p in tree_files(tree["folder"]) if p not in before]
            m["out_bytes"] = sum(file_size(p) for p in outputs)
            if m["ok"]:
                ok, how = verify_tree(bench, tree["inputs"], outputs, tree["sums"])
                m["verified"] = how
                if not ok:
                    m["ok"], m["error"] = False, how
        finally:
            tree.pop("cleanup")()

    cases = [harness.custom_case(bench, "tree", "compress", tool + " ".join([""] + rm), fam, "tree", synced(
        base + ["-3", "-r"] + rm + [mnt], ["-f", mnt]), None, archive, None, None, mode="tree", level=3, threads=n,
        cmd=bench.disp(base + ["-3", "-r"] + rm + ["TREE"]) + " && sync -f TREE", check=check)
        for fam, tool, base in tools]
    for c in cases:
        c["setup"] = lambda c=c: extract(c)
    where = ("into a fresh ext4 on %s" % ("the disk (bench/work)" if a.tree_on_disk else "/dev/shm")
             if fs else "into a fresh folder")
    log("bench: section tree: %s extracted %s before every run (%d runs)" % (
        os.path.basename(archive), where, a.runs))
    try:
        harness.section(bench, "tree", "A tree of small files (-r), level 3, each output beside its input", cases,
                        a.runs, extra={"fresh_fs": fs, "archive": os.path.basename(archive),
                                       "on_disk": bool(a.tree_on_disk), "rm": bool(a.tree_rm)})
    finally:  # a run that raised before its check: its tree (and file system) still goes
        if "cleanup" in tree:
            tree.pop("cleanup")()
    bench.data["sections"]["tree"].update(files=tree.get("files"), bytes=cases[0].get("data_bytes"))


def report(data):
    n = data["meta"]["threads"]
    s, cs, z = data["sections"]["tree"], cases(data, "tree"), find(data, "tree", family="zstd")
    where = (("a fresh ext4 file system (a loop device on %s, made for the run)" % (
        "a file on the machine's disk" if s.get("on_disk") else "/dev/shm")) if s.get("fresh_fs")
        else "a fresh folder (not root: no fresh file system; earlier runs' freed inodes may slow this one)")
    return (spec_table(cs, [*col("Tool"), *((h, stat(f_num, k)) for h, k in (
        ("Wall s (median)", "wall"), ("Min", "wall_min"), ("Max", "wall_max"), ("User s", "user"), ("Sys s", "sys"))),
        *col("Peak RSS MiB", "Output bytes"), ("Speed ÷ zstd -T%d -r" % n, lambda c: f_ratio(vs(z, c, "wall"))),
        *col("Runs ok")]) +
            "\nBefore every run, `%s` is extracted into %s and synced (untimed): %s files, %s bytes%s.\n" % (
                s.get("archive"), where, s.get("files"), f_bytes(s.get("bytes")),
                "; with `--rm`, every input must be gone" if s.get("rm") else "")
            + compress.variants({"tree": cs}) + "\n" + commands(cs))

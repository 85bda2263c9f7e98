"""The corpus of scripts/bench: the main file (the Linux tarball, --corpus FILE, or with --quick its head or a tar
of the system's headers and docs), its slices cut once and cached in bench/corpus/ (NAME.head-N.tar), their sha256
and where they came from (describe, for the report). Standard library only."""

import hashlib
import os
import re
import shlex
import subprocess
import tarfile

from formatting import human
from timing import die, log


def file_size(path: str) -> int:
    return os.stat(path).st_size


def sha256_file(path: str, cache: bool = True) -> str:
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
    with open(path, "rb") as f:
        digest = hashlib.file_digest(f, "sha256").hexdigest()
    if cache:
        with open(cache_path, "w") as f:
            f.write(digest + "\n" + stamp + "\n")
    return digest


def warm(path: str) -> None:
    """Read a file once so that every tool sees it in the page cache."""
    with open(path, "rb") as f:
        while f.read(1 << 23):
            pass


def head_file(bench, src: str, n: int, dest: str) -> str:
    """dest = the first n bytes of src (cached)."""
    if os.path.exists(dest) and file_size(dest) == n:
        return dest
    if file_size(src) < n:
        die("%s has %d bytes, fewer than the %d requested" % (src, file_size(src), n))
    log("bench: writing %s (first %s of %s)" % (bench.disp_path(dest), human(n), os.path.basename(src)))
    tmp = dest + ".tmp"
    with open(src, "rb") as fi, open(tmp, "wb") as fo:
        copied = 0
        while copied < n:  # sendfile copies at most ~2 GiB a call
            copied += os.sendfile(fo.fileno(), fi.fileno(), copied, n - copied) or n  # src has >= n bytes
    os.replace(tmp, dest)
    return dest


def generated(bench, n):
    """Real-world text and code without the Linux tarball: a tar of the
    system's headers and docs, repeated if it is shorter than n."""
    dest = os.path.join(bench.corpus_dir, "generated-%d.tar" % n)
    if os.path.exists(dest) and file_size(dest) == n:
        return dest
    dirs = [d for d in ("/usr/include", "/usr/share/doc", "/usr/share/perl", "/usr/lib/python3",
                        "/usr/share/man", "/usr/share/common-licenses") if os.path.isdir(d)]
    if not dirs:
        die("no corpus: the Linux tarball is missing and there is nothing to tar; run without --quick")
    log("bench: generating %s from a tar of %s" % (bench.disp_path(dest), " ".join(dirs)))
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


def describe(bench, path, role):
    info = {"role": role, "path": bench.disp_path(path), "name": os.path.basename(path),
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


def prepare(bench):
    a = bench.a
    stem = os.path.splitext(os.path.basename(a.tarball))[0]
    if a.corpus:
        main = a.corpus
    elif a.quick:
        if os.path.exists(a.tarball) and file_size(a.tarball) >= a.quick_size:
            main = head_file(bench, a.tarball, a.quick_size,
                             os.path.join(bench.corpus_dir, "%s.head-%d.tar" % (stem, a.quick_size)))
        else:
            main = generated(bench, a.quick_size)
    else:
        if not os.path.exists(a.tarball):
            die("corpus %s is missing (scripts/bench downloads it unless --no-download)" % a.tarball)
        main = a.tarball
    main_stem = os.path.splitext(os.path.basename(main))[0]
    if main == a.tarball or main_stem.startswith(stem + ".head-"):
        base, bstem = (a.tarball, stem) if os.path.exists(a.tarball) else (main, main_stem)
    else:
        base, bstem = main, main_stem

    bench.main = main
    bench.head_base = (base, bstem)
    bench.slice = head(bench, a.slice_size)
    bench.small = head(bench, a.small_size)
    bench.data["corpus"] = {
        "main": describe(bench, bench.main, "main corpus"),
        "slice": describe(bench, bench.slice, "slice for levels 1 and 19"),
        "small": describe(bench, bench.small, "small file"),
    }


def head(bench, n):
    """The main corpus's first n bytes (at most all of it), as a slice
    cut once and cached in bench/corpus/ (NAME.head-N.tar)."""
    base, bstem = bench.head_base
    n = min(n, file_size(bench.main))
    if n == file_size(bench.main):
        return bench.main
    return head_file(bench, base, n, os.path.join(bench.corpus_dir, "%s.head-%d.tar" % (bstem, n)))


USR = ("/usr/include", "/usr/share/doc", "/usr/lib/python3", "/usr/share/man", "/usr/share/perl")


def members_tar(bench) -> str:
    """The tarball when the run measures it whole; else (--quick, --corpus) a tar of /usr (its headers and docs
    with --quick), made once: a cut of the tarball is not a whole tar."""
    a, q = bench.a, shlex.quote
    if bench.main == a.tarball:
        return a.tarball
    dest = os.path.join(bench.corpus_dir, "usr-quick.tar" if a.quick else "usr.tar")
    if not os.path.exists(dest):
        dirs = [d for d in (USR[:2] if a.quick else ("/usr",)) if os.path.isdir(d)]
        log("bench: members: writing %s (tar of %s)" % (bench.disp_path(dest), " ".join(dirs)))
        script = "tar --sort=name -cf %s.tmp %s 2>/dev/null; [ -s %s.tmp ] && mv %s.tmp %s" % (
            q(dest), " ".join(map(q, dirs)), q(dest), q(dest), q(dest))
        subprocess.run(["bash", "-c", script], check=True)
    return dest


def pick_member(tar: str) -> str:
    """linux-source-*/MAINTAINERS when there is one, else the largest regular file in the tar's middle third."""
    infos = [m for m in tarfile.open(tar) if m.isreg()]
    if not infos:
        die("members: %s holds no regular file" % tar)
    named = [m for m in infos if m.name.endswith("/MAINTAINERS") and m.name.count("/") == 1]
    if named:
        return named[0].name
    third = infos[len(infos) // 3: 2 * len(infos) // 3] or infos
    return max(third, key=lambda m: m.size).name

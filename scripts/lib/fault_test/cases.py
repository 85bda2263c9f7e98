"""The fault suite's cases: its files, its modes of running weir, and the
faults each mode meets."""
import os
import shutil
import subprocess

from weirtools.corpora import Words
from weirtools.files import read, sha

from .faultfs import CASE, ERRNOS


class Entry:
    """One input of a case and its output, as paths under the case folder."""

    def __init__(self, input_name, input_bytes, output_name, content, expected=None, gzip=False):
        self.input = input_name
        self.input_bytes = input_bytes
        self.output = output_name
        self.content = content        # what the output decodes to (or is, for a decompression)
        self.expected = expected      # the output's exact bytes, when known (a clean run's)
        self.gzip = gzip


class Mode:
    """A way of running weir: its files, command and entries. `inputs_outside`
    puts the inputs in a plain folder (a resumable input must be a file whose
    size weir trusts, which a FUSE file is not, but to the hooked weir).
    `extra`: a check of its own, returning problems."""

    def __init__(self, name, files, command, entries, removes=False, output_folders=("",), env=None,
                 many=False, resumable=False, inputs_outside=False, extra=None):
        self.name = name
        self.files = files
        self.command = command
        self.entries = entries
        self.removes = removes
        self.output_folders = output_folders   # the folders outputs are written in, under the case folder
        self.env = env
        self.many = many
        self.resumable = resumable
        self.inputs_outside = inputs_outside
        self.extra = extra


class Corpus(Words):
    """weirtools' generated words: 90,000 lines (about 4.7 MB, the largest piece a case takes)."""

    def __init__(self, rng):
        super().__init__(rng, lines=90000)


class Layout:
    """The files of a case and the modes and faults run on them (a part of
    Matrix: self.mount, self.plain, self.corpus, self.weir, self.clean_cache)."""

    # -- files

    def case_root(self):
        return os.path.join(self.mount.source, CASE)

    def lay_out(self, mode):
        """The mode's files, afresh; an input outside the mount that is
        already there, whole, stays the same file (a kept .part's record
        names its inode and time)."""
        base = os.path.join(self.plain, CASE) if mode.inputs_outside else self.case_root()
        for folder in (self.case_root(), os.path.join(self.plain, CASE)):
            if folder == base and mode.inputs_outside and os.path.isdir(folder) and all(
                    os.path.exists(os.path.join(folder, n)) and read(os.path.join(folder, n)) == d
                    for n, d in mode.files.items()):
                continue
            if os.path.exists(folder):
                shutil.rmtree(folder)
            os.makedirs(folder)
        for name, data in mode.files.items():
            full = os.path.join(base, name)
            if os.path.exists(full):
                continue
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "wb") as f:
                f.write(data)
        for folder in mode.output_folders:
            os.makedirs(os.path.join(self.case_root(), folder), exist_ok=True)

    def clean_bytes(self, data, flags, hooked=False):
        """weir's output of `data` with `flags`, from a FUSE file of no fault,
        as a clean run writes it; `hooked`: the hooked weir's, which trusts
        the file's size (its frames are cut to it)."""
        key = (sha(data), tuple(flags), hooked)
        if key not in self.clean_cache:
            self.mount.set_rules([])
            folder = os.path.join(self.mount.source, "clean")
            shutil.rmtree(folder, ignore_errors=True)
            os.makedirs(folder)
            with open(os.path.join(folder, "x"), "wb") as f:
                f.write(data)
            weir = self.hooked_weir if hooked else self.weir
            result = subprocess.run([weir, "-q", "-c"] + flags + [os.path.join(self.mount.point, "clean", "x")],
                                    capture_output=True, env=self.hooked_env() if hooked else None)
            if result.returncode != 0:
                raise SystemExit("fault-test: a clean run failed: " + result.stderr.decode())
            shutil.rmtree(folder)
            self.clean_cache[key] = result.stdout
        return self.clean_cache[key]

    # -- modes

    def hooked_env(self):
        """The environment of the hooked weir: FUSE sizes trusted, so that
        an input on faultfs is mapped (or read by size), resumable and
        indexable, as on a local disk."""
        return dict(os.environ, WEIR_TEST_TRUST_FUSE_SIZES="1")

    def modes(self, hooked=False):
        """The modes; `hooked`: run by the hooked weir, which trusts the
        inputs' sizes ("sized ..."; their input's side is what differs)."""
        c = self.corpus
        weir = self.hooked_weir if hooked else self.weir
        text = c.piece(3 << 20)
        small = [c.piece(size) for size in (150000, 700000, 40000, 1200000, 90000)]
        packed = self.clean_bytes(text, [], hooked)
        out = []

        def mode(name, *args, **options):
            return Mode("sized " + name if hooked else name, *args, env=self.hooked_env() if hooked else None,
                        **options)

        def compress_entry(name, data, output, flags=()):
            return Entry(name, data, output, data, self.clean_bytes(data, list(flags), hooked))

        out.append(mode("compress", {"in.txt": text}, [weir, "-q", "c/in.txt"],
                        [compress_entry("in.txt", text, "in.txt.zst")]))
        out.append(mode("rm", {"in.txt": text}, [weir, "-q", "--rm", "c/in.txt"],
                        [compress_entry("in.txt", text, "in.txt.zst")], removes=True))
        out.append(mode("d", {"in.txt.zst": packed}, [weir, "-q", "-d", "c/in.txt.zst"],
                        [Entry("in.txt.zst", packed, "in.txt", text, text)]))
        out.append(mode("d-rm", {"in.txt.zst": packed}, [weir, "-q", "-d", "--rm", "c/in.txt.zst"],
                        [Entry("in.txt.zst", packed, "in.txt", text, text)], removes=True))
        out.append(mode("o", {"in.txt": text}, [weir, "-q", "--rm", "c/in.txt", "-o", "c/out/x.zst"],
                        [compress_entry("in.txt", text, "out/x.zst")], removes=True, output_folders=("out",)))
        out.append(mode("gzip", {"in.txt": text}, [weir, "-q", "--rm", "--format=gzip", "c/in.txt"],
                        [Entry("in.txt", text, "in.txt.gz", text, gzip=True)], removes=True))
        start, length = 700000, 1 << 20
        part = text[start:start + length]
        out.append(mode("range", {"in.txt.zst": packed},
                        [weir, "-q", "-d", "--range=%d:+%d" % (start, length), "c/in.txt.zst", "-o", "c/part"],
                        [Entry("in.txt.zst", packed, "part", part, part)]))
        tree = {"t/a/f%d" % i: small[i] for i in range(3)}
        tree.update({"t/b/f%d" % i: small[i] for i in range(3, 5)})
        names = sorted(tree)
        out.append(mode("r", dict(tree), [weir, "-q", "-r", "--rm", "c/t"],
                        [compress_entry(n, tree[n], n + ".zst") for n in names], removes=True,
                        output_folders=("t/a", "t/b"), many=True))
        packed_tree = {n + ".zst": self.clean_bytes(tree[n], [], hooked) for n in names}
        out.append(mode("d-r", packed_tree, [weir, "-q", "-d", "-r", "--rm", "c/t"],
                        [Entry(n + ".zst", packed_tree[n + ".zst"], n, tree[n], tree[n]) for n in names],
                        removes=True, output_folders=("t/a", "t/b"), many=True))
        out.append(mode("flat", dict(tree), [weir, "-q", "-r", "--rm", "c/t", "--output-dir-flat", "c/flat"],
                        [compress_entry(n, tree[n], "flat/" + os.path.basename(n) + ".zst") for n in names],
                        removes=True, output_folders=("flat",), many=True))
        out.append(mode("mirror", dict(tree), [weir, "-q", "-r", "--rm", "c/t", "--output-dir-mirror", "c/m"],
                        [compress_entry(n, tree[n], "m/c/" + n + ".zst") for n in names],
                        removes=True, output_folders=("m/c/t/a", "m/c/t/b"), many=True))
        return out

    # -- faults: (name, side, rules, fails) for a mode

    def faults_for(self, mode):
        target = mode.entries[1] if mode.many else mode.entries[0]
        cases = []
        input_glob = "/%s/%s" % (CASE, target.input)
        if not mode.inputs_outside:
            for errno in ("EIO", "ENOSPC", "EROFS", "EDQUOT"):
                cases.append(("read %s" % errno, "input", ["read %s %s after=100000" % (input_glob, errno)],
                              True, "read"))
            cases.append(("open EIO", "input", ["open %s EIO count=1" % input_glob], True, "open"))
            cases.append(("read slow", "input", ["read %s ok delay=20" % input_glob], False, None))
            if mode.removes:
                for errno in ("EROFS", "EIO"):
                    cases.append(("unlink %s" % errno, "input", ["unlink %s %s" % (input_glob, errno)], True,
                                  "remove"))
        folder = os.path.dirname("/%s/%s" % (CASE, target.output))
        temporary = folder + ("/*.part" if mode.resumable else "/.weir-*")
        after = min(100000, max(1, len(target.expected or target.content) // 3))
        # Every write past the offset fails, as on a full or failing disk: a
        # first failure alone can land in the middle of one write(2), which
        # the kernel then reports as a short write, rightly written on.
        for errno in ERRNOS:
            cases.append(("write %s" % errno, "output", ["write %s %s after=%d" % (temporary, errno, after)],
                          True, "write"))
        cases.append(("write short", "output", ["write %s short" % temporary], False, None))
        cases.append(("write slow", "output", ["write %s ok delay=20" % temporary], False, None))
        for errno in ("EIO", "ENOSPC", "EDQUOT"):
            cases.append(("fsync %s first" % errno, "output", ["fsync %s %s count=1" % (temporary, errno)], True,
                          "sync"))
        cases.append(("fsync EIO every", "output", ["fsync %s EIO" % temporary], True, "sync"))
        cases.append(("fdatasync EIO first, kept bytes", "output", ["fdatasync %s EIO count=1 keep" % temporary],
                      True, "sync"))
        if mode.removes:
            for errno in ("EIO", "ENOSPC"):
                cases.append(("fsyncdir %s" % errno, "output", ["fsyncdir %s %s count=1" % (folder, errno)], True,
                              "fsyncdir"))
        for errno in ERRNOS:
            cases.append(("rename %s" % errno, "output", ["rename %s %s count=1" % (temporary, errno)], True,
                          "rename"))
        for errno in ("EIO", "ENOSPC", "EDQUOT"):
            cases.append(("close %s" % errno, "output", ["flush %s %s count=1" % (temporary, errno)], True, "write"))
        for errno in ERRNOS:
            cases.append(("create %s" % errno, "output", ["create %s %s count=1" % (temporary, errno)], True,
                          "create"))
        return cases

"""The cases of inputs whose size weir trusts, run by the hooked weir (built
with WEIR_TEST_HOOKS=1) with WEIR_TEST_TRUST_FUSE_SIZES=1: weir then maps a
faultfs input, resumes from it and indexes it, as on a local disk, where a
page of a mapped input that fails to read raises SIGBUS.

  - "sized MODE": every mode's input-side faults (a compression's or a
    decompression's mapped input, a small file's pread, --range's reads);
  - "index": --index appending a seek table in place, its write, sync and
    close failing, or the read of the frames: the file is left as it was,
    byte for byte, and stock zstd decodes it;
  - "resume sized": a resumed run whose input's read fails, in the frames a
    stopped run kept (the check of them: the .part and its record stay as
    they were, not started over) or after (the mapped reading): exit 1, and
    the same command after it writes a clean run's bytes.
"""
import os
import shutil
import subprocess

from weirtools.files import read
from weirtools.proc import decode

from .cases import Entry, Mode
from .faultfs import CASE, ERRNOS, log


class Hooked:
    """A part of Matrix: the cases of the hooked weir (self.hooked_weir)."""

    def hooked_cases(self, only):
        for mode in self.modes(hooked=True):
            for fault, side, rules, fails, operation in self.faults_for(mode):
                if side != "input" or (only and only not in "%s / %s" % (mode.name, fault)):
                    continue
                self.run_case(mode, fault, rules, fails, operation, side)
        self.index_cases(only)
        self.sized_resume_cases(only)

    # -- --index

    def index_file(self):
        """A file of zstd frames and no seek table, as zstd writes them
        (three that declare their content's size, three that do not, which
        --index decodes to measure), and its content."""
        pieces = [self.corpus.piece(size) for size in (180000, 90000, 260000, 120000, 200000, 70000)]
        frames = []
        for number, piece in enumerate(pieces):
            flags = ["--no-content-size"] if number % 2 else []
            frames.append(subprocess.run(["zstd", "-q", "-c", "-3"] + flags, input=piece, stdout=subprocess.PIPE,
                                         check=True).stdout)
        return b"".join(frames), b"".join(pieces)

    def indexed(self, data):
        """What --index makes of `data` with no fault (in the plain folder)."""
        folder = os.path.join(self.plain, "indexed")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, "x.zst")
        with open(path, "wb") as f:
            f.write(data)
        result = subprocess.run([self.hooked_weir, "-q", "--index", path], stderr=subprocess.PIPE)
        if result.returncode != 0:
            raise SystemExit("fault-test: a clean --index failed: " + result.stderr.decode())
        indexed = read(path)
        shutil.rmtree(folder)
        if len(indexed) <= len(data) or indexed[:len(data)] != data:
            raise SystemExit("fault-test: a clean --index did not append a table to the file")
        return indexed

    def index_cases(self, only):
        """--index on a file on faultfs. A fault that fails it must leave the
        file as it was, byte for byte (weir cuts back what it appended);
        one that does not (a short write, a slow call) leaves it indexed as
        a clean run does. Either way stock zstd decodes it."""
        data, content = self.index_file()
        indexed = self.indexed(data)
        path = "/%s/x.zst" % CASE
        cases = []
        for errno in ERRNOS:
            cases.append(("write %s" % errno, "output", ["write %s %s" % (path, errno)], True, "write"))
        for errno in ("EIO", "ENOSPC", "EDQUOT"):
            cases.append(("fsync %s first" % errno, "output", ["fsync %s %s count=1" % (path, errno)], True, "sync"))
        cases.append(("fsync EIO every", "output", ["fsync %s EIO" % path], True, "sync"))
        cases.append(("fdatasync EIO first, kept bytes", "output", ["fdatasync %s EIO count=1 keep" % path], True,
                      "sync"))
        # close() reports a write error deferred until then (NFS): every
        # close of the file fails, the one weir hears included.
        cases.append(("close EIO", "output", ["flush %s EIO" % path], True, "write"))
        for errno in ("EIO", "ENOSPC"):
            cases.append(("read %s" % errno, "input", ["read %s %s after=100000" % (path, errno)], True, "read"))
        # The last bytes: where a seek table would be, read first.
        cases.append(("read EIO, the end", "input", ["read %s EIO after=%d" % (path, len(data) - 4)], True, "read"))
        cases.append(("open EIO", "input", ["open %s EIO count=1" % path], True, "open"))
        cases.append(("write short", "output", ["write %s short" % path], False, None))
        cases.append(("write slow", "output", ["write %s ok delay=20" % path], False, None))
        cases.append(("read slow", "input", ["read %s ok delay=20" % path], False, None))
        for fault, side, rules, fails, operation in cases:
            if only and only not in "index / " + fault:
                continue
            after = data if fails else indexed
            mode = Mode("index", {"x.zst": data}, [self.hooked_weir, "-q", "--index", "c/x.zst"],
                        [Entry("x.zst", after, "x.zst", content, after)], env=self.hooked_env(),
                        extra=lambda after=after: self.index_outcome(data, after, content))
            self.run_case(mode, fault, rules, fails, operation, side)

    def index_outcome(self, before, after, content):
        """The file is `after` (`before`, byte for byte, after a failure),
        and stock zstd decodes it to its content."""
        path = os.path.join(self.case_root(), "x.zst")
        if not os.path.exists(path):
            return ["x.zst: gone"]
        now = read(path)
        problems = []
        if now != after:
            problems.append("x.zst: %d bytes, not %s (%d bytes)" % (
                len(now), "the file as it was" if after is before else "the clean run's indexed file", len(after)))
        if decode(path) != content:
            problems.append("x.zst: stock zstd no longer decodes it to its content")
        return problems

    # -- a resumed run's input

    def sized_resume_cases(self, only):
        """A compression of a faultfs file in 72 frames, stopped after a
        checkpoint, resumed: the input's read fails in the frames kept (the
        resumed run checks them against the input: a read error is no
        mismatch, the .part stays) or after them (the mapped reading).
        Then the same command, without faults, writes a clean run's bytes."""
        data = self.corpus.piece(4_700_000)
        flags = ["-B64K"]
        expected = self.clean_bytes(data, flags, hooked=True)
        command = [self.hooked_weir, "-q"] + flags + ["c/in.txt", "-o", "c/in.txt.zst"]
        mode = Mode("resume sized", {"in.txt": data}, command, [Entry("in.txt", data, "in.txt.zst", data, expected)],
                    resumable=True, env=self.hooked_env())
        path = "/%s/in.txt" % CASE
        slow = "write /%s/in.txt.zst.part ok delay=40" % CASE

        def kept_half(kept):
            return kept // 2

        def after_kept(kept):
            return kept + (len(data) - kept) // 2

        cases = [
            ("resumed: the input's read EIO, in the frames kept", "EIO", kept_half, True),
            ("resumed: the input's read ENOSPC, in the frames kept", "ENOSPC", kept_half, True),
            ("resumed: the input's read EIO, after the frames kept (mapped)", "EIO", after_kept, False),
            ("resumed: the input's read EROFS, after the frames kept (mapped)", "EROFS", after_kept, False),
        ]
        for fault, errno, where, untouched in cases:
            if only and only not in "resume sized / " + fault:
                continue
            self.stopped_run(mode, slow)
            kept = self.kept_input_bytes()
            if not 0 < kept < len(data):
                log("resume sized / %s: WRONG\n    the stopped run kept %d of %d bytes: nothing to resume" % (
                    fault, kept, len(data)))
                self.failed.append("resume sized / " + fault)
                continue
            rules = ["read %s %s after=%d" % (path, errno, where(kept))]
            # Failing before it writes, the run leaves the stopped run's
            # .part as it was; failing after, it keeps what it checkpointed
            # (an input's read error may pass: the same command goes on).
            self.run_resume(mode, fault, rules, True, "read", laid_out=True, side="input",
                            after_fault=self.kept_part_check() if untouched else self.grown_part_check(kept))
        if not only or only in "resume sized / resumed: the input's open EIO":
            self.stopped_run(mode, slow)
            self.run_resume(mode, "resumed: the input's open EIO", ["open %s EIO count=1" % path], True, "open",
                            laid_out=True, side="input", after_fault=self.kept_part_check())

    def kept_part_check(self):
        """A check of what a resumed run that failed reading its input before
        it wrote left: the stopped run's .part, not started over (another
        inode), and its record as it was, byte for byte."""
        part = os.path.join(self.case_root(), "in.txt.zst.part")
        record = os.path.join(self.case_root(), ".in.txt.zst.part.resume")
        inode, before = os.stat(part).st_ino, read(record)

        def check():
            if not os.path.exists(part) or not os.path.exists(record):
                return ["the .part or its record is gone: the next run cannot resume"]
            problems = []
            if os.stat(part).st_ino != inode:
                problems.append("the .part was started over, for a read error of the input")
            if read(record) != before:
                problems.append("the record changed, though the run failed before writing")
            return problems
        return check

    def grown_part_check(self, kept):
        """A check of what a resumed run that failed reading its input after
        it wrote left: the .part and its record, checkpointed at least as far
        as the stopped run was (`kept` input bytes), for the next run."""
        part = os.path.join(self.case_root(), "in.txt.zst.part")
        record = os.path.join(self.case_root(), ".in.txt.zst.part.resume")

        def check():
            if not os.path.exists(part) or not os.path.exists(record):
                return ["the .part or its record is gone, for a read error of the input: its work is lost"]
            now = self.kept_input_bytes()
            if now < kept:
                return ["the record holds %d input bytes, fewer than the stopped run's %d" % (now, kept)]
            return []
        return check

    def kept_input_bytes(self):
        """The input's bytes the record's last checkpoint holds the frames of."""
        record = read(os.path.join(self.case_root(), ".in.txt.zst.part.resume")).decode(errors="replace")
        checkpoints = [line.split() for line in record.splitlines() if line.startswith("checkpoint ")]
        return int(checkpoints[-1][3]) if checkpoints and len(checkpoints[-1]) >= 5 else 0

"""The hostile states: what a careless or hostile user leaves where weir
looks (kept .part files and records, links, damaged streams, edited inputs,
long names), each run and judged by the Suite."""
import os
import shutil

from weirtools.binaries import TIMEOUT
from weirtools.files import digest
from weirtools.proc import run, run_bounded

from . import (
    hinted_sizes,  # the hinted-size cases
    vectors,  # the shared test vectors (testdata/vectors)
)
from .common import LEVEL, identity, record_text


class Cases:
    """A part of Suite: the cases it runs."""

    def cases(self):
        n = len(self.x_entries)
        # Controls: the crafted states as they are resume, and right.
        for frames in (1, n // 2, n - 1):
            self.compress_case(f"control compress {frames} frames", lambda *a: None, frames=frames, must_resume=True)
            self.decompress_case(f"control -d {frames} frames", lambda *a: None, frames=frames, must_resume=True)
        self.compress_case("control compress --rm", lambda *a: None, flags=["--rm"], frames=3, must_resume=True)
        self.compress_case("control compress --verify", lambda *a: None, flags=["--verify"], frames=3,
                           must_resume=True)

        # Item 1: links at the .part's name, to the input and to other files.
        for flags in ((), ("--rm",), ("--verify",)):
            def to_input(folder, x, part, record):
                self.replace_with_link(part, x, hard=True)
            self.compress_case(f"hard link to the input at .part {flags}", to_input, flags)

            def to_victim(folder, x, part, record, hard=True):
                v = self.victim(folder)
                self.replace_with_link(part, v, hard=hard)
                return {v: digest(v)}
            self.compress_case(f"hard link to a file at .part {flags}", to_victim, flags)
            self.compress_case(f"symlink to a file at .part {flags}",
                               lambda f, x, p, rec: to_victim(f, x, p, rec, hard=False), flags)

            def source_link(folder, source, part, record):
                self.replace_with_link(part, source, hard=True)
            self.decompress_case(f"-d: hard link to the input at .part {flags}", source_link, flags)

            self.decompress_case(f"-d: hard link to a file at .part {flags}", to_victim, flags)
            self.decompress_case(f"-d: symlink to a file at .part {flags}",
                                 lambda f, s, p, rec: to_victim(f, s, p, rec, hard=False), flags)

        # A second link to the .part itself; a copy (another inode).
        def second_link(folder, x, part, record):
            os.link(part, os.path.join(folder, "elsewhere"))
            return {os.path.join(folder, "elsewhere"): digest(part)}
        self.compress_case("the .part has a second link", second_link)

        def copied(folder, x, part, record):
            shutil.copy(part, part + ".copy")
            os.replace(part + ".copy", part)
        self.compress_case("the .part is a copy (another inode)", copied)

        # Links, FIFOs and folders at every hidden name.
        for kind in ("symlink", "hardlink", "fifo", "folder", "dangling"):
            for which in ("part", "record", "both"):
                for job in ("compress", "decompress"):
                    def place(folder, a, part, record, kind=kind, which=which):
                        v = self.victim(folder)
                        victims = {v: digest(v)}
                        for path in ([part] if which == "part" else [record] if which == "record" else [part, record]):
                            os.unlink(path)
                            if kind == "symlink":
                                os.symlink("victim", path)
                            elif kind == "hardlink":
                                os.link(v, path)
                            elif kind == "fifo":
                                os.mkfifo(path)
                            elif kind == "folder":
                                os.mkdir(path)
                                inner = self.victim(path, "inside")
                                victims[inner] = digest(inner)
                            else:
                                os.symlink("nowhere", path)
                        return victims
                    name = f"{job}: {kind} at {which}"
                    if job == "compress":
                        self.compress_case(name, place)
                    else:
                        self.decompress_case(name, place)

        # Item 2: flipped bits anywhere in the kept .part; another file's
        # frames; under --rm and --verify too.
        for i in range(40):
            flags = [(), ("--rm",), ("--verify",)][i % 3]
            self.compress_case(f"flipped bit in .part #{i} {flags}",
                               lambda f, x, p, rec: self.flip(p), flags)
            self.decompress_case(f"-d: flipped bit in .part #{i} {flags}",
                                 lambda f, s, p, rec: self.flip(p), flags)

        for flags in ((), ("--rm",), ("--verify",)):
            def other_frames(folder, x, part, record):
                # y's frames, and a record of them for x: sizes and checksums
                # all agree with the .part; only the input tells.
                frames = len(open(part, "rb").read())
                entries = []
                total = 0
                for e in self.y_entries:
                    if total >= frames:
                        break
                    entries.append(e)
                    total += e[0]
                with open(part, "wb") as f:
                    f.write(self.y_zst[:total])
                s = os.stat(part)
                with open(record, "wb") as f:
                    f.write(record_text(identity(x), self.compress_options, f"{s.st_dev} {s.st_ino}", entries,
                                        frames=self.y_zst))
            self.compress_case(f"another file's .part with a record of it {flags}", other_frames, flags)

            def other_part_only(folder, x, part, record):
                size = os.path.getsize(part)
                with open(part, "wb") as f:
                    f.write(self.y_zst[:size])
            self.compress_case(f"another file's .part bytes, the record kept {flags}", other_part_only, flags)

            def other_content(folder, source, part, record):
                size = os.path.getsize(part)
                with open(part, "r+b") as f:
                    f.write(self.other[:size])
            self.decompress_case(f"-d: another file's content in .part {flags}", other_content, flags)

        # Random bytes in records.
        for i in range(30):
            def noisy_record(folder, a, part, record, i=i):
                data = bytearray(open(record, "rb").read())
                mode = i % 3
                if mode == 0:
                    for _ in range(self.rng.randint(1, 4)):
                        data[self.rng.randrange(len(data))] = self.rng.randrange(256)
                elif mode == 1:
                    noise = bytes(self.rng.randrange(256) for _ in range(self.rng.randint(1, 40)))
                    data = data[:self.rng.randrange(len(data))] + noise
                else:
                    cut = self.rng.randrange(len(data))
                    noise = bytes(self.rng.randrange(256) for _ in range(self.rng.randint(1, 20)))
                    data = data[:cut] + noise + data[cut:]
                with open(record, "wb") as f:
                    f.write(data)
            if i % 2:
                self.compress_case(f"random bytes in the record #{i}", noisy_record)
            else:
                self.decompress_case(f"-d: random bytes in the record #{i}", noisy_record)

        # Crafted size fields: records whose sizes lie, checkpoint and hash
        # made to agree, so that only the frames can tell.
        for i in range(24):
            def lying(folder, a, part, record, i=i, job="compress"):
                frames = max(2, self.rng.randint(2, len(self.x_entries) - 2))
                entries = [list(e) for e in self.x_entries[:frames]]
                k = self.rng.randrange(frames)
                field = i % 3
                entries[k][field] = max(0, entries[k][field] + self.rng.choice([-5000, -1, 1, 7, 5000, 1 << 20]))
                if field == 2:
                    entries[k][2] = self.rng.getrandbits(32)
                holds_frames = job == "compress"
                kept_bytes = sum(e[0] if holds_frames else e[1] for e in entries)
                data = (self.x_zst if holds_frames else self.content)[:kept_bytes]
                with open(part, "wb") as f:
                    f.write(data)
                s = os.stat(part)
                source = a
                with open(record, "wb") as f:
                    # A compression's record hashes the .part's bytes as the
                    # lying sizes cut them: the liar knows the hash too.
                    options = self.compress_options if holds_frames else self.decompress_options
                    f.write(record_text(identity(source), options,
                                        f"{s.st_dev} {s.st_ino}", [tuple(e) for e in entries],
                                        frames=data if holds_frames else None))
            if i % 2:
                self.compress_case(f"crafted size field #{i}", lying)
            else:
                self.decompress_case(f"-d: crafted size field #{i}",
                                     lambda f, s, p, rec, i=i: lying(f, s, p, rec, i, job="decompress"))

        # Item 3: bytes edited in place, the modification time put back.
        for flags in ((), ("--rm",)):
            self.case(f"input edited in place, mtime restored {flags}",
                      lambda flags=flags: self.edited_case(f"input edited in place, mtime restored {flags}", flags))

        # Item 7: damage between whole frames.
        self.damaged_stream_cases()

        # Item 4: long names: the output's name fits, the hidden names must.
        for length in (238, 239, 243, 247, 250, 251):
            self.case(f"long name {length}", lambda length=length: self.long_name_case(length))

        # Item 5: size fields weir wrote are hints (gzip's Wr, lz4's content size).
        hinted_sizes.cases(self)

        # The shared vectors: seek tables and member indexes, good, refused and lying.
        vectors.cases(self)

    def damaged_stream_cases(self):
        """Item 7's kind: whole frames, then bytes that are not a frame, then
        more frames, from a pipe and from a file; weir must write exactly the
        content of every whole frame before the damage and fail, as zstd's
        rule is (docs/zstd.md)."""
        pieces = {
            "weir": (self.x_zst[:sum(e[0] for e in self.x_entries)], self.content),  # frames, no table
            "zstd": (run(["zstd", "-q", "-c", "-3"], input=self.other[:300_000], check=True).stdout,
                     self.other[:300_000]),
        }
        weir_frames = []
        at = 0
        for c, _, _ in self.x_entries:
            weir_frames.append(self.x_zst[at:at + c])
            at += c
        for i in range(24):
            def body(i=i):
                r = self.rng
                frames = []  # (bytes, content)
                for _ in range(r.randint(1, 4)):
                    if r.random() < 0.5:
                        k = r.randrange(len(weir_frames))
                        start = sum(e[1] for e in self.x_entries[:k])
                        frames.append((weir_frames[k], self.content[start:start + self.x_entries[k][1]]))
                    else:
                        frames.append(pieces["zstd"])
                garbage = bytes([r.choice(b"ABCDEFGHIJ")]) + bytes(r.randrange(256) for _ in range(r.randint(3, 40)))
                after = r.choice(list(pieces.values()))
                stream = b"".join(f for f, _ in frames) + garbage + after[0]
                expected = b"".join(c for _, c in frames)
                name = f"damage after {len(frames)} whole frames #{i}"
                folder = self.folder(name)
                with open(os.path.join(folder, "m.zst"), "wb") as f:
                    f.write(stream)
                for how, command in (("pipe", f"'{self.weir}' -dc < m.zst"), ("file", f"'{self.weir}' -dc m.zst"),
                                     ("-T1", f"'{self.weir}' -T1 -dc m.zst")):
                    run = run_bounded(["bash", "-c", command], TIMEOUT, cwd=folder)
                    if run is None:
                        self.verdict(f"{name} {how}", "timed out (hung)")
                        continue
                    if run.returncode == 0:
                        self.verdict(f"{name} {how}", "exit 0 on damaged data")
                    elif run.stdout != expected:
                        self.verdict(f"{name} {how}", f"wrote {len(run.stdout)} bytes, not the {len(expected)} "
                                                      "of the whole frames before the damage")
                    else:
                        self.verdict(f"{name} {how}", None)
                if not self.keep:
                    shutil.rmtree(folder, ignore_errors=True)
            self.case(f"damaged stream #{i}", body)

    def edited_case(self, name, flags):
        folder = self.folder(name)
        x, _, _ = self.kept_compression(folder, len(self.x_entries) // 2)
        s = os.stat(x)
        with open(x, "r+b") as f:
            f.seek(1000)
            f.write(b"EDITED")
        os.utime(x, ns=(s.st_atime_ns, s.st_mtime_ns))
        edited = self.content[:1000] + b"EDITED" + self.content[1006:]
        removes = x if "--rm" in flags else None
        run = self.run_weir(LEVEL + list(flags) + ["x", "-o", "x.zst"], cwd=folder)
        self.judge(name, folder, run, "x.zst", edited, {} if removes else {x: digest(x)}, removes=removes)
        if not self.keep:
            shutil.rmtree(folder, ignore_errors=True)

    def long_name_case(self, length):
        """An input named with `length` bytes, stopped with a kept state:
        weir resumes it (its hidden names fit) and writes the output."""
        name = f"long name {length}"
        folder = self.folder(name)
        stem = ("n" * length)
        with open(os.path.join(folder, stem), "wb") as f:
            f.write(self.content)
        run = self.run_weir(LEVEL + [stem], cwd=folder)
        self.judge(name, folder, run, stem + ".zst", self.content, {})
        if not self.keep:
            shutil.rmtree(folder, ignore_errors=True)

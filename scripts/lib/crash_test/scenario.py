"""A crash suite scenario: its files, the command weir runs on them, and what
must hold after a cut; resumed runs and the sweep."""
import os
import re
import subprocess
import tempfile

from weirtools.files import read, sha
from weirtools.proc import decode

from .filesystem import RESUME, RESUME_D


class Entry:
    """One input of a run and what may be found for it after a cut."""

    def __init__(self, input_path, input_bytes, output_path, content, compressed_output, old_output=None):
        self.input_path = input_path          # relative to the mount point
        self.input_hash = sha(input_bytes)
        self.output_path = output_path
        self.content_hash = sha(content)      # what the output must hold, decoded
        self.compressed_output = compressed_output
        self.old_hash = sha(old_output) if old_output is not None else None  # -f: the file replaced, decoded


class Scenario:
    """A mode's files, laid out under the mount point, and its command."""

    def __init__(self, mode, corpus, weir, zstd_bytes, flags=()):
        self.mode = mode
        self.entries = []
        self.files = {}           # path -> bytes, written before the run
        self.keeps_inputs = mode in ("keep", "f", RESUME, RESUME_D)
        self.env = None           # the environment of weir's runs, when not this one's
        flags = list(flags)
        # Small and large single files: a large one's output passes the
        # point where its writeback starts while weir writes it.
        size = corpus.rng.choice([8 << 20, 80 << 20])
        if mode == RESUME:
            data = corpus.data(16 << 20)
            self.files["data.tar"] = data
            self.entries.append(Entry("data.tar", data, "data.tar.zst", data, True))
            self.command = [weir, "-q", "-19", "-B512K", "-T2"] + flags + ["data.tar"]
        elif mode == RESUME_D:
            data = corpus.data(16 << 20)
            packed = weir_bytes(weir, data)
            self.files["data.tar.zst"] = packed
            self.entries.append(Entry("data.tar.zst", packed, "data.tar", data, False))
            self.command = [weir, "-q", "-d", "-T2"] + flags + ["data.tar.zst"]
            self.env = dict(os.environ, WEIR_TEST_FRAME_DELAY="0.15")
        elif mode in ("rm", "keep", "f"):
            data = corpus.data(size)
            self.files["data.tar"] = data
            old = None
            if mode == "f":
                old = corpus.data(size // 2)
                self.files["data.tar.zst"] = zstd_bytes(old)
            self.entries.append(Entry("data.tar", data, "data.tar.zst", data, True, old))
            extra = {"rm": ["--rm"], "keep": [], "f": ["-f"]}[mode]
            self.command = [weir, "-q"] + extra + flags + ["data.tar"]
        elif mode in ("d-rm", "d-f-rm"):
            data = corpus.data(size)
            packed = zstd_bytes(data)
            self.files["data.tar.zst"] = packed
            old = None
            if mode == "d-f-rm":
                old = corpus.data(size // 2)
                self.files["data.tar"] = old
            self.entries.append(Entry("data.tar.zst", packed, "data.tar", data, False, old))
            extra = ["-f", "--rm"] if mode == "d-f-rm" else ["--rm"]
            self.command = [weir, "-q", "-d"] + extra + flags + ["data.tar.zst"]
        else:  # a tree of small files (and a few larger ones) in a few folders
            for index in range(120):
                folder = "tree/d%d" % (index % 6) + ("/e" if index % 4 == 0 else "")
                size = corpus.rng.choice([200, 3000, 40000, 200000, 1500000]) + corpus.rng.randrange(1000)
                data = corpus.piece(size)
                name = "%s/f%03d.txt" % (folder, index)
                if mode == "d-r-rm":
                    packed = zstd_bytes(data)
                    self.files[name + ".zst"] = packed
                    self.entries.append(Entry(name + ".zst", packed, name, data, False))
                elif mode == "mirror-rm":
                    self.files[name] = data
                    self.entries.append(Entry(name, data, "out/" + name + ".zst", data, True))
                else:
                    self.files[name] = data
                    self.entries.append(Entry(name, data, name + ".zst", data, True))
            if mode == "d-r-rm":
                self.command = [weir, "-q", "-d", "-r", "--rm"] + flags + ["tree"]
            elif mode == "mirror-rm":
                os_out = ["--output-dir-mirror", "out"]
                self.command = [weir, "-q", "-r", "--rm"] + flags + ["tree"] + os_out
            else:
                self.command = [weir, "-q", "-r", "--rm"] + flags + ["tree"]

    def lay_out(self, root):
        for path, data in self.files.items():
            full = os.path.join(root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "wb") as f:
                f.write(data)
        if self.mode == "mirror-rm":
            os.makedirs(os.path.join(root, "out"), exist_ok=True)
        os.sync()  # the inputs are on disk before weir starts: a cut must not take them

    def check(self, root):
        """The problems found after a cut (empty: none), and the temporary files left."""
        problems = []
        expected = set()
        for entry in self.entries:
            expected.add(entry.input_path)
            expected.add(entry.output_path)
            input_full = os.path.join(root, entry.input_path)
            output_full = os.path.join(root, entry.output_path)
            input_whole = False
            if os.path.exists(input_full):
                with open(input_full, "rb") as f:
                    input_whole = sha(f.read()) == entry.input_hash
                if not input_whole:
                    problems.append("%s: the input is there but not whole" % entry.input_path)
            output_whole = False
            if os.path.exists(output_full):
                decoded = decode(output_full) if entry.compressed_output else read(output_full)
                digest = sha(decoded) if decoded is not None else None
                if digest == entry.content_hash:
                    output_whole = True
                elif entry.old_hash is not None and digest == entry.old_hash:
                    pass  # -f: the old file, whole, not yet replaced
                else:
                    problems.append("%s: incomplete file under its final name (%d bytes)" % (
                        entry.output_path, os.path.getsize(output_full)))
            if self.keeps_inputs and not os.path.exists(input_full):
                problems.append("%s: the input is gone without --rm" % entry.input_path)
            if not input_whole and not output_whole:
                problems.append("%s: LOST (no whole input, no whole output)" % entry.input_path)
        temporaries = 0
        kept = set()
        for entry in self.resumable_entries():
            kept |= {entry.output_path + ".part", partial_record(entry.output_path)}
        for folder, folders, names in os.walk(root):
            if folder == root and "lost+found" in folders:
                folders.remove("lost+found")
            for name in names:
                path = os.path.relpath(os.path.join(folder, name), root)
                if name.startswith(".weir-") or path in kept:
                    temporaries += 1
                elif path not in expected:
                    problems.append("%s: a file no run should leave" % path)
        return problems, temporaries

    def resumable_entries(self):
        """The entries whose run may keep NAME.part: compressions, and the
        decompression of weir's own file."""
        return [e for e in self.entries if e.compressed_output or self.mode == RESUME_D]

    def kept_partials(self, root):
        """The outputs whose NAME.part a stopped run kept."""
        return [e for e in self.resumable_entries() if os.path.exists(os.path.join(root, e.output_path + ".part"))]


def partial_record(output_path):
    """The record beside NAME.part: .NAME.part.resume."""
    folder, name = os.path.split(output_path)
    return os.path.join(folder, "." + name + ".part.resume")


def resume_run(scenario, root):
    """Where a cut left NAME.part, the same command again: it must succeed
    and leave each such output whole, byte for byte the output of one
    uninterrupted run, with no .part or record left. Returns the problems
    and how many outputs it resumed."""
    entries = scenario.kept_partials(root)
    if not entries:
        return [], 0
    result = subprocess.run(scenario.command, cwd=root, env=scenario.env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    if result.returncode != 0:
        return ["the same command after the cut failed: " + result.stderr.decode(errors="replace").strip()], 0
    problems = []
    for entry in entries:
        output = os.path.join(root, entry.output_path)
        for left in (entry.output_path + ".part", partial_record(entry.output_path)):
            if os.path.exists(os.path.join(root, left)):
                problems.append("%s: left after the resumed run" % left)
        decoded = None
        if os.path.exists(output):
            decoded = decode(output) if entry.compressed_output else read(output)
        if decoded is None or sha(decoded) != entry.content_hash:
            problems.append("%s: the resumed output does not decode to its input" % entry.output_path)
            continue
        if not entry.compressed_output:
            continue  # a decompression's one-run output is its content
        # One run from byte 0 of the same input with the same flags: the same bytes.
        flags = [a for a in scenario.command[1:-1] if a not in ("--rm", "-f", "-q")]
        with tempfile.TemporaryDirectory() as spare:
            source = os.path.join(spare, os.path.basename(entry.input_path))
            with open(source, "wb") as f:
                f.write(decoded)
            plain = subprocess.run(scenario.command[:1] + ["-q", "-c", "--no-resume"] + flags + [source],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        if plain.returncode != 0 or plain.stdout != read(output):
            problems.append("%s: the resumed output is not what one run writes" % entry.output_path)
    return problems, len(entries)


def checkpointed(record):
    try:
        with open(record, "rb") as f:
            return b"\ncheckpoint " in f.read()
    except OSError:
        return False


def sweep_run(weir, root):
    """One more weir run writing into each folder that holds temporaries:
    the problems (temporaries left, a count that differs from weir's -v
    report) and how many it removed."""
    folders = []
    for folder, subfolders, names in os.walk(root):
        if folder == root and "lost+found" in subfolders:
            subfolders.remove("lost+found")
        if any(name.startswith(".weir-") for name in names):
            folders.append(folder)
    if not folders:
        return [], 0
    found = sum(1 for folder in folders for name in os.listdir(folder) if name.startswith(".weir-"))
    inputs = []
    for folder in folders:
        path = os.path.join(folder, "sweep-input")
        with open(path, "wb") as f:
            f.write(b"one more run\n")
        inputs.append(os.path.relpath(path, root))
    result = subprocess.run([weir, "-v", "-f", "--rm", "--no-sync"] + inputs, cwd=root,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = result.stderr.decode(errors="replace")
    problems = [] if result.returncode == 0 else ["the run after the cut failed: " + stderr.strip()]
    removed = sum(int(n) for n in re.findall(r"removed (\d+) temporary files? \(\.weir-XXXXXX\)", stderr))
    left = []
    for folder, subfolders, names in os.walk(root):
        if folder == root and "lost+found" in subfolders:
            subfolders.remove("lost+found")
        left += [os.path.relpath(os.path.join(folder, name), root) for name in names if name.startswith(".weir-")]
    if left:
        problems.append("%d temporary files left after one more run: %s" % (len(left), ", ".join(left[:5])))
    if removed != found - len(left):
        problems.append("one more run removed %d temporary files and said %d" % (found - len(left), removed))
    return problems, found - len(left)


def weir_bytes(weir, data, cache={}):  # noqa: B006  (the cache lives as long as the suite, on purpose)
    """weir's file of `data` in 512 KiB frames, with its seek table: one
    weir -d resumes."""
    key = sha(data)
    if key not in cache:
        cache[key] = subprocess.run([weir, "-q", "-c", "-B512K", "-T2", "--no-resume"], input=data, check=True,
                                    stdout=subprocess.PIPE).stdout
    return cache[key]


def zstd_compressor():
    cache = {}

    def compress(data):
        key = sha(data)
        if key not in cache:
            cache[key] = subprocess.run(["zstd", "-q", "-3", "-c"], input=data, check=True,
                                        stdout=subprocess.PIPE).stdout
        return cache[key]
    return compress

"""What a case's outcome must be, checked as a user would (the rules in
scripts/harness/fault-test's docstring)."""
import os
import re
import subprocess

from weirtools.files import read
from weirtools.proc import decode

from .faultfs import CASE, WORDS


class Checks:
    """A part of Matrix: the checks of one case."""

    def check(self, mode, status, stderr, calls, fails, operation, rules):
        problems = []
        root = self.case_root()
        base = os.path.join(self.plain, CASE) if mode.inputs_outside else root
        failed, succeeded = [], []
        for entry in mode.entries:
            input_path = os.path.join(base, entry.input)
            output_path = os.path.join(root, entry.output)
            has_input = os.path.exists(input_path)
            if has_input and read(input_path) != entry.input_bytes:
                problems.append("%s: the input is there but not whole" % entry.input)
            has_output = os.path.exists(output_path)
            if has_output:
                if entry.expected is not None:
                    whole = read(output_path) == entry.expected
                else:
                    whole = decode(output_path, entry.gzip) == entry.content
                if not whole:
                    problems.append("%s: an output under its final name that is not whole (%d bytes)" % (
                        entry.output, os.path.getsize(output_path)))
            if not has_input and not has_output:
                problems.append("%s: LOST: no input, no output" % entry.input)
            if mode.removes:
                (succeeded if not has_input else failed).append(entry)
            else:
                (succeeded if has_output and status == 0 else failed).append(entry)
            if not has_input and mode.removes:
                problems += self.removal_order(mode, entry, calls)
        problems += self.names_are_durable(calls)
        if fails:
            if status != 1:
                problems.append("exit status %d, not 1" % status)
            if not failed:
                problems.append("no file failed")
            errno = next((w for w in WORDS if " %s" % w in rules[0]), None)
            for entry in failed:
                names = (os.path.join(CASE, entry.input), os.path.join(CASE, entry.output))
                if mode.inputs_outside:
                    names = (os.path.join(self.plain, CASE, entry.input),) + names[1:]
                # Its input, its output, or a file of the output's own (its record).
                names += (os.path.basename(entry.output),)
                lines = [line for line in stderr.splitlines() if any(n in line for n in names)]
                if not lines:
                    problems.append("%s: no message names its input or its output" % entry.input)
                    continue
                if errno and not any(WORDS[errno] in line for line in lines):
                    problems.append("%s: no message says %r" % (entry.input, WORDS[errno]))
                if operation == "fsyncdir":
                    # The output has its name; its folder's sync failed: the
                    # message must name the output and say the input stays.
                    output_name = os.path.join(CASE, entry.output)
                    if not any(output_name in line and "kept" in line for line in lines):
                        problems.append("%s: the message does not name the output %s and say the input was kept" %
                                        (entry.input, output_name))
                elif not any(re.search(r"\b%s\b" % operation, line) for line in lines):
                    problems.append("%s: no message names the operation (%s)" % (entry.input, operation))
            if mode.many:
                # -r goes on: a fault on one file (count=1) fails that file
                # alone; one on every call in a folder, or on the folder's
                # sync, fails at most the files written there.
                target = mode.entries[1]
                folder = os.path.dirname(target.output)
                if "count=1" in rules[0] and operation != "fsyncdir" and len(failed) != 1:
                    problems.append("-r: %d files failed, not the one the fault hit" % len(failed))
                others = [e.input for e in failed if os.path.dirname(e.output) != folder]
                if others:
                    problems.append("-r: files written elsewhere failed too: " + ", ".join(others))
        else:
            if status != 0:
                problems.append("exit status %d after a fault that fails nothing" % status)
            if failed:
                problems.append("files failed after a fault that fails nothing: " +
                                ", ".join(e.input for e in failed))
        problems += self.leftovers(mode)
        return problems

    def removal_order(self, mode, entry, calls):
        """An input removed only after its output's sync, rename and folder's
        sync succeeded, in that order."""
        prefix = "" if mode.inputs_outside else "/%s/" % CASE
        if mode.inputs_outside:
            return []
        input_name = prefix + entry.input
        output_name = "/%s/%s" % (CASE, entry.output)
        unlink = next((i for i, line in enumerate(calls) if line.startswith("unlink %s = 0" % input_name)), None)
        if unlink is None:
            return ["%s: removed, but not by an unlink through the file system" % entry.input]
        rename = next((i for i, line in enumerate(calls[:unlink])
                       if re.match(r"rename (\S+) -> %s = 0" % re.escape(output_name), line)), None)
        if rename is None:
            return ["%s: its input went before its output took its name" % entry.input]
        temporary = re.match(r"rename (\S+) ->", calls[rename]).group(1)
        synced = any(re.match(r"(fsync|fdatasync) %s = 0" % re.escape(temporary), line)
                     for line in calls[:rename])
        folder = os.path.dirname(output_name)
        folder_synced = any(line.startswith("fsyncdir %s = 0" % folder) for line in calls[rename:unlink])
        problems = []
        if not synced:
            problems.append("%s: its input went, and its output's data was never synced" % entry.input)
        if not folder_synced:
            problems.append("%s: its input went before its output's folder %s was synced" % (entry.input, folder))
        return problems

    def names_are_durable(self, calls):
        """Every name given was given to synced data, and no sync of that file failed."""
        problems = []
        for index, line in enumerate(calls):
            match = re.match(r"rename (\S+) -> (\S+) = 0", line)
            if not match:
                continue
            temporary, final = match.groups()
            syncs = [c for c in calls[:index] if re.match(r"(fsync|fdatasync) %s = " % re.escape(temporary), c)]
            if not any(s.split(" = ")[1].startswith("0") for s in syncs):
                problems.append("%s took its name unsynced" % final)
            if any(not s.split(" = ")[1].startswith("0") for s in syncs):
                problems.append("%s took its name after a sync of it failed (a retried sync)" % final)
        return problems

    def leftovers(self, mode):
        """Temporaries: none left, or swept by one more run in their folder."""
        problems = []
        left = []
        for folder, _, names in os.walk(self.case_root()):
            left += [os.path.join(folder, n) for n in names if n.startswith(".weir-")]
        if left:
            folders = sorted({os.path.dirname(p) for p in left})
            inputs = []
            for folder in folders:
                path = os.path.join(folder, "sweep-input")
                with open(path, "wb") as f:
                    f.write(b"one more run\n")
                inputs.append(os.path.join(self.mount.point, os.path.relpath(path, self.mount.source)))
            subprocess.run([self.weir, "-q", "-f", "--rm"] + inputs, stderr=subprocess.DEVNULL)
            still = [p for folder in folders for p in
                     (os.path.join(folder, n) for n in os.listdir(folder) if n.startswith(".weir-"))]
            if still:
                problems.append("temporary files left, and not swept by one more run: " +
                                ", ".join(os.path.relpath(p, self.case_root()) for p in still))
        for _, _, names in os.walk(self.case_root()):
            for name in names:
                if name.endswith((".part", ".part.resume")) and not mode.resumable:
                    problems.append("%s left by a run that cannot be resumed" % name)
        return problems

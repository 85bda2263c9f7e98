"""The resume cases: checkpoints whose syncs fail, and a resumed run that
meets a fault; then the same command, without faults, must write a clean
run's bytes."""
import os
import re
import signal
import subprocess
import time

from weirtools.files import read

from .cases import Entry, Mode
from .faultfs import CASE, log


class Resume:
    """A part of Matrix: the resume cases."""

    def resume_cases(self):
        """A compression to FUSE of a plain file, in 72 frames: its
        checkpoints' syncs fail; or, stopped after a checkpoint, the resumed
        run meets a fault. Then the same command, without faults, must write
        a clean run's bytes."""
        data = self.corpus.piece(4_700_000)
        flags = ["-B64K"]
        expected = self.clean_bytes(data, flags)
        plain_input = os.path.join(self.plain, CASE, "in.txt")
        command = [self.weir, "-q"] + flags + [plain_input, "-o", "c/in.txt.zst"]
        mode = Mode("resume", {"in.txt": data}, command, [Entry("in.txt", data, "in.txt.zst", data, expected)],
                    resumable=True, inputs_outside=True)
        part = "/%s/in.txt.zst.part" % CASE
        record = "/%s/.in.txt.zst.part.resume" % CASE
        slow = "write %s ok delay=40" % part   # about 3 s: a checkpoint every 2 s
        checkpoint_faults = [
            # The record's name synced (the first folder sync): the run stops
            # before writing, naming its output and saying the input was kept.
            ("record: the folder's fsync EIO", ["fsyncdir /%s EIO count=1" % CASE], True, "fsyncdir"),
            ("checkpoint: the .part's fdatasync EIO", ["fdatasync %s EIO count=1" % part, slow], True, "sync"),
            ("checkpoint: the .part's fdatasync ENOSPC, second checkpoint",
             ["fdatasync %s ENOSPC from=2 count=1" % part, "write %s ok delay=60" % part], True, "sync"),
            ("checkpoint: the record's first write EIO", ["write %s EIO count=1" % record, slow], None, "write"),
            ("checkpoint: a checkpoint's write to the record EIO", ["write %s EIO from=2 count=1" % record, slow],
             False, None),
            ("checkpoint: the record's fdatasync EIO", ["fdatasync %s EIO count=1" % record, slow], False, None),
            ("checkpoint: the folder's fsync EIO", ["fsyncdir /%s EIO from=2 count=1" % CASE, slow], False, None),
        ]
        for fault, rules, fails, operation in checkpoint_faults:
            self.run_resume(mode, fault, rules, fails, operation)
        resumed_faults = [
            ("resumed: write EIO", ["write %s EIO after=1200000" % part], True, "write"),
            ("resumed: write ENOSPC", ["write %s ENOSPC after=1200000" % part], True, "write"),
            ("resumed: fdatasync EIO", ["fdatasync %s EIO count=1" % part], True, "sync"),
            ("resumed: rename EIO", ["rename %s EIO count=1" % part], True, "rename"),
            ("resumed: close EIO", ["flush %s EIO count=1" % part], True, "write"),
            ("resumed: the record's read EIO", ["read %s EIO count=1" % record], None, None),
            ("resumed: the .part's read EIO", ["read %s EIO count=1" % part], None, None),
        ]
        # A stopped run for each case: a .part copied back would be another
        # inode than the one its record names, which weir rightly refuses.
        for fault, rules, fails, operation in resumed_faults:
            self.stopped_run(mode, slow)
            self.run_resume(mode, fault, rules, fails, operation, laid_out=True)

    def checkpoints_follow_syncs(self, calls):
        """A checkpoint records only frames whose sync succeeded: each write
        to the record after its header follows a successful fdatasync of
        the .part since the record's previous write, and none follows a
        failed one."""
        part = "/%s/in.txt.zst.part" % CASE
        record = "/%s/.in.txt.zst.part.resume" % CASE
        synced, lost, problems = False, False, []
        for line in calls:
            if line.startswith("fdatasync %s = " % part):
                ok = line.split(" = ")[1].startswith("0")
                synced = synced or ok
                lost = lost or not ok
            match = re.match(r"write %s (\d+)\+\d+ = \d+" % re.escape(record), line)
            if match and int(match.group(1)) > 0:
                if lost:
                    problems.append("a checkpoint was recorded after a failed sync of the .part")
                elif not synced:
                    problems.append("a checkpoint was recorded with no sync of the .part before it")
                synced = False
        return problems

    def stopped_run(self, mode, slow):
        """A run stopped (SIGINT) after its first checkpoint, its .part and
        record left in the case folder for the resumed run; returns them."""
        self.lay_out(mode)
        self.mount.set_rules([slow])
        record = os.path.join(self.case_root(), ".in.txt.zst.part.resume")
        process = subprocess.Popen(mode.command, cwd=self.mount.point, env=mode.env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while process.poll() is None and time.monotonic() < deadline:
            if os.path.exists(record) and b"\ncheckpoint " in read(record):
                break
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=120)
        self.mount.set_rules([])
        kept = {}
        for name in os.listdir(self.case_root()):
            kept[name] = read(os.path.join(self.case_root(), name))
        if "in.txt.zst.part" not in kept:
            raise SystemExit("fault-test: the stopped run kept no .part: " + ", ".join(kept))
        return kept

    def run_resume(self, mode, fault, rules, fails, operation, laid_out=False, side="output", after_fault=None):
        """One case: the run with `rules`, checked; `after_fault`, if given,
        returns the problems of what it left (before the run after it)."""
        title = "%s / %s (%s)" % (mode.name, fault, side)
        if not laid_out:  # else a stopped run's .part and record are there
            self.lay_out(mode)
        self.mount.set_rules(rules)
        offset = self.mount.log_size()
        result = subprocess.run(mode.command, cwd=self.mount.point, env=mode.env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, timeout=300)
        stderr = result.stderr.decode(errors="replace")
        self.mount.set_rules([])
        calls = self.mount.calls_since(offset)
        fired = sum(1 for line in calls if " FAULT" in line)
        problems = []
        if fired == 0:
            problems.append("the fault never fired: the case proves nothing")
        if fails is None:
            # A kept .part weir cannot read: starting over is right, failing too.
            fails = result.returncode != 0
        problems += self.check(mode, result.returncode, stderr, calls, fails, operation or "read", rules)
        problems += self.checkpoints_follow_syncs(calls)
        if after_fault is not None:
            problems += after_fault()
        # The same command again, no fault: a clean run's bytes.
        output = os.path.join(self.case_root(), "in.txt.zst")
        if os.path.exists(output):  # the run went through: checked above
            again = result
        else:
            again = subprocess.run(mode.command, cwd=self.mount.point, env=mode.env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, timeout=300)
        if again.returncode != 0:
            problems.append("the same command after the fault failed: " + again.stderr.decode().strip())
        elif not os.path.exists(output) or read(output) != mode.entries[0].expected:
            problems.append("the same command after the fault did not write a clean run's bytes")
        left = [n for n in os.listdir(self.case_root()) if n.endswith(".part") or n.endswith(".part.resume")]
        if left:
            problems.append("left after the run that finished: " + ", ".join(left))
        self.faults += fired
        if problems:  # what the file system saw: the faults, and the calls around names
            problems.append("calls: " + "\n           ".join(
                line for line in calls if " FAULT" in line or not line.startswith("write ")))
        if self.verbose or problems:
            log("%s: %s%s" % (title, "ok" if not problems else "WRONG", "" if not problems else
                               "\n    " + "\n    ".join(problems) + "\n    stderr: " + stderr.strip()))
        if problems:
            self.failed.append(title)
        else:
            self.passed += 1

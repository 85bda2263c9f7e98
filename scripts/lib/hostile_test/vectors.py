"""The shared test vectors (testdata/vectors, issue 69) as hostile files: each
seek-table case read by the suite's table reader (common.seek_table: python/'s), and
every case of both folders given to the weir under test, whose `weir -t` must
pass or fail as the case's "weir-t" says (with a message when it fails); a good
table's file must decode as zstd decodes it, and a member an index lies about
must be refused. A case added to the folder is run here too."""
from weirtools import vectors
from weirtools.proc import decode

from .common import seek_table


class Vectors:
    def __init__(self, suite):
        self.suite = suite

    def cases(self):
        seek, members = vectors.cases("seek-table"), vectors.cases("member-index")
        assert seek and members, f"no vectors in {vectors.FOLDER}"
        for name, case in seek:
            self.suite.case(f"vector seek-table/{name}", lambda n=name, c=case: self.seek_case(n, c))
        for name, case in members:
            self.suite.case(f"vector member-index/{name}", lambda n=name, c=case: self.member_case(n, c))

    def weir(self, label, arguments):
        run = self.suite.binary.run(arguments)
        if run is None:
            self.suite.verdict(label, "timed out (hung)")
        return run

    def judge_test(self, label, path, case):
        """`weir -t` passes or fails as the case says."""
        run = self.weir(f"{label} -t", ["-q", "-t", str(path)])
        if run is None:
            return
        stderr = run.stderr.decode(errors="replace")
        if (run.returncode == 0) != (case["weir-t"] == "passes"):
            self.suite.verdict(f"{label} -t", f"exit {run.returncode}, the vector says weir -t {case['weir-t']}",
                               stderr)
        elif run.returncode != 0 and "weir:" not in stderr:
            self.suite.verdict(f"{label} -t", f"exit {run.returncode} without a message", stderr)
        else:
            self.suite.verdict(f"{label} -t", None)

    def seek_case(self, name, case):
        label = f"vector seek-table/{name}"
        path = vectors.file("seek-table", case)
        data = path.read_bytes()
        try:
            entries = seek_table(data)
            reading = "read"
        except ValueError as error:
            entries, reading = None, "no-table" if str(error) == "no seek table" else "corrupt-table"
        if case["reading"] in ("no-table", "corrupt-table"):
            wrong = None if reading == case["reading"] else f"read as {reading}, the vector says {case['reading']}"
        else:
            last = case["tables"][-1]
            listed = [(f["compressed"], f["content"], f["checksum"] or 0) for f in last["frames"]]
            wrong = None if entries == listed else f"entries {entries}, the vector lists {listed}"
        self.suite.verdict(f"{label} read", wrong)
        self.judge_test(label, path, case)
        if case["reading"] == "ok" and data:
            reference = decode(str(path))
            run = self.weir(f"{label} -dc", ["-dc", str(path)])
            if run is not None:
                same = run.returncode == 0 and reference is not None and run.stdout == reference
                self.suite.verdict(f"{label} -dc", None if same else
                                   f"exit {run.returncode}, {len(run.stdout)} bytes where zstd gives "
                                   f"{'none' if reference is None else len(reference)}",
                                   run.stderr.decode(errors="replace"))

    def member_case(self, name, case):
        label = f"vector member-index/{name}"
        path = vectors.file("member-index", case)
        self.judge_test(label, path, case)
        lie = case.get("lies-about")
        if lie is None:
            return
        run = self.weir(f"{label} --member", ["-dc", f"--member={lie}", str(path)])
        if run is not None:
            stderr = run.stderr.decode(errors="replace")
            refused = run.returncode == 1 and "member index disagrees" in stderr and not run.stdout
            self.suite.verdict(f"{label} --member", None if refused else
                               f"exit {run.returncode} with {len(run.stdout)} bytes: {lie} not refused", stderr)


def cases(suite):
    """Queues this module's cases on `suite`."""
    Vectors(suite).cases()

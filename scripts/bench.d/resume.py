"""scripts/bench's resume section (issue 42): weir -TN (resumable) against --no-resume beside zstd -TN, and the same
command run again after a run of it was stopped at 80%."""

import os
import shutil
import signal
import struct
import subprocess
import time

import harness
from corpus import file_size, warm
from formatting import cases, col, commands, f_num, f_ratio, of, spec_table, vs


def measure(bench):
    """Issue 42, what resuming costs and saves, file->file at level 3 on
    the main corpus: weir -TN (resumable: the default) against weir -TN
    --no-resume (the checkpoints' syncs) beside zstd -TN, alternating; and
    the same weir command run again after a run of it was stopped
    (SIGTERM, untimed) once its NAME.part held the frames of 80% of the
    input (from the seek table of an untimed run)."""
    a, n = bench.a, bench.N
    inp = bench.main
    warm(inp)
    weir = [a.weir, "-q", "-T%d" % n] + bench.weir_extra
    tools = [("weir", "weir -T%d" % n, weir),
             ("weir:no-resume", "weir -T%d --no-resume" % n, weir + ["--no-resume"]),
             ("zstd", "zstd -T%d" % n, [a.zstd, "-q", "-T%d" % n])]
    cases = [harness.make_case(bench, "resume", "compress", fam, tool, base, "file", inp, level=3, threads=n,
                               group="uninterrupted") for fam, tool, base in tools]
    resumed = harness.make_case(bench, "resume", "compress", "weir:resumed", "weir -T%d, run again" % n, weir, "file",
                                inp, level=3, threads=n, group="resumed at 80%", tag="resumed")
    out, share = resumed["out"], 0.8
    plain = weir + ["-3", "-f", inp, "-o", out]
    # Where 80% of the input is in the output: one run, untimed, whose
    # seek table gives the output bytes of the frames holding it.
    subprocess.run(plain, check=True)
    with open(out, "rb") as f:
        f.seek(-9, os.SEEK_END)
        count, descriptor = struct.unpack("<IB", f.read(5))
        size = 12 if descriptor & 0x80 else 8
        f.seek(-9 - count * size, os.SEEK_END)
        table = f.read(count * size)
    frames = [struct.unpack_from("<II", table, i * size) for i in range(count)]
    expected, held = 0, 0
    for compressed, decompressed in frames:  # the last frame boundary at or before 80%
        if held + decompressed > share * file_size(inp):
            break
        expected, held = expected + compressed, held + decompressed
    os.unlink(out)
    resumed["kept"] = []

    def stop_at_share():
        """A run of the same command, stopped by SIGTERM once OUT.part
        holds the frames of `share` of the input; what its record keeps."""
        record = os.path.join(os.path.dirname(out), "." + os.path.basename(out) + ".part.resume")
        for left in (out + ".part", record):
            if os.path.exists(left):
                os.unlink(left)
        p = subprocess.Popen(plain, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while p.poll() is None:
            if os.path.exists(out + ".part") and file_size(out + ".part") >= expected:
                p.send_signal(signal.SIGTERM)
                break
            time.sleep(0.002)
        p.wait()
        lines = open(record).read().splitlines() if os.path.exists(record) else []
        points = [line.split() for line in lines if line.startswith("checkpoint ")]
        resumed["kept"].append(int(points[-1][3]) / file_size(inp) if points else 0.0)
    # The floor: the bytes the resumed run compresses, as a file of their
    # own (the input after the kept frames' last boundary at or before 80%).
    rest = os.path.join(bench.work, "resume-rest.in")
    with open(inp, "rb") as fi, open(rest, "wb") as fo:
        fi.seek(held)
        shutil.copyfileobj(fi, fo, 1 << 23)
    warm(rest)
    alone = harness.make_case(bench, "resume", "compress", "weir:rest", "weir -T%d, the last %d%% alone" % (
        n, round(100 - 100 * held / file_size(inp))), weir, "file", rest, level=3, threads=n,
        group="resumed at 80%", tag="rest", data_bytes=file_size(inp))
    resumed["setup"] = stop_at_share
    resumed["cmd"] = "# untimed: the same command, SIGTERM once OUT.part holds %d bytes (80%% of the input)\n%s" % (
        expected, resumed["cmd"])
    harness.section(bench, "resume", "Resume: the checkpoints' cost, and a run resumed at 80%",
                    cases + [resumed, alone], a.runs, extra={"expected_bytes": expected, "share": share})


def report(data):
    """Issue 42: the resumable run beside --no-resume and zstd, and the run resumed at 80%."""
    n, cs = data["meta"]["threads"], cases(data, "resume")
    plain, z = of(cs, "weir"), of(cs, "zstd")
    resumed = of(cs, "weir:resumed") or {}
    kept = ", ".join("%.1f%%" % (100 * k) for k in resumed.get("kept", []))
    return spec_table(cs, [("Case", lambda c: c["group"]), *col("Tool", "MB/s", "Wall s", "CPU s", "Peak RSS MiB"),
                           ("Wall ÷ weir", lambda c: f_ratio(vs(c, plain, "wall"))),
                           ("zstd -T%d's wall ÷" % n, lambda c: f_ratio(vs(z, c, "wall"))), *col("Runs ok")]) + \
        "\nMB/s of the whole input, also for the resumed run (which compresses the "\
        "last fifth). Before each resumed run, untimed, the same command was stopped by SIGTERM once its "\
        "NAME.part held the frames of 80%% of the input; the record then kept, of the input: %s. \"The last N%% "\
        "alone\" compresses the bytes after those frames as a file of its own: the floor of a resumed run "\
        "(its MB/s also of the whole input); the resumed run took %s× its wall.\n\n" % (
            kept or "?", f_num(vs(resumed or None, of(cs, "weir:rest"), "wall"))) \
        + commands(cs)

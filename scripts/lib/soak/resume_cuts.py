#!/usr/bin/env python3
"""scripts/harness/soak --resume: a run stopped at random moments, resumed each time.

Usage: scripts/harness/soak --resume [compress|decompress] [--cuts N] [--size SIZE]
                             [--level N] [--seed N] [--weir PATH] [--input FILE]
                             [--report FILE]

Issue 42's test of resuming by hand, too slow for the unit tests (minutes):
one input (the first --size bytes of --input, default 200 MB of
/work/corpus/s300 or of bench/corpus/linux-6.1.tar, else generated text) is
compressed once without interruption (`weir --no-resume`, the reference), then
--cuts times (default 36) by the same command, `weir -q -LEVEL -T2 in`, stopped
by SIGINT, SIGTERM and SIGKILL in turn at a random moment of a run (uniform over
the reference's wall time), and run again, unstopped, to the end. Each time:
  - the stopped run exits 128+N;
  - the run again exits 0, and says `resumed at N%` when a checkpoint was kept;
  - its output is byte for byte the reference; nothing else is left in the
    folder (no NAME.part, .NAME.part.resume or .weir-XXXXXX).
A moment that comes after the run ended (the machine is shared: a run's
length varies) is not a cut: that run's output is checked, and another moment
is drawn within its length. Prints one row per cut and a verdict; --report writes them as Markdown. Exit 1
on any failure. Not run by CI (scripts/test does not call it).

`decompress` does the same to `weir -q -d -T2 x.zst`, where x.zst is the input
compressed once at -3 (8 MiB frames): its output must be the input, byte for
byte. A decode of 200 MB lasts a fraction of a second, so its runs are slowed
by weir's test hook WEIR_TEST_FRAME_DELAY (--frame-delay seconds per frame,
default 0.4: ~10 s), as the crash test's decompression cuts are.
"""
import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))  # scripts/lib: weirtools

from weirtools import ROOT as ROOT_PATH
from weirtools import corpora
from weirtools.binaries import add_weir_option

ROOT = str(ROOT_PATH)
SIGNALS = [("INT", signal.SIGINT), ("TERM", signal.SIGTERM), ("KILL", signal.SIGKILL)]


def size_arg(text):
    units = {"K": 10**3, "M": 10**6, "G": 10**9}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1].upper() in units else int(text)


def default_input():
    return corpora.first_present(corpora.LARGE_TEXT, corpora.LINUX)


def make_input(path, source, size):
    """The first `size` bytes of `source`, or generated text when there is none."""
    with open(path, "wb") as out:
        if source:
            with open(source, "rb") as f:
                out.write(f.read(size))
            return
        rng = random.Random(1)
        words = [b"weir", b"river", b"stream", b"frame", b"chunk", b"zstd", b"data", b"gate"]
        written, n = 0, 0
        while written < size:
            n += 1
            line = b"%012d " % n + b" ".join(rng.choice(words) for _ in range(12)) + b"\n"
            out.write(line[: size - written])
            written += len(line)


def leftovers(folder, keep):
    return sorted(name for name in os.listdir(folder) if name not in keep)


def kept_percent(folder, name, size):
    """The share of the input the record's last checkpoint holds, from its text."""
    record = os.path.join(folder, "." + name + ".part.resume")
    try:
        lines = open(record, "rb").read().decode(errors="replace").splitlines()
    except OSError:
        return None
    checkpoints = [line.split() for line in lines if line.startswith("checkpoint ")]
    return 100.0 * int(checkpoints[-1][3]) / size if checkpoints else 0.0


def stop_at(command, folder, moment, number, env):
    """Runs `command` and sends it signal `number` `moment` seconds in;
    returns the process, ended, and None, or, when it ended first, the
    seconds it ran."""
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    while time.monotonic() - started < moment:
        if process.poll() is not None:
            return process, time.monotonic() - started
        time.sleep(min(0.01, max(0.0, moment - (time.monotonic() - started))))
    process.send_signal(number)
    process.wait()
    return process, None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("direction", nargs="?", default="compress", choices=["compress", "decompress"])
    parser.add_argument("--cuts", type=int, default=36)
    parser.add_argument("--size", type=size_arg, default=200 * 10**6)
    parser.add_argument("--level", type=int, default=12,
                        help="level (default 12: a 200 MB run lasts ~10 s on 2 shared cores, so that every "
                             "signal meets runs with checkpoints, made every 2 s)")
    parser.add_argument("--seed", type=int, default=None)
    add_weir_option(parser, default=os.path.join(ROOT, ".build", "release", "weir"))
    parser.add_argument("--input", default=default_input())
    parser.add_argument("--report", default=None)
    parser.add_argument("--frame-delay", type=float, default=0.4,
                        help="decompress: seconds each frame's decode is held (WEIR_TEST_FRAME_DELAY)")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    work = tempfile.mkdtemp(prefix="weir-resume-cuts-", dir=os.path.join(ROOT, "bench", "work")
                            if os.path.isdir(os.path.join(ROOT, "bench", "work")) else None)
    try:
        return run(args, rng, seed, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(args, rng, seed, work):
    weir = os.path.abspath(args.weir)
    make_input(os.path.join(work, "in"), args.input, args.size)
    size = os.path.getsize(os.path.join(work, "in"))
    env = dict(os.environ)
    if args.direction == "compress":
        command, target, keep = [weir, "-q", "-%d" % args.level, "-T2", "in"], "in.zst", {"in", "in.zst", "ref.zst"}
        started = time.monotonic()
        subprocess.run([weir, "-q", "-%d" % args.level, "-T2", "--no-resume", "in", "-o", "ref.zst"], cwd=work,
                       check=True)
        full = time.monotonic() - started
        reference = open(os.path.join(work, "ref.zst"), "rb").read()
    else:
        command, target, keep = [weir, "-q", "-d", "-T2", "x.zst"], "x", {"in", "x.zst", "x"}
        subprocess.run([weir, "-q", "-3", "-T2", "--no-resume", "in", "-o", "x.zst"], cwd=work, check=True)
        env["WEIR_TEST_FRAME_DELAY"] = str(args.frame_delay)
        started = time.monotonic()
        subprocess.run(command[:2] + ["--no-resume"] + command[2:], cwd=work, check=True, env=env)
        full = time.monotonic() - started
        reference = open(os.path.join(work, "in"), "rb").read()
        os.remove(os.path.join(work, "x"))
    print("input %d bytes (%s), %s, reference run %.2f s, seed %d, %s"
          % (size, args.input or "generated", args.direction, full, seed, " ".join(["weir"] + command[1:])))
    rows, failures, redrawn, estimate = [], 0, 0, full
    for cut in range(args.cuts):
        name, number = SIGNALS[cut % len(SIGNALS)]
        while True:
            moment = rng.uniform(0.05, estimate)
            process, ended = stop_at(command, work, moment, number, env)
            if ended is None:
                break
            # The run ended before the moment (the shared machine sped up):
            # not a cut. Its output must still be the reference's; then
            # another moment, within the length of that run.
            redrawn += 1
            estimate = ended
            output = os.path.join(work, target)
            if process.returncode != 0 or open(output, "rb").read() != reference:
                failures += 1
                print("an uninterrupted run (exit %d) did not write the reference" % process.returncode)
            os.remove(output)
        stopped = process.returncode
        kept = kept_percent(work, target, size)
        part = os.path.exists(os.path.join(work, target + ".part"))
        started = time.monotonic()
        again = subprocess.run(command[:1] + ["-v"] + command[2:], cwd=work, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, env=env)
        seconds = time.monotonic() - started
        said = again.stderr.decode(errors="replace")
        resumed = said.split(", resumed at ")[1].split("%")[0] + "%" if ", resumed at " in said else "-"
        problems = []
        if stopped not in (128 + number, -number):
            problems.append("stopped run exited %d" % stopped)
        if again.returncode != 0:
            problems.append("run again exited %d: %s" % (again.returncode, said.strip()[-200:]))
        output = os.path.join(work, target)
        if not os.path.exists(output) or open(output, "rb").read() != reference:
            problems.append("output differs from the uninterrupted one")
        left = leftovers(work, keep)
        if left:
            problems.append("left: " + " ".join(left))
        if part and kept and resumed == "-":
            problems.append("a checkpoint was kept but the run again did not resume")
        failures += bool(problems)
        row = (cut + 1, name, moment, stopped, "%.0f%%" % kept if part and kept is not None else "nothing",
               resumed, seconds, "yes" if not problems else "NO: " + "; ".join(problems))
        rows.append(row)
        print("%2d SIG%-4s at %5.2f s: exit %3d, kept %-7s resumed %-5s in %5.2f s, identical %s" % row, flush=True)
        if os.path.exists(output):
            os.remove(output)
    resumed = sum(1 for row in rows if row[5] != "-")
    verdict = ("OK: %d cuts (%d moments redrawn: the run had ended), %d resumed from a checkpoint, every output "
               "identical to the uninterrupted run" % (len(rows), redrawn, resumed) if failures == 0
               else "FAILED: %d of %d cuts" % (failures, len(rows)))
    print(verdict)
    if args.report:
        write_report(args, rows, verdict, size, full, seed, command)
    return 0 if failures == 0 else 1


def write_report(args, rows, verdict, size, full, seed, command):
    load = open("/proc/loadavg").read().split()[:3]
    with open(args.report, "w") as out:
        what = "compression" if args.direction == "compress" else "decompression"
        out.write("# Resume: a %s stopped at %d random moments (issue 42)\n\n" % (what, len(rows)))
        out.write("`scripts/harness/soak --resume %s --cuts %d --seed %d` on %s: %d bytes of %s, `%s`%s, "
                  "reference run %.2f s; %d cores, load %s after the run (shared machine).\n\n"
                  % (args.direction, len(rows), seed, time.strftime("%Y-%m-%d"), size, args.input or "generated text",
                     " ".join(["weir"] + command[1:]),
                     "" if args.direction == "compress" else " with WEIR_TEST_FRAME_DELAY=%g" % args.frame_delay,
                     full, os.cpu_count(), " ".join(load)))
        out.write("Each cut: the command, stopped by the signal at the moment; then the same command "
                  "again, to the end; its output compared byte for byte with the uninterrupted run's "
                  "(`--no-resume`), and the folder checked for leftovers. \"kept\" is the share of the "
                  "input in the record's last checkpoint after the stop.\n\n")
        out.write("| # | signal | at (s) | exit | kept | resumed at | run again (s) | identical |\n")
        out.write("| --: | --- | --: | --: | --: | --: | --: | --- |\n")
        for row in rows:
            out.write("| %d | SIG%s | %.2f | %d | %s | %s | %.2f | %s |\n" % row)
        out.write("\n**%s.**\n" % verdict)


if __name__ == "__main__":
    sys.exit(main())

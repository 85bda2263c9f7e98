#!/usr/bin/env python3
"""Issue 59, point 6: resuming a -5 compression stopped at 80%, against a full
run. One stopped state, copied for every resume, so that each resume starts
from the same kept frames; CPU time (user + system, os.wait4) beside wall time
(the machine is shared: CPU time is the steadier). usage: measure2.py WEIR INPUT FOLDER"""
import json, os, re, shutil, signal, statistics, subprocess, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../scripts/lib"))
from hostile_test.common import fnv

weir, source, folder = sys.argv[1:4]
size = os.path.getsize(source)
os.chdir(folder)
LEVEL = ["-5", "-T2"]
RUNS = 3


def timed(args):
    t = time.monotonic()
    p = subprocess.Popen([weir] + args, stdout=subprocess.DEVNULL, stderr=open("err.txt", "wb"))
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - t
    err = open("err.txt").read()
    assert status == 0, err
    return wall, usage.ru_utime + usage.ru_stime, err


def rewrite(text, part_line, version):
    """The record with another part line (the copied .part's inode), as
    version 3 or as version 2 (no PART_HASH), its checkpoints hashed anew."""
    lines = text.splitlines()
    out = f"weir-resume {version}\n{lines[1]}\n{lines[2]}\npart {part_line}\n"
    h = fnv(out.encode())
    body = ""
    for line in lines[4:]:
        fields = line.split()
        if fields[0] == "frame":
            body += " ".join(fields[:4] if version == 2 else fields) + "\n"
        elif fields[0] == "checkpoint":
            body += " ".join(fields[:4]) + " "
            body += f"{fnv(body.encode(), h)}\n"
            h = fnv(body.encode(), h)
            out += body
            body = ""
    return out


def clean(keep=()):
    for name in os.listdir("."):
        if name not in (os.path.basename(source), "err.txt") + tuple(keep):
            os.unlink(name)


clean()
full, fullcpu = [], []
for _ in range(RUNS):
    wall, cpu, _ = timed(["-q"] + LEVEL + ["--no-resume", "-f", source, "-o", "full.zst"])
    full.append(wall)
    fullcpu.append(cpu)
# The stopped state: SIGINT (a last checkpoint of every frame written) once
# the work has taken 80% of the input, as --progress=json tells it.
p = subprocess.Popen([weir, "-q", "--progress=json"] + LEVEL + [source, "-o", "r.zst"], stderr=subprocess.PIPE)
for line in p.stderr:
    if json.loads(line).get("bytes_in", 0) >= 0.8 * size:
        break
p.send_signal(signal.SIGINT)
p.stderr.read()
p.wait()
os.rename("r.zst.part", "golden.part")
golden = open(".r.zst.part.resume").read()
os.unlink(".r.zst.part.resume")
kept = int(re.findall(r"^checkpoint \d+ \d+ (\d+) ", golden, re.M)[-1])
# The floor: the bytes after the kept ones, compressed alone.
with open(source, "rb") as f, open("tail.in", "wb") as out:
    f.seek(kept)
    shutil.copyfileobj(f, out)
tail, tailcpu = [], []
for _ in range(RUNS):
    wall, cpu, _ = timed(["-q"] + LEVEL + ["--no-resume", "-f", "tail.in", "-o", "tail.zst"])
    tail.append(wall)
    tailcpu.append(cpu)
results = {}
for version in (3, 2):
    walls, cpus = [], []
    for _ in range(RUNS):
        clean(keep=("full.zst", "golden.part", "tail.in"))
        shutil.copyfile("golden.part", "r.zst.part")
        s = os.stat("r.zst.part")
        with open(".r.zst.part.resume", "w") as f:
            f.write(rewrite(golden, f"{s.st_dev} {s.st_ino}", version))
        wall, cpu, err = timed(LEVEL + [source, "-o", "r.zst"])
        assert "resumed at" in err, err
        subprocess.run(["cmp", "r.zst", "full.zst"], check=True)
        walls.append(wall)
        cpus.append(cpu)
    results[version] = (walls, cpus)
clean()
med = statistics.median
print(f"input {size} bytes, kept {kept} ({100 * kept / size:.1f}%), level -5 -T2, medians of {RUNS}")
print(f"full run:           wall {med(full):.2f} s  cpu {med(fullcpu):.2f} s   {full} {fullcpu}")
print(f"tail alone (floor): wall {med(tail):.2f} s  cpu {med(tailcpu):.2f} s   ratio cpu {med(tailcpu) / med(fullcpu):.3f}")
for version, (walls, cpus) in results.items():
    name = "resume, hashed (record v3)" if version == 3 else "resume, decoded (record v2)"
    print(f"{name}: wall {med(walls):.2f} s  cpu {med(cpus):.2f} s   ratio wall {med(walls) / med(full):.3f} "
          f"cpu {med(cpus) / med(fullcpu):.3f}; check ≈ cpu {med(cpus) - med(tailcpu):.2f} s  {walls} {cpus}")

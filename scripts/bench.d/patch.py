"""scripts/bench's patch section (issue 50): weir --patch-from against zstd --patch-from on a 200 MB slice of the
corpus and a copy of it with 40 random edits: patch size against zstd's, wall against zstd -T2's, peak RSS; medians.
runner.py calls run(bench); report.py calls render(data). Alone: python3 scripts/bench.d/patch.py WEIR ZSTD CORPUS DIR."""

import os
import random
import statistics
import subprocess
import sys
import time

SLICE = 200 * 1000 * 1000
EDITS = 40


def make_pair(corpus, folder):
    """OLD: the first 200 MB of the corpus; NEW: OLD with 40 edits (seeded): each replaces, inserts or deletes up to
    64 KiB at a random place. Returns their paths."""
    old, new = os.path.join(folder, "patch-old"), os.path.join(folder, "patch-new")
    with open(corpus, "rb") as f:
        data = f.read(SLICE)
    with open(old, "wb") as f:
        f.write(data)
    rng = random.Random(50)
    edited = bytearray(data)
    for _ in range(EDITS):
        at, length = rng.randrange(len(edited)), rng.randrange(1, 1 << 16)
        kind = rng.choice(("replace", "insert", "delete"))
        if kind == "replace":
            edited[at:at + length] = rng.randbytes(length)
        elif kind == "insert":
            edited[at:at] = rng.randbytes(length)
        else:
            del edited[at:at + length]
    with open(new, "wb") as f:
        f.write(edited)
    return old, new


def timed(command):
    """Runs `command`; returns (wall seconds, CPU seconds, peak RSS KiB) of that child alone (wait4)."""
    began = time.monotonic()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.monotonic() - began
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError("failed: " + " ".join(command))
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def measure(weir, zstd, corpus, folder, runs=3, threads=2):
    """Each tool `runs` times, alternating; every patch is checked by the other tool's decoder. Returns rows."""
    old, new = make_pair(corpus, folder)
    tools = [(f"weir -T{threads}", [weir, "-q", "-f", f"-T{threads}"], zstd),
             (f"zstd -T{threads}", [zstd, "-q", "-f", f"-T{threads}"], weir),
             ("zstd", [zstd, "-q", "-f"], weir)]
    results = {name: [] for name, _, _ in tools}
    for _ in range(runs):
        for name, base, other in tools:
            out = os.path.join(folder, "patch.zst")
            wall, cpu, rss = timed(base + ["--patch-from=" + old, new, "-o", out])
            size = os.path.getsize(out)
            back = os.path.join(folder, "patch.back")
            subprocess.run([other, "-q", "-f", "-d", "--patch-from=" + old, out, "-o", back], check=True)
            with open(back, "rb") as a, open(new, "rb") as b:
                if a.read() != b.read():
                    raise RuntimeError(f"{name}: the other tool decoded another file")
            os.unlink(back)
            results[name].append({"wall": wall, "cpu": cpu, "rss_kb": rss, "out_bytes": size})
    rows = []
    for name, runs_of in results.items():
        rows.append({"tool": name, "n_runs": len(runs_of),
                     **{key: statistics.median(r[key] for r in runs_of) for key in ("wall", "cpu", "rss_kb", "out_bytes")}})
    for path in (old, new, os.path.join(folder, "patch.zst")):
        os.unlink(path)
    return rows


def run(bench):
    a = bench.a
    os.makedirs(bench.work, exist_ok=True)
    rows = measure(a.weir, a.zstd, bench.main, bench.work, runs=a.runs, threads=bench.N)
    bench.data["sections"]["patch"] = {"title": "--patch-from (200 MB slice, 40 edits)", "rows": rows}


def render_rows(rows):
    zstd_t = next(r for r in rows if r["tool"].startswith("zstd -T"))
    lines = ["| Tool | Patch bytes | vs zstd -T | Wall s | vs zstd -T (speed) | CPU s | Peak RSS MiB | vs zstd -T |",
             "|---|--:|--:|--:|--:|--:|--:|--:|"]
    for r in rows:
        lines.append(f"| {r['tool']} | {r['out_bytes']:.0f} | {r['out_bytes'] / zstd_t['out_bytes']:.3f}× "
                     f"| {r['wall']:.2f} | {zstd_t['wall'] / r['wall']:.2f}× | {r['cpu']:.2f} "
                     f"| {r['rss_kb'] / 1024:.0f} | {r['rss_kb'] / zstd_t['rss_kb']:.2f}× |")
    return "\n".join(lines) + "\n"


def render(data):
    section = data["sections"].get("patch")
    if not section:
        return ""
    runs = section["rows"][0]["n_runs"]
    return f"## {section['title']}\n\nMedians of {runs} runs each, alternating.\n\n" + render_rows(section["rows"])


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    measured = measure(*sys.argv[1:5])
    print(render_rows(measured))

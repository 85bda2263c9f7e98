"""scripts/bench's index section (issue 68): what the member index costs the main job. weir -TN against weir -TN
--no-member-index, alternating, at -1 and -3, file→file and through a pipe (`cat IN | weir > OUT`), on three tars
from the Linux tarball: its Documentation/ and kernel/ (a source tar), its first 20 MB as a whole tar, the whole
tarball (--quick: the first two), and (issue 82) its first 20 MB cut mid-member, which gets no index but pays the
scan. Speed, CPU and peak RSS with ÷ without, and the index's bytes per member; zstd -TN (file→file) for the frames'
size, and pzstd -pN on the whole tarball (with the index, weir's lead over it). Every index is checked against
`tar tf`; the cut tar's outputs by zstd -d | cmp alone."""

import os
import shlex
import shutil
import subprocess
import tarfile

import corpus
import harness
from corpus import file_size
from formatting import MODE_TITLE, commands, f_bytes, f_mib, f_num, f_ok, f_ratio, find, human, med, vs
from timing import die, log
from weirtools.tables import render

LEVELS, MODES, PIECE = (1, 3), ("file", "pipe"), 20_000_000
SOURCE_DIRS = ("Documentation", "kernel")
# role: (label, the name for it)
ROLES = {"source": "the source tar", "piece": "the 20 MB piece", "cut": "the 20 MB cut", "whole": "the whole tarball",
         "tar": "a tar"}


def blocks(n):
    return (n + 511) // 512 * 512


def derived(bench, name, source, pick):
    """bench/corpus/NAME: the raw bytes (headers and data, in order) of the tarball's members that PICK(member)
    keeps, then two zero blocks: a whole tar, made once. SOURCE: how, for NAME.source."""
    dest = os.path.join(bench.corpus_dir, name)
    if os.path.exists(dest):
        return dest
    log("bench: index: writing %s (%s)" % (bench.disp_path(dest), source))
    with open(bench.a.tarball, "rb") as f, open(dest + ".tmp", "wb") as out, tarfile.open(fileobj=f) as t:
        for m in t:
            if pick(m):
                here = f.tell()  # tarfile reads the headers from f: copy, then go back
                f.seek(m.offset)
                left = m.offset_data - m.offset + (0 if m.islnk() or m.issym() else blocks(m.size))
                while left:
                    chunk = f.read(min(left, 1 << 20))
                    if not chunk:
                        die("index: %s ends inside %s" % (bench.a.tarball, m.name))
                    out.write(chunk)
                    left -= len(chunk)
                f.seek(here)
        out.write(bytes(1024))
    os.replace(dest + ".tmp", dest)
    with open(dest + ".source", "w") as f:
        f.write(source + "\n")
    return dest


def inputs(bench):
    """[(role, path)]: the three tars of issue 68 (--quick: not the whole tarball), or, without the tarball, a tar
    of /usr (corpus.py's members_tar)."""
    a, stem = bench.a, os.path.splitext(os.path.basename(bench.a.tarball))[0]
    if not os.path.exists(a.tarball):
        return [("tar", corpus.members_tar(bench))]
    top = next(iter(tarfile.open(a.tarball))).name.rstrip("/")  # linux-source-6.1
    dirs = tuple("%s/%s" % (top, d) for d in SOURCE_DIRS)
    source = derived(bench, "%s.src-%s.tar" % (stem, "-".join(d.lower() for d in SOURCE_DIRS)),
                     "the members of %s under %s, in order (raw headers and data), then two zero blocks" % (
                         os.path.basename(a.tarball), " and ".join(d + "/" for d in dirs)),
                     lambda m: m.name.rstrip("/") in dirs or m.name.startswith(tuple(d + "/" for d in dirs)))
    piece = derived(bench, "%s.piece-%d.tar" % (stem, PIECE),
                    "the members of %s whose header begins before byte %d, in order, then two zero blocks" % (
                        os.path.basename(a.tarball), PIECE), lambda m: m.offset < PIECE)
    cut = os.path.join(bench.corpus_dir, "%s.cut-%d.tar" % (stem, PIECE))
    if not os.path.exists(cut):  # the tarball's first PIECE bytes as they are: cut inside a member, no index
        with open(a.tarball, "rb") as f, open(cut + ".tmp", "wb") as out:
            out.write(f.read(PIECE))
        os.replace(cut + ".tmp", cut)
        with open(cut + ".source", "w") as f:
            f.write("the first %d bytes of %s, cut inside a member\n" % (PIECE, os.path.basename(a.tarball)))
    return [("source", source), ("piece", piece), ("cut", cut)] + ([] if a.quick else [("whole", a.tarball)])


def measure(bench):
    a, n = bench.a, bench.N
    d = os.path.join(bench.work, "index")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    weir = [a.weir, "-q", "-T%d" % n] + bench.weir_extra
    # both built as family weir (make_case gives weir no -c in a pipe), the second renamed weir:none below
    tools = [("weir", "weir -T%d" % n, weir), ("weir", "weir -T%d --no-member-index" % n, weir + ["--no-member-index"])]
    ins, rows = [], []
    for role, tar in inputs(bench):
        listing = os.path.join(d, role + ".tar-tf")
        # A cut tar: tar tf lists what it can and fails at the cut (the count is then a lower bound).
        subprocess.run("tar tf %s > %s" % (shlex.quote(tar), shlex.quote(listing)), shell=True, check=role != "cut",
                       stderr=subprocess.DEVNULL if role == "cut" else None)
        ins.append({"role": role, "path": bench.disp_path(tar), "bytes": file_size(tar),
                    "members": sum(1 for _ in open(listing, "rb")), "listing": listing,
                    "source": open(tar + ".source").read().strip() if os.path.exists(tar + ".source") else None})
        peers = [("zstd", "zstd -T%d" % n, [a.zstd, "-q", "-T%d" % n])] + (
            [("pzstd", "pzstd -p%d" % n, [a.pzstd, "-q", "-p%d" % n])] if role == "whole" else [])
        rows += [(mode, tar, tools + (peers if mode == "file" else []),
                  {"level": level, "threads": n, "group": "%s -%d %s" % (role, level, mode), "extra": {"role": role}})
                 for level in LEVELS for mode in MODES]
    cases = harness.grid_cases(bench, "index", rows)
    listings = {i["role"]: i.pop("listing") for i in ins}
    for c in cases:
        if c["tool"].endswith("--no-member-index"):
            c["family"] = "weir:none"
        elif c["family"] == "weir" and c["role"] != "cut":  # its index lists what tar tf does
            c["verify"], c["expect"] = "tar-index", listings[c["role"]]
    harness.section(bench, "index", "The member index's cost: -%s, %s, %s" % (
        " and -".join(map(str, LEVELS)), " and ".join(MODE_TITLE[m] for m in MODES),
        ", ".join("%s (%s)" % (ROLES[i["role"]], human(i["bytes"])) for i in ins)), cases, a.runs,
                    extra={"inputs": ins}, notes=[
                        "Speed with the index ÷ without: time without ÷ time with (CPU: user+sys; wall); "
                        "index bytes a member: output with it minus without, ÷ the members `tar tf` lists.",
                        "Every output with the index is checked twice: `weir -l --members` equals `tar tf`, and "
                        "zstd -d | cmp."])
    if not a.keep_work:
        shutil.rmtree(d, ignore_errors=True)


def measures(data):
    """[dict per input, level and mode: the role, label, members, cpu and wall (speed with ÷ without), rss (MiB,
    with minus without), per_member (index bytes a member), frames (without ÷ zstd -TN, file→file), the cases]."""
    s, out = data.get("sections", {}).get("index"), []
    for i in (s or {}).get("inputs", []):
        for level in LEVELS:
            z = find(data, "index", role=i["role"], level=level, family="zstd")
            p = find(data, "index", role=i["role"], level=level, family="pzstd")
            for mode in MODES:
                w, x = (find(data, "index", role=i["role"], level=level, mode=mode, family=f)
                        for f in ("weir", "weir:none"))
                if not w:
                    continue
                rss = None if med(w, "rss_kb") is None or med(x, "rss_kb") is None else (
                    med(w, "rss_kb") - med(x, "rss_kb")) / 1024
                size = None if med(w, "out_bytes") is None or med(x, "out_bytes") is None else (
                    med(w, "out_bytes") - med(x, "out_bytes")) / i["members"]
                case = "-%d %s" % (level, MODE_TITLE[mode])
                out.append(dict(role=i["role"], label="%s, %s" % (ROLES[i["role"]], case), case=case, level=level,
                                mode=mode, members=i["members"], cpu=vs(x, w, "cpu"), wall=vs(x, w, "wall"), rss=rss,
                                per_member=size, frames=vs(x, z, "out_bytes"), w=w, x=x, z=z,
                                pzstd=vs(p, w, "wall") if mode == "file" and p else None, p=p))
    return out


def report(data):
    s, n = data["sections"]["index"], data["meta"]["threads"]
    ins = render(["Input", "Bytes", "Members (`tar tf`)", "Made"], [
        ["%s: `%s`" % (ROLES[i["role"]], i["path"]), f_bytes(i["bytes"]), f_bytes(i["members"]), i["source"] or "–"]
        for i in s["inputs"]])
    rows = [[m["label"], f_num(med(m["w"], "cpu")), f_num(med(m["x"], "cpu")), f_ratio(m["cpu"], 3),
             f_num(med(m["w"], "wall"), "%.3f"), f_num(med(m["x"], "wall"), "%.3f"), f_ratio(m["wall"], 3),
             f_mib(med(m["w"], "rss_kb")), f_mib(med(m["x"], "rss_kb")), f_num(m["rss"], "%+.1f"),
             f_bytes(med(m["w"], "out_bytes")), f_bytes(med(m["x"], "out_bytes")), f_num(m["per_member"]),
             f_ratio(m["frames"], 4), "%s, %s" % (f_ok(m["w"]), f_ok(m["x"]))] for m in measures(data)]
    zs = [["%s, -%d" % (ROLES[m["role"]], m["level"]), f_num(med(m["z"], "cpu")), f_num(med(m["z"], "wall"), "%.3f"),
           f_mib(med(m["z"], "rss_kb")), f_bytes(med(m["z"], "out_bytes")), f_ok(m["z"])]
          for m in measures(data) if m["mode"] == "file" and m["z"]]
    ps = [["%s, -%d" % (ROLES[m["role"]], m["level"]), f_num(med(m["p"], "wall"), "%.3f"),
           f_num(med(m["w"], "wall"), "%.3f"), f_ratio(m["pzstd"], 3), f_mib(med(m["p"], "rss_kb")), f_ok(m["p"])]
          for m in measures(data) if m.get("pzstd") is not None]
    return (ins + "\n" + render(
        ["weir -T%d with the index / without" % n, "CPU s with", "without", "CPU speed with ÷ without", "Wall s with",
         "without", "Wall speed with ÷ without", "Peak RSS MiB with", "without", "Difference MiB", "Bytes with",
         "without", "Index bytes a member", "Frames ÷ zstd -T%d" % n, "Runs ok"], rows) +
        "\nzstd -T%d, file→file, for reference:\n\n" % n + render(
            ["Input", "CPU s", "Wall s", "Peak RSS MiB", "Bytes", "Runs ok"], zs) +
        ("\npzstd -p%d against weir -T%d with the index, file→file (issue 82's goal: ≥ 1.05×):\n\n" % (n, n) + render(
            ["Input", "pzstd wall s", "weir wall s", "weir speed ÷ pzstd", "pzstd peak RSS MiB", "Runs ok"], ps)
         if ps else "") +
        "".join("\n- " + note for note in s.get("notes", [])) + "\n\n" + commands(s["cases"]))

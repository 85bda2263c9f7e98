"""scripts/bench's mount section (issue 70): `weir mount` against ratarmount 1.3.0 (pip, in a venv of the bench's
work folder) on the same weir-compressed tar. In one run: the mount ready (weir; ratarmount the first time, its
side index deleted, and again, with it); `find MNT -type f | wc -l`; the first read of one member on a fresh mount
(against `weir -d --member | tar x`); `tar c` of one folder out of the mount, extracted (against `weir -d
--member=FOLDER | tar x`); and a whole session in the foreground (mount, find, the member, `ls -lR`, `tar c` of
the folder, drivers and arch read through md5sum, unmount) for its peak RSS. Every count, member and folder is
checked against GNU tar's own listing and extraction. Needs root and /dev/fuse; asked for by name (--sections
mount), not in the default run."""

import os
import shlex
import shutil
import subprocess
import tarfile
import time

import harness
from corpus import file_size, members_tar, pick_member, warm
from formatting import commands, f_mib, f_ms, f_ok, f_spread, find, human, med, ratio
from timing import die, log
from weirtools.mounts import fuse_unmount
from weirtools.tables import render

RATARMOUNT = "ratarmount==1.3.0"


def ratarmount_bin(bench):
    """ratarmount 1.3.0 from a venv of its own in the work folder (made once, kept across runs)."""
    venv = os.path.join(os.path.dirname(bench.work.rstrip("/")), "ratarmount-venv")
    exe = os.path.join(venv, "bin", "ratarmount")
    if not os.path.exists(exe):
        log("bench: mount: pip install %s into %s" % (RATARMOUNT, bench.disp_path(venv)))
        subprocess.run(["python3", "-m", "venv", venv], check=True)
        subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q", "--only-binary", ":all:", RATARMOUNT],
                       check=True)
    return exe


def unmount(mnt):
    """The mount at MNT taken down (weirtools.mounts.fuse_unmount), or the run ends."""
    if not fuse_unmount(mnt, patience=5):
        die("mount: %s is still mounted" % mnt)


def folder_of(names, member):
    """The folder `tar c` takes: <top>/Documentation when the tar holds it, else the member's own folder."""
    top = member.split("/", 1)[0]
    wanted = top + "/Documentation"
    if any(n == wanted or n.startswith(wanted + "/") for n in names):
        return wanted
    return os.path.dirname(member) or top


def measure(bench):
    a, q = bench.a, shlex.quote
    if os.geteuid() != 0 or not os.path.exists("/dev/fuse"):
        die("mount: needs root and /dev/fuse")
    t0 = time.time()
    rat = ratarmount_bin(bench)
    tar = members_tar(bench)
    d = os.path.join(bench.work, "mount")
    for mnt in (os.path.join(d, "mnt-weir"), os.path.join(d, "mnt-rat")):
        if os.path.isdir(mnt):
            unmount(mnt)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    archive, index = os.path.join(d, "a.tar.zst"), os.path.join(d, "a.tar.zst.index.sqlite")
    mw, mr = os.path.join(d, "mnt-weir"), os.path.join(d, "mnt-rat")
    ref, out_dir, listing = os.path.join(d, "ref"), os.path.join(d, "x"), os.path.join(d, "tar-tf.txt")
    for m in (mw, mr):
        os.makedirs(m)
    member = pick_member(tar)
    with tarfile.open(tar) as archive_listing:
        infos = list(archive_listing)
    names = [i.name.rstrip("/") for i in infos]
    folder = folder_of(names, member)
    parent, base = os.path.dirname(folder), os.path.basename(folder)
    # find -type f counts each name of a regular file, a hard link's too; the last of a name stored twice
    files = len({i.name for i in infos if i.isreg() or i.islnk()})
    weir = [a.weir, "-q", "-T%d" % bench.N] + bench.weir_extra
    prepare = [
        "%s -c %s > %s" % (" ".join(map(q, weir)), q(tar), q(archive)),
        "tar tf %s > %s" % (q(tar), q(listing)),
        "mkdir -p %s && tar xf %s -C %s %s %s" % (q(ref), q(tar), q(ref), q(member), q(folder)),
        "%s --index-file %s %s %s && fusermount3 -u %s  # ratarmount's side index, once" % (
            q(rat), q(index), q(archive), q(mr), q(mr)),
    ]
    warm(tar)
    for script in prepare:
        log("bench: mount: preparing: %s" % bench.disp_prefix(script))
        subprocess.run(["bash", "-c", "set -e -o pipefail; " + script], check=True)
    unmount(mr)
    warm(archive)
    size = file_size(archive)

    mount_weir = [a.weir, "mount", archive, mw]
    mount_rat = [rat, "--index-file", index, archive, mr]

    def mounted(argv, mnt):
        def setup():
            unmount(mnt)
            subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
            if not os.path.ismount(mnt):
                die("mount: %s did not mount %s" % (argv[0], mnt))
            fresh()
        return setup

    def fresh():
        shutil.rmtree(out_dir, ignore_errors=True)
        os.makedirs(out_dir)

    def checked(mnt, verify):
        """The run's own check (harness.one_run calls it after the timed run), then the unmount."""
        def check(m):
            if m["ok"]:
                ok, how = verify()
                m["verified"] = how
                if not ok:
                    m["ok"], m["error"] = False, how
            if mnt:
                unmount(mnt)
        return check

    def is_mounted(mnt):
        return lambda: (True, "mounted") if os.path.ismount(mnt) else (False, "NOT MOUNTED")

    count_file = os.path.join(d, "count.txt")

    def count_ok():
        with open(count_file) as counted:
            got = counted.read().strip()
        return (True, "%s files, as tar tf" % got) if got == str(files) else (
            False, "COUNT %s, tar has %d files" % (got, files))

    def member_ok():
        same = subprocess.run(["cmp", "-s", os.path.join(out_dir, "m"), os.path.join(ref, member)]).returncode == 0
        same = same or subprocess.run(["cmp", "-s", os.path.join(out_dir, member),
                                       os.path.join(ref, member)]).returncode == 0
        return (True, "cmp with tar's own extraction") if same else (False, "MEMBER DIFFERS from tar's extraction")

    def folder_ok():
        got = os.path.join(out_dir, base) if os.path.isdir(os.path.join(out_dir, base)) else os.path.join(
            out_dir, folder)
        p = subprocess.run(["diff", "-r", "--no-dereference", got, os.path.join(ref, folder)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return (True, "diff -r with tar's own extraction") if p.returncode == 0 else (
            False, "FOLDER DIFFERS from tar's extraction (diff -r)")

    def case(key, label, family, group, argv, mnt, verify, setup=None, script=None):
        return harness.custom_case(bench, "mount", key, label, family, group, argv, "custom", archive, tar, size,
                                   cmd=script or bench.disp(argv), setup=setup, check=checked(mnt, verify))

    def sh(script):
        return ["bash", "-c", "set -e -o pipefail; " + script]

    find_script = "find %s -type f | wc -l > %s"
    read_script = "cat %s > %s"
    tar_script = "tar c -C %s %s | tar x -C %s"
    member_out = os.path.join(out_dir, "m")

    # The session reads data (GNU tar does not read what it writes to /dev/null: md5sum makes it) and looks up
    # every name (ls -lR): its peak RSS is what the mount keeps however much is read and visited.
    session_folders = [base] + [f for f in ("drivers", "arch") if os.path.join(parent, f) in set(names)]

    def session(start, mnt):
        return ("%s & pid=$!; for i in $(seq 600); do mountpoint -q %s && break; sleep 0.05; done; "
                "find %s -type f > /dev/null; cat %s > /dev/null; ls -lR %s > /dev/null; "
                "tar c -C %s %s | md5sum > /dev/null; fusermount3 -u %s; wait $pid") % (
            start, q(mnt), q(mnt), q(os.path.join(mnt, member)), q(mnt), q(os.path.join(mnt, parent)),
            " ".join(map(q, session_folders)), q(mnt))

    def index_gone():
        unmount(mr)
        if os.path.exists(index):
            os.unlink(index)

    def index_kept():
        unmount(mr)
        if not os.path.exists(index):
            subprocess.run(mount_rat, check=True, stdout=subprocess.DEVNULL)
            unmount(mr)

    cases = [
        case("ready-weir", "weir mount", "weir", "mount ready", mount_weir, mw, is_mounted(mw),
             setup=lambda: unmount(mw)),
        case("ready-rat-first", "ratarmount, first (no side index)", "ratarmount", "mount ready", mount_rat, mr,
             is_mounted(mr), setup=index_gone),
        case("ready-rat", "ratarmount, again (its side index)", "ratarmount", "mount ready", mount_rat, mr,
             is_mounted(mr), setup=index_kept),
        case("find-weir", "weir mount", "weir", "find -type f | wc -l", sh(find_script % (q(mw), q(count_file))),
             mw, count_ok, setup=mounted(mount_weir, mw)),
        case("find-rat", "ratarmount", "ratarmount", "find -type f | wc -l",
             sh(find_script % (q(mr), q(count_file))), mr, count_ok, setup=mounted(mount_rat, mr)),
        case("read-weir", "weir mount", "weir", "first read of the member",
             sh(read_script % (q(os.path.join(mw, member)), q(member_out))), mw, member_ok,
             setup=mounted(mount_weir, mw)),
        case("read-rat", "ratarmount", "ratarmount", "first read of the member",
             sh(read_script % (q(os.path.join(mr, member)), q(member_out))), mr, member_ok,
             setup=mounted(mount_rat, mr)),
        case("read-member", "weir -d --member | tar x", "weir", "first read of the member",
             sh("%s -d --member=%s %s | tar x -C %s" % (q(a.weir), q(member), q(archive), q(out_dir))), None,
             member_ok, setup=fresh),
        case("folder-weir", "weir mount", "weir", "tar c of the folder | tar x",
             sh(tar_script % (q(os.path.join(mw, parent)), q(base), q(out_dir))), mw, folder_ok,
             setup=mounted(mount_weir, mw)),
        case("folder-rat", "ratarmount", "ratarmount", "tar c of the folder | tar x",
             sh(tar_script % (q(os.path.join(mr, parent)), q(base), q(out_dir))), mr, folder_ok,
             setup=mounted(mount_rat, mr)),
        case("folder-member", "weir -d --member=FOLDER | tar x", "weir", "tar c of the folder | tar x",
             sh("%s -d --member=%s %s | tar x -C %s" % (q(a.weir), q(folder), q(archive), q(out_dir))), None,
             folder_ok, setup=fresh),
        case("session-weir", "weir mount -f", "weir", "a session in the foreground (peak RSS)",
             sh(session("%s mount -f %s %s" % (q(a.weir), q(archive), q(mw)), mw)), mw, lambda: (True, "exit 0"),
             setup=lambda: unmount(mw)),
        case("session-rat", "ratarmount -f", "ratarmount", "a session in the foreground (peak RSS)",
             sh(session("%s -f --index-file %s %s %s" % (q(rat), q(index), q(archive), q(mr)), mr)), mr,
             lambda: (True, "exit 0"), setup=index_kept),
    ]
    try:
        harness.section(bench, "mount", "Mounting %s (%s, %d files)" % (bench.disp_path(tar), human(size), files),
                        cases, a.runs, warm_up=False, t0=t0, extra={
                            "tar": bench.disp_path(tar), "archive_bytes": size, "files": files, "member": member,
                            "folder": folder, "prepare": [bench.disp_prefix(s) for s in prepare]},
                        notes=["Inputs made once, untimed (commands below); each mount made untimed before a "
                               "read or find case, so each first read is a fresh mount's, and unmounted after.",
                               "ratarmount's side index goes to a file of the work folder (--index-file), deleted "
                               "before each \"first\" run.",
                               "Counts checked against tar's, the member with cmp and the folder with diff -r "
                               "against GNU tar's own extraction.",
                               "A session's peak RSS is the largest of its processes': the file system's."])
    finally:
        for mnt in (mw, mr):
            unmount(mnt)
        if not a.keep_work:
            shutil.rmtree(d, ignore_errors=True)


def report(data):
    s = data["sections"]["mount"]
    cs = s["cases"]
    get = lambda key: find(data, "mount", key=key)  # noqa: E731
    rows = []
    for c in cs:
        peer = {"ready-weir": "ready-rat", "find-weir": "find-rat", "read-weir": "read-rat",
                "folder-weir": "folder-rat", "session-weir": "session-rat"}.get(c["key"])
        other = get(peer) if peer else None
        times = "–" if other is None else "%.1f×" % (ratio(med(other, "wall"), med(c, "wall")) or 0)
        label = c["tool"].replace("|", "\\|")
        rows.append([c["group"].replace("|", "\\|"), ("**%s**" % label) if c["family"] == "weir" else label,
                     f_ms(med(c, "wall")), f_spread(c), f_mib(med(c, "rss_kb")), times, f_ok(c)])

    def goal(text, value, met):
        return "- %s: %s (%s)" % (text, value, "met" if met else "missed")

    ready, found = med(get("ready-weir"), "wall"), med(get("find-weir"), "wall")
    read, read_member = med(get("read-weir"), "wall"), med(get("read-member"), "wall")
    folder, folder_member = med(get("folder-weir"), "wall"), med(get("folder-member"), "wall")
    rss = med(get("session-weir"), "rss_kb")
    goals = []
    if ready is not None:
        goals.append(goal("mount ready ≤ 100 ms", "%.0f ms" % (ready * 1000), ready <= 0.1))
    if found is not None:
        goals.append(goal("find -type f ≤ 1 s", "%.2f s" % found, found <= 1.0))
    if read is not None and read_member is not None:
        goals.append(goal("first read ≤ weir -d --member | tar x", "%.0f against %.0f ms" % (
            read * 1000, read_member * 1000), read <= read_member))
    if folder is not None and folder_member:
        goals.append(goal("tar c of the folder ≤ 1.3× weir -d --member=FOLDER | tar x", "%.2f×" % (
            folder / folder_member), folder <= 1.3 * folder_member))
    if rss is not None:
        goals.append(goal("peak RSS ≤ 64 MiB (default cache)", "%.1f MiB" % (rss / 1024), rss <= 64 * 1024))
    return ("Archive: `%s` compressed by weir, %s, %d files; member `%s`; folder `%s`.\n\n" % (
        s["tar"], human(s["archive_bytes"]), s["files"], s["member"], s["folder"]) +
        render(["Case", "Tool", "Wall ms (median)", "Spread", "Peak RSS MiB", "ratarmount ÷ weir", "Runs ok"], rows) +
        "\nIssue 70's goals:\n" + "\n".join(goals) + "\n" + "".join("\n- " + n for n in s.get("notes", [])) +
        "\n\n" + commands(cs, ["# inputs (untimed)"] + s.get("prepare", []) + ["# timed"]))

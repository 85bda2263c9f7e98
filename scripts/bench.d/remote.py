"""scripts/bench's remote section (issue 71): URLs as inputs, on Debian's nginx at 127.0.0.1 serving the tar
compressed by weir. In one run: `weir -l --members URL` and one member (`weir -dc --member=PATH URL`) against the
same commands on the local file, with the requests each made (nginx's access log); `weir -dc URL > /dev/null`
against `curl -s URL | zstd -dc` and `weir -dc FILE`; wall times and peak RSS. The listing, the member and the whole
output are checked once, untimed, against the local file's. Needs nginx and curl; asked for by name (--sections
remote), not in the default run."""

import os
import shlex
import shutil
import socket
import subprocess
import time
import uuid

import harness
from corpus import file_size, members_tar, pick_member, warm
from formatting import commands, f_mib, f_ms, f_ok, f_spread, find, human, med, ratio
from timing import die, log
from weirtools.tables import render


def free_port():
    """A port no one listens on now (the kernel's choice for a socket bound to 0)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_nginx(d, root, port):
    """nginx in the foreground, one process, on 127.0.0.1:PORT, serving ROOT; its access log is d/access.log, one
    line a request. Returns the process once the port accepts connections."""
    conf = os.path.join(d, "nginx.conf")
    with open(conf, "w") as f:
        f.write("""daemon off;
master_process off;
pid %(d)s/nginx.pid;
error_log %(d)s/error.log;
events {}
http {
  log_format weir '$request_method $uri $status $body_bytes_sent "$http_range" "$http_if_match"';
  access_log %(d)s/access.log weir;
  # As Debian's nginx.conf has it; nginx's own default is off (a read and a write of each buffer).
  sendfile on;
  client_body_temp_path %(d)s/t1; proxy_temp_path %(d)s/t2; fastcgi_temp_path %(d)s/t3;
  uwsgi_temp_path %(d)s/t4; scgi_temp_path %(d)s/t5;
  server { listen 127.0.0.1:%(port)d; root %(root)s; }
}
""" % {"d": d, "root": root, "port": port})
    p = subprocess.Popen(["nginx", "-c", conf, "-e", os.path.join(d, "error.log")], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return p
        except OSError:
            if p.poll() is not None:
                break
            time.sleep(0.05)
    p.kill()
    die("remote: nginx did not listen on 127.0.0.1:%d (see %s)" % (port, os.path.join(d, "error.log")))


def measure(bench):
    a, q = bench.a, shlex.quote
    for tool in ("nginx", "curl"):
        if shutil.which(tool) is None:
            die("remote: needs %s (apt-get install %s)" % (tool, tool))
    t0 = time.time()
    tar = members_tar(bench)
    d = os.path.join(bench.work, "remote")
    shutil.rmtree(d, ignore_errors=True)
    root = os.path.join(d, "root")
    os.makedirs(root)
    archive = os.path.join(root, "a.tar.zst")
    access = os.path.join(d, "access.log")
    member = pick_member(tar)
    weir = [a.weir, "-q", "-T%d" % bench.N] + bench.weir_extra
    prepare = ["%s -c %s > %s" % (" ".join(map(q, weir)), q(tar), q(archive))]
    warm(tar)
    for script in prepare:
        log("bench: remote: preparing: %s" % bench.disp_prefix(script))
        subprocess.run(["bash", "-c", "set -e -o pipefail; " + script], check=True)
    warm(archive)
    size = file_size(archive)
    port = free_port()
    server = start_nginx(d, root, port)
    url = "http://127.0.0.1:%d/a.tar.zst" % port

    def requests():
        """The requests logged since the last clear: one of our own (a marker) is awaited first, as nginx logs a
        request once it is done, which may be just after its client has all of it."""
        marker = "/logged-%s" % uuid.uuid4().hex
        subprocess.run(["curl", "-s", "-o", "/dev/null", "http://127.0.0.1:%d%s" % (port, marker)])
        lines = []
        for _ in range(200):
            with open(access) as f:
                lines = f.read().splitlines()
            if any(marker in line for line in lines):
                break
            time.sleep(0.02)
        return [line for line in lines if "/logged-" not in line]

    def clear():
        open(access, "w").close()

    def counted(m):
        """harness.one_run's check after a timed run of a URL: the requests it made."""
        m["requests"] = len(requests())
        before(m)

    def before(m):
        """The check after a timed run: the output went to /dev/null; it was checked once before the rounds."""
        m["verified"] = "checked once before the rounds"

    # Untimed checks, once: each URL's output against the local file's.
    checks = [("listing", ["-l", "--members"]), ("member", ["-dc", "--member=" + member]), ("whole", ["-dc"])]
    verified = []
    for what, flags in checks:
        got = subprocess.run([a.weir] + flags + [url], stdout=subprocess.PIPE)
        want = subprocess.run([a.weir] + flags + [archive], stdout=subprocess.PIPE)
        if got.returncode != 0 or want.returncode != 0 or got.stdout != want.stdout:
            server.kill()
            die("remote: weir %s URL differs from the same on the file" % " ".join(flags))
        verified.append("%s: %s bytes, equal" % (what, len(got.stdout)))
    plain = subprocess.run(["bash", "-c", "set -o pipefail; curl -s %s | %s -dc | cmp - %s" % (
        q(url), q(a.zstd), q(tar))])
    if plain.returncode != 0:
        server.kill()
        die("remote: curl | zstd -dc differs from the tar")

    def case(key, label, family, group, script, remote):
        return harness.custom_case(bench, "remote", key, label, family, group, ["bash", "-c", "set -o pipefail; "
                                                                                + script], "custom", archive, tar,
                                   size, mode="null", cmd=bench.disp_prefix(script),
                                   setup=clear if remote else None, check=counted if remote else before)

    w, m = q(a.weir), "--member=" + q(member)
    cases = [
        case("list-url", "weir -l --members URL", "weir", "listing", "%s -l --members %s" % (w, q(url)), True),
        case("list-file", "weir -l --members FILE", "file", "listing", "%s -l --members %s" % (w, q(archive)),
             False),
        case("member-url", "weir -dc --member URL", "weir", "one member", "%s -dc %s %s" % (w, m, q(url)), True),
        case("member-file", "weir -dc --member FILE", "file", "one member", "%s -dc %s %s" % (w, m, q(archive)),
             False),
        case("whole-url", "weir -dc URL", "weir", "the whole archive", "%s -dc %s" % (w, q(url)), True),
        case("whole-curl", "curl -s URL | zstd -dc", "zstd", "the whole archive", "curl -s %s | %s -dc" % (
            q(url), q(a.zstd)), False),
        case("whole-file", "weir -dc FILE", "file", "the whole archive", "%s -dc %s" % (w, q(archive)), False),
    ]
    try:
        harness.section(bench, "remote", "URLs as inputs: %s on nginx at 127.0.0.1, member %s" % (
            human(size), member), cases, a.runs, warm_up=False, t0=t0, extra={
                "tar": bench.disp_path(tar), "archive_bytes": size, "member": member, "verified": verified,
                "prepare": [bench.disp_prefix(s) for s in prepare]},
            notes=["The archive made once, untimed (command below), served by nginx (one process, HTTP/1.1, "
                   "sendfile) from the work folder; read once before the rounds.",
                   "Checked once, untimed: the listing, the member and the whole output of each URL equal to the "
                   "same command's on the file, and `curl | zstd -dc` equal to the tar.",
                   "Requests: the lines nginx logged for each timed run of a URL.",
                   "A pipeline's peak RSS is the largest of its processes'."])
    finally:
        server.kill()
        server.wait()
        if not a.keep_work:
            shutil.rmtree(d, ignore_errors=True)


def report(data):
    s = data["sections"]["remote"]
    cs = s["cases"]
    get = lambda key: find(data, "remote", key=key)  # noqa: E731

    def requests(c):
        counts = sorted(r["requests"] for r in c.get("runs", []) if r.get("ok") and "requests" in r)
        return counts[len(counts) // 2] if counts else None

    rows = []
    for c in cs:
        n = requests(c)
        label = c["tool"].replace("|", "\\|")
        rows.append([c["group"], ("**%s**" % label) if c["family"] == "weir" else label, f_ms(med(c, "wall")),
                     f_spread(c), "%.2f" % med(c, "cpu") if med(c, "cpu") is not None else "–",
                     f_mib(med(c, "rss_kb")), "–" if n is None else str(n), f_ok(c)])

    def goal(text, value, met):
        return "- %s: %s (%s)" % (text, value, "met" if met else "missed")

    goals = []
    for key, local, most, what in (("list-url", "list-file", 2, "`-l --members URL`"),
                                   ("member-url", "member-file", 3, "one member")):
        c, f = get(key), get(local)
        wall, local_wall, n = med(c, "wall"), med(f, "wall"), requests(c) if c else None
        if wall is not None and local_wall is not None and n is not None:
            goals.append(goal("%s ≤ %d requests, ≤ 2× the local time" % (what, most), "%d requests, %.0f against "
                              "%.0f ms" % (n, wall * 1000, local_wall * 1000), n <= most and wall <= 2 * local_wall))
    url, curl, local = (med(get(k), "wall") for k in ("whole-url", "whole-curl", "whole-file"))
    if url is not None and curl is not None:
        goals.append(goal("`weir -dc URL` ≥ `curl -s URL | zstd -dc`", "%.2f against %.2f s (%.2f×)" % (
            url, curl, ratio(curl, url) or 0), url <= curl))
    if url is not None and local is not None:
        goals.append(goal("`weir -dc URL` ≥ 0.9× `weir -dc FILE`", "%.2f against %.2f s (%.2f×)" % (
            url, local, ratio(local, url) or 0), url <= local / 0.9))
    return ("Archive: `%s` compressed by weir, %s; member `%s`.\n\n" % (s["tar"], human(s["archive_bytes"]),
                                                                       s["member"]) +
            render(["Case", "Tool", "Wall ms (median)", "Spread", "CPU s", "Peak RSS MiB", "Requests", "Runs ok"],
                  rows) +
            "\nIssue 71's goals:\n" + "\n".join(goals) + "\n" + "".join("\n- " + n for n in s.get("notes", [])) +
            "\n- Checked: " + "; ".join(s.get("verified", [])) + "\n\n" +
            commands(cs, ["# inputs (untimed)"] + s.get("prepare", []) + ["# timed"]))

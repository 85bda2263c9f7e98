"""faultfs, the FUSE file system that fails chosen calls (faultfs.c), as the
fault suite drives it: built, mounted, its rules set and its log read."""
import os
import shutil
import subprocess

from weirtools import ROOT as ROOT_PATH
from weirtools.log import logger
from weirtools.mounts import fuse_unmount

ROOT = str(ROOT_PATH)
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "faultfs.c")
WORDS = {"EIO": "Input/output error", "ENOSPC": "No space left on device", "EDQUOT": "Disk quota exceeded",
         "EROFS": "Read-only file system"}
ERRNOS = ["EIO", "ENOSPC", "EDQUOT", "EROFS"]
CASE = "c"  # every case's folder under the mount (and under the source)


log = logger("fault-test")


class Mount:
    """faultfs over `source` at `point`, its rules in `rules`, its log in `log_path`."""

    def __init__(self, folder, binary):
        self.source = os.path.join(folder, "source")
        self.point = os.path.join(folder, "mnt")
        self.rules = os.path.join(folder, "rules")
        self.log_path = os.path.join(folder, "calls.log")
        for path in (self.source, self.point):
            os.mkdir(path)
        open(self.rules, "w").close()
        open(self.log_path, "w").close()
        self.errors = open(os.path.join(folder, "faultfs.err"), "w+")
        self.process = subprocess.Popen([binary, self.source, self.point, self.rules, self.log_path],
                                        stdout=subprocess.PIPE, stderr=self.errors)
        # "ready" comes when the kernel's INIT reaches the daemon: the mount is live.
        line = self.process.stdout.readline()
        if line.strip() != b"ready":
            self.process.wait(timeout=30)
            self.errors.seek(0)
            raise RuntimeError("faultfs did not mount: " + self.errors.read().strip())
        if not os.path.ismount(self.point):
            raise RuntimeError("faultfs says ready but %s is not a mount point" % self.point)

    def set_rules(self, lines):
        """New rules, atomically (faultfs re-reads the file when its inode changes)."""
        temporary = self.rules + ".new"
        with open(temporary, "w") as f:
            f.write("".join(line + "\n" for line in lines))
        os.rename(temporary, self.rules)

    def log_size(self):
        return os.path.getsize(self.log_path)

    def calls_since(self, offset):
        with open(self.log_path, "rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace").splitlines()

    def unmount(self):
        if self.process.poll() is None:
            fuse_unmount(self.point)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        elif os.path.ismount(self.point):
            subprocess.run(["umount", "-l", self.point], stderr=subprocess.DEVNULL)
        self.errors.close()


def build_faultfs(folder):
    """faultfs built from its source, or why it cannot be."""
    if os.geteuid() != 0:
        return None, "not root"
    if not os.path.exists("/dev/fuse"):
        return None, "/dev/fuse is missing"
    for tool in ("fusermount3", "pkg-config", "zstd", "gzip"):
        if shutil.which(tool) is None:
            return None, "%s is missing (apt-get install fuse3 libfuse3-dev pkg-config zstd gzip)" % tool
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "fuse3"], capture_output=True)
    if flags.returncode != 0:
        return None, "libfuse3-dev is missing (pkg-config fuse3)"
    compiler = shutil.which("cc") or shutil.which("clang") or shutil.which("gcc")
    if compiler is None:
        return None, "no C compiler"
    binary = os.path.join(folder, "faultfs")
    built = subprocess.run([compiler, "-O2", "-Wall", "-Wextra", "-Werror", "-o", binary, SOURCE]
                           + flags.stdout.decode().split(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if built.returncode != 0:
        raise SystemExit("fault-test: faultfs does not build:\n" + built.stdout.decode())
    return binary, None

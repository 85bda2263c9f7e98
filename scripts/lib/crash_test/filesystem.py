"""The file systems the crash suite cuts (ext4, XFS, btrfs on a loop file),
the suite's modes and its corpus."""
import fcntl
import os
import shutil
import struct
import subprocess
import time

from weirtools import ROOT as ROOT_PATH
from weirtools.corpora import Words
from weirtools.log import logger
from weirtools.proc import run

EXT4_IOC_SHUTDOWN = 0x8004587D  # _IOR('X', 125, __u32): XFS_IOC_GOINGDOWN, BTRFS_IOC_SHUTDOWN are this one
EXT4_GOING_FLAGS_NOLOGFLUSH = 2  # XFS_FSOP_GOING_FLAGS_NOLOGFLUSH, BTRFS_SHUTDOWN_FLAGS_NO_SYNC likewise
FILE_SYSTEMS = {  # mkfs, mount options
    "ext4": (["mkfs.ext4", "-q", "-F"], "loop,commit=1"),
    "xfs": (["mkfs.xfs", "-q", "-f"], "loop"),
    "btrfs": (["mkfs.btrfs", "-q", "-f"], "loop,commit=1"),
}
XFS_SYNC_INTERVAL = "/proc/sys/fs/xfs/xfssyncd_centisecs"
ROOT = str(ROOT_PATH)
MODES = ["rm", "keep", "f", "d-f-rm", "d-rm", "r-rm", "d-r-rm", "mirror-rm"]
# Not in the rotation: their own cuts (--resume-cuts, --d-resume-cuts), each a few seconds long.
RESUME = "resume"
RESUME_D = "d-resume"


log = logger("crash-test")


class Corpus(Words):
    """weirtools' generated words, at least 24 MiB of them, and data past that."""

    def __init__(self, rng):
        super().__init__(rng, lines=60000, at_least=24 << 20)

    def data(self, size):
        """`size` bytes: text, or for sizes past the text, text and random
        bytes in turn (half incompressible, so that even a compressed output
        passes the 32 MiB at which weir starts its writeback)."""
        if size <= len(self.text) // 2:
            return self.piece(size)
        parts, left, step = [], size, 4 << 20
        while left > 0:
            n = min(step, left)
            parts.append(self.piece(n) if len(parts) % 2 == 0 else self.rng.randbytes(n))
            left -= n
        return b"".join(parts)


class FileSystem:
    """The loop-mounted file system (`kind`: ext4, xfs, btrfs) the cuts are made on."""

    def __init__(self, folder, kind="ext4"):
        self.kind = kind
        self.image = os.path.join(folder, kind + ".img")
        self.mount_point = os.path.join(folder, "mnt-" + kind)
        os.mkdir(self.mount_point)
        with open(self.image, "wb") as image:
            image.truncate(1 << 30)
        run([*FILE_SYSTEMS[kind][0], self.image], check=True)
        self.mounted = False

    def mount(self):
        run(["mount", "-o", FILE_SYSTEMS[self.kind][1], self.image, self.mount_point], check=True)
        self.mounted = True

    def unmount(self):
        for _ in range(50):
            if subprocess.run(["umount", self.mount_point], stderr=subprocess.DEVNULL).returncode == 0:
                break
            time.sleep(0.1)
        else:
            run(["umount", self.mount_point], check=True)
        self.mounted = False
        # The loop device goes when the file system's last user does. If it
        # stays, something else holds the shut-down file system (a mount
        # namespace copied while it was mounted), and the next mount would
        # get that same shut-down file system back: every write EIO, every
        # check meaningless.
        for _ in range(100):
            if not run(["losetup", "-j", self.image], check=True).stdout.strip():
                return
            time.sleep(0.05)
        raise RuntimeError("the file system is still in use after its unmount (held by another mount namespace?): "
                           + run(["losetup", "-j", self.image], check=True).stdout.decode().strip())

    def cut(self):
        """The power cut: nothing more reaches the disk, the log included."""
        fd = os.open(self.mount_point, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.ioctl(fd, EXT4_IOC_SHUTDOWN, struct.pack("I", EXT4_GOING_FLAGS_NOLOGFLUSH))
        finally:
            os.close(fd)

    def clear(self):
        for name in os.listdir(self.mount_point):
            if name == "lost+found":
                continue
            path = os.path.join(self.mount_point, name)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.unlink(path)


"""Mounts the harnesses make: FUSE file systems (weir mount, ratarmount,
the failing disk's faultfs) taken down, and a private mount namespace for
the suites that mount as root."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time


def fuse_unmount(point: str, patience: float = 10.0) -> bool:
    """Unmounts the FUSE file system at ``point``: ``fusermount3 -u`` until
    it is no longer busy (up to ``patience`` seconds: a closing reader holds
    it a moment), then lazily (``-u -z``, as ``umount -l``). True when
    ``point`` is no longer a mount point."""
    deadline = time.monotonic() + patience
    while os.path.ismount(point) and time.monotonic() < deadline:
        if subprocess.run(["fusermount3", "-u", point], stderr=subprocess.DEVNULL).returncode == 0:
            break
        time.sleep(0.1)
    if os.path.ismount(point):
        subprocess.run(["fusermount3", "-u", "-z", point], stderr=subprocess.DEVNULL)
    for _ in range(100):
        if not os.path.ismount(point):
            return True
        time.sleep(0.05)
    return False


def in_private_mount_namespace(marker: str, script: str) -> None:
    """Runs ``script`` (a harness's own file) again in a mount namespace of
    its own, when root and ``unshare`` can: its mounts then exist nowhere
    else, and go when its last process does, however it ends; a namespace
    another program makes meanwhile (``unshare -m``, as scripts/harness/zstd-suite
    does) cannot copy them and keep a shut-down file system alive. ``marker``
    is the environment variable that says the script already runs there.
    Returns when it does not (not root, or already there); else does not return."""
    if os.geteuid() != 0 or os.environ.get(marker) == "1" or shutil.which("unshare") is None:
        return
    private = ["unshare", "--mount", "--propagation", "private"]
    if subprocess.run([*private, "true"]).returncode == 0:
        environment = dict(os.environ, **{marker: "1"})
        os.execvpe("unshare", [*private, sys.executable, os.path.abspath(script), *sys.argv[1:]], environment)

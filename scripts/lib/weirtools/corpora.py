"""The corpora the harnesses measure and test on: the Linux 6.1 source
tarball (scripts/fetch-corpus downloads it once into bench/corpus/), and
what stands in for it when it is not there."""

from __future__ import annotations

import os
import subprocess

from weirtools import ROOT

FOLDER = str(ROOT / "bench" / "corpus")
"""Where the corpora and their cut pieces are cached (not in git)."""
LINUX = os.path.join(FOLDER, "linux-6.1.tar")
"""The Linux 6.1 source tarball (1.36 GB): scripts/fetch-corpus's default destination."""
LARGE_TEXT = "/work/corpus/s300"
"""A large text file some machines keep (scripts/soak's first choice)."""


def linux_tarball(dest: str = LINUX) -> str:
    """The Linux tarball at ``dest``, downloaded first when missing
    (scripts/fetch-corpus: about 140 MB from Debian's package); its path."""
    done = subprocess.run(
        [str(ROOT / "scripts" / "fetch-corpus"), dest], stdout=subprocess.PIPE, text=True, check=True
    )
    return done.stdout.strip()


def first_present(*paths: str) -> str | None:
    """The first of ``paths`` that exists (a corpus already on the machine), or None."""
    return next((path for path in paths if os.path.exists(path)), None)

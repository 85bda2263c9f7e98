"""The corpora the harnesses measure and test on: the Linux 6.1 source
tarball (scripts/fetch-corpus downloads it once into bench/corpus/), and
what stands in for it when it is not there."""

from __future__ import annotations

import os
import random
import subprocess

from weirtools import ROOT

FOLDER = str(ROOT / "bench" / "corpus")
"""Where the corpora and their cut pieces are cached (not in git)."""
LINUX = os.path.join(FOLDER, "linux-6.1.tar")
"""The Linux 6.1 source tarball (1.36 GB): scripts/fetch-corpus's default destination."""
LARGE_TEXT = "/work/corpus/s300"
"""A large text file some machines keep (scripts/harness/soak's first choice)."""


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


class Words:
    """Generated text, compressible and reproducible from the seed of
    ``rng``: ``lines`` lines of 4 to 14 words drawn from 3,000 random words
    of 2 to 9 letters, repeated until it holds ``at_least`` bytes. The
    corpus of the suites that write files and compare them (crash-test,
    fault-test): any failure replays from the seed."""

    def __init__(self, rng: random.Random, lines: int, at_least: int = 0) -> None:
        letters = "abcdefghijklmnopqrstuvwxyz"
        words = ["".join(rng.choice(letters) for _ in range(rng.randint(2, 9))) for _ in range(3000)]
        text = "\n".join(" ".join(rng.choices(words, k=rng.randint(4, 14))) for _ in range(lines))
        self.text = (text + "\n").encode()
        while len(self.text) < at_least:
            self.text += self.text
        self.rng = rng

    def piece(self, size: int) -> bytes:
        """``size`` bytes of the text from a random place."""
        start = self.rng.randrange(0, len(self.text) - size)
        return self.text[start : start + size]

"""Shared fixtures: the weir binary, deterministic data, a real Dask cluster.

The cluster is the one a user starts: ``dask scheduler`` and ``dask worker
--nworkers 2 --nthreads 1``, every listening address on 127.0.0.1 (the
dashboards too, on ports the system picks), started once for the session and
stopped at its end, whatever the tests did. The workers find ``weir`` on their
PATH: WEIR_BIN's folder first (default: the repository's release build).

Without ``dask`` or the binary the cluster tests are skipped; with
WEIR_CLUSTER_TEST=require they fail instead (CI sets it).
"""

from __future__ import annotations

import os
import random
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
# PYTHONPATH=python/src, as the tests are run, for the processes they start
# in other folders too (``python -m weir.dask`` in a test's folder): the
# checkout's weir, not another one installed.
if os.environ.get("PYTHONPATH"):
    os.environ["PYTHONPATH"] = os.pathsep.join(
        os.path.abspath(folder) if folder else folder for folder in os.environ["PYTHONPATH"].split(os.pathsep)
    )
# Generous: a worker starts in about 2 s on an idle machine, far more under load.
CLUSTER_START_TIMEOUT = 180


def weir_binary() -> Path:
    return Path(os.environ.get("WEIR_BIN", REPOSITORY / ".build" / "release" / "weir")).resolve()


def _unavailable(reason: str) -> None:
    if os.environ.get("WEIR_CLUSTER_TEST") == "require":
        pytest.fail(f"WEIR_CLUSTER_TEST=require: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def weir_bin() -> Path:
    binary = weir_binary()
    if not os.access(binary, os.X_OK):
        _unavailable(f"no weir executable at {binary} (set WEIR_BIN)")
    return binary


def run_weir(binary: Path, *args: str | os.PathLike[str], stdin: bytes | None = None) -> bytes:
    """weir's standard output; fails the test with weir's message."""
    process = subprocess.run([str(binary), *map(str, args)], input=stdin, capture_output=True, timeout=300)
    assert process.returncode == 0, process.stderr.decode(errors="replace")
    return process.stdout


def same_bytes(got: bytes, expected: bytes) -> bool:
    """Whether two byte strings are equal, said without pytest's diff of
    megabytes (which takes minutes): the first difference is printed."""
    if got == expected:
        return True
    first = next((n for n, pair in enumerate(zip(got, expected, strict=False)) if pair[0] != pair[1]), None)
    print(f"{len(got)} bytes, {len(expected)} expected, first difference at offset {first}")
    return False


def text_lines(size: int, seed: int) -> bytes:
    """About ``size`` bytes of lines of words (deterministic, compressible as
    logs are), ending with a newline."""
    rng = random.Random(seed)
    words = [bytes(rng.choices(b"abcdefghijklmnopqrstuvwxyz", k=rng.randint(2, 9))) for _ in range(4000)]
    lines = []
    total = 0
    while total < size:
        line = b" ".join(rng.choices(words, k=rng.randint(0, 16))) + b"\n"
        lines.append(line)
        total += len(line)
    return b"".join(lines)


@pytest.fixture(scope="session")
def text_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 20 MB text file (three 8 MiB frames at level 3)."""
    path = tmp_path_factory.mktemp("data") / "lines.txt"
    path.write_bytes(text_lines(20_000_000, seed=52))
    return path


@pytest.fixture(scope="session")
def cluster(weir_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The address of a running scheduler with two single-threaded workers."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        _unavailable("no distributed package (pip install distributed)")
    from weir.localcluster import ClusterError, LocalProcessCluster

    processes = LocalProcessCluster(
        workers=2, path=[str(weir_bin.parent)], timeout=CLUSTER_START_TIMEOUT, folder=tmp_path_factory.mktemp("cluster")
    )
    try:
        address = processes.__enter__()
    except ClusterError as error:
        if "no dask command" in str(error):
            _unavailable(str(error))
        raise
    try:
        assert address.startswith("tcp://127.0.0.1:"), address
        assert processes.hosts == {"127.0.0.1"}, processes.hosts
        yield address
    finally:
        processes.stop()


@pytest.fixture
def client(cluster: str) -> Iterator[object]:
    from distributed import Client

    with Client(cluster, timeout=CLUSTER_START_TIMEOUT) as connected:
        yield connected


@pytest.fixture(scope="module", params=["ustar", "pax", "gnu"])
def archive(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, weir_bin: Path) -> dict:
    # tar_archives imports this module: imported here, once both exist.
    from tar_archives import add_long_names, csv_bytes, gnu_tar, indexed_archive, make_tree

    fmt = request.param
    root = tmp_path_factory.mktemp(fmt)
    tree = make_tree(root, csv_bytes(20_000))
    if fmt != "ustar":  # ustar holds no name over 255 bytes: GNU tar refuses them
        add_long_names(tree)
    tar = gnu_tar(tree, root / "a.tar", fmt)
    zst = indexed_archive(weir_bin, tar, root / "a.tar.zst", "-B64K")
    return {"format": fmt, "tree": tree, "tar": tar, "zst": zst}

"""Fixtures of the Spark cluster tests (issue 51): one standalone cluster on 127.0.0.1 for the
whole run, a session with weir's codec, the weir binary, and generated line data.

Run by scripts/harness/spark-test, which builds the jar (WEIR_HADOOP_JAR) and names the binary
(WEIR_BIN). With WEIR_CLUSTER_TEST=require, what is missing fails instead of skipping.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

REQUIRED = os.environ.get("WEIR_CLUSTER_TEST") == "require"


def unavailable(reason: str):
    if REQUIRED:
        pytest.fail(f"WEIR_CLUSTER_TEST=require: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def weir_bin() -> str:
    path = os.environ.get("WEIR_BIN", ".build/release/weir")
    if not os.access(path, os.X_OK):
        unavailable(f"no weir binary at {path} (WEIR_BIN)")
    return os.path.abspath(path)


@pytest.fixture(scope="session")
def jar() -> str:
    path = os.environ.get("WEIR_HADOOP_JAR", "")
    if not path or not os.path.isfile(path):
        unavailable("no codec jar (WEIR_HADOOP_JAR; scripts/harness/spark-test builds it)")
    return os.path.abspath(path)


@pytest.fixture(scope="session")
def cluster():
    try:
        import pyspark  # noqa: F401
    except ImportError:
        unavailable("pyspark is not installed")
    if not shutil.which("java"):
        unavailable("no java")
    from spark_cluster import StandaloneCluster

    with StandaloneCluster(cores=2) as c:
        yield c


@pytest.fixture(scope="session")
def spark(cluster, jar):
    from spark_cluster import session

    s = session(cluster.master_url, jar, app="weir-hadoop-tests")
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


@pytest.fixture(autouse=True)
def fresh_sql_conf(request):
    """Each test sets the split size it needs; none leaks into the next."""
    yield
    if "spark" in request.fixturenames:
        s = request.getfixturevalue("spark")
        s.conf.unset("spark.sql.files.maxPartitionBytes")
        s.conf.unset("spark.sql.files.openCostInBytes")


# --- data -----------------------------------------------------------------

def text_bytes(size: int, seed: int, line_breaks: int = 6, carriage_returns: int = 1) -> bytes:
    """`size` bytes of deterministic text: letters, spaces, digits; of 256 byte values
    `line_breaks` map to '\\n' and `carriage_returns` to '\\r' (lone, as in the tarball)."""
    alphabet = b"abcdefghijklmnopqrstuvwxyz    etaoinETAOIN0123456789,.;:-_()"
    table = bytearray(alphabet[i % len(alphabet)] for i in range(256))
    for i in range(line_breaks):
        table[255 - i] = ord("\n")
    for i in range(carriage_returns):
        table[255 - line_breaks - i] = ord("\r")
    r = random.Random(seed)
    chunk = 4 << 20
    parts = [r.randbytes(min(chunk, size - at)) for at in range(0, size, chunk)]
    return b"".join(parts).translate(bytes(table))


def line_truth(data: bytes) -> tuple[int, int]:
    """(lines, content bytes) of `data` split at '\\n' as Spark's text source with lineSep "\\n"
    reads it: a last line without '\\n' counts, the '\\n' themselves do not."""
    breaks = data.count(b"\n")
    lines = breaks + (1 if data and not data.endswith(b"\n") else 0)
    return lines, len(data) - breaks


def compress(weir: str, src: Path, dst: Path, *flags: str) -> Path:
    subprocess.run([weir, "-q", "-f", *flags, str(src), "-o", str(dst)], check=True)
    return dst


def seek_table(path: Path) -> list[tuple[int, int, int]]:
    """(compressed offset, compressed size, content size) of each frame of a file's last part,
    read from its seek table as the format's documents describe it."""
    data = path.read_bytes()
    frames, entry, table_start = table_layout(data)
    entries = [data[table_start + 8 + i * entry: table_start + 8 + (i + 1) * entry] for i in range(frames)]
    sizes = [(int.from_bytes(e[0:4], "little"), int.from_bytes(e[4:8], "little")) for e in entries]
    offset = table_start - sum(c for c, _ in sizes)
    out = []
    for c, d in sizes:
        out.append((offset, c, d))
        offset += c
    return out


def table_layout(data: bytes) -> tuple[int, int, int]:
    """(entries, bytes per entry, offset of the table's skippable frame) of the seek table that
    ``data`` ends with."""
    frames = int.from_bytes(data[-9:-5], "little")
    assert int.from_bytes(data[-4:], "little") == 0x8F92EAB1, "no seek table"
    entry = 12 if data[-5] & 0x80 else 8
    return frames, entry, len(data) - (8 + frames * entry + 9)


def lie_in_table(path: Path, entry: int, change: int) -> None:
    """Adds ``change`` to the content size that entry ``entry`` of ``path``'s seek table lists."""
    data = bytearray(path.read_bytes())
    _, size, table_start = table_layout(data)
    at = table_start + 8 + entry * size + 4
    data[at:at + 4] = (int.from_bytes(data[at:at + 4], "little") + change).to_bytes(4, "little")
    path.write_bytes(bytes(data))

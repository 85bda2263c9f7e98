"""How the codec finds a file's length and seek table from the stream it is given (FileTail):
Java checks against virtual files whose available() is right, zero, too high, too low or capped
at 2 GiB, and against Hadoop's own local streams. No cluster: javac and java with the codec's jar
and pyspark's jars."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from conftest import unavailable

SOURCE = Path(__file__).parent / "java"


def pyspark_jars() -> str:
    try:
        import pyspark
    except ImportError:
        unavailable("pyspark is not installed")
    return os.path.join(os.path.dirname(pyspark.__file__), "jars")


def test_length_and_table_from_the_stream(jar, tmp_path):
    if not shutil.which("javac") or not shutil.which("java"):
        unavailable("no JDK")
    jars = pyspark_jars()
    classes = tmp_path / "classes"
    sources = sorted(str(p) for p in SOURCE.rglob("*.java"))
    # -path: some of pyspark's jars name jars in their Class-Path that pyspark does not ship.
    subprocess.run(["javac", "--release", "17", "-Xlint:all,-path", "-Werror", "-encoding", "UTF-8",
                    "-cp", f"{jar}:{jars}/*", "-d", str(classes), *sources], check=True)
    data = tmp_path / "data"
    data.mkdir()
    run = subprocess.run(["java", "-cp", f"{classes}:{jar}:{jars}/*", "weir.hadoop.FileTailTest", str(data)],
                         capture_output=True, text=True)
    failed = [line for line in run.stdout.splitlines() if line.startswith("FAIL")]
    assert run.returncode == 0 and not failed, "\n".join(failed) or run.stdout[-2000:] + run.stderr[-2000:]
    assert "all passed" in run.stdout

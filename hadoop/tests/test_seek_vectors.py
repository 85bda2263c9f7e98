"""The shared seek-table vectors (testdata/vectors/seek-table, issue 69) read by the codec's
SeekIndex: every case in the folder, by the Java check SeekIndexVectorsTest (which says how the
codec maps each reading). No cluster: javac and java with the codec's jar and pyspark's jars."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from conftest import unavailable
from test_file_tail import SOURCE, pyspark_jars

VECTORS = Path(__file__).resolve().parents[2] / "testdata" / "vectors" / "seek-table"


def test_every_seek_table_vector(jar, tmp_path):
    if not shutil.which("javac") or not shutil.which("java"):
        unavailable("no JDK")
    jars = pyspark_jars()
    classes = tmp_path / "classes"
    sources = sorted(str(p) for p in SOURCE.rglob("*.java"))
    subprocess.run(["javac", "--release", "17", "-Xlint:all,-path", "-Werror", "-encoding", "UTF-8",
                    "-cp", f"{jar}:{jars}/*", "-d", str(classes), *sources], check=True)
    run = subprocess.run(["java", "-cp", f"{classes}:{jar}:{jars}/*", "weir.hadoop.SeekIndexVectorsTest",
                          str(VECTORS)], capture_output=True, text=True)
    failed = [line for line in run.stdout.splitlines() if line.startswith("FAIL")]
    assert run.returncode == 0 and not failed, "\n".join(failed) or run.stdout[-2000:] + run.stderr[-2000:]
    cases = len(list(VECTORS.glob("*.json")))
    assert f"all passed ({cases} cases)" in run.stdout

"""A Spark standalone cluster on 127.0.0.1 for the codec's tests and benchmark (issue 51).

One master and one worker (2 cores by default), started with pyspark's own `spark-class`, every
port on loopback and chosen free at run time, the worker's folder in a temporary directory. The
processes are ours by PID: `stop()` ends exactly those, and their PIDs are also written to
`pids` in the temporary directory, for a shell trap to end them if Python itself is killed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Self

LOOPBACK = "127.0.0.1"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


class StandaloneCluster:
    """`with StandaloneCluster() as c:` gives `c.master_url` with one live worker."""

    def __init__(self, cores: int = 2, memory: str = "6g", work: Path | None = None, timeout: float = 180):
        self.cores = cores
        self.memory = memory
        self.timeout = timeout
        self.own_work = work is None
        self.work = Path(work or tempfile.mkdtemp(prefix="weir-spark-"))
        self.procs: list[subprocess.Popen] = []
        self.master_url = ""

    def _env(self) -> dict:
        env = dict(os.environ)
        env["SPARK_HOME"] = str(spark_home())
        env["SPARK_LOCAL_IP"] = LOOPBACK
        env["SPARK_LOCAL_HOSTNAME"] = "localhost"
        env["SPARK_LOG_DIR"] = str(self.work / "logs")
        env["SPARK_WORKER_DIR"] = str(self.work / "worker")
        env["SPARK_LOCAL_DIRS"] = str(self.work / "local")
        env["SPARK_CONF_DIR"] = str(self.work / "conf")  # empty: no machine-wide spark-defaults
        # A mark in the JVMs' command lines: a trap ends a listed PID only if it still carries it.
        env["SPARK_DAEMON_JAVA_OPTS"] = f"-Dweir.spark.cluster={self.work}"
        return env

    def _spawn(self, name: str, args: list[str]) -> subprocess.Popen:
        with open(self.work / f"{name}.log", "wb") as log:  # the child keeps its own descriptor
            proc = subprocess.Popen(
                [str(spark_home() / "bin" / "spark-class"), *args],
                env=self._env(), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.procs.append(proc)
        for pids in {self.work / "pids", Path(os.environ.get("WEIR_SPARK_PIDS", self.work / "pids"))}:
            with open(pids, "a") as f:
                f.write(f"{proc.pid}\n")
        return proc

    def log_tail(self, name: str, lines: int = 30) -> str:
        try:
            text = (self.work / f"{name}.log").read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def start(self) -> StandaloneCluster:
        for sub in ("logs", "worker", "local", "conf"):
            (self.work / sub).mkdir(parents=True, exist_ok=True)
        port, ui = free_port(), free_port()
        self.master_url = f"spark://{LOOPBACK}:{port}"
        self._spawn("master", ["org.apache.spark.deploy.master.Master",
                               "--host", LOOPBACK, "--port", str(port), "--webui-port", str(ui)])
        self._spawn("worker", ["org.apache.spark.deploy.worker.Worker",
                               "--host", LOOPBACK, "--port", str(free_port()),
                               "--webui-port", str(free_port()), "--cores", str(self.cores),
                               "--memory", self.memory, "--work-dir", str(self.work / "worker"),
                               self.master_url])
        # Ready when the master's status page lists the worker as alive (polled, not slept on).
        deadline = time.monotonic() + self.timeout
        while True:
            for proc, name in zip(self.procs, ("master", "worker"), strict=True):
                if proc.poll() is not None:
                    raise RuntimeError(f"spark {name} exited ({proc.returncode}):\n{self.log_tail(name)}")
            try:
                with urllib.request.urlopen(f"http://{LOOPBACK}:{ui}/json/", timeout=5) as r:
                    state = json.load(r)
                if state.get("aliveworkers", 0) >= 1:
                    return self
            except (OSError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"no live worker after {self.timeout:.0f} s:\n{self.log_tail('worker')}")
            time.sleep(0.5)

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in reversed(self.procs):
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.procs.clear()
        if self.own_work and not os.environ.get("WEIR_KEEP_SPARK_WORK"):
            shutil.rmtree(self.work, ignore_errors=True)

    def __enter__(self) -> Self:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()


def session(master_url: str, jar: str | None, app: str = "weir-hadoop", extra: dict | None = None):
    """A SparkSession on the cluster; with `jar`, weir's codec is handed `.zst` (the two settings
    README gives), without it Spark reads `.zst` its own way."""
    from pyspark.sql import SparkSession

    os.environ["SPARK_LOCAL_IP"] = LOOPBACK  # the driver's own ports on loopback too
    builder = SparkSession.builder.master(master_url).appName(app)
    if jar:
        builder = (builder.config("spark.jars", jar)
                   .config("spark.hadoop.io.compression.codecs", "weir.hadoop.WeirCodec"))
    builder = (
        builder.config("spark.driver.host", LOOPBACK)
        .config("spark.driver.bindAddress", LOOPBACK)
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "2g")
        .config("spark.executor.memory", "4g")
        .config("spark.sql.shuffle.partitions", "4")
    )
    for key, value in (extra or {}).items():
        builder = builder.config(key, value)
    return builder.getOrCreate()

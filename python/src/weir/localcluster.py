"""A Dask cluster of real processes on this machine, as a user starts one:
``dask scheduler`` and ``dask worker --nworkers N --nthreads 1``, every
listening address on 127.0.0.1 (the dashboards too, on ports the system
picks). For tests and benchmarks; stopped, process group and all, on exit
from the ``with`` block whatever happened in it.

    with LocalProcessCluster(workers=2, path=["/opt/weir/bin"]) as address:
        weir.dask.compress("big.log", "big.log.zst", scheduler=address)
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType


class ClusterError(RuntimeError):
    """The scheduler or the workers did not start."""


class LocalProcessCluster:
    """``dask scheduler`` and ``dask worker`` processes on 127.0.0.1."""

    def __init__(
        self,
        workers: int = 2,
        path: list[str] | None = None,
        timeout: float = 180,
        folder: str | os.PathLike[str] | None = None,
    ) -> None:
        """``workers`` single-threaded worker processes; ``path`` folders put
        first on their PATH (where they find ``weir``); ``timeout`` seconds
        for everything to start (generous: a loaded machine is slow);
        ``folder`` for the scheduler file and the logs (default: temporary)."""
        self.workers = workers
        self.path = path or []
        self.timeout = timeout
        self._own_folder = folder is None
        self.folder = Path(folder or tempfile.mkdtemp(prefix="weir-cluster-"))
        self.processes: list[subprocess.Popen[bytes]] = []
        self.address = ""

    def _dask(self) -> str:
        found = shutil.which("dask") or str(Path(sys.executable).with_name("dask"))
        if not os.access(found, os.X_OK):
            raise ClusterError("no dask command: pip install 'dask[dataframe]' distributed")
        return found

    def environment(self) -> dict[str, str]:
        """The processes' environment: this one's, ``path`` first on PATH,
        and PYTHONPATH's folders made absolute. The processes run in
        ``folder``: a relative ``PYTHONPATH=python/src`` would name nothing
        there, and the workers would import another installed weir than
        this process's (and run its tasks)."""
        environment = dict(os.environ, PATH=os.pathsep.join([*self.path, os.environ.get("PATH", "")]))
        if environment.get("PYTHONPATH"):
            folders = environment["PYTHONPATH"].split(os.pathsep)
            environment["PYTHONPATH"] = os.pathsep.join(os.path.abspath(f) if f else f for f in folders)
        return environment

    def _start(self, name: str, arguments: list[str]) -> subprocess.Popen[bytes]:
        environment = self.environment()
        with open(self.folder / f"{name}.log", "wb") as log:
            process = subprocess.Popen(
                [self._dask(), *arguments],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=environment,
                cwd=self.folder,
                start_new_session=True,
            )
        self.processes.append(process)
        return process

    def log(self, name: str) -> str:
        """The end of ``scheduler``'s or ``workers``' log."""
        path = self.folder / f"{name}.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def __enter__(self) -> str:
        from distributed import Client

        try:
            scheduler_file = self.folder / "scheduler.json"
            scheduler = self._start(
                "scheduler",
                [
                    "scheduler",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    "0",
                    "--dashboard-address",
                    "127.0.0.1:0",
                    "--scheduler-file",
                    str(scheduler_file),
                ],
            )
            deadline = time.monotonic() + self.timeout
            # The scheduler writes its file once it listens; polled, with a deadline.
            while not scheduler_file.exists() or scheduler_file.stat().st_size == 0:
                if scheduler.poll() is not None or time.monotonic() > deadline:
                    raise ClusterError(f"dask scheduler did not start:\n{self.log('scheduler')}")
                time.sleep(0.05)
            self._start(
                "workers",
                [
                    "worker",
                    "--scheduler-file",
                    str(scheduler_file),
                    "--nworkers",
                    str(self.workers),
                    "--nthreads",
                    "1",
                    "--host",
                    "127.0.0.1",
                    "--dashboard-address",
                    "127.0.0.1:0",
                ],
            )
            with Client(scheduler_file=str(scheduler_file), timeout=self.timeout) as client:
                try:
                    client.wait_for_workers(self.workers, timeout=self.timeout)
                except TimeoutError as error:
                    raise ClusterError(f"dask workers did not start:\n{self.log('workers')}") from error
                self.address = client.scheduler.address
                self.hosts = {info["host"] for info in client.scheduler_info()["workers"].values()}
        except BaseException:
            self.stop()
            raise
        return self.address

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()

    def stop(self) -> None:
        """Stops the workers, then the scheduler: SIGTERM to each process
        group, SIGKILL after 30 s."""
        for process in reversed(self.processes):
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(process.pid, signal.SIGKILL)
                    process.wait(timeout=30)
        self.processes.clear()
        if self._own_folder:
            shutil.rmtree(self.folder, ignore_errors=True)

"""A suite's verdicts: one line per wrong case as it is found, and the count
of passed and failed cases at the end (scripts/harness/hostile-test,
scripts/harness/member-index-test)."""

from __future__ import annotations

import threading


class Verdicts:
    """Counts and prints verdicts; safe to call from the suite's threads."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.passed = 0
        self.failed = 0
        self.limits = 0
        self._lock = threading.Lock()

    def verdict(self, case: str, wrong: str | None, detail: str = "") -> None:
        """``case`` passed (``wrong`` None) or is wrong, why, and what the run printed (``detail``)."""
        with self._lock:
            if wrong:
                self.failed += 1
                print(f"WRONG {case}: {wrong} {detail}".rstrip(), flush=True)
            else:
                self.passed += 1

    def limit(self, case: str, what: str) -> None:
        """``case`` reached a limit the suite knows of: not wrong, said."""
        with self._lock:
            self.limits += 1
            print(f"LIMIT {case}: {what}", flush=True)

    def summary(self, limits: bool = False) -> str:
        """``NAME: N passed, M failed``, and ``, L at the limit`` with ``limits``."""
        limits_said = f", {self.limits} at the limit" if limits else ""
        return f"{self.name}: {self.passed} passed, {self.failed} failed{limits_said}"

    @property
    def status(self) -> int:
        """The suite's exit status: 1 when any case is wrong."""
        return 1 if self.failed else 0

"""The in-process executor of ``dag.test()``: runs each try synchronously, in this process.

Tries are started and ended in groups: one transaction moves a group of queued task instances
to running (one door call; each gets its own try number and history row), the group's tries
run one after another, and one transaction applies their outcomes (through the door, each try
with its history rows), after which ``on_result`` hears of each. A try started and ended by
transactions of its own cost two commits and about ten statements: most of the time of a
fan-out of quick tasks.

A group's tries are recorded as started when the group starts and as ended when it ends, so a
group is kept short in time: the first has one try, and each next one as many as the tries
just run would fill in ``group_seconds`` (20 ms), at most twice as many as the last group.
Tries of a fraction of a millisecond are thus grouped by the hundred, while tries of
``group_seconds`` or more run one per group, their recorded times and reports as exact as
when every try had its own transactions. (A slow try among quick ones holds the recorded
start or end of the other tries of its group, and their reports, by its duration, once: the
next group has one try.)
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from statewright.core.clock import Clock, utcnow
from statewright.db.engine import transaction
from statewright.services.dag_view import DagViewCache
from statewright.services.worker.outcome import TryResult, apply_results
from statewright.services.worker.task_runner import HOSTNAME, run_workload
from statewright.services.worker.workload import Workload, start_tries

_BATCH = 1024
GROUP_SECONDS = 0.02


class InProcessExecutor:
    def __init__(
        self,
        engine: Engine,
        *,
        dags: dict[str, Any] | None = None,
        clock: Clock = utcnow,
        views: DagViewCache | None = None,
        logs_folder: Path | None = None,
        echo: bool = False,
        on_result: Callable[[Workload, TryResult], None] | None = None,
        group_seconds: float = GROUP_SECONDS,
    ) -> None:
        self.engine = engine
        self.dags = dags or {}
        self.clock = clock
        self.views = views or DagViewCache()
        self.logs_folder = logs_folder
        self.echo = echo
        self.on_result = on_result
        self.identity = f"inprocess:{HOSTNAME}:{os.getpid()}"
        self.group_seconds = group_seconds
        self._group = 1  # tries in the next group (see the module's docstring)

    def slots_available(self) -> int:
        # The tries run one after another either way; taking every task instance the
        # scheduler can queue in one pass saves a scheduler pass per task (a fan-out of 2,000
        # otherwise costs 2,000 passes over its run).
        return _BATCH

    def answer(self, request: Any) -> Any:
        """A task's question to its worker (cache lookup, try state), answered directly."""
        from statewright.services.worker.callbacks import answer

        return answer(self.engine, request, now=self.clock())

    def queue_workloads(self, ti_ids: Sequence[int]) -> None:
        ids = list(ti_ids)
        while ids:
            group, ids = ids[:self._group], ids[self._group:]
            with transaction(self.engine) as conn:
                workloads = start_tries(conn, group, now=self.clock(), hostname=HOSTNAME,
                                        pids=dict.fromkeys(group, os.getpid()),
                                        views=self.views, logs_folder=self.logs_folder)
            started = time.monotonic()
            done: list[tuple[Workload, TryResult]] = []
            try:
                for w in workloads:
                    done.append((w, run_workload(w, dag=self.dags.get(w.dag_id),
                                                 echo=self.echo, now=self.clock,
                                                 ask=self.answer)))
            finally:  # what ran is stored, even when a try is interrupted (KeyboardInterrupt)
                self._resize(len(done), time.monotonic() - started)
                self._end(done)

    def _end(self, done: list[tuple[Workload, TryResult]]) -> None:
        if not done:
            return
        with transaction(self.engine) as conn:
            apply_results(conn, [r for _, r in done], now=self.clock(), views=self.views)
        if self.on_result:
            for w, r in done:
                self.on_result(w, r)

    def _resize(self, ran: int, took: float) -> None:
        """As many tries as the last ones would run in ``group_seconds``: at least one, at
        most twice as many as ran (a group cut short by the end of the queued task instances
        does not shrink the next one for that)."""
        if not ran:
            return
        most = max(2 * ran, self._group) if ran < self._group else 2 * ran
        fit = int(self.group_seconds * ran / took) if took > 0 else most
        self._group = max(1, min(fit, most, _BATCH))

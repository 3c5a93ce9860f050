"""The in-process executor of ``dag.test()``: runs each try synchronously, in this process."""

from __future__ import annotations

import os
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
    ) -> None:
        self.engine = engine
        self.dags = dags or {}
        self.clock = clock
        self.views = views or DagViewCache()
        self.logs_folder = logs_folder
        self.echo = echo
        self.on_result = on_result
        self.identity = f"inprocess:{HOSTNAME}:{os.getpid()}"

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
        for ti_id in ti_ids:
            with transaction(self.engine) as conn:
                workloads = start_tries(conn, [ti_id], now=self.clock(), hostname=HOSTNAME,
                                        pids={ti_id: os.getpid()}, views=self.views,
                                        logs_folder=self.logs_folder)
            for w in workloads:
                result = run_workload(w, dag=self.dags.get(w.dag_id), echo=self.echo,
                                      now=self.clock, ask=self.answer)
                with transaction(self.engine) as conn:
                    apply_results(conn, [result], now=self.clock(), views=self.views)
                if self.on_result:
                    self.on_result(w, result)

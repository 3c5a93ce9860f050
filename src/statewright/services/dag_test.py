"""``dag.test()``: one DAG run to completion in this process, through the real scheduler
decisions and the one state door, on a temporary SQLite database unless given an engine."""

from __future__ import annotations

import contextlib
import logging
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from statewright.core.clock import Clock, utcnow
from statewright.core.mapping import DEFAULT_MAX_MAP_LENGTH, ti_label
from statewright.core.states import RUN_TERMINAL, TI, DagRunState, TaskInstanceState
from statewright.core.transitions import Actor
from statewright.db.engine import make_engine, transaction
from statewright.db.migrate import migrate
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.repositories import transitions_log
from statewright.services import listeners
from statewright.services.dag_runs import create_run
from statewright.services.dag_test_targets import store_trigger_targets
from statewright.services.dag_view import DagView, DagViewCache
from statewright.services.executors.inprocess import InProcessExecutor
from statewright.services.scheduler.hitl_timeouts import HITLTimeouts
from statewright.services.scheduler.scheduler import Scheduler, SchedulerConfig
from statewright.services.secrets.store import using_database_store
from statewright.services.triggerer.inprocess import run_deferred_triggers
from statewright.services.worker.dag_callbacks import run_pending_in_process
from statewright.services.worker.deferral import dag_test_cipher
from statewright.services.worker.outcome import TryResult
from statewright.services.worker.workload import Workload

log = logging.getLogger(__name__)


@dataclass
class TaskInstanceResult:
    task_id: str
    state: TaskInstanceState
    state_name: str
    try_number: int
    state_message: str | None
    return_value: Any = None
    map_index: int = -1
    rendered_map_index: str | None = None


@dataclass
class DagTestResult:
    dag_id: str
    run_id: str
    state: DagRunState
    state_name: str
    task_instances: dict[str, TaskInstanceResult] = field(default_factory=dict)
    history: list[dict[str, Any]] = field(default_factory=list)
    database_url: str = ""

    def ti(self, task_id: str) -> TaskInstanceResult:
        return self.task_instances[task_id]

    @property
    def states(self) -> dict[str, str]:
        return {k: v.state.value for k, v in self.task_instances.items()}


def run_dag_test(
    dag: Any,
    conf: Mapping[str, Any] | None = None,
    *,
    engine: Engine | None = None,
    database_url: str | None = None,
    clock: Clock = utcnow,
    sleep: Callable[[float], None] = time.sleep,
    run_id: str | None = None,
    logical_date: datetime | None = None,
    echo: bool = False,
    on_result: Callable[[Workload, TryResult], None] | None = None,
    logs_folder: Path | None = None,
    max_wait_seconds: float = 3600.0,
    max_map_length: int = DEFAULT_MAX_MAP_LENGTH,
) -> DagTestResult:
    """Run ``dag`` once; returns the run with its task instances (state, name, try number)."""
    tmp: tempfile.TemporaryDirectory[str] | None = None
    owned = engine is None  # made here: closed here, whatever the outcome
    if engine is None:
        if database_url is None:
            tmp = tempfile.TemporaryDirectory(prefix="statewright-test-")
            database_url = f"sqlite:///{Path(tmp.name) / 'dag_test.db'}"
        engine = make_engine(database_url)
    keys = contextlib.ExitStack()
    try:
        keys.enter_context(dag_test_cipher(temporary=tmp is not None))
        keys.enter_context(using_database_store(engine))  # triggers read connections here
        migrate(engine)
        listeners.remember_dags({dag.dag_id: dag})
        keys.enter_context(listeners.installed(engine))
        serialized = dag.serialize()
        now = clock()
        with transaction(engine) as conn:
            dag_repo.upsert_dag(conn, serialized, now=now)
            dag_repo.set_paused(conn, dag.dag_id, False)
            # As Airflow 3.3's dag.test: the DAGs its TriggerDagRunOperators name are stored.
            store_trigger_targets(conn, dag, now=now)
            view = DagView(serialized, dag_repo.dag_hash(serialized))
            # A test run may repeat a logical date (Airflow's dag.test replaces the earlier
            # run; here both stay, with their histories).
            run_pk = create_run(conn, view, now=now, actor=Actor.USER, run_id=run_id, conf=conf,
                                logical_date=logical_date, one_per_logical_date=False)
        views = DagViewCache()
        executor = InProcessExecutor(engine, dags={dag.dag_id: dag}, clock=clock, views=views,
                                     echo=echo, on_result=on_result, logs_folder=logs_folder)
        scheduler = Scheduler(engine, executor, clock=clock, views=views,
                              config=SchedulerConfig(idle_seconds=0.0,
                                                     max_map_length=max_map_length,
                                                     only_runs=frozenset({run_pk})),
                              extra_steps=[HITLTimeouts()])  # defaults taken at a timeout
        deadline = time.monotonic() + max_wait_seconds
        while True:
            stats = scheduler.run_once()
            with engine.connect() as conn:
                run = run_repo.get(conn, run_pk)
            if run.state in {s.value for s in RUN_TERMINAL}:
                break
            if stats.did_work:
                continue
            wait = _seconds_until_due(engine, run_pk, clock())
            # Deferred tasks: run their triggers here, until one fires or something is due.
            budget = max(0.0, deadline - time.monotonic())
            if run_deferred_triggers(engine, run_pk, clock=clock,
                                     max_wait=budget if wait is None else min(wait, budget)):
                continue
            if wait is None or time.monotonic() + wait > deadline:
                raise RuntimeError(
                    f"dag.test: run {run.run_id} of {dag.dag_id} cannot make progress "
                    f"(state {run.state}); see its task instances' states"
                    f"{_awaiting_input_hint(engine, run_pk)}")
            sleep(wait)
        # The DAG's on_success / on_failure callback, queued when the run ended: run it here.
        run_pending_in_process(engine, {dag.dag_id: dag}, clock=clock)
        return _result(engine, run_pk, str(engine.url))
    finally:
        keys.close()
        if owned:
            engine.dispose()
        if tmp is not None:
            tmp.cleanup()


def _seconds_until_due(engine: Engine, run_pk: int, now: datetime) -> float | None:
    with engine.connect() as conn:
        tis = ti_repo.by_run(conn, run_pk)
    due = [t.next_retry_at for t in tis if t.state == TI.UP_FOR_RETRY.value and t.next_retry_at]
    due += [t.reschedule_date for t in tis
            if t.state == TI.UP_FOR_RESCHEDULE.value and t.reschedule_date]
    due += _input_timeouts(engine, [t.id for t in tis if t.state == TI.AWAITING_INPUT.value])
    if not due:
        return None
    return max(0.0, (min(due) - now).total_seconds()) + 0.001


def _input_timeouts(engine: Engine, ti_ids: list[int]) -> list[datetime]:
    from statewright.db.repositories import hitl as hitl_repo

    with engine.connect() as conn:
        rows = [hitl_repo.get(conn, pk) for pk in ti_ids]
    return [r.timeout_at for r in rows if r is not None and r.timeout_at is not None
            and r.responded_at is None]


def _awaiting_input_hint(engine: Engine, run_pk: int) -> str:
    with engine.connect() as conn:
        waiting = [t.task_id for t in ti_repo.by_run(conn, run_pk)
                   if t.state == TI.AWAITING_INPUT.value]
    if not waiting:
        return ""
    return (f": {', '.join(sorted(waiting))} await(s) a person's input, with no response "
            "timeout; respond with `statewright tasks respond`, the API or the Required "
            "actions page (pass database_url= to dag.test() to keep the database)")


def _read_back(run: Any, ti: Any, stored: Any) -> Any:
    """A task's return value as the task returned it (read through the XCom backend); the
    stored form when it cannot be read back here."""
    if stored is None:
        return None
    from statewright.sdk.context import XCOM_RETURN_KEY, read_xcom

    try:
        return read_xcom(stored, key=XCOM_RETURN_KEY, dag_id=run.dag_id, run_id=run.run_id,
                         task_id=ti.task_id)
    except Exception as exc:
        log.warning("the return value of %s cannot be read back (%s); the result holds its "
                    "stored form", ti.task_id, exc)
        return stored


def _result(engine: Engine, run_pk: int, url: str) -> DagTestResult:
    from statewright.db.repositories import xcoms as xcom_repo

    with engine.connect() as conn:
        run = run_repo.get(conn, run_pk)
        tis = ti_repo.by_run(conn, run_pk)
        values = xcom_repo.get_indexed_return_values(conn, [(run_pk, t.task_id) for t in tis])
        history = transitions_log.for_run(conn, run.dag_id, run.run_id)
    out = DagTestResult(run.dag_id, run.run_id, DagRunState(run.state), run.state_name,
                        database_url=url)
    for t in tis:
        stored = values.get((run_pk, t.task_id), {})
        out.task_instances[ti_label(t.task_id, t.map_index)] = TaskInstanceResult(
            t.task_id, TaskInstanceState(t.state), t.state_name, t.try_number, t.state_message,
            _read_back(run, t, stored.get(t.map_index)), map_index=t.map_index,
            rendered_map_index=t.rendered_map_index)
    out.history = [dict(h._mapping) for h in history]
    return out

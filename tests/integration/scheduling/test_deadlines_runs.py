"""Deadline alerts end to end on a manual clock: stored with each run, checked by the
scheduler from the index, a late run's callback called exactly once, a run that ends in time
cancels its deadline."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, select
from tests.noop import NoopOperator

from statewright.core.errors import DagDefinitionError
from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.repositories import transitions_log
from statewright.db.tables import dag_callback
from statewright.db.tables_deadlines import deadline
from statewright.sdk import (
    DAG,
    AsyncCallback,
    DeadlineAlert,
    DeadlineReference,
    SyncCallback,
)
from statewright.services.dag_runs import trigger_dag
from statewright.services.worker.dag_callbacks import run_pending_in_process

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
CALLS: list[tuple[str, dict[str, Any]]] = []


def on_late(*, context: dict[str, Any], **kwargs: Any) -> None:
    CALLS.append(("sync", {**kwargs, "run_id": context["dag_run"]["run_id"],
                           "deadline_time": context["deadline"]["deadline_time"]}))


async def on_late_async(*, context: dict[str, Any], **kwargs: Any) -> None:
    CALLS.append(("async", {**kwargs, "run_id": context["dag_run"]["run_id"]}))


def timed_dag(*alerts: DeadlineAlert) -> DAG:
    with DAG("timed", deadline=list(alerts)) as dag:
        NoopOperator(task_id="a") >> NoopOperator(task_id="b")
    return dag


def rows(engine: Engine, table: Any) -> list[Any]:
    with engine.connect() as conn:
        return list(conn.execute(select(table).order_by(table.c.id)).all())


@pytest.fixture(autouse=True)
def _clear_calls() -> None:
    CALLS.clear()


def test_a_late_run_fires_its_callback_exactly_once(harness: Callable, engine: Engine) -> None:
    h = harness(NOW)
    dag = timed_dag(
        DeadlineAlert(reference=DeadlineReference.DAGRUN_QUEUED_AT,
                      interval=timedelta(hours=2),
                      callback=SyncCallback(on_late, kwargs={"channel": "#data"})),
        DeadlineAlert(reference=DeadlineReference.DAGRUN_QUEUED_AT,
                      interval=timedelta(hours=3), callback=AsyncCallback(on_late_async)))
    h.sync(dag)
    with transaction(engine) as conn:
        trigger_dag(conn, "timed", now=h.clock(), actor=Actor.USER, run_id="late")
    stored = rows(engine, deadline)
    assert [(d.reference, d.deadline_time, d.status) for d in stored] == [
        ("DAGRUN_QUEUED_AT", NOW + timedelta(hours=2), "pending"),
        ("DAGRUN_QUEUED_AT", NOW + timedelta(hours=3), "pending")]
    h.executor.hold = True
    h.loop()
    h.clock.advance(timedelta(hours=2, seconds=1))
    h.loop()
    h.loop()  # passes again: nothing new
    assert [d.status for d in rows(engine, deadline)] == ["missed", "pending"]
    assert [c.kind for c in rows(engine, dag_callback)] == ["deadline_callback"]
    assert run_pending_in_process(engine, {"timed": dag}, clock=h.clock) == 1
    assert run_pending_in_process(engine, {"timed": dag}, clock=h.clock) == 0
    assert CALLS == [("sync", {"channel": "#data", "run_id": "late",
                               "deadline_time": NOW + timedelta(hours=2)})]
    with engine.connect() as conn:
        notes = [t.message for t in transitions_log.for_run(conn, "timed", "late")
                 if t.message and "deadline missed" in t.message]
    assert len(notes) == 1 and "DAGRUN_QUEUED_AT" in notes[0]

    h.clock.advance(timedelta(hours=1))
    h.loop()
    assert run_pending_in_process(engine, {"timed": dag}, clock=h.clock) == 1
    assert [c[0] for c in CALLS] == ["sync", "async"]  # the async one ran to its end
    assert [c.status for c in rows(engine, dag_callback)] == ["done", "done"]


def test_a_run_that_ends_in_time_cancels_its_deadline(harness: Callable,
                                                     engine: Engine) -> None:
    h = harness(NOW)
    h.sync(timed_dag(DeadlineAlert(reference=DeadlineReference.DAGRUN_QUEUED_AT,
                                   interval=timedelta(hours=1), callback=SyncCallback(on_late))))
    with transaction(engine) as conn:
        trigger_dag(conn, "timed", now=h.clock(), actor=Actor.USER, run_id="quick")
    h.loop()
    assert h.runs("timed")[0].state == "success"
    assert [d.status for d in rows(engine, deadline)] == ["cancelled"]
    h.clock.advance(timedelta(hours=2))
    h.loop()
    assert rows(engine, dag_callback) == [] and CALLS == []


def test_a_run_that_ended_late_before_the_check_is_still_missed(
        harness: Callable, engine: Engine) -> None:
    """The scheduler was away when the deadline passed; the run ended after it."""
    h = harness(NOW)
    h.sync(timed_dag(DeadlineAlert(reference=DeadlineReference.DAGRUN_QUEUED_AT,
                                   interval=timedelta(minutes=5), callback=SyncCallback(on_late))))
    with transaction(engine) as conn:
        trigger_dag(conn, "timed", now=h.clock(), actor=Actor.USER, run_id="slow")
    h.clock.advance(timedelta(minutes=10))
    h.scheduler.extra_steps = [s for s in h.scheduler.extra_steps
                               if type(s).__name__ != "DeadlineCheck"]
    h.loop()  # the run ends at +10 min, without the deadline step
    assert [d.status for d in rows(engine, deadline)] == ["pending"]
    from statewright.services.scheduler.deadlines import check_deadlines

    assert check_deadlines(engine, h.clock()) == 1
    assert [d.status for d in rows(engine, deadline)] == ["missed"]


def test_references_logical_date_fixed_and_average_runtime(harness: Callable,
                                                           engine: Engine) -> None:
    h = harness(NOW)
    fixed = datetime(2026, 3, 2, 9, tzinfo=UTC)
    h.sync(timed_dag(
        DeadlineAlert(reference=DeadlineReference.DAGRUN_LOGICAL_DATE,
                      interval=timedelta(hours=1), callback=SyncCallback(on_late)),
        DeadlineAlert(reference=DeadlineReference.FIXED_DATETIME(fixed),
                      interval=timedelta(minutes=-30), callback=SyncCallback(on_late)),
        DeadlineAlert(reference=DeadlineReference.AVERAGE_RUNTIME(max_runs=3, min_runs=2),
                      interval=timedelta(minutes=10), callback=SyncCallback(on_late))))
    for i in range(3):
        with transaction(engine) as conn:
            trigger_dag(conn, "timed", now=h.clock(), actor=Actor.USER, run_id=f"r{i}",
                        logical_date=h.clock())
        h.loop()
        h.clock.advance(timedelta(minutes=1))
    by_run: dict[str, dict[str, datetime]] = {}
    for d in rows(engine, deadline):
        by_run.setdefault(d.run_id, {})[d.reference] = d.deadline_time
    assert by_run["r0"]["DAGRUN_LOGICAL_DATE"] == NOW + timedelta(hours=1)
    assert by_run["r0"]["FIXED_DATETIME"] == fixed - timedelta(minutes=30)
    # no finished run yet for r0 and r1 (min_runs=2): no average-runtime deadline
    assert "AVERAGE_RUNTIME" not in by_run["r0"] and "AVERAGE_RUNTIME" not in by_run["r1"]
    # r2: r0 and r1 took no time on the manual clock: created at +2 min, average 0, + 10 min
    assert by_run["r2"]["AVERAGE_RUNTIME"] == NOW + timedelta(minutes=12)


def test_bad_deadline_alerts_are_refused_at_parse() -> None:
    with pytest.raises(DagDefinitionError, match=r"interval .* is negative"):
        DeadlineAlert(reference=DeadlineReference.DAGRUN_QUEUED_AT,
                      interval=timedelta(minutes=-5), callback=SyncCallback(on_late))
    with pytest.raises(DagDefinitionError, match="reference 'DAGRUN_STARTED_AT' does not exist"):
        DeadlineAlert(reference="DAGRUN_STARTED_AT", interval=timedelta(minutes=5),
                      callback=SyncCallback(on_late))
    with pytest.raises(AttributeError):
        DeadlineReference.DAGRUN_STARTED_AT  # type: ignore[attr-defined]  # noqa: B018
    with pytest.raises(DagDefinitionError, match="AsyncCallback or a SyncCallback"):
        DeadlineAlert(reference=DeadlineReference.DAGRUN_QUEUED_AT,
                      interval=timedelta(minutes=5), callback=on_late)
    with pytest.raises(DagDefinitionError, match="deadline must be a DeadlineAlert"):
        DAG("bad", deadline="soon")
    # a negative interval is "before that moment" with FIXED_DATETIME, as in Airflow
    DeadlineAlert(reference=DeadlineReference.FIXED_DATETIME(NOW),
                  interval=timedelta(minutes=-5), callback=SyncCallback(on_late))


BAD_FILE = '''from datetime import timedelta
from statewright.sdk import DAG, DeadlineAlert, DeadlineReference, EmptyOperator, SyncCallback

def notify(**kwargs):
    pass

with DAG("bad_deadline", deadline=DeadlineAlert(
        reference=DeadlineReference.DAGRUN_QUEUED_AT, interval=timedelta(minutes=-15),
        callback=SyncCallback(notify))):
    EmptyOperator(task_id="t")
'''


def test_a_dag_file_with_a_bad_deadline_is_an_import_error(engine: Engine,
                                                           tmp_path: Any) -> None:
    from statewright.services.dag_processor.processor import DagProcessor

    (tmp_path / "bad_deadline.py").write_text(BAD_FILE)
    stats = DagProcessor(engine, tmp_path).run_once()
    (error,) = stats.errors.values()
    assert "interval -0:15:00 is negative" in error and "DAGRUN_QUEUED_AT" in error
    assert stats.dags == 0

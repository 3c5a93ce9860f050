"""Schedules → runs: the scheduler creates the runs a timetable asks for, on a manual clock."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import Engine
from tests.noop import NoopOperator

from statewright.core.states import RUN
from statewright.core.transitions import Actor
from statewright.sdk import DAG, chain
from statewright.services.scheduler.dagrun_creation import DagRunCreation

D = datetime(2026, 1, 1, tzinfo=UTC)


def daily(dag_id: str, *, catchup: bool, start: datetime = D, **kw: Any) -> DAG:
    with DAG(dag_id, schedule="@daily", start_date=start, catchup=catchup, **kw) as dag:
        chain(NoopOperator(task_id="a"), NoopOperator(task_id="b"))
    return dag


def advance_through(h: Any, until: datetime, step: timedelta) -> None:
    while h.clock() + step <= until:
        h.clock.advance(step)
        h.loop()


def test_daily_with_catchup_over_a_month_creates_one_run_per_day(harness: Callable) -> None:
    h = harness(D)
    h.sync(daily("daily_catchup", catchup=True))
    h.loop()
    advance_through(h, datetime(2026, 1, 31, 23, tzinfo=UTC), timedelta(hours=3))
    runs = h.runs("daily_catchup")
    assert [r.logical_date for r in runs] == [D + timedelta(days=i) for i in range(31)]
    assert {r.run_type for r in runs} == {"scheduled"}
    assert runs[0].run_id == "scheduled__2026-01-01T00:00:00+00:00"
    assert all(r.data_interval_start == r.data_interval_end == r.logical_date
               == r.run_after for r in runs)
    assert {r.state for r in runs} == {"success"}
    row = h.dag_row("daily_catchup")
    assert row.next_dagrun == datetime(2026, 2, 1, tzinfo=UTC)
    assert row.next_dagrun_create_after == datetime(2026, 2, 1, tzinfo=UTC)


def test_catchup_creates_the_missed_runs_oldest_first(harness: Callable) -> None:
    h = harness(datetime(2026, 1, 10, 12, tzinfo=UTC))
    h.sync(daily("late_catchup", catchup=True))
    h.loop()
    assert [r.logical_date.day for r in h.runs("late_catchup")] == list(range(1, 11))


def test_without_catchup_only_the_latest_missed_run_then_one_a_day(harness: Callable) -> None:
    h = harness(datetime(2026, 1, 10, 12, tzinfo=UTC))
    h.sync(daily("no_catchup", catchup=False, start=datetime(2025, 12, 1, tzinfo=UTC)))
    h.loop()
    assert [r.logical_date for r in h.runs("no_catchup")] == [datetime(2026, 1, 10, tzinfo=UTC)]
    advance_through(h, datetime(2026, 1, 31, 23, tzinfo=UTC), timedelta(hours=3))
    assert [r.logical_date.day for r in h.runs("no_catchup")] == list(range(10, 32))


def test_after_downtime_without_catchup_the_overtaken_run_is_skipped(harness: Callable) -> None:
    h = harness(datetime(2026, 1, 2, 1, tzinfo=UTC))
    h.sync(daily("downtime", catchup=False))
    h.loop()
    assert [r.logical_date.day for r in h.runs("downtime")] == [2]
    h.clock.set(datetime(2026, 1, 9, 6, tzinfo=UTC))  # the scheduler was down for a week
    h.loop()
    assert [r.logical_date.day for r in h.runs("downtime")] == [2, 9]


def test_end_date_stops_the_runs(harness: Callable) -> None:
    h = harness(datetime(2026, 1, 20, tzinfo=UTC))
    h.sync(daily("ends", catchup=True, end_date=datetime(2026, 1, 5, tzinfo=UTC)))
    h.loop()
    assert [r.logical_date.day for r in h.runs("ends")] == [1, 2, 3, 4, 5]
    row = h.dag_row("ends")
    assert row.next_dagrun is None and row.next_dagrun_create_after is None


def test_once_and_none_schedules(harness: Callable) -> None:
    h = harness(datetime(2026, 1, 20, tzinfo=UTC))
    with DAG("once", schedule="@once", start_date=datetime(2026, 1, 3, tzinfo=UTC)) as once:
        NoopOperator(task_id="a")
    with DAG("manual_only", schedule=None) as manual:
        NoopOperator(task_id="a")
    h.sync(once, manual)
    h.loop()
    h.clock.advance(timedelta(days=3))
    h.loop()
    assert [r.run_id for r in h.runs("once")] == ["scheduled__2026-01-03T00:00:00+00:00"]
    assert h.runs("manual_only") == []


def test_a_paused_dag_gets_no_runs_until_unpaused(harness: Callable, engine: Engine) -> None:
    from statewright.db.engine import transaction
    from statewright.db.repositories import dags as dag_repo

    h = harness(datetime(2026, 1, 3, 12, tzinfo=UTC))
    h.sync(daily("paused", catchup=False), paused=True)
    h.loop()
    h.clock.advance(timedelta(days=2))
    h.loop()
    assert h.runs("paused") == []
    with transaction(engine) as conn:
        dag_repo.set_paused(conn, "paused", False)
    h.loop()
    # Unpaused on 5 January: the latest due run only (catchup is off).
    assert [r.logical_date.day for r in h.runs("paused")] == [5]


def test_max_active_runs_limits_creation_like_airflow(harness: Callable) -> None:
    h = harness(datetime(2026, 1, 11, 12, tzinfo=UTC))
    h.executor.hold = True  # tasks stay queued: runs stay running
    h.sync(daily("limited", catchup=True, max_active_runs=3))
    h.loop()
    runs = h.runs("limited")
    assert len(runs) == 3  # queued + running non-backfill runs reached max_active_runs
    assert h.dag_row("limited").next_dagrun == datetime(2026, 1, 4, tzinfo=UTC)
    h.executor.hold = False
    h.executor.finish()
    h.loop()
    assert [r.logical_date.day for r in h.runs("limited")] == list(range(1, 12))


def test_creation_is_idempotent_and_never_duplicates(harness: Callable, engine: Engine) -> None:
    h = harness(datetime(2026, 1, 5, 12, tzinfo=UTC))
    h.sync(daily("twice", catchup=True, max_active_runs=100))
    first, second = DagRunCreation(), DagRunCreation()  # two schedulers
    created = 0
    for _ in range(20):
        created += first.create_due_runs(engine, h.clock()) + second.create_due_runs(
            engine, h.clock())
    runs = h.runs("twice")
    assert created == len(runs) == 5
    assert len({r.run_id for r in runs}) == 5
    # A run that exists already (created by hand with the same id) is skipped, not doubled.
    h.clock.advance(timedelta(days=1))
    from statewright.db.engine import transaction
    from statewright.services.dag_runs import create_run
    from statewright.services.dag_view import DagView

    row = h.dag_row("twice")
    with transaction(engine) as conn:
        create_run(conn, DagView(row.serialized, row.dag_hash), now=h.clock(),
                   actor=Actor.USER,
                   run_type="scheduled", run_id="scheduled__2026-01-06T00:00:00+00:00",
                   logical_date=datetime(2026, 1, 6, tzinfo=UTC))
    assert first.create_due_runs(engine, h.clock()) == 0
    assert h.dag_row("twice").next_dagrun == datetime(2026, 1, 7, tzinfo=UTC)
    assert len(h.runs("twice")) == 6


def _local_days(runs: list[Any], tz: ZoneInfo) -> dict[int, int]:
    out: dict[int, int] = {}
    for r in runs:
        day = r.logical_date.astimezone(tz).day
        out[day] = out.get(day, 0) + 1
    return out


def test_hourly_in_berlin_across_both_2026_dst_changes(harness: Callable,
                                                       engine: Engine) -> None:
    berlin = ZoneInfo("Europe/Berlin")
    for start, changed_day, expected in ((datetime(2026, 3, 28, tzinfo=berlin), 29, 23),
                                         (datetime(2026, 10, 24, tzinfo=berlin), 25, 25)):
        h = harness(start.astimezone(UTC))
        dag_id = f"hourly_{changed_day}"
        with DAG(dag_id, schedule="@hourly", start_date=start, timezone="Europe/Berlin",
                 catchup=True, max_active_runs=1000) as dag:
            NoopOperator(task_id="a")
        h.sync(dag)
        step = DagRunCreation()
        end = (start + timedelta(days=3)).astimezone(UTC)
        while h.clock() < end:
            while step.create_due_runs(engine, h.clock()):
                pass
            h.clock.advance(timedelta(minutes=20))
        runs = h.runs(dag_id)
        per_day = _local_days(runs, berlin)
        assert per_day[changed_day] == expected
        assert per_day[changed_day - 1] == per_day[changed_day + 1] == 24
        instants = [r.logical_date for r in runs]
        assert all(b - a == timedelta(hours=1) for a, b in itertools.pairwise(instants))
        assert len(set(r.run_id for r in runs)) == len(runs)


def test_a_run_that_starts_takes_its_tasks_to_success(harness: Callable) -> None:
    h = harness(datetime(2026, 1, 1, 0, 30, tzinfo=UTC))
    h.sync(daily("full", catchup=True))
    h.loop()
    (run,) = h.runs("full")
    assert run.state == RUN.SUCCESS.value
    assert {t.state for t in h.tis("full")} == {"success"}


def test_schedulers_running_at_once_create_each_run_once(harness: Callable,
                                                          engine: Engine) -> None:
    import threading

    h = harness(datetime(2026, 1, 20, 12, tzinfo=UTC))
    for i in range(8):
        h.sync(daily(f"race_{i}", catchup=True, max_active_runs=100),
               fileloc=f"/virtual/dags/race_{i}.py")
    now = h.clock()
    errors: list[BaseException] = []

    def scheduler() -> None:
        step = DagRunCreation(max_dags_per_loop=3)
        try:
            for _ in range(60):
                step.create_due_runs(engine, now)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=scheduler) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []
    for i in range(8):
        runs = h.runs(f"race_{i}")
        assert [r.logical_date.day for r in runs] == list(range(1, 21))
        assert len({r.run_id for r in runs}) == 20

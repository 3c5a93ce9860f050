"""Backfill: runs for every logical date of a range, within the backfill's max_active_runs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, func, select
from tests.noop import NoopOperator

from statewright.core.states import RUN
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import backfills as backfill_repo
from statewright.db.tables import backfill, dag_run
from statewright.sdk import DAG, chain
from statewright.services.backfill import BackfillError, create_backfill

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
JAN1 = datetime(2026, 1, 1, tzinfo=UTC)


def daily(dag_id: str = "bf", **kw: Any) -> DAG:
    kw.setdefault("start_date", JAN1)
    with DAG(dag_id, schedule="@daily", **kw) as dag:
        chain(NoopOperator(task_id="a"), NoopOperator(task_id="b"), NoopOperator(task_id="c"))
    return dag


class RunningCounter:
    """Follows the committed transitions of a DAG's backfill runs; remembers the most running
    at once."""

    def __init__(self, dag_id: str) -> None:
        self.dag_id = dag_id
        self.running: set[int] = set()
        self.most = 0

    def __call__(self, events: Sequence[door.TransitionEvent]) -> None:
        for e in events:
            if e.entity != door.ENTITY_RUN or e.dag_id != self.dag_id \
                    or not e.run_id.startswith("backfill__"):
                continue
            if e.to == RUN.RUNNING.value:
                self.running.add(e.entity_id)
            elif e.frm == RUN.RUNNING.value:
                self.running.discard(e.entity_id)
        self.most = max(self.most, len(self.running))


def test_a_30_day_backfill_never_runs_more_than_max_active_runs(harness: Callable,
                                                                 engine: Engine) -> None:
    h = harness(NOW)
    h.sync(daily())  # the DAG itself allows 16 active runs
    counter = RunningCounter("bf")
    remove = door.add_transition_listener(counter)
    try:
        plan = create_backfill(engine, "bf", JAN1, JAN1 + timedelta(days=29), max_active_runs=3,
                               now=h.clock())
        assert len(plan.to_run) == 30
        for _ in range(400):
            h.clock.advance(1)
            h.loop()
            with engine.connect() as conn:
                active = conn.execute(select(func.count()).select_from(dag_run).where(
                    dag_run.c.run_type == "backfill",
                    dag_run.c.state.in_(("queued", "running")))).scalar_one()
            assert active <= 3
            with engine.connect() as conn:
                done = backfill_repo.get(conn, plan.backfill_id).completed_at is not None
            if done:
                break
    finally:
        remove()
    runs = h.runs("bf", "backfill")
    assert [r.logical_date for r in runs] == [JAN1 + timedelta(days=i) for i in range(30)]
    assert runs[0].run_id == "backfill__2026-01-01T00:00:00+00:00"
    assert {r.state for r in runs} == {"success"}
    assert 1 <= counter.most <= 3
    assert done


def test_existing_runs_are_skipped_and_reported(harness: Callable, engine: Engine) -> None:
    h = harness(datetime(2026, 1, 3, 12, tzinfo=UTC))
    h.sync(daily(catchup=True))
    h.loop()  # scheduled runs of 1, 2 and 3 January exist now
    plan = create_backfill(engine, "bf", JAN1, JAN1 + timedelta(days=4), now=NOW)
    assert [d.action for d in plan.dates] == ["skip", "skip", "skip", "create", "create"]
    assert "exists (success)" in (plan.dates[0].reason or "")
    h.loop()
    assert [r.logical_date.day for r in h.runs("bf", "backfill")] == [4, 5]


def test_dry_run_creates_nothing(harness: Callable, engine: Engine) -> None:
    h = harness(NOW)
    h.sync(daily())
    plan = create_backfill(engine, "bf", JAN1, JAN1 + timedelta(days=2), dry_run=True, now=NOW)
    assert [d.action for d in plan.dates] == ["create"] * 3 and plan.backfill_id is None
    h.loop()
    assert h.runs("bf", "backfill") == []
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(backfill)).scalar_one() == 0


def test_run_backwards_orders_newest_first(harness: Callable, engine: Engine) -> None:
    h = harness(NOW)
    h.sync(daily())
    plan = create_backfill(engine, "bf", JAN1, JAN1 + timedelta(days=3), max_active_runs=1,
                           run_backwards=True, now=NOW)
    assert [d.info.logical_date.day for d in plan.dates] == [4, 3, 2, 1]
    h.executor.hold = True
    h.loop()
    assert [r.logical_date.day for r in h.runs("bf", "backfill")] == [4]


@pytest.mark.parametrize("behavior, expected", [("none", []), ("failed", [2]),
                                                ("completed", [1, 2])])
def test_reprocess_behavior_clears_finished_runs(harness: Callable, engine: Engine,
                                                 behavior: str, expected: list[int]) -> None:
    h = harness(datetime(2026, 1, 2, 12, tzinfo=UTC))
    h.sync(daily(catchup=True))
    h.executor.outcomes = {"b": "failed"}
    h.loop()
    assert [r.state for r in h.runs("bf")] == ["failed", "failed"]
    first = h.runs("bf")[0]
    with transaction(engine) as conn:  # 1 January's run: success
        door.set_dag_run_state(conn, first.id, frm=RUN.FAILED, to=RUN.SUCCESS,
                               actor=Actor.USER, now=h.clock())
    h.executor.outcomes = {}
    plan = create_backfill(engine, "bf", JAN1, JAN1 + timedelta(days=2),
                           reprocess_behavior=behavior, now=NOW)
    reprocessed = [d.info.logical_date.day for d in plan.dates if d.action == "reprocess"]
    assert reprocessed == expected
    h.clock.advance(60)
    h.loop()
    runs = {r.logical_date.day: r for r in h.runs("bf")}
    assert runs[3].run_type == "backfill" and runs[3].state == "success"
    for day in expected:
        assert runs[day].state == "success" and runs[day].clear_number == 1
    with engine.connect() as conn:
        assert backfill_repo.get(conn, plan.backfill_id).completed_at is not None


def test_bad_requests_create_nothing(harness: Callable, engine: Engine) -> None:
    h = harness(NOW)
    h.sync(daily())
    with DAG("manual_only", schedule=None) as manual:
        NoopOperator(task_id="a")
    h.sync(manual, fileloc="/virtual/dags/manual.py")
    cases = [
        (("nope", JAN1, JAN1 + timedelta(days=1)), "No DAG with id 'nope'"),
        (("bf", JAN1 + timedelta(days=5), JAN1), "is before the start date"),
        (("bf", datetime(2027, 1, 1, tzinfo=UTC), datetime(2027, 2, 1, tzinfo=UTC)),
         "in the future"),
        (("manual_only", JAN1, JAN1 + timedelta(days=1)), "needs a time-based schedule"),
        (("bf", datetime(2026, 1, 1, 1, tzinfo=UTC), datetime(2026, 1, 1, 2, tzinfo=UTC)),
         "no scheduled time"),
    ]
    for args, message in cases:
        with pytest.raises(BackfillError, match=message):
            create_backfill(engine, *args, now=NOW)
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(backfill)).scalar_one() == 0
        assert conn.execute(select(func.count()).select_from(dag_run)).scalar_one() == 0

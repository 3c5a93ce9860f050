"""Creating many runs at once writes what creating them one by one writes."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from sqlalchemy import Engine, select

from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.bulk import insert_many
from statewright.db.engine import transaction
from statewright.db.repositories import dags as dag_repo
from statewright.db.tables import dag_run, pool, state_transition, task_instance
from statewright.services.dag_runs import RunSpec, create_run, create_runs
from statewright.services.dag_view import DagView

NOW = datetime(2026, 2, 3, 4, 5, 6, 789, tzinfo=UTC)
SER = {"dag_id": "bulk", "tasks": [
    {"task_id": "a", "downstream": ["b"], "retries": 2, "pool": "p", "priority_weight": 3},
    {"task_id": "b", "upstream": ["a"], "pool_slots": 2}]}


def _rows(engine: Engine, run_id: str) -> tuple[dict, list[dict], list[dict]]:
    skip = {"id", "run_id", "dag_run_id", "entity_id", "queued_at", "updated_at"}
    with engine.connect() as conn:
        run = conn.execute(select(dag_run).where(dag_run.c.run_id == run_id)).one()
        tis = conn.execute(select(task_instance).where(task_instance.c.run_id == run_id)
                           .order_by(task_instance.c.task_id)).all()
        hist = conn.execute(select(state_transition).where(state_transition.c.run_id == run_id)
                            .order_by(state_transition.c.entity, state_transition.c.task_id)
                            ).all()
    def strip(row: object) -> dict:
        return {k: v for k, v in row._mapping.items() if k not in skip}  # type: ignore[attr-defined]
    return strip(run), [strip(t) for t in tis], [strip(h) for h in hist]


def test_create_runs_matches_create_run(engine: Engine) -> None:
    with transaction(engine) as conn:
        dag_repo.upsert_dag(conn, SER, now=NOW)
    view = DagView(SER, "h")
    events: list[door.TransitionEvent] = []

    def listener(batch: Sequence[door.TransitionEvent]) -> None:
        events.extend(batch)

    remove = door.add_transition_listener(listener)
    try:
        with transaction(engine) as conn:
            create_run(conn, view, now=NOW, actor=Actor.SCHEDULER, run_type="scheduled",
                       run_id="one", logical_date=NOW, data_interval=(NOW, NOW), run_after=NOW,
                       conf={"k": 1})
        n_single = len(events)
        with transaction(engine) as conn:
            pks = create_runs(conn, [
                RunSpec(view, "many", "scheduled", NOW, (NOW, NOW), NOW, {"k": 1}),
                RunSpec(view, "more", "scheduled", NOW, (NOW, NOW), NOW),
            ], now=NOW, actor=Actor.SCHEDULER)
    finally:
        remove()
    single, bulk = _rows(engine, "one"), _rows(engine, "many")
    assert single[0] | {"triggered_by": None} == bulk[0] | {"triggered_by": None}
    assert single[1] == bulk[1] and single[2] == bulk[2]
    assert len(pks) == 2 and len(events) == 3 * n_single
    with engine.connect() as conn:
        stored = conn.execute(select(dag_run.c.queued_at).where(dag_run.c.run_id == "many")
                              ).scalar_one()
        compared = conn.execute(select(dag_run.c.run_id).where(dag_run.c.queued_at == NOW)
                                .order_by(dag_run.c.run_id)).scalars().all()
    assert stored == NOW and compared == ["many", "more", "one"]


def test_insert_many_applies_defaults_and_types(engine: Engine) -> None:
    with transaction(engine) as conn:
        insert_many(conn, pool, ("name", "slots"), [("a", 1), ("b", 2)],
                    {"description": "x"})
        insert_many(conn, pool, ("name", "slots"), [])
    with engine.connect() as conn:
        rows = conn.execute(select(pool).where(pool.c.name.in_(["a", "b"]))
                            .order_by(pool.c.name)).all()
    assert [(r.name, r.slots, r.description, r.include_deferred) for r in rows] == [
        ("a", 1, "x", False), ("b", 2, "x", False)]

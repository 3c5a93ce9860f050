"""The one door: compare-and-set, history, timestamps, fencing, idempotency, after-commit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Engine, select

from statewright.core.errors import InvalidTransition
from statewright.core.states import RUN, TI, StateName
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.repositories import transitions_log
from statewright.db.tables import dag_run, task_instance

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
SERIALIZED = {"dag_id": "d", "fileloc": "/x.py", "tasks": [
    {"task_id": "a", "upstream": [], "downstream": ["b"]},
    {"task_id": "b", "upstream": ["a"], "downstream": []},
]}


def _setup(engine: Engine) -> tuple[int, dict[str, int]]:
    with transaction(engine) as conn:
        dag_repo.upsert_dag(conn, SERIALIZED, now=T0)
        run = door.create_dag_run(conn, dag_id="d", run_id="r1", run_type="manual",
                                  actor=Actor.USER, now=T0)
        door.create_task_instances(conn, dag_run_id=run, dag_id="d", run_id="r1",
                                   rows=[{"task_id": "a"}, {"task_id": "b"}], actor=Actor.USER,
                                   now=T0)
        ids = {t.task_id: t.id for t in ti_repo.by_run(conn, run)}
    return run, ids


def _ti(engine: Engine, pk: int):  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        return ti_repo.get(conn, pk)


def test_creation_records_history_and_queued_at(engine: Engine) -> None:
    run, _ids = _setup(engine)
    with engine.connect() as conn:
        r = conn.execute(select(dag_run).where(dag_run.c.id == run)).one()
        hist = transitions_log.for_run(conn, "d", "r1")
    assert r.state == "queued" and r.queued_at == T0
    assert [(h.entity, h.from_state, h.to_state) for h in hist] == [
        ("dag_run", None, "queued"), ("task_instance", None, "none"),
        ("task_instance", None, "none")]


def test_a_walk_through_the_happy_path_sets_the_seed_timestamps(engine: Engine) -> None:
    _run, ids = _setup(engine)
    a = ids["a"]
    steps = [(TI.NONE, TI.SCHEDULED, Actor.SCHEDULER), (TI.SCHEDULED, TI.QUEUED, Actor.SCHEDULER)]
    for i, (f, t, actor) in enumerate(steps):
        with transaction(engine) as conn:
            res = door.set_task_instance_state(conn, a, frm=f, to=t, actor=actor,
                                               now=T0 + timedelta(seconds=i + 1))
        assert res.changed == [a]
    with transaction(engine) as conn:
        door.set_task_instance_state(conn, a, frm=TI.QUEUED, to=TI.RUNNING, actor=Actor.WORKER,
                                     now=T0 + timedelta(seconds=3), increment_try=True)
    row = _ti(engine, a)
    assert (row.state, row.state_name, row.try_number) == ("running", "Running", 1)
    assert row.queued_at == T0 + timedelta(seconds=2)
    assert row.start_date == T0 + timedelta(seconds=3)
    with transaction(engine) as conn:
        door.set_task_instance_state(conn, a, frm=TI.RUNNING, to=TI.SUCCESS, actor=Actor.WORKER,
                                     now=T0 + timedelta(seconds=5.5), try_number=1)
    row = _ti(engine, a)
    assert row.state == "success" and row.end_date == T0 + timedelta(seconds=5.5)
    assert row.duration == pytest.approx(2.5, abs=1e-3)
    with engine.connect() as conn:
        hist = transitions_log.for_task_instance(conn, a)
    assert [(h.from_state, h.to_state, h.actor, h.try_number) for h in hist] == [
        (None, "none", "user", 0), ("none", "scheduled", "scheduler", 0),
        ("scheduled", "queued", "scheduler", 0), ("queued", "running", "worker", 1),
        ("running", "success", "worker", 1)]


def test_an_illegal_edge_raises_and_changes_nothing(engine: Engine) -> None:
    _, ids = _setup(engine)
    with pytest.raises(InvalidTransition, match="none -> success"):
        with transaction(engine) as conn:
            door.set_task_instance_state(conn, ids["a"], frm=TI.NONE, to=TI.SUCCESS,
                                         actor=Actor.WORKER, now=T0)
    assert _ti(engine, ids["a"]).state == "none"


def test_a_lost_race_is_reported_not_overwritten(engine: Engine) -> None:
    _, ids = _setup(engine)
    with transaction(engine) as conn:
        res = door.set_task_instance_state(conn, ids["a"], frm=TI.SCHEDULED, to=TI.QUEUED,
                                           actor=Actor.SCHEDULER, now=T0)
    assert res.changed == [] and res.lost == {ids["a"]: "none (try 0)"}
    assert _ti(engine, ids["a"]).state == "none"


def test_the_try_number_fences_reports(engine: Engine) -> None:
    _, ids = _setup(engine)
    a = ids["a"]
    with transaction(engine) as conn:
        for f, t in [(TI.NONE, TI.SCHEDULED), (TI.SCHEDULED, TI.QUEUED)]:
            door.set_task_instance_state(conn, a, frm=f, to=t, actor=Actor.SCHEDULER, now=T0)
        door.set_task_instance_state(conn, a, frm=TI.QUEUED, to=TI.RUNNING, actor=Actor.WORKER,
                                     now=T0, increment_try=True)
        door.set_task_instance_state(conn, a, frm=TI.QUEUED, to=TI.RUNNING, actor=Actor.WORKER,
                                     now=T0, increment_try=True)
    with transaction(engine) as conn:
        # Force a second try: running -> up_for_retry -> scheduled -> queued -> running (try 2)
        door.set_task_instance_state(conn, a, frm=TI.RUNNING, to=TI.UP_FOR_RETRY,
                                     actor=Actor.WORKER, now=T0, try_number=1)
        for f, t in [(TI.UP_FOR_RETRY, TI.SCHEDULED), (TI.SCHEDULED, TI.QUEUED)]:
            door.set_task_instance_state(conn, a, frm=f, to=t, actor=Actor.SCHEDULER, now=T0)
        door.set_task_instance_state(conn, a, frm=TI.QUEUED, to=TI.RUNNING, actor=Actor.WORKER,
                                     now=T0, increment_try=True)
    row = _ti(engine, a)
    assert (row.try_number, row.state_name) == (2, "Retrying")
    with transaction(engine) as conn:  # a late report for try 1 cannot end try 2
        res = door.set_task_instance_state(conn, [], fenced=[(a, 1)], frm=TI.RUNNING,
                                           to=TI.FAILED, actor=Actor.WORKER, now=T0)
    assert res.changed == [] and a in res.lost
    assert _ti(engine, a).state == "running"


def test_a_repeated_request_answers_as_before(engine: Engine) -> None:
    run, _ids = _setup(engine)
    for _ in range(2):
        with transaction(engine) as conn:
            res = door.set_dag_run_state(conn, run, frm=RUN.QUEUED, to=RUN.RUNNING,
                                         actor=Actor.SCHEDULER, now=T0)
    assert res.changed == [] and res.already == [run] and res.ok
    with engine.connect() as conn:
        hist = [h for h in transitions_log.for_run(conn, "d", "r1") if h.entity == "dag_run"]
    assert len(hist) == 2  # created + one queued->running, not two


def test_listeners_run_after_commit_and_not_after_rollback(engine: Engine) -> None:
    _run, ids = _setup(engine)
    seen: list[str] = []
    remove = door.add_transition_listener(lambda evs: seen.extend(e.to for e in evs))
    try:
        with transaction(engine) as conn:
            door.set_task_instance_state(conn, ids["a"], frm=TI.NONE, to=TI.SCHEDULED,
                                         actor=Actor.SCHEDULER, now=T0)
            assert seen == []
        assert seen == ["scheduled"]
        with pytest.raises(RuntimeError):
            with transaction(engine) as conn:
                door.set_task_instance_state(conn, ids["b"], frm=TI.NONE, to=TI.SKIPPED,
                                             actor=Actor.SCHEDULER, now=T0)
                raise RuntimeError("boom")
        assert seen == ["scheduled"]
        assert _ti(engine, ids["b"]).state == "none"
    finally:
        remove()


def test_names_and_messages_are_recorded(engine: Engine) -> None:
    _, ids = _setup(engine)
    with transaction(engine) as conn:
        door.set_task_instance_state(conn, ids["a"], frm=TI.NONE, to=TI.SCHEDULED,
                                     actor=Actor.SCHEDULER, now=T0)
        door.rename_task_instances(conn, [ids["a"]], state=TI.SCHEDULED, name=StateName.LATE,
                                   actor=Actor.SCHEDULER, now=T0, message="waited 5 min")
    row = _ti(engine, ids["a"])
    assert (row.state, row.state_name) == ("scheduled", "Late")
    with engine.connect() as conn:
        last = transitions_log.for_task_instance(conn, ids["a"])[-1]
    assert (last.from_state, last.to_state, last.name, last.message) == (
        "scheduled", "scheduled", "Late", "waited 5 min")


def test_only_the_door_writes_state_columns() -> None:
    import ast
    from pathlib import Path

    import statewright

    root = Path(statewright.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).as_posix()
        if rel == "db/tables.py" or rel.startswith(("db/transition/", "db/migrations/")):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in {"values", "update", "insert"}:
                keys = {k.arg for k in node.keywords}
                for a in node.args:
                    if isinstance(a, ast.Dict):
                        keys |= {k.value for k in a.keys if isinstance(k, ast.Constant)}
                if keys & {"state", "state_name"}:
                    offenders.append(f"{rel}:{node.lineno}")
    assert offenders == [], "state written outside db/transition/: " + ", ".join(offenders)


def test_task_instance_and_run_tables_have_state_columns() -> None:
    assert "state" in task_instance.c and "state" in dag_run.c

"""The door reuses one built statement per shape of change: each call still sets exactly its own
values, the names and durations that depend on the row, and falls back to building the
statement when a caller's value is an expression."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine, case

from statewright.core.states import TI, StateName
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.repositories import transitions_log
from statewright.db.tables import task_instance

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
SERIALIZED = {"dag_id": "d", "fileloc": "/x.py", "tasks": [
    {"task_id": t, "upstream": [], "downstream": []} for t in ("a", "b", "c")]}


def _setup(engine: Engine) -> dict[str, int]:
    with transaction(engine) as conn:
        dag_repo.upsert_dag(conn, SERIALIZED, now=T0)
        run = door.create_dag_run(conn, dag_id="d", run_id="r1", run_type="manual",
                                  actor=Actor.USER, now=T0)
        door.create_task_instances(conn, dag_run_id=run, dag_id="d", run_id="r1",
                                   rows=[{"task_id": t} for t in ("a", "b", "c")],
                                   actor=Actor.USER, now=T0)
        return {t.task_id: t.id for t in ti_repo.by_run(conn, run)}


def _move(engine: Engine, ids: list[int], frm: TI, to: TI, at: datetime, **kw) -> list[int]:  # type: ignore[no-untyped-def]
    with transaction(engine) as conn:
        return door.set_task_instance_state(conn, ids, frm=frm, to=to, actor=Actor.SCHEDULER,
                                            now=at, **kw).changed


def test_calls_of_one_shape_set_only_their_own_values(engine: Engine) -> None:
    ids = _setup(engine)
    a, b = ids["a"], ids["b"]
    _move(engine, [a, b], TI.NONE, TI.SCHEDULED, T0)
    # Same shape (scheduled -> queued with an executor), other values each time.
    assert _move(engine, [a], TI.SCHEDULED, TI.QUEUED, T0 + timedelta(seconds=1),
                 values={"executor": "one"}, message="first") == [a]
    assert _move(engine, [b], TI.SCHEDULED, TI.QUEUED, T0 + timedelta(seconds=2),
                 values={"executor": "two"}) == [b]
    with engine.connect() as conn:
        ra, rb = ti_repo.get(conn, a), ti_repo.get(conn, b)
    assert (ra.executor, ra.queued_at, ra.state_message) == ("one", T0 + timedelta(seconds=1),
                                                              "first")
    assert (rb.executor, rb.queued_at, rb.state_message) == ("two", T0 + timedelta(seconds=2),
                                                              None)


def test_a_new_try_is_named_running_then_retrying_and_ends_with_its_duration(
        engine: Engine) -> None:
    a = _setup(engine)["a"]
    t = T0
    for frm, expected in ((TI.NONE, StateName.RUNNING), (TI.UP_FOR_RETRY, StateName.RETRYING)):
        _move(engine, [a], frm, TI.SCHEDULED, t)
        _move(engine, [a], TI.SCHEDULED, TI.QUEUED, t)
        with transaction(engine) as conn:
            changed = door.set_task_instance_state(
                conn, [], fenced=[(a, ti_repo.get(conn, a).try_number)], frm=TI.QUEUED,
                to=TI.RUNNING, actor=Actor.EXECUTOR, now=t, increment_try=True).changed
        assert changed == [a]
        with engine.connect() as conn:
            row = ti_repo.get(conn, a)
        assert row.state_name == expected.value and row.start_date == t
        with transaction(engine) as conn:
            door.set_task_instance_state(conn, a, frm=TI.RUNNING, to=TI.UP_FOR_RETRY,
                                         actor=Actor.WORKER, now=t + timedelta(seconds=90),
                                         try_number=row.try_number)
        with engine.connect() as conn:
            row = ti_repo.get(conn, a)
        assert abs(row.duration - 90.0) < 0.01 and row.end_date == t + timedelta(seconds=90)
        t += timedelta(minutes=5)
    with engine.connect() as conn:
        names = [h.name for h in transitions_log.for_task_instance(conn, a)
                 if h.to_state == "running"]
    assert names == ["Running", "Retrying"]


def test_a_fence_on_another_try_changes_nothing_with_the_reused_statement(
        engine: Engine) -> None:
    ids = _setup(engine)
    a, b = ids["a"], ids["b"]
    _move(engine, [a, b], TI.NONE, TI.SCHEDULED, T0)
    with transaction(engine) as conn:
        first = door.set_task_instance_state(conn, [], fenced=[(a, 0)], frm=TI.SCHEDULED,
                                             to=TI.QUEUED, actor=Actor.SCHEDULER, now=T0)
        second = door.set_task_instance_state(conn, [], fenced=[(b, 7)], frm=TI.SCHEDULED,
                                              to=TI.QUEUED, actor=Actor.SCHEDULER, now=T0)
    assert first.changed == [a] and second.changed == [] and b in second.lost


def test_a_value_that_is_an_expression_of_the_row_is_built_for_the_call(engine: Engine) -> None:
    ids = _setup(engine)
    a, b, c = ids["a"], ids["b"], ids["c"]
    _move(engine, [a, b, c], TI.NONE, TI.SCHEDULED, T0)
    pid = case({a: 11, b: 22}, value=task_instance.c.id, else_=None)
    assert sorted(_move(engine, [a, b], TI.SCHEDULED, TI.QUEUED, T0,
                        values={"pid": pid})) == sorted([a, b])
    with engine.connect() as conn:
        assert (ti_repo.get(conn, a).pid, ti_repo.get(conn, b).pid) == (11, 22)
        assert ti_repo.get(conn, c).state == TI.SCHEDULED.value


def test_the_compare_and_set_looks_up_its_ids_not_every_row_in_the_state(engine: Engine) -> None:
    """On SQLite, ``state = ? AND id IN (…)`` made the planner read every task instance in that
    state through a state index (100,000 in a big run) and filter them by id: each change cost
    as much as the run was big. The door's statements read their rows by primary key."""
    if engine.dialect.name != "sqlite":
        return
    from sqlalchemy import event

    seen: list[tuple[str, object]] = []

    def capture(conn, cursor, statement, parameters, context, executemany):  # type: ignore[no-untyped-def]
        if statement.startswith("UPDATE task_instance"):
            seen.append((statement, parameters))

    ids = _setup(engine)
    event.listen(engine, "before_cursor_execute", capture)
    try:
        _move(engine, [ids["a"], ids["b"]], TI.NONE, TI.SCHEDULED, T0)
        _move(engine, [ids["a"]], TI.SCHEDULED, TI.QUEUED, T0, try_number=0)
        with transaction(engine) as conn:
            door.set_task_instance_state(conn, [], fenced=[(ids["b"], 0)], frm=TI.SCHEDULED,
                                         to=TI.QUEUED, actor=Actor.SCHEDULER, now=T0)
    finally:
        event.remove(engine, "before_cursor_execute", capture)
    assert len(seen) == 3
    with engine.connect() as conn:
        for statement, parameters in seen:
            plan = " ".join(str(r[3]) for r in conn.exec_driver_sql(
                f"EXPLAIN QUERY PLAN {statement}", parameters))  # type: ignore[arg-type]
            assert "state=" not in plan and "SCAN task_instance" not in plan, plan
            assert "PRIMARY KEY" in plan, plan


def test_a_value_of_each_row_is_set_by_the_reused_statement(engine: Engine) -> None:
    """``PerRow`` gives each task instance its own value (the process of each started try) in
    the compare-and-set itself; a second call of the same shape sets its own, and a row without
    a value gets NULL."""
    ids = _setup(engine)
    a, b, c = ids["a"], ids["b"], ids["c"]
    _move(engine, [a, b, c], TI.NONE, TI.SCHEDULED, T0)
    assert sorted(_move(engine, [a, b], TI.SCHEDULED, TI.QUEUED, T0,
                        values={"pid": door.PerRow({a: 11, b: 22})})) == sorted([a, b])
    assert _move(engine, [c], TI.SCHEDULED, TI.QUEUED, T0,
                 values={"pid": door.PerRow({a: 33})}) == [c]
    with engine.connect() as conn:
        pids = {k: ti_repo.get(conn, v).pid for k, v in ids.items()}
    assert pids == {"a": 11, "b": 22, "c": None}


def test_the_history_of_a_batch_is_one_execution_on_postgresql(engine: Engine) -> None:
    """A change of several task instances writes their history rows in one execution on
    PostgreSQL (one array per column), each row as the events say."""
    from sqlalchemy import event

    ids = _setup(engine)
    inserts: list[int] = []

    def count(conn, cursor, statement, parameters, context, executemany):  # type: ignore[no-untyped-def]
        if statement.startswith("INSERT INTO state_transition"):
            inserts.append(len(parameters) if executemany else 1)

    event.listen(engine, "before_cursor_execute", count)
    try:
        _move(engine, list(ids.values()), TI.NONE, TI.SCHEDULED, T0, message="why")
    finally:
        event.remove(engine, "before_cursor_execute", count)
    assert inserts == ([1] if engine.dialect.name == "postgresql" else [3])
    with engine.connect() as conn:
        for task_id, pk in ids.items():
            last = transitions_log.for_task_instance(conn, pk)[-1]
            assert (last.task_id, last.from_state, last.to_state, last.message, last.at) == (
                task_id, "none", "scheduled", "why", T0)

"""``insert_many`` writes the same rows whichever way it sends them (SQLite's executemany,
PostgreSQL's arrays for a few rows or ``COPY`` for many), and its upsert replaces only the rows
whose key exists; the finished tries' history takes rows of different columns in one call."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.exc import DataError

from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.bulk import insert_many
from statewright.db.engine import transaction
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.tables import task_instance_history
from statewright.db.tables_templating import rendered_task_instance_fields as rtif

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
COLUMNS = ("task_instance_id", "try_number", "dag_id", "run_id", "task_id", "rendered_fields")


def _task_instances(engine: Engine, count: int) -> list[int]:
    tasks = [f"t{i}" for i in range(count)]
    with transaction(engine) as conn:
        dag_repo.upsert_dag(conn, {"dag_id": "d", "fileloc": "/x.py", "tasks": [
            {"task_id": t, "upstream": [], "downstream": []} for t in tasks]}, now=T0)
        run = door.create_dag_run(conn, dag_id="d", run_id="r", run_type="manual",
                                  actor=Actor.USER, now=T0)
        return door.create_task_instances(conn, dag_run_id=run, dag_id="d", run_id="r",
                                          rows=[{"task_id": t} for t in tasks],
                                          actor=Actor.USER, now=T0)


def _stored(engine: Engine) -> dict[tuple[int, int], tuple[str, object]]:
    with engine.connect() as conn:
        return {(r.task_instance_id, r.try_number): (r.task_id, r.rendered_fields)
                for r in conn.execute(select(rtif))}


@pytest.mark.parametrize("count", [1, 3, 60])
def test_rows_and_an_upsert_of_some_of_them(engine: Engine, count: int) -> None:
    ids = _task_instances(engine, count)
    assert len(ids) == count
    rows = [(pk, 1, "d", "r", f"t{i}", {"i": i, "none": None, "quote": "it's"})
            for i, pk in enumerate(ids)]
    with transaction(engine) as conn:
        assert insert_many(conn, rtif, COLUMNS, rows, {"created_at": T0}) == count
    again = [(ids[0], 1, "d", "r", "again", [1, 2]), (ids[-1], 2, "d", "r", "new", None)]
    with transaction(engine) as conn:
        insert_many(conn, rtif, COLUMNS, again, {"created_at": T0},
                    update_on=("task_instance_id", "try_number"))
    stored = _stored(engine)
    assert len(stored) == count + 1
    assert stored[(ids[0], 1)] == ("again", [1, 2])
    assert stored[(ids[-1], 2)] == ("new", None)
    for i, pk in enumerate(ids[1:], start=1):
        assert stored[(pk, 1)] == (f"t{i}", {"i": i, "none": None, "quote": "it's"})


def test_history_rows_of_different_columns_in_one_call(engine: Engine) -> None:
    base = {"task_instance_id": 7, "dag_id": "d", "run_id": "r", "task_id": "t",
            "state": "success", "state_name": "Success", "dag_version_id": None}
    with transaction(engine) as conn:
        ti_repo.add_history(conn, [
            {**base, "try_number": 1, "pid": 41, "end_date": T0, "error": None},
            {**base, "try_number": 2, "map_index": 3},  # fewer columns: the rest default
            {**base, "try_number": 3, "pid": 43, "end_date": T0, "error": "boom"},
        ])
    with engine.connect() as conn:
        rows = conn.execute(select(task_instance_history)
                            .order_by(task_instance_history.c.try_number)).all()
    assert [(r.try_number, r.map_index, r.pid, r.end_date, r.error) for r in rows] == [
        (1, -1, 41, T0, None), (2, 3, None, None, None), (3, -1, 43, T0, "boom")]


def test_values_an_array_would_have_to_quote_come_back_unchanged(engine: Engine) -> None:
    """PostgreSQL's arrays travel in binary: no element is quoted or parsed as text."""
    names = ["a,b", "{x}", '"q"', "back\\slash", "", "NULL", "ü ✓", "x" * 250, " pad "]
    ids = _task_instances(engine, len(names))
    rows = [(pk, 1, "d", "r", name, {"v": name}) for pk, name in zip(ids, names, strict=True)]
    with transaction(engine) as conn:
        assert insert_many(conn, rtif, COLUMNS, rows, {"created_at": T0}) == len(names)
    stored = _stored(engine)
    assert [stored[(pk, 1)] for pk in ids] == [(n, {"v": n}) for n in names]


@pytest.mark.parametrize("count", [1, 3, 60])
def test_a_value_longer_than_its_column_is_refused_not_cut(engine: Engine, count: int) -> None:
    """A value past its ``VARCHAR(n)`` is refused on PostgreSQL whichever way the rows travel
    (an array cast to the column's type would cut it without a word); SQLite keeps it whole."""
    ids = _task_instances(engine, count)
    long_id = "t" * 251  # the column is VARCHAR(250)
    rows = [(pk, 1, "d", "r", long_id if i == count - 1 else f"t{i}", {})
            for i, pk in enumerate(ids)]
    if engine.dialect.name == "postgresql":
        with pytest.raises(DataError, match="too long"), transaction(engine) as conn:
            insert_many(conn, rtif, COLUMNS, rows, {"created_at": T0})
        assert _stored(engine) == {}
        return
    with transaction(engine) as conn:
        insert_many(conn, rtif, COLUMNS, rows, {"created_at": T0})
    assert _stored(engine)[(ids[-1], 1)] == (long_id, {})

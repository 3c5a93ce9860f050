"""The grid: runs by tasks in a fixed number of SQL statements, whatever its size."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from api_helpers import add_runs, chain_dag, store_dag
from fastapi.testclient import TestClient
from sqlalchemy import Engine, event

from statewright.core.clock import utcnow
from statewright.core.states import TI
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo


@contextmanager
def count_statements(engine: Engine) -> Iterator[list[str]]:
    seen: list[str] = []

    def before(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if not statement.lstrip().upper().startswith(("BEGIN", "PRAGMA")):
            seen.append(statement)

    event.listen(engine, "before_cursor_execute", before)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", before)


def _grid_dag(engine: Engine, dag_id: str, runs: int, tasks: int) -> None:
    serialized = store_dag(engine, chain_dag(dag_id, tasks))
    add_runs(engine, serialized, [f"{dag_id}_{i:02d}" for i in range(runs)])


def test_grid_statements_do_not_grow_with_runs_or_tasks(client: TestClient,
                                                        engine: Engine) -> None:
    _grid_dag(engine, "small", runs=2, tasks=3)
    _grid_dag(engine, "large", runs=20, tasks=30)
    client.get("/api/v1/dags/small/grid")  # warm up (first connection, caches)

    with count_statements(engine) as small:
        small_grid = client.get("/api/v1/dags/small/grid").json()
    with count_statements(engine) as large:
        large_grid = client.get("/api/v1/dags/large/grid").json()
    # the credentials are read once per request, whatever the route
    small, large = ([q for q in qs if "auth_token" not in q] for qs in (small, large))

    assert len(small_grid["dag_runs"]) == 2 and len(small_grid["rows"]) == 3
    assert len(large_grid["dag_runs"]) == 20 and len(large_grid["rows"]) == 30
    assert all(len(r["instances"]) == 20 for r in large_grid["rows"])
    assert len(large) == len(small) <= 4, large
    # one aggregated query reads every task instance of the page
    ti_queries = [s for s in large if "FROM task_instance" in s]
    assert len(ti_queries) == 1


def test_grid_cells_and_paging(client: TestClient, engine: Engine) -> None:
    _grid_dag(engine, "g", runs=5, tasks=2)
    with transaction(engine) as conn:
        run = run_repo.get_by_run_id(conn, "g", "g_04")
        t0 = ti_repo.get_by_key(conn, run.id, "t00")
        now = utcnow()
        door.set_task_instance_state(conn, t0.id, frm=TI.NONE, to=TI.SCHEDULED,
                                     actor=Actor.SCHEDULER, now=now)
    grid = client.get("/api/v1/dags/g/grid", params={"limit": 2}).json()
    assert grid["total_entries"] == 5 and grid["limit"] == 2 and grid["offset"] == 0
    assert [r["dag_run_id"] for r in grid["dag_runs"]] == ["g_03", "g_04"]  # oldest → newest
    assert [r["task_id"] for r in grid["rows"]] == ["t00", "t01"]
    newest = grid["rows"][0]["instances"][1]
    assert newest["state"] == "scheduled" and newest["state_name"] == "Scheduled"
    assert newest["try_number"] == 0
    older = client.get("/api/v1/dags/g/grid", params={"limit": 2, "offset": 4}).json()
    assert [r["dag_run_id"] for r in older["dag_runs"]] == ["g_00"]


def test_a_task_gone_from_the_dag_still_shows(client: TestClient, engine: Engine) -> None:
    _grid_dag(engine, "shrinks", runs=1, tasks=3)
    store_dag(engine, chain_dag("shrinks", 2))
    rows = client.get("/api/v1/dags/shrinks/grid").json()["rows"]
    assert [(r["task_id"], r["in_dag"]) for r in rows] == [
        ("t00", True), ("t01", True), ("t02", False)]


def test_grid_of_a_dag_without_runs_and_of_an_unknown_dag(client: TestClient,
                                                          engine: Engine) -> None:
    store_dag(engine, chain_dag("fresh", 2))
    grid = client.get("/api/v1/dags/fresh/grid").json()
    assert grid["dag_runs"] == [] and [r["instances"] for r in grid["rows"]] == [[], []]
    assert client.get("/api/v1/dags/nope/grid").status_code == 404
    assert client.get("/api/v1/dags/fresh/grid", params={"limit": 0}).status_code == 422

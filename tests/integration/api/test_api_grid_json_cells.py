"""On SQLite the compact grid's plain rows are written by the database as JSON text
(``db/repositories/grid_packed.py``) and put in the answer as they are; the other rows (a task
missing from a run, one no longer in the DAG, a mapped one) are read cell by cell. Either way
the answer, and the grid the DAG page embeds, decode to the default grid, row for row and in
the same order, a message with quotes, markup and accents included."""

from __future__ import annotations

import json
import re
from typing import Any

from api_helpers import add_runs, store_dag
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from test_api_grid_compact import assert_same_grid, decode
from tests.noop import NoopOperator

from statewright.api import grid_reads
from statewright.api.grid_reads import JsonCells
from statewright.config import Settings
from statewright.sdk import DAG, PythonOperator, task

MESSAGE = 'ValueError: <b>"bad" row</b> & café, \\ back slash'  # (a tab: a space)


def _fail() -> None:
    raise ValueError('<b>"bad" row</b> & café, \\ back\tslash')


def _dag(*task_ids: str) -> DAG:
    with DAG("json_cells") as dag:
        for task_id in task_ids:
            if task_id == "broken":
                PythonOperator(task_id=task_id, python_callable=_fail)
            else:
                NoopOperator(task_id=task_id)

        @task
        def double(x: int) -> int:
            return 2 * x

        double.expand(x=[1, 2])
    return dag


def test_database_written_rows_decode_to_the_default_grid(client: TestClient, engine: Engine,
                                                          settings: Settings) -> None:
    _dag("kept", "broken", "dropped").test(engine=engine, logs_folder=settings.logs_folder)
    add_runs(engine, store_dag(engine, _dag("kept", "added", "broken")), ["later"])
    default = client.get("/api/v1/dags/json_cells/grid").json()
    res = client.get("/api/v1/dags/json_cells/grid", params={"format": "compact"})
    assert res.status_code == 200
    compact = res.json()
    assert_same_grid(default, compact)
    rows = {r["task_id"]: r for r in decode(compact)["rows"]}
    assert [r["task_id"] for r in compact["rows"]] == [r["task_id"] for r in default["rows"]]
    assert set(rows) == {"kept", "added", "broken", "double", "dropped"}
    assert rows["dropped"]["in_dag"] is False and rows["double"]["is_mapped"] is True
    assert rows["added"]["instances"][0] is None  # not in the first run
    assert rows["broken"]["instances"][0]["state_message"] == MESSAGE
    assert rows["double"]["instances"][0]["map_count"] == 2
    with engine.connect() as conn:  # which rows the database wrote (SQLite only)
        body = grid_reads.grid(conn, "json_cells", limit=25, offset=0, compact=True)
    written = {r["task_id"] for r in body["rows"] if isinstance(r["instances"], JsonCells)}
    assert written == ({"kept", "broken"} if engine.dialect.name == "sqlite" else set())

    page = client.get("/dags/json_cells")
    m = re.search(r'<script id="page-data" type="application/json">(.*?)</script>', page.text,
                  re.S)
    assert m and "<b>" not in m.group(1)  # markup in a message is escaped in the page
    embedded = json.loads(m.group(1))["grid"]
    assert_same_grid(default, embedded)
    assert embedded["rows"] == compact["rows"]


def _rows_of(body: dict[str, Any]) -> list[str]:
    return [r["task_id"] for r in body["rows"]]


def test_a_grid_without_runs_and_a_page_of_old_runs(client: TestClient, engine: Engine,
                                                    settings: Settings) -> None:
    store_dag(engine, _dag("kept"))
    empty = client.get("/api/v1/dags/json_cells/grid", params={"format": "compact"}).json()
    assert _rows_of(empty) == ["kept", "double"] and empty["states"] == []
    assert all(r["instances"] == [] for r in empty["rows"])
    for _ in range(3):
        _dag("kept", "broken").test(engine=engine, logs_folder=settings.logs_folder)
    params = {"limit": 2, "offset": 1}
    default = client.get("/api/v1/dags/json_cells/grid", params=params).json()
    compact = client.get("/api/v1/dags/json_cells/grid",
                         params={**params, "format": "compact"}).json()
    assert_same_grid(default, compact)
    assert len(compact["dag_runs"]) == 2

"""The grid's compact encoding (``?format=compact``, what the web UI reads): decoded, it is the
default grid, cell by cell (dates to the millisecond), on a plain DAG and on one with mapped
tasks and task groups; the DAG page embeds it; an unknown format is a 422."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from typing import Any

import pytest
from api_helpers import add_runs, failing_dag, store_dag
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from test_api_grid import count_statements
from tests.noop import NoopOperator

from statewright.config import Settings
from statewright.core.clock import utcnow
from statewright.core.states import TI
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.engine import transaction
from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.sdk import DAG, PythonOperator, TaskGroup, task, task_group

EPOCH = datetime.fromisoformat("1970-01-01T00:00:00+00:00")


def decode(compact: dict[str, Any]) -> dict[str, Any]:
    """The compact grid with object cells (as the web UI's grid_cells.js decodes it)."""
    fields, states = compact["cell_fields"], compact["states"]

    def cell(values: list[Any] | None) -> dict[str, Any] | None:
        if values is None:
            return None
        out: dict[str, Any] = dict.fromkeys(fields)
        out.update(zip(fields, values, strict=False))
        out["state"], out["state_name"] = states[values[0]]
        return out

    rest = {k: v for k, v in compact.items() if k not in ("cell_fields", "states")}
    return {**rest, "rows": [{**r, "instances": [cell(c) for c in r["instances"]]}
                             for r in compact["rows"]]}


def _ms(iso: str | None) -> int | None:
    return None if iso is None else (datetime.fromisoformat(iso) - EPOCH) // timedelta(
        milliseconds=1)


def assert_same_grid(default: dict[str, Any], compact: dict[str, Any]) -> None:
    assert set(compact) == set(default) | {"cell_fields", "states"}
    decoded = decode(compact)
    for key in default.keys() - {"rows"}:
        assert decoded[key] == default[key], key
    assert len(decoded["rows"]) == len(default["rows"])
    for mine, theirs in zip(decoded["rows"], default["rows"], strict=True):
        assert {**mine, "instances": None} == {**theirs, "instances": None}
        for got, want in zip(mine["instances"], theirs["instances"], strict=True):
            assert (got is None) == (want is None), (mine["task_id"], got, want)
            if want is None:
                continue
            assert got is not None and set(got) == set(want)
            for key in ("start_date", "end_date"):  # epoch ms, rounded: within 1 ms
                assert (got[key] is None) == (want[key] is None), key
                if want[key] is not None:
                    assert abs(got[key] - _ms(want[key])) <= 1, (key, got, want)
            if want["duration"] is not None:
                assert got["duration"] == pytest.approx(want["duration"], abs=1e-3)
            same = set(want) - {"start_date", "end_date", "duration"}
            assert {k: got[k] for k in same} == {k: want[k] for k in same}


def _both(client: TestClient, dag_id: str, **params: Any) -> tuple[dict[str, Any],
                                                                  dict[str, Any]]:
    url = f"/api/v1/dags/{dag_id}/grid"
    default = client.get(url, params=params).json()
    res = client.get(url, params={**params, "format": "compact"})
    assert res.status_code == 200, res.text
    return default, res.json()


def _fail() -> None:
    raise ValueError("boom: " + "x" * 300)  # the grid cuts a message to 200 characters


def test_compact_grid_of_a_plain_dag_is_the_default_grid(client: TestClient, engine: Engine,
                                                         settings: Settings) -> None:
    failing_dag("plain").test(engine=engine, logs_folder=settings.logs_folder)
    add_runs(engine, store_dag(engine, failing_dag("plain")), ["queued_1", "queued_2"])
    with transaction(engine) as conn:  # one cell scheduled: a try of 0, no dates
        run = run_repo.get_by_run_id(conn, "plain", "queued_2")
        ti = ti_repo.get_by_key(conn, run.id, "extract")
        door.set_task_instance_state(conn, ti.id, frm=TI.NONE, to=TI.SCHEDULED,
                                     actor=Actor.SCHEDULER, now=utcnow())
    default, compact = _both(client, "plain")
    assert_same_grid(default, compact)
    assert compact["cell_fields"][:3] == ["state", "try_number", "max_tries"]
    assert ["failed", "Failed"] in compact["states"]
    extract = next(r for r in compact["rows"] if r["task_id"] == "extract")
    failed, _, scheduled = extract["instances"]
    assert compact["states"][failed[0]] == ["failed", "Failed"] and failed[1] == 2
    assert isinstance(failed[3], int) and failed[4] >= failed[3]  # epoch milliseconds
    assert compact["states"][scheduled[0]][0] == "scheduled" and len(scheduled) == 3
    # paging keeps the shape
    assert_same_grid(*_both(client, "plain", limit=1, offset=1))


def _mixed_dag() -> DAG:
    with DAG("mixed") as dag:
        @task
        def add_one(x: int) -> int:
            return x + 1

        @task_group
        def mapped(x: int) -> Any:
            return add_one(x)

        @task
        def total(values: Any) -> int:
            return sum(values)

        with TaskGroup("outer"):
            NoopOperator(task_id="a")
            with TaskGroup("inner"):
                PythonOperator(task_id="b", python_callable=_fail)
        total(mapped.expand(x=[1, 2, 3]))
    return dag


def test_compact_grid_with_mapped_tasks_and_task_groups(client: TestClient, engine: Engine,
                                                        settings: Settings) -> None:
    for _ in range(2):
        _mixed_dag().test(engine=engine, logs_folder=settings.logs_folder)
    default, compact = _both(client, "mixed")
    assert_same_grid(default, compact)
    rows = {r["task_id"]: r for r in decode(compact)["rows"]}
    cell = rows["mapped.add_one"]["instances"][-1]
    assert (cell["state"], cell["map_count"], cell["state_counts"]) == (
        "success", 3, {"success": 3})
    message = rows["outer.inner.b"]["instances"][-1]["state_message"]
    assert message.startswith("ValueError: boom") and len(message) == 200
    groups = {g["group_id"]: g["instances"][-1] for g in compact["task_groups"]}
    assert groups["outer"] == {"state": "failed", "counts": {"failed": 1, "success": 1}}


def test_compact_grid_reads_in_as_many_statements(client: TestClient, engine: Engine) -> None:
    add_runs(engine, store_dag(engine, failing_dag("counted")), ["r1", "r2", "r3"])
    client.get("/api/v1/dags/counted/grid")  # warm up
    with count_statements(engine) as default:
        client.get("/api/v1/dags/counted/grid")
    with count_statements(engine) as compact:
        client.get("/api/v1/dags/counted/grid", params={"format": "compact"})
    assert len(compact) == len(default)
    assert len([s for s in compact if "FROM task_instance" in s]) == 1


def test_an_unknown_format_is_refused(client: TestClient, engine: Engine) -> None:
    store_dag(engine, failing_dag("formats"))
    res = client.get("/api/v1/dags/formats/grid", params={"format": "tiny"})
    assert res.status_code == 422
    body = res.json()
    assert "format" in body["detail"] and "compact" in json.dumps(body)
    assert client.get("/api/v1/dags/formats/grid", params={"format": "default"}).status_code == 200


def test_the_dag_page_embeds_the_compact_grid(client: TestClient, engine: Engine,
                                              settings: Settings) -> None:
    _mixed_dag().test(engine=engine, logs_folder=settings.logs_folder)
    page = client.get("/dags/mixed")
    m = re.search(r'<script id="page-data" type="application/json">(.*?)</script>', page.text,
                  re.S)
    assert m and "/static/grid_cells.js" in page.text
    embedded = json.loads(m.group(1))["grid"]
    default, _ = _both(client, "mixed", limit=embedded["limit"])
    assert_same_grid(default, embedded)

"""The REST API's templating and params: rendered fields per try, a DAG's params, and a trigger
whose conf does not satisfy the params (400 naming each field, no run created)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from api_helpers import run_url, store_dag
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from tests.noop import NoopOperator

from statewright.sdk import DAG, BashOperator, Param

WHEN = datetime(2024, 3, 5, tzinfo=UTC)


def _params_dag() -> DAG:
    with DAG("forms", schedule=None, params={
        "n": Param(2, type="integer", minimum=1, description="How many"),
        "mode": Param("fast", enum=["fast", "slow"], title="Mode"),
        "who": Param(type="string"),
        "plain": [1, 2],
    }) as dag:
        NoopOperator(task_id="a")
    return dag


def test_rendered_fields_of_each_try(client: TestClient, engine: Engine) -> None:
    with DAG("shown", schedule=None) as dag:
        BashOperator(task_id="b", bash_command="echo {{ ds }} {{ ti.try_number }}",
                     env={"DAY": "{{ ds_nodash }}"}, append_env=True)
    result = dag.test(engine=engine, logical_date=WHEN)
    url = run_url("shown", result.run_id) + "/taskInstances/b/renderedFields"
    body = client.get(url).json()
    assert body["try_number"] == 1
    assert body["rendered_fields"] == {"bash_command": "echo 2024-03-05 1",
                                       "env": {"DAY": "20240305"}, "cwd": None}
    assert [t["try_number"] for t in body["tries"]] == [1]
    assert client.get(url, params={"try_number": 1}).json()["rendered_fields"] == body[
        "rendered_fields"]
    missing = client.get(url, params={"try_number": 3})
    assert missing.status_code == 404 and "Try 3" in missing.json()["detail"]
    assert client.get(run_url("shown", result.run_id) + "/taskInstances/zz/renderedFields"
                      ).status_code == 404


def test_a_dags_params_with_their_schemas(client: TestClient, engine: Engine) -> None:
    store_dag(engine, _params_dag())
    params = client.get("/api/v1/dags/forms/params").json()["params"]
    assert params["n"] == {"value": 2, "has_default": True, "description": "How many",
                           "schema": {"type": "integer", "minimum": 1}}
    assert params["mode"]["schema"] == {"enum": ["fast", "slow"], "title": "Mode"}
    assert params["who"]["has_default"] is False
    assert params["plain"] == {"value": [1, 2], "has_default": True, "description": None,
                               "schema": {}}


def test_a_trigger_with_bad_conf_is_refused_naming_each_param(
        client: TestClient, engine: Engine, snapshot: Callable[[], tuple[int, int, int]]) -> None:
    store_dag(engine, _params_dag())
    before = snapshot()
    res = client.post("/api/v1/dags/forms/dagRuns",
                      json={"conf": {"n": "two", "mode": "medium", "who": "me"}})
    assert res.status_code == 400
    body = res.json()
    assert [e["param"] for e in body["errors"]] == ["n", "mode"]
    assert "'two' is not of type 'integer'" in body["errors"][0]["msg"]
    assert "param 'mode'" in body["detail"] and "Nothing was created" in body["detail"]
    assert snapshot() == before
    missing = client.post("/api/v1/dags/forms/dagRuns", json={"conf": {}})
    assert missing.status_code == 400 and missing.json()["errors"][0]["param"] == "who"
    ok = client.post("/api/v1/dags/forms/dagRuns", json={"conf": {"who": "me", "n": 5}})
    assert ok.status_code == 200, ok.text
    assert ok.json()["conf"] == {"who": "me", "n": 5}

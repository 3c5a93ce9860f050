"""Rendered template fields of each map index of a mapped task
(``.../taskInstances/{task_id}/{map_index}/renderedFields``, as the other mapped routes), of a
flow's task run (none: said so), and clear 404s for bad input."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from api_helpers import run_url
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from tests.noop import NoopOperator

from statewright.config import Settings
from statewright.flows import flow, task, use_backend
from statewright.sdk import DAG, BashOperator
from statewright.services.flows.recorder import DbBackend


def _mapped_run(engine: Engine) -> str:
    with DAG("rendered_mapped", schedule=None, params={"word": "hey"}) as dag:
        BashOperator.partial(task_id="say", bash_command="echo {{ params.word }}-{{ ti.map_index }}"
                             ).expand(env=[{"N": "0"}, {"N": "1"}, {"N": "2"}])
        BashOperator(task_id="plain", bash_command="echo {{ run_id }}")
    result = dag.test(engine=engine)
    assert result.state.value == "success"
    return str(result.run_id)


def test_each_map_index_has_its_rendered_fields(client: TestClient, engine: Engine) -> None:
    run_id = _mapped_run(engine)
    base = run_url("rendered_mapped", run_id) + "/taskInstances"
    for i in range(3):
        body = client.get(f"{base}/say/{i}/renderedFields").json()
        assert (body["map_index"], body["try_number"], body["dag_kind"]) == (i, 1, "dag")
        assert body["rendered"] is True
        assert body["rendered_fields"]["bash_command"] == f"echo hey-{i}"
        assert body["rendered_fields"]["env"] == {"N": str(i)}
        one = client.get(f"{base}/say/{i}/renderedFields", params={"try_number": 1}).json()
        assert one["rendered_fields"] == body["rendered_fields"]
    plain = client.get(f"{base}/plain/renderedFields").json()
    assert plain["map_index"] == -1
    assert plain["rendered_fields"]["bash_command"] == f"echo {run_id}"


def test_bad_input_is_a_404_naming_what_is_missing(client: TestClient, engine: Engine) -> None:
    run_id = _mapped_run(engine)
    base = run_url("rendered_mapped", run_id) + "/taskInstances"
    out_of_range = client.get(f"{base}/say/7/renderedFields")
    assert out_of_range.status_code == 404
    detail = out_of_range.json()["detail"]
    assert "map index 7" in detail and "map indexes 0 to 2" in detail
    no_index = client.get(f"{base}/say/renderedFields")
    assert no_index.status_code == 404 and "is mapped" in no_index.json()["detail"]
    unknown_run = client.get(run_url("rendered_mapped", "nope") + "/taskInstances/say/0/"
                             "renderedFields")
    assert unknown_run.status_code == 404 and "nope" in unknown_run.json()["detail"]
    bad_try = client.get(f"{base}/say/1/renderedFields", params={"try_number": 4})
    assert bad_try.status_code == 404
    assert "Try 4 of task 'say[1]'" in bad_try.json()["detail"]
    assert client.get(f"{base}/say/-1/renderedFields").status_code in (404, 422)
    assert client.get(f"{base}/say/1/renderedFields",
                      params={"try_number": 0}).status_code == 422


@task
def shout(word: str) -> str:
    return word.upper()


@flow
def loud(word: str = "hi") -> str:
    return shout(word)


@pytest.fixture
def recorded(engine: Engine, settings: Settings) -> Iterator[None]:
    use_backend(lambda: DbBackend(engine, logs_folder=settings.logs_folder))
    yield
    use_backend(None)


def test_a_flow_task_run_says_it_has_no_template_fields(
        client: TestClient, engine: Engine, recorded: None) -> None:
    assert loud("yo") == "YO"
    runs = client.get("/api/v1/dags/loud/dagRuns").json()["dag_runs"]
    run_id = runs[0]["dag_run_id"]
    tis = client.get(run_url("loud", run_id) + "/taskInstances").json()["task_instances"]
    assert tis, "the flow's task run is listed"
    body = client.get(run_url("loud", run_id) + f"/taskInstances/{tis[0]['task_id']}/"
                      "renderedFields").json()
    assert body["dag_kind"] == "flow" and body["rendered"] is False
    assert body["rendered_fields"] == {} and body["tries"] == []
    one_try = client.get(run_url("loud", run_id) + f"/taskInstances/{tis[0]['task_id']}/"
                         "renderedFields", params={"try_number": 1})
    assert one_try.status_code == 200 and one_try.json()["dag_kind"] == "flow"


def test_a_try_without_template_fields_is_not_a_404(client: TestClient, engine: Engine) -> None:

    with DAG("rendered_none", schedule=None) as dag:
        NoopOperator(task_id="nothing")
    run_id = dag.test(engine=engine).run_id
    url = run_url("rendered_none", run_id) + "/taskInstances/nothing/renderedFields"
    body = client.get(url, params={"try_number": 1}).json()
    assert (body["try_number"], body["rendered"], body["rendered_fields"]) == (1, False, {})
    assert client.get(url, params={"try_number": 2}).status_code == 404

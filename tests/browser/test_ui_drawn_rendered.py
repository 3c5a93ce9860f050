"""The Rendered tab of a mapped task's instances and of a flow's task run, in Chromium: each map
index shows what it rendered, the chosen map index stays in the URL (a reload opens it again),
a flow's task run says it has no template fields, and nothing logs a console error."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, quote, urlparse

import pytest
from ui_harness import UiServer

from statewright.flows import flow, task, use_backend
from statewright.sdk import DAG, BashOperator
from statewright.services.flows.recorder import DbBackend


@pytest.fixture
def quiet(page: Any) -> Iterator[Any]:
    """The page; at the end, no console error (a 404 the UI asked for is one)."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400
            else None)
    yield page
    assert errors == []


def _mapped_run(ui_server: UiServer) -> str:
    with DAG("drawn_rendered", schedule=None, params={"word": "hey"}) as dag:
        BashOperator.partial(task_id="say", bash_command="echo {{ params.word }}-{{ ti.map_index }}"
                             ).expand(env=[{"N": "0"}, {"N": "1"}, {"N": "2"}])
    result = dag.test(engine=ui_server.engine, logs_folder=ui_server.logs_folder)
    assert result.state.value == "success"
    return str(result.run_id)


def _rendered_command(page: Any) -> str:
    page.click("#panel-rendered-tab")
    cell = page.locator("#panel-rendered tr[data-field='bash_command'] pre")
    cell.wait_for()
    return str(cell.inner_text())


def test_each_map_index_shows_what_it_rendered_and_stays_in_the_url(
        quiet: Any, ui_server: UiServer) -> None:
    page = quiet
    run_id = _mapped_run(ui_server)
    page.goto(ui_server.url + "/dags/drawn_rendered")
    page.locator("table.grid th.task[data-task-id='say'] .map-toggle").click()
    page.locator("table.grid button.cell[data-task-id='say'][data-map-index='1']").click()
    page.locator("#panel-task-id").filter(has_text="say [1]").wait_for()
    assert _rendered_command(page) == "echo hey-1"
    query = parse_qs(urlparse(page.url).query)
    assert query["map_index"] == ["1"] and query["task_id"] == ["say"]
    page.reload()
    page.locator("#panel-task-id").filter(has_text="say [1]").wait_for()
    assert _rendered_command(page) == "echo hey-1"
    # the run page: a map index picked in its list is in its URL too
    page.goto(f"{ui_server.url}/dags/drawn_rendered/runs/{quote(run_id, safe='')}")
    page.locator("#tis tbody tr[data-task-id='say'][data-map-index='2']").click()
    page.locator("#panel-task-id").filter(has_text="say [2]").wait_for()
    assert _rendered_command(page) == "echo hey-2"
    assert parse_qs(urlparse(page.url).query)["map_index"] == ["2"]
    page.reload()
    page.locator("#panel-task-id").filter(has_text="say [2]").wait_for()
    assert page.locator("#tis tbody tr.selected").get_attribute("data-map-index") == "2"
    # the task-instance page of a map index
    page.goto(f"{ui_server.url}/dags/drawn_rendered/runs/{quote(run_id, safe='')}/tasks/say"
              "?map_index=0")
    page.locator("#panel-task-id").filter(has_text="say [0]").wait_for()
    assert _rendered_command(page) == "echo hey-0"


@task
def shout(word: str) -> str:
    return word.upper()


@flow
def drawn_loud(word: str = "hi") -> str:
    return shout(word)


def test_a_flow_task_run_says_it_has_no_template_fields(quiet: Any,
                                                        ui_server: UiServer) -> None:
    page = quiet
    use_backend(lambda: DbBackend(ui_server.engine, logs_folder=ui_server.logs_folder))
    try:
        assert drawn_loud("yo") == "YO"
    finally:
        use_backend(None)
    page.goto(ui_server.url + "/dags/drawn-loud")
    page.locator("table.grid a.runbar").first.click()
    page.locator("#tis tbody tr").first.click()
    page.locator("#panel-state").wait_for()
    page.click("#panel-rendered-tab")
    page.locator("#rendered-none").wait_for()
    assert "no template fields" in page.inner_text("#rendered-none")
    assert "rendered no fields" not in page.inner_text("#panel-rendered")

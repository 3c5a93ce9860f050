"""The trigger dialog as a form built from a DAG's params, and the rendered fields of a try, in
Chromium."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import httpx
from ui_harness import UiServer

from statewright.core.clock import utcnow
from statewright.db.engine import transaction
from statewright.db.repositories import dags as dag_repo
from statewright.sdk import DAG, BashOperator, EmptyOperator, Param


def _store(ui_server: UiServer, dag: DAG) -> None:
    with transaction(ui_server.engine) as conn:
        dag_repo.upsert_dag(conn, dag.serialize(), now=utcnow())
        dag_repo.set_paused(conn, dag.dag_id, False)


def _params_dag() -> DAG:
    with DAG("reports", schedule=None, params={
        "days": Param(7, type="integer", minimum=1, maximum=30, title="Days back",
                      description="How many days the report covers"),
        "region": Param("eu", enum=["eu", "us", "apac"]),
        "dry_run": Param(False, type="boolean"),
        "owner": Param(type="string", description="<b>not bold</b>"),
        "options": {"fmt": "csv"},
    }) as dag:
        EmptyOperator(task_id="build")
    return dag


def test_trigger_form_from_params(page: Any, ui_server: UiServer) -> None:
    _store(ui_server, _params_dag())
    page.goto(ui_server.url + "/dags/reports")
    page.click("#dag-trigger")
    page.locator("#param-days").wait_for()
    assert page.input_value("#param-days") == "7"
    assert page.locator("#param-region option").all_inner_texts() == ["eu", "us", "apac"]
    assert page.locator("#param-dry_run").get_attribute("type") == "checkbox"
    assert "How many days the report covers" in page.inner_text("#trigger-params")
    assert "<b>not bold</b>" in page.inner_text("#trigger-params")  # text, not HTML
    assert page.locator("#trigger-params b").count() == 0
    assert "Days back" in page.inner_text("#trigger-params")
    assert not page.locator("#trigger-json").evaluate("d => d.open")

    page.click("#trigger-submit")  # owner has no default: refused in the browser
    assert page.inner_text("#param-owner-error") == "A value is required."
    assert "Some params are not valid" in page.inner_text("#trigger-error")
    page.fill("#param-owner", "ana")
    page.fill("#param-days", "40")
    assert page.inner_text("#param-days-error") == "Must be at most 30."
    page.fill("#param-days", "14")
    assert page.inner_text("#param-days-error") == ""
    page.select_option("#param-region", label="us")
    page.check("#param-dry_run")
    conf = json.loads(page.input_value("#trigger-conf"))
    assert conf == {"days": 14, "region": "us", "dry_run": True, "owner": "ana",
                    "options": {"fmt": "csv"}}

    # The JSON view edits the same conf; the server's validation shows under the field.
    page.click("#trigger-json summary")
    page.fill("#trigger-conf", json.dumps({**conf, "days": "lots"}))
    assert page.input_value("#param-owner") == "ana"
    page.fill("#trigger-run-id", "from_the_form")
    page.click("#trigger-submit")
    page.locator("#param-days-error").filter(has_text="is not of type 'integer'").wait_for()
    assert "param 'days'" in page.inner_text("#trigger-error")
    assert httpx.get(ui_server.url + "/api/v1/dags/reports/dagRuns/from_the_form",
                     headers=ui_server.headers).status_code == 404

    page.fill("#trigger-conf", json.dumps(conf))
    page.click("#trigger-submit")
    page.locator("#toast.show").wait_for()
    run = httpx.get(ui_server.url + "/api/v1/dags/reports/dagRuns/from_the_form",
                    headers=ui_server.headers).json()
    assert run["conf"] == conf


def test_a_dag_without_params_keeps_the_json_box(page: Any, ui_server: UiServer) -> None:
    page.goto(ui_server.url + "/dags/orders")
    page.click("#dag-trigger")
    page.locator("#trigger-conf").wait_for()
    assert page.locator("#trigger-json").evaluate("d => d.open")
    assert page.locator("#trigger-params").is_hidden()


def test_the_panel_shows_what_a_try_rendered(page: Any, ui_server: UiServer) -> None:
    with DAG("templated", schedule=None) as dag:
        BashOperator(task_id="say", bash_command="echo '{{ ds }} <i>{{ run_id }}</i>'")
    result = dag.test(engine=ui_server.engine,
                      logical_date=datetime(2024, 3, 5, tzinfo=UTC), run_id="r1")
    assert result.states == {"say": "success"}
    page.goto(f"{ui_server.url}/dags/templated/runs/{quote('r1', safe='')}/tasks/say")
    page.locator("#panel-log").wait_for()
    assert page.locator("#panel-rendered").is_hidden()  # the log shows first
    page.click("#panel-rendered-tab")
    cell = page.locator("#panel-rendered tr[data-field='bash_command'] pre")
    cell.wait_for()
    assert page.locator("#panel-log").is_hidden()
    assert cell.inner_text() == "echo '2024-03-05 <i>r1</i>'"
    assert page.locator("#panel-rendered i").count() == 0

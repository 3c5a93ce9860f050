"""Every view and tab of the web UI on a DAG with a task group, a mapped task named by its
``map_index_template``, a templated task and a failure with a retry (read from a file in a DAGs
folder, so its Code page has a source), a task awaiting a person's input and a flow run, in
Chromium at 1440 px: no console error, no CSP violation, no failed request anywhere, and each
view draws what it is for."""

from __future__ import annotations

import runpy
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from page_watch import listen
from sqlalchemy import select
from tests.hitl_helpers import drive
from ui_harness import UiServer

from statewright.db.tables import dag_run
from statewright.flows import flow, task, use_backend
from statewright.sdk import DAG, HITLOperator
from statewright.services.dag_processor.processor import DagProcessor
from statewright.services.flows.recorder import DbBackend

SHOWCASE = '''from datetime import timedelta

from statewright.sdk import DAG, BashOperator, PythonOperator, TaskGroup, task


def _check():
    print("checking the amount column")
    raise ValueError("column 'amount' has 3 null values")


with DAG("showcase", schedule=None, doc_md="# Showcase\\n\\nEvery view, **drawn**.") as dag:
    with TaskGroup("prep"):
        extract = BashOperator(task_id="extract", bash_command="echo rows of {{ ds }}")
        check = PythonOperator(task_id="check", python_callable=_check, retries=1,
                               retry_delay=timedelta(seconds=0))

    @task(map_index_template="{{ task.op_kwargs['path'] }}")
    def load(path: str) -> str:
        return path.upper()

    extract >> check
    extract >> load.expand(path=["orders.csv", "users.csv"])
'''


@task
def _count(n: int) -> int:
    return n


@flow
def showcase_flow(days: int = 7) -> int:
    return _count(days)


@pytest.fixture(scope="module")
def showcase(ui_server: UiServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The showcase DAG's failed run, a request for input and a flow run; their run ids."""
    folder = tmp_path_factory.mktemp("dags")
    (folder / "showcase.py").write_text(SHOWCASE)
    dag = runpy.run_path(str(folder / "showcase.py"))["dag"]
    run = dag.test(engine=ui_server.engine, logs_folder=ui_server.logs_folder)
    assert run.state.value == "failed"
    assert DagProcessor(ui_server.engine, folder).run_once().errors == {}  # its source
    with DAG("showcase_hitl", schedule=None) as asking:
        HITLOperator(task_id="ask", subject="Ship it?", options=["Yes", "No"],
                     body="Totals are **final**.")
    driven = drive(ui_server.engine, asking, tmp_path_factory.mktemp("hitl"))
    driven.settle()
    assert driven.states() == {"ask": "awaiting_input"}
    use_backend(lambda: DbBackend(ui_server.engine, logs_folder=ui_server.logs_folder))
    try:
        assert showcase_flow() == 7
    finally:
        use_backend(None)
    with ui_server.engine.connect() as conn:
        flow_run = conn.execute(select(dag_run.c.run_id).where(
            dag_run.c.dag_id == "showcase-flow")).scalar_one()
    return {"run": run.run_id, "hitl": driven.run_id, "flow": flow_run}


@pytest.fixture
def watched(page: Any) -> Iterator[Any]:
    """The page at 1440 px; at the end, no console error, CSP violation or failed request."""
    problems = listen(page)
    yield page
    problems += [f"CSP {v}" for v in page.evaluate("window.__csp || []")]
    assert problems == [], "\n".join(problems)


def _visit(page: Any, url: str, selector: str) -> None:
    """Open ``url``; wait for ``selector`` and the network to rest; keep its CSP report."""
    csp = page.evaluate("window.__csp || []") if page.url.startswith("http") else []
    page.goto(url)
    page.locator(selector).first.wait_for()
    page.wait_for_load_state("networkidle")
    assert csp == [], csp


def test_every_tab_of_the_dag_and_its_runs(watched: Any, ui_server: UiServer,
                                           showcase: dict[str, str]) -> None:
    page, base = watched, ui_server.url
    _visit(page, base + "/", "#dags tbody tr")
    _visit(page, base + "/dags/showcase", "table.grid button.cell")
    rows = page.eval_on_selector_all(
        "table.grid tbody tr", "trs => trs.map((tr) => tr.dataset.groupId"
        " || tr.querySelector('th.task').dataset.taskId)")
    assert rows == ["prep", "prep.extract", "prep.check", "load"]  # the group above its tasks
    page.click("table.grid th.task[data-task-id='load'] .map-toggle")
    names = page.locator("table.grid th.map-index[data-task-id='load'] .map-index-name")
    names.nth(1).wait_for()
    assert names.all_inner_texts() == ["orders.csv", "users.csv"]
    page.click("#view-graph")
    page.locator("#graph g.graph-node").first.wait_for()
    page.click("#view-details")
    page.locator("#doc-md h1", has_text="Showcase").wait_for()
    page.click("#view-durations")
    page.locator("#durations-chart canvas").wait_for()
    page.click("#view-calendar")
    page.locator("#calendar-chart .cal-day").first.wait_for()
    page.click("#view-grid")
    page.wait_for_load_state("networkidle")
    _visit(page, base + "/dags/showcase/code", "#code-view .highlight")
    assert "echo rows of {{ ds }}" in page.inner_text("#code-view")
    run = quote(showcase["run"], safe="")
    _visit(page, f"{base}/dags/showcase/runs/{run}", "#run-gantt canvas")
    page.locator("#gantt .g-row .g-seg").first.wait_for()  # the timeline of states
    # the failed task's page: each try's tab, its log and the rendered fields of a template
    _visit(page, f"{base}/dags/showcase/runs/{run}/tasks/prep.check", "#panel-tries .tab")
    tries = page.locator("#panel-tries .tabs .tab")
    assert tries.count() == 2
    for i in range(2):
        tries.nth(i).click()
        page.locator("#panel-log").wait_for()
        page.locator("#panel-log", has_text="checking the amount column").wait_for()
    page.select_option("#log-level", "40")
    page.fill("#log-search", "amount")
    _visit(page, f"{base}/dags/showcase/runs/{run}/tasks/prep.extract", "#panel-tries .tab")
    page.click("#panel-rendered-tab")
    page.locator("#panel-rendered", has_text="echo rows of").wait_for()
    _visit(page, f"{base}/dags/showcase/runs/{run}/tasks/load?map_index=1", "#ti-map-name")
    assert page.inner_text("#ti-map-name") == "users.csv"
    page.click("#panel-rendered-tab")
    page.locator("#panel-rendered p, #panel-rendered table").first.wait_for()
    page.wait_for_load_state("networkidle")


def test_every_other_view_with_input_awaited_and_a_flow_run(
        watched: Any, ui_server: UiServer, showcase: dict[str, str]) -> None:
    page, base = watched, ui_server.url
    _visit(page, base + "/required-actions", "article.hitl-card[data-task='ask'] .hitl-body")
    assert page.locator("article.hitl-card .hitl-body strong").inner_text() == "final"
    hitl = quote(showcase["hitl"], safe="")
    _visit(page, f"{base}/dags/showcase_hitl/runs/{hitl}/tasks/ask", "#panel-respond")
    _visit(page, base + "/dags/showcase-flow", "table.grid .rt-flow")
    assert page.locator("table.grid .rt-flow").first.inner_text() == "F"
    page.click("#dag-trigger")
    page.locator("#param-days").wait_for()  # the form from the flow's signature
    page.keyboard.press("Escape")
    _visit(page, f"{base}/dags/showcase-flow/runs/{quote(showcase['flow'], safe='')}",
           "#run-log pre.log")
    for path, selector in [
            ("/dag-runs?dag_id_pattern=showcase", "#browse-table tbody tr"),
            ("/task-instances?state=failed", "#browse-table tbody tr"),
            ("/xcoms?dag_id=showcase", "#browse-table tbody tr"),
            ("/assets", "#asset-table"), ("/import-errors", "main"),
            ("/connections", "main"), ("/variables", "main"), ("/users", "#users tbody tr"),
            ("/event-logs", "#event-logs"), ("/backfills", "main"), ("/triggers", "main"),
            ("/pools", "main"), ("/login", "main"), ("/api/docs", "#swagger-ui")]:
        _visit(page, base + path, selector)

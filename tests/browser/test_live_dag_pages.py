"""The DAG page in a real browser: the Details tab (doc_md sanitized, params, schedule, next
runs, default_args, owners), the Code link, '@task' as the operator, dates and run types on the
grid's columns, and a deferred task's trigger in the task-instance panel."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from ui_harness import UiServer

from statewright.config import load_settings
from statewright.core.clock import utcnow
from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.sdk import DAG, BaseOperator, Param, task
from statewright.sdk.triggers import DateTimeTrigger
from statewright.services.dag_runs import create_run
from statewright.services.dag_view import DagView, DagViewCache
from statewright.services.executors.inprocess import InProcessExecutor
from statewright.services.scheduler.scheduler import Scheduler, SchedulerConfig
from statewright.services.worker import deferral

DOC = """# Sales load

Loads **orders** on weekdays. <script>window.__xss = 1</script>
<img src=x onerror="window.__xss = 2"> [bad](javascript:window.__xss=3)
"""


class WaitsForNewYear(BaseOperator):
    def execute(self, context: Any) -> Any:
        self.defer(trigger=DateTimeTrigger(datetime(2031, 1, 1, tzinfo=UTC)),
                   method_name="done", timeout=timedelta(hours=3))

    def done(self, context: Any, event: Any = None) -> Any:
        return event


def sales_dag() -> DAG:
    with DAG("sales", schedule="0 6 * * 1-5", start_date=datetime(2026, 1, 1, tzinfo=UTC),
             doc_md=DOC, tags=["sales"],
             params={"limit": Param(3, type="integer", description="rows to load")},
             default_args={"owner": "ana", "retries": 1}) as dag:
        @task
        def load() -> int:
            return 1

        load() >> WaitsForNewYear(task_id="wait")
    return dag


@pytest.fixture(scope="module")
def sales(ui_server: UiServer) -> dict[str, str]:
    """The sales DAG with a manual run (load succeeded, wait deferred) and a backfill run."""
    assert ui_server.logs_folder is not None
    dag = sales_dag()
    with transaction(ui_server.engine) as conn:
        dag_repo.upsert_dag(conn, dag.serialize(), now=utcnow())
        dag_repo.set_paused(conn, "sales", False)
        row = dag_repo.get_dag(conn, "sales")
        view = DagView(row.serialized, row.dag_hash)
        create_run(conn, view, now=utcnow(), actor=Actor.USER, run_type="backfill",
                   run_id="backfill__2026-01-05", logical_date=datetime(2026, 1, 5, 6,
                                                                          tzinfo=UTC))
        create_run(conn, view, now=utcnow(), actor=Actor.USER, run_id="by_hand",
                   logical_date=datetime(2026, 1, 6, 6, tzinfo=UTC))
    views = DagViewCache()
    # the server's own key (the SQLite home's key file), so that it can read the trigger
    settings = load_settings({"STATEWRIGHT_HOME": str(ui_server.logs_folder.parent)})
    with deferral.using_cipher(deferral.load_cipher(settings)):
        scheduler = Scheduler(ui_server.engine, InProcessExecutor(
            ui_server.engine, dags={"sales": dag}, views=views), views=views,
            config=SchedulerConfig(idle_seconds=0.0))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            scheduler.run_once()
            with ui_server.engine.connect() as conn:
                run = run_repo.get_by_run_id(conn, "sales", "by_hand")
                states = {t.task_id: t.state for t in ti_repo.by_run(conn, run.id)}
            if states.get("wait") == "deferred":
                break
        else:
            pytest.fail(f"the wait did not defer: {states}")
    return {"run_id": "by_hand"}


def test_details_tab_shows_the_dag_with_doc_md_sanitized(page: Any, ui_server: UiServer,
                                                         sales: dict[str, str]) -> None:
    page.goto(ui_server.url + "/dags/sales")
    page.click("#view-details")
    page.locator("#details-wrap").wait_for(state="visible")
    assert page.locator("#grid-wrap").is_hidden()
    assert page.url.endswith("#details")
    doc = page.locator("#doc-md")
    assert doc.locator("h1").inner_text() == "Sales load"
    assert doc.locator("strong").inner_text() == "orders"
    assert "<script>window.__xss = 1</script>" in doc.inner_text()  # shown as text
    assert doc.locator("script, img").count() == 0
    assert doc.locator("a[href^='javascript']").count() == 0
    assert page.evaluate("() => window.__xss") is None
    assert page.inner_text("#details-schedule") == "At 06:00, on weekdays (Monday to Friday) (UTC)"
    assert page.locator("#details-next-runs li time").count() == 5
    assert page.inner_text("#details-owners") == "ana"
    assert "#sales" in page.inner_text("#details-tags")
    assert page.inner_text("#details-file").endswith(".py")
    limit = page.locator("#details-params tr[data-param='limit']")
    assert "3" in limit.inner_text() and "rows to load" in limit.inner_text()
    assert "integer" in limit.inner_text()
    assert page.locator("#details-default-args tr[data-key='retries'] td").inner_text() == "1"
    assert page.locator("#details-tasks tr[data-task-id='load'] td").nth(1).inner_text() \
        == "@task"
    assert page.get_attribute("#view-code", "href") == "/dags/sales/code"
    page.click("#view-grid")
    page.locator("#grid-wrap").wait_for(state="visible")
    assert page.locator("#details-wrap").is_hidden()
    page.goto(ui_server.url + "/dags/sales#details")  # the address opens the tab
    page.locator("#details-wrap").wait_for(state="visible")


def test_grid_columns_carry_dates_and_run_types_and_the_operator_is_named(
        page: Any, ui_server: UiServer, sales: dict[str, str]) -> None:
    page.goto(ui_server.url + "/dags/sales")
    page.locator("#grid .runbar").first.wait_for()
    marks = page.locator("#grid thead .rt")
    assert [marks.nth(i).inner_text() for i in range(marks.count())] == ["B", "M"]
    assert "backfill" in (marks.nth(0).get_attribute("title") or "")
    assert "manual" in (marks.nth(1).get_attribute("title") or "")
    dates = page.locator("#grid thead .run-date")
    assert dates.count() == 2
    expected = page.evaluate("""() => {
      const d = new Date("2026-01-05T06:00:00Z");
      const p = (n) => String(n).padStart(2, "0");
      return `${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
    }""")
    assert dates.nth(0).inner_text() == expected
    assert "(@task)" in (page.get_attribute("#grid th.task[data-task-id='load']", "title") or "")


def test_panel_names_the_operator_and_describes_the_trigger(
        page: Any, ui_server: UiServer, sales: dict[str, str]) -> None:
    page.goto(f"{ui_server.url}/dags/sales?run_id=by_hand&task_id=wait")
    page.locator("#panel-trigger").wait_for()
    assert page.inner_text("#panel-trigger").startswith("DateTimeTrigger #")
    assert "waiting for a triggerer" in page.inner_text("#panel-trigger")
    assert page.inner_text("#panel-waits-for") == \
        "the time to reach 2031-01-01T00:00:00+00:00"
    assert page.locator("#panel-trigger-timeout time").count() == 1
    assert "in 2 h" in page.inner_text("#panel-trigger-timeout")
    page.goto(f"{ui_server.url}/dags/sales?run_id=by_hand&task_id=load")
    page.locator("#panel-operator").filter(has_text="@task").wait_for()
    assert page.get_attribute("#panel-operator", "title") == "class _PythonDecoratedOperator"

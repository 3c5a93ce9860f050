"""The web UI in a real browser: list, trigger with conf, grid, task instance panel, run page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
from ui_harness import UiServer


def test_trigger_from_the_list_then_read_a_failure_in_the_grid(
        page: Any, ui_server: UiServer, tmp_path: Path) -> None:
    page.goto(ui_server.url + "/")
    row = page.locator("#dag-rows tr[data-dag-id='orders']")
    row.wait_for()
    assert "Failed" in row.inner_text()  # the newest run's state name

    row.locator("button[data-trigger='orders']").click()
    page.locator("#trigger-dialog").wait_for(state="visible")
    page.fill("#trigger-run-id", "from_the_ui")
    page.fill("#trigger-conf", json.dumps({"region": "eu", "limit": 3}))
    page.click("#trigger-submit")
    page.locator("#toast.show").wait_for()
    assert "from_the_ui" in page.inner_text("#toast")
    run = httpx.get(ui_server.url + "/api/v1/dags/orders/dagRuns/from_the_ui",
                    headers=ui_server.headers).json()
    assert run["conf"] == {"region": "eu", "limit": 3} and run["triggered_by"] == "user:admin"

    page.goto(ui_server.url + "/dags/orders")
    cell = page.locator("button.cell.s-failed[data-task-id='check']")
    cell.wait_for()
    assert "Failed" in (cell.get_attribute("title") or "")
    assert page.locator("table.grid thead .runbar").count() == 3  # two tests + the new run
    cell.click()
    page.locator("#panel-state").wait_for()
    assert page.inner_text("#panel-state").startswith("Failed")
    assert "column 'amount' has 3 null values" in page.inner_text("#panel-message")
    newest = page.locator("#panel table.hist tbody tr.h-main").first
    assert "worker" in newest.inner_text() and "running" in newest.inner_text()
    page.locator("#panel-log").filter(has_text="checking the amount column").wait_for()
    assert "run_id=" in page.url and "task_id=check" in page.url

    shot = tmp_path / "grid.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000


def test_run_page_shows_task_instances_and_the_timeline(page: Any, ui_server: UiServer) -> None:
    run_id = ui_server.failed_run_id
    page.goto(f"{ui_server.url}/dags/orders/runs/{quote(run_id, safe='')}")
    page.locator("#tis tbody tr").first.wait_for()
    assert page.locator("#tis tbody tr").count() == 2
    assert "Failed" in page.inner_text("#run-state")
    assert page.locator("#gantt .g-seg").count() > 4
    page.locator("#tis tbody tr[data-task-id='check']").click()
    page.locator("#panel-state").wait_for()
    tabs = page.locator("#panel .tabs .tab")
    assert tabs.count() == 2 and "AwaitingRetry" in tabs.nth(0).inner_text()
    tabs.nth(0).click()
    page.locator("#panel-log").filter(has_text="checking the amount column").wait_for()
    page.locator("#tis tbody tr[data-task-id='publish']").click()
    page.locator("#panel-task-id").filter(has_text="publish").wait_for()
    panel = page.inner_text("#panel")
    assert "UpstreamFailed" in panel and "null" not in panel and "undefined" not in panel


def test_pause_toggle_on_the_dag_page(page: Any, ui_server: UiServer) -> None:
    page.goto(ui_server.url + "/dags/orders")
    page.locator("label.switch").first.click()
    page.locator("#dag-pause-label").filter(has_text="Paused").wait_for()
    assert httpx.get(ui_server.url + "/api/v1/dags/orders",
                     headers=ui_server.headers).json()["is_paused"] is True
    page.locator("label.switch").first.click()
    page.locator("#dag-pause-label").filter(has_text="Active").wait_for()
    assert httpx.get(ui_server.url + "/api/v1/dags/orders",
                     headers=ui_server.headers).json()["is_paused"] is False


def test_the_grid_marks_setup_and_teardown_tasks(page: Any, ui_server: UiServer) -> None:
    from statewright.core.clock import utcnow
    from statewright.db.engine import transaction
    from statewright.db.repositories import dags as dag_repo
    from statewright.sdk import DAG, EmptyOperator

    with DAG("infra") as dag:
        create = EmptyOperator(task_id="create_cluster").as_setup()
        work = EmptyOperator(task_id="run_job")
        create >> work >> EmptyOperator(task_id="delete_cluster").as_teardown(setups=create)
    with transaction(ui_server.engine) as conn:
        dag_repo.upsert_dag(conn, dag.serialize(), now=utcnow())
    page.goto(ui_server.url + "/dags/infra")
    header = page.locator("table.grid th.task[data-task-id='create_cluster']")
    header.wait_for()
    assert header.locator(".role").inner_text() == "setup"
    teardown = page.locator("table.grid th.task[data-task-id='delete_cluster']")
    assert teardown.locator(".role").inner_text() == "teardown"
    assert "teardown task" in (teardown.get_attribute("title") or "")
    assert page.locator("table.grid th.task[data-task-id='run_job'] .role").count() == 0


def _push_counts(ti: Any) -> str:
    ti.xcom_push(key="row_count", value=42)
    return "s3://bucket/out.csv"


def test_the_task_panel_shows_what_the_task_stored(page: Any, ui_server: UiServer) -> None:
    from statewright.sdk import DAG, PythonOperator

    with DAG("with_xcoms") as dag:
        PythonOperator(task_id="export", python_callable=_push_counts)
    run = dag.test(engine=ui_server.engine)
    assert run.state.value == "success"
    entries = httpx.get(f"{ui_server.url}/api/v1/dags/with_xcoms/dagRuns/"
                        f"{quote(run.run_id, safe='')}/taskInstances/export/xcomEntries",
                        headers=ui_server.headers).json()
    assert [(e["key"], e["value"]) for e in entries["xcom_entries"]] == [
        ("return_value", "s3://bucket/out.csv"), ("row_count", 42)]
    page.goto(f"{ui_server.url}/dags/with_xcoms/runs/{quote(run.run_id, safe='')}")
    page.locator("#tis tbody tr[data-task-id='export']").click()
    page.locator("#panel-xcoms").wait_for()
    rows = page.locator("#panel-xcoms tr")
    assert rows.count() == 2
    assert "42" in page.inner_text("#panel-xcoms tr[data-key='row_count']")
    assert "s3://bucket/out.csv" in page.inner_text("#panel-xcoms tr[data-key='return_value']")

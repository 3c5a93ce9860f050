"""The task-instance side panel lists a task's state, and the task-instance page and the
assets page their state, in a real browser; values from tasks are text, never HTML."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from tests.browser.conftest import _chromium_or_skip
from ui_harness import UiServer, add_user, serving

from statewright.config import load_settings
from statewright.db.engine import make_engine
from statewright.db.migrate import migrate
from statewright.sdk import DAG, NEVER_EXPIRE, Asset, task

MARKUP = "<b>bold</b>"
ORDERS = Asset(name="ui_orders", uri="s3://b/ui-orders")


@pytest.fixture(scope="module")
def ui_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    _chromium_or_skip()
    home = tmp_path_factory.mktemp("state-ui")
    settings = load_settings({"STATEWRIGHT_HOME": str(home)})
    engine = make_engine(settings.database_url)
    migrate(engine)
    with DAG("ts_ui", schedule=None, dag_display_name="State <UI>") as dag:
        @task(outlets=[ORDERS], task_display_name="Keep things")
        def keep(task_state_store=None, asset_state_store=None):  # type: ignore[no-untyped-def]
            task_state_store.set("job_id", MARKUP, retention=NEVER_EXPIRE)
            asset_state_store[ORDERS].set("watermark", MARKUP)
        keep()
    run_id = dag.test(engine=engine).run_id
    headers = add_user(engine, "admin", "admin")
    with serving(engine, settings) as url:
        yield UiServer(url, engine, run_id, headers)  # (its run id field holds this run)
    engine.dispose()


def test_the_side_panel_lists_the_task_state(page: Any, ui_server: UiServer) -> None:
    page.goto(f"{ui_server.url}/dags/ts_ui?run_id={quote(ui_server.failed_run_id)}&task_id=keep")
    row = page.locator("#panel-task-state tr", has_text="job_id")
    row.wait_for()
    assert MARKUP in row.inner_text() and "never_expire, try 1" in row.inner_text()
    assert page.locator("#panel-task-state b").count() == 0
    assert "State <UI>" in page.locator("h1.dag-title").inner_text()


def test_the_pages_list_task_and_asset_state_as_text(page: Any, ui_server: UiServer) -> None:
    page.goto(f"{ui_server.url}/dags/ts_ui/runs/{quote(ui_server.failed_run_id)}/tasks/keep")
    assert MARKUP in page.locator("#task-state").inner_text()
    assert page.locator("#task-state b").count() == 0
    assert page.locator("#panel-task-state").count() == 0  # listed once on this page
    assert "Keep things" in page.locator("#task-display-name").inner_text()
    page.goto(f"{ui_server.url}/assets")
    assert "watermark" in page.locator("#asset-state").inner_text()
    assert page.locator("#asset-state b").count() == 0

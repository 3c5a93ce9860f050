"""DAG versions in Chromium: a DAG edited while a run is in flight shows two versions in the
grid, the code view shows the source of each, and the graph draws the version chosen."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import expect
from ui_harness import UiServer

from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.services.dag_processor.processor import DagProcessor
from statewright.services.dag_runs import trigger_dag

V1 = '''from statewright.sdk import DAG, EmptyOperator

with DAG("edited", schedule=None) as dag:
    EmptyOperator(task_id="extract") >> EmptyOperator(task_id="old_load")
'''
V2 = '''from statewright.sdk import DAG, EmptyOperator

# the load step was rewritten <while a run was in flight>
with DAG("edited", schedule=None) as dag:
    EmptyOperator(task_id="extract") >> EmptyOperator(task_id="new_load")
'''


def _edited_mid_run(ui_server: UiServer, folder: Path) -> None:
    folder.mkdir()
    dag_file = folder / "edited.py"
    dag_file.write_text(V1)
    processor = DagProcessor(ui_server.engine, folder)
    assert processor.run_once().changed == 1
    with transaction(ui_server.engine) as conn:
        trigger_dag(conn, "edited", now=processor.clock(), actor=Actor.USER, run_id="before")
    dag_file.write_text(V2)  # while "before" is still queued
    assert processor.run_once().changed == 1
    with transaction(ui_server.engine) as conn:
        trigger_dag(conn, "edited", now=processor.clock(), actor=Actor.USER, run_id="after")


def test_an_edit_mid_run_shows_two_versions_and_the_code_of_each(
        page: Any, ui_server: UiServer, tmp_path: Path) -> None:
    _edited_mid_run(ui_server, tmp_path / "dags")
    page.goto(ui_server.url + "/dags/edited")
    page.locator("table.grid").wait_for()
    heads = page.locator("table.grid thead th.runbar-cell")
    expect(heads).to_have_count(2)
    assert [heads.nth(i).get_attribute("data-version") for i in range(2)] == ["v1", "v2"]
    marks = page.locator("table.grid thead th.version-change .version-mark")
    expect(marks).to_have_count(1)
    assert marks.inner_text() == "v2"
    gone = page.locator("table.grid th.task.gone[data-task-id='old_load']")
    expect(gone.locator(".gone-version")).to_have_text("v1")

    page.locator("#view-code").click()
    page.wait_for_url("**/dags/edited/code")
    view = page.locator("#code-view")
    assert view.get_attribute("data-version") == "2"
    expect(view).to_contain_text("<while a run was in flight>")  # shown as text
    assert page.locator("#code-view script").count() == 0
    assert view.locator(".highlight .k").count() > 0  # highlighted keywords
    page.select_option("#code-version", "1")
    page.wait_for_url("**/dags/edited/code?version=1")
    expect(page.locator("#code-view")).to_have_attribute("data-version", "1")
    expect(page.locator("#code-view")).to_contain_text("old_load")
    expect(page.locator("#code-view")).not_to_contain_text("new_load")


def test_the_graph_draws_the_version_chosen(page: Any, ui_server: UiServer,
                                            tmp_path: Path) -> None:
    page.goto(ui_server.url + "/dags/edited")
    if page.locator("table.grid thead th.runbar-cell").count() == 0:  # run alone
        _edited_mid_run(ui_server, tmp_path / "dags")
        page.reload()
    page.locator("#view-graph").click()
    page.select_option("#graph-run", "before")
    expect(page.locator("#graph .graph-node[data-task-id='old_load']")).to_have_count(1)
    expect(page.locator("#graph .graph-node[data-task-id='new_load']")).to_have_count(0)
    page.select_option("#graph-version", "2")
    expect(page.locator("#graph .graph-node[data-task-id='new_load']")).to_have_count(1)
    expect(page.locator("#graph .graph-node[data-task-id='old_load']")).to_have_count(0)
    page.locator("#view-grid").click()

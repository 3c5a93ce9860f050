"""A mapped task in the web UI: one grid row with a count, expanded to a row per map index
whose cells open the task instance panel of that map index."""

from __future__ import annotations

from typing import Any

from ui_harness import UiServer


def test_a_mapped_task_expands_in_the_grid_and_its_panel_is_per_map_index(
        page: Any, ui_server: UiServer) -> None:
    from statewright.sdk import DAG, task

    with DAG("mapped_ui") as dag:
        @task
        def square(x: int) -> int:
            return x * x

        square.expand(x=[1, 2, 3])
    run = dag.test(engine=ui_server.engine)
    assert run.state.value == "success"
    page.goto(ui_server.url + "/dags/mapped_ui")
    cell = page.locator("table.grid td button.cell.mapped[data-task-id='square']")
    cell.wait_for()
    assert cell.inner_text() == "3"
    assert "3 success" in (cell.get_attribute("title") or "")
    page.locator("table.grid th.task[data-task-id='square'] .map-toggle").click()
    index_cell = page.locator("table.grid button.cell[data-task-id='square'][data-map-index='2']")
    index_cell.wait_for()
    assert page.locator("table.grid tr.mapped-index").count() == 3
    index_cell.click()
    page.locator("#panel-task-id").wait_for()
    assert page.inner_text("#panel-task-id") == "square [2]"
    page.locator("#panel-xcoms tr[data-key='return_value']").wait_for()
    assert "9" in page.inner_text("#panel-xcoms tr[data-key='return_value']")

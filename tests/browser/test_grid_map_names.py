"""A mapped task's rows in the grid, and its task instance page, are labelled by the name its
``map_index_template`` gave each map index (Airflow 3's ``rendered_map_index``)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from ui_harness import UiServer

LABELS = """ths => ths.map((th) => [th.dataset.mapIndex, th.textContent, th.title])"""


def test_mapped_rows_and_the_task_instance_page_show_the_map_index_template_names(
        page: Any, ui_server: UiServer) -> None:
    from statewright.sdk import DAG, task

    with DAG("mapped_names") as dag:
        @task(map_index_template="{{ task.op_kwargs['path'] }}")
        def load(path: str) -> str:
            return path.upper()

        @task
        def plain(x: int) -> int:
            return x

        load.expand(path=["orders.csv", "users.csv"])
        plain.expand(x=[1, 2])
    run = dag.test(engine=ui_server.engine)
    assert run.state.value == "success"

    page.goto(ui_server.url + "/dags/mapped_names")
    for task_id in ("load", "plain"):
        page.locator(f"table.grid th.task[data-task-id='{task_id}'] .map-toggle").click()
        page.locator(f"table.grid th.map-index[data-task-id='{task_id}'][data-map-index='1']"
                     ).wait_for()
    named = page.eval_on_selector_all("table.grid th.map-index[data-task-id='load']", LABELS)
    assert named == [["0", "[0]orders.csv", "load [0]\norders.csv"],
                     ["1", "[1]users.csv", "load [1]\nusers.csv"]]
    assert page.locator("table.grid th.map-index[data-task-id='load'] .map-index-name"
                        ).all_inner_texts() == ["orders.csv", "users.csv"]
    plain = page.eval_on_selector_all("table.grid th.map-index[data-task-id='plain']", LABELS)
    assert plain == [["0", "[0]", "plain [0]"], ["1", "[1]", "plain [1]"]]  # no template

    page.goto(f"{ui_server.url}/dags/mapped_names/runs/{quote(run.run_id, safe='')}"
              "/tasks/load?map_index=1")
    assert page.inner_text("#ti-map-index") == "[1]"
    assert page.inner_text("#ti-map-name") == "users.csv"
    assert page.title().startswith("load [users.csv] · ")
    page.goto(f"{ui_server.url}/dags/mapped_names/runs/{quote(run.run_id, safe='')}"
              "/tasks/plain?map_index=0")
    assert page.inner_text("#ti-map-index") == "[0]"
    assert page.locator("#ti-map-name").count() == 0
    assert page.title().startswith("plain [0] · ")

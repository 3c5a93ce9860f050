"""The grid's rows stay in DAG order for a mix of task groups and mapped tasks, however many
mapped tasks are expanded (a map index's row sits under its own task, inside its group)."""

from __future__ import annotations

from typing import Any

from ui_harness import UiServer

from statewright.sdk import DAG, EmptyOperator, TaskGroup, task

ROWS_JS = """rows => rows.filter(r => !r.hidden).map(r => {
  if (r.dataset.groupId) return 'group:' + r.dataset.groupId;
  const th = r.querySelector('th.task');
  if (r.classList.contains('mapped-index'))
    return (th.dataset.taskId || '?') + '[' + (th.dataset.mapIndex ?? '?') + ']';
  return th.dataset.taskId; })"""


def _mixed_dag(ui_server: UiServer) -> None:
    with DAG("drawn_rows") as dag:
        @task
        def double(x: int) -> int:
            return 2 * x

        start = EmptyOperator(task_id="start")
        with TaskGroup("grp") as grp:
            inner = double.override(task_id="inner").expand(x=[1, 2])
            inner >> EmptyOperator(task_id="tail")
            with TaskGroup("deep"):
                double.override(task_id="deepest").expand(x=[5])
        outer = double.override(task_id="outer").expand(x=[1, 2, 3])
        start >> grp >> outer >> EmptyOperator(task_id="end")
    assert dag.test(engine=ui_server.engine).state.value == "success"


def _rows(page: Any) -> list[str]:
    return list(page.eval_on_selector_all("table.grid tbody tr", ROWS_JS))


def test_rows_stay_in_dag_order_as_each_mapped_task_expands(page: Any,
                                                            ui_server: UiServer) -> None:
    _mixed_dag(ui_server)
    page.goto(ui_server.url + "/dags/drawn_rows")
    page.locator("table.grid tr.group-row[data-group-id='grp']").wait_for()
    folded = ["start", "group:grp", "grp.inner", "grp.tail", "group:grp.deep",
              "grp.deep.deepest", "outer", "end"]
    assert _rows(page) == folded
    expected = list(folded)
    for task_id, count in (("outer", 3), ("grp.inner", 2), ("grp.deep.deepest", 1)):
        page.locator(f"table.grid th.task[data-task-id='{task_id}'] .map-toggle").click()
        page.locator(f"table.grid th.map-index[data-task-id='{task_id}']"
                     f"[data-map-index='{count - 1}']").wait_for()
        at = expected.index(task_id) + 1
        expected[at:at] = [f"{task_id}[{i}]" for i in range(count)]
        assert _rows(page) == expected
        # each map index's row is indented as its task is (inside the same group)
        depth = page.eval_on_selector_all(
            f"table.grid th.task[data-task-id='{task_id}']",
            "ths => [...new Set(ths.map(t => t.style.getPropertyValue('--depth') || '0'))]")
        assert len(depth) == 1
    # folding the group hides its tasks and their map indexes; the rest keep their order
    page.locator("table.grid tr.group-row[data-group-id='grp'] button.group-toggle").click()
    assert _rows(page) == ["start", "group:grp", "outer", "outer[0]", "outer[1]", "outer[2]",
                           "end"]
    page.locator("table.grid tr.group-row[data-group-id='grp'] button.group-toggle").click()
    assert _rows(page) == expected

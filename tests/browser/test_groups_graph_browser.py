"""The graph view and the grid's task groups, in Chromium."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect
from ui_harness import UiServer

from statewright.sdk import DAG, EmptyOperator, Label, PythonOperator, TaskGroup


def _fail() -> None:
    raise ValueError("boom")


def _grouped_run(ui_server: UiServer, dag_id: str) -> str:
    with DAG(dag_id) as dag:
        start = EmptyOperator(task_id="start")
        with TaskGroup("outer", tooltip="Outer <b>things</b>") as outer:
            EmptyOperator(task_id="a")
            with TaskGroup("inner"):
                PythonOperator(task_id="b", python_callable=_fail)
        end = EmptyOperator(task_id="end", trigger_rule="all_done")
        start >> Label("<i>go</i>") >> outer >> end
    return dag.test(engine=ui_server.engine).run_id


def test_the_grid_folds_and_unfolds_task_groups(page: Any, ui_server: UiServer) -> None:
    _grouped_run(ui_server, "grid_groups")
    page.goto(ui_server.url + "/dags/grid_groups")
    outer = page.locator("table.grid tr.group-row[data-group-id='outer']")
    outer.wait_for()
    # groups come before their tasks, nested groups inside, each with the group's state
    order = page.eval_on_selector_all(
        "table.grid tbody tr",
        "rows => rows.map(r => r.dataset.groupId ? 'group:' + r.dataset.groupId"
        " : r.querySelector('th.task').dataset.taskId)")
    assert order == ["start", "group:outer", "outer.a", "group:outer.inner", "outer.inner.b",
                     "end"]
    assert outer.locator(".group-cell").get_attribute("data-state") == "failed"
    assert "Outer <b>things</b>" in (outer.locator("th").get_attribute("title") or "")
    assert outer.locator("th .group-label").inner_text() == "outer"
    b_row = page.locator("table.grid th.task[data-task-id='outer.inner.b']")
    assert b_row.is_visible()
    assert b_row.inner_text() == "b"  # its own id inside its group; the full id in the title
    assert (b_row.get_attribute("title") or "").startswith("outer.inner.b")
    outer.locator("button.group-toggle").click()
    assert not b_row.is_visible()
    assert not page.locator("table.grid tr.group-row[data-group-id='outer.inner']").is_visible()
    assert page.locator("table.grid th.task[data-task-id='end']").is_visible()
    # folded groups stay folded when the grid is drawn again (a reload in the same session)
    page.reload()
    page.locator("table.grid tr.group-row[data-group-id='outer']").wait_for()
    assert not page.locator("table.grid th.task[data-task-id='outer.inner.b']").is_visible()
    page.locator("table.grid tr.group-row[data-group-id='outer'] button.group-toggle").click()
    assert page.locator("table.grid th.task[data-task-id='outer.inner.b']").is_visible()


def test_the_graph_shows_tasks_groups_labels_and_run_states(page: Any,
                                                            ui_server: UiServer) -> None:
    run_id = _grouped_run(ui_server, "graph_view")
    page.goto(ui_server.url + "/dags/graph_view")
    page.locator("#view-graph").click()
    graph = page.locator("#graph svg.graph")
    graph.wait_for()
    assert not page.locator("#grid-wrap").is_visible()
    nodes = page.eval_on_selector_all(
        "#graph .graph-node",
        "ns => Object.fromEntries(ns.map(n => [n.dataset.taskId, n.dataset.state]))")
    assert nodes == {"start": "success", "outer.a": "success", "outer.inner.b": "failed",
                     "end": "success"}
    groups = page.eval_on_selector_all("#graph .graph-group",
                                       "gs => gs.map(g => g.dataset.groupId)")
    assert sorted(groups) == ["outer", "outer.inner"]
    # the inner group's box lies inside the outer one's, and holds task b
    def box(sel: str) -> dict[str, float]:
        return page.locator(sel).bounding_box()
    o, i = box("#graph .graph-group[data-group-id='outer'] rect"), box(
        "#graph .graph-group[data-group-id='outer.inner'] rect")
    b = box("#graph .graph-node[data-task-id='outer.inner.b'] rect")
    assert o["x"] <= i["x"] and i["x"] + i["width"] <= o["x"] + o["width"]
    assert i["x"] <= b["x"] and b["y"] + b["height"] <= i["y"] + i["height"]
    s = box("#graph .graph-node[data-task-id='start'] rect")
    assert s["x"] + s["width"] < o["x"]  # left to right
    # edge labels are text, not markup
    labels = page.eval_on_selector_all("#graph .graph-edge-label",
                                       "ls => ls.map(l => l.textContent)")
    assert labels == ["<i>go</i>", "<i>go</i>"]
    assert page.locator("#graph i").count() == 0
    assert page.locator("#graph .graph-node[data-task-id='outer.a'] .graph-node-label"
                        ).text_content() == "a"
    # a click on a task opens its task instance of the chosen run
    page.locator("#graph .graph-node[data-task-id='outer.inner.b']").click()
    expect(page.locator("#panel")).to_contain_text("outer.inner.b")
    assert page.locator("#graph-run").input_value() == run_id
    # the view is kept for the session
    page.reload()
    page.locator("#graph svg.graph").wait_for()
    page.locator("#view-grid").click()
    assert page.locator("#grid-wrap").is_visible() and not page.locator("#graph-wrap").is_visible()


def test_the_graph_of_a_dag_without_runs_has_no_states(page: Any, ui_server: UiServer) -> None:
    from statewright.core.clock import utcnow
    from statewright.db.engine import transaction
    from statewright.db.repositories import dags as dag_repo

    with DAG("graph_no_runs") as dag:
        with TaskGroup("g"):
            EmptyOperator(task_id="x") >> EmptyOperator(task_id="y")
    with transaction(ui_server.engine) as conn:
        dag_repo.upsert_dag(conn, dag.serialize(), now=utcnow())
    page.goto(ui_server.url + "/dags/graph_no_runs")
    page.locator("#view-graph").click()
    page.locator("#graph svg.graph").wait_for()
    assert page.locator("#graph .graph-node.no-state").count() == 2
    assert page.locator("#graph-run").is_disabled()
    page.locator("#view-grid").click()

"""The graph draws a mapped task as one node with its count ([n]) and a summary of its
instances' states (text and a bar of one segment per state, as wide as its share)."""

from __future__ import annotations

from typing import Any

from ui_harness import UiServer


def test_a_mapped_task_is_one_node_with_its_count_and_states(
        page: Any, ui_server: UiServer) -> None:
    from statewright.sdk import DAG, task

    with DAG("mapped_graph") as dag:
        @task
        def square(x: int) -> int:
            if x == 4:
                raise ValueError("four is not allowed")
            return x * x

        @task
        def total(values: list[int]) -> int:
            return sum(values)

        total(square.expand(x=[1, 2, 3, 4]))
    dag.test(engine=ui_server.engine)
    page.goto(ui_server.url + "/dags/mapped_graph")
    page.click("#view-graph")
    node = page.locator("#graph g.graph-node[data-task-id='square']")
    node.wait_for()
    assert "mapped" in (node.get_attribute("class") or "").split()
    assert page.locator("#graph g.graph-node[data-task-id='square']").count() == 1
    assert node.locator(".graph-node-count").text_content() == "[4]"
    assert node.locator(".graph-node-sub").text_content() == "3 success · 1 failed"
    assert node.locator("rect.graph-node-stack").count() == 1
    segs = node.locator("rect.graph-map-seg").evaluate_all(
        "rs => rs.map(r => [r.dataset.state, r.getBBox().width, getComputedStyle(r).fill])")
    widths = {state: width for state, width, _ in segs}
    assert set(widths) == {"success", "failed"}
    assert abs(widths["success"] / widths["failed"] - 3) < 0.05  # as wide as its share
    assert len({fill for _, _, fill in segs}) == 2  # each state in its own colour
    other = page.locator("#graph g.graph-node[data-task-id='total']")
    assert "mapped" not in (other.get_attribute("class") or "").split()
    assert other.locator(".graph-node-count").count() == 0

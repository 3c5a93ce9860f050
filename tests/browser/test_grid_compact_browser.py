"""The DAG page reads its grid in the compact format (embedded in the page, then
``?format=compact`` on each refresh) and draws every cell as the default format describes it."""

from __future__ import annotations

from typing import Any

import httpx
from ui_harness import UiServer

CELLS = """els => els.map((e) => ({task: e.dataset.taskId, run: e.dataset.runId, title: e.title,
                                  cls: e.className, text: e.textContent}))"""


def _drawn(page: Any) -> dict[tuple[str, str], dict[str, str]]:
    cells = page.eval_on_selector_all("table.grid button.cell", CELLS)
    return {(c["task"], c["run"]): c for c in cells}


def _assert_drawn_as(drawn: dict[tuple[str, str], dict[str, str]], grid: dict[str, Any]) -> None:
    runs = [r["dag_run_id"] for r in grid["dag_runs"]]
    expected = {(row["task_id"], runs[i]): c for row in grid["rows"]
                for i, c in enumerate(row["instances"]) if c is not None}
    assert set(drawn) == set(expected) and expected
    for (task_id, run_id), c in expected.items():
        cell = drawn[(task_id, run_id)]
        assert cell["cls"].startswith(f"cell s-{c['state']} n-{c['state_name']}"), cell
        assert cell["title"].startswith(f"{task_id} · {run_id}\n{c['state_name']} "
                                        f"({c['state']}) · try {c['try_number']}"), cell
        if c["state_message"]:
            assert cell["title"].endswith(f"\n{c['state_message']}"), cell
        else:
            assert cell["title"].count("\n") == 1, cell
        assert (" · try " + str(c["try_number"]) + " · " in cell["title"]) == (
            c["duration"] is not None), cell
        assert cell["text"] == (str(c["try_number"]) if c["try_number"] > 1 else ""), cell


def test_the_grid_draws_the_compact_cells_as_the_default_grid_describes_them(
        page: Any, ui_server: UiServer) -> None:
    grid = httpx.get(f"{ui_server.url}/api/v1/dags/orders/grid",
                     headers=ui_server.headers).json()
    page.goto(ui_server.url + "/dags/orders")
    page.locator("table.grid button.cell").first.wait_for()
    first = _drawn(page)
    _assert_drawn_as(first, grid)

    # A refresh (pausing refreshes at once) reads ?format=compact and draws the same cells.
    page.locator("table.grid").evaluate("t => { t.dataset.old = 'yes'; }")
    with page.expect_response(lambda r: "/grid?" in r.url and "format=compact" in r.url) as res:
        page.locator("label.switch").first.click()
    assert res.value.ok and "cell_fields" in res.value.json()
    page.locator("#grid table.grid:not([data-old])").wait_for()
    assert _drawn(page) == first
    page.locator("label.switch").first.click()
    page.locator("#dag-pause-label").filter(has_text="Active").wait_for()

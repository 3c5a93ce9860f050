"""A big grid draws every row at once but the cells of only the rows in view; the other rows get
their cells when they come near the window (grid_page.js's lazy rows; the thresholds are set low
here through ``window.statewrightGridLazy`` so that a small DAG is a big grid)."""

from __future__ import annotations

from typing import Any

import httpx
from ui_harness import UiServer

from statewright.sdk import DAG, EmptyOperator

ROWS = """trs => trs.map((tr) => [tr.querySelector('th.task').dataset.taskId,
                             tr.querySelectorAll('button.cell').length,
                             tr.querySelectorAll('td.lazy-cells').length])"""


def test_a_big_grid_draws_the_cells_of_the_rows_in_view_and_others_when_scrolled_to(
        page: Any, ui_server: UiServer) -> None:
    with DAG("lazy_grid", schedule=None) as dag:
        previous = None
        for i in range(30):
            t = EmptyOperator(task_id=f"step_{i:02d}")
            if previous is not None:
                previous >> t
            previous = t
    dag.test(engine=ui_server.engine, logs_folder=ui_server.logs_folder)
    grid = httpx.get(f"{ui_server.url}/api/v1/dags/lazy_grid/grid",
                     headers=ui_server.headers).json()
    order = [row["task_id"] for row in grid["rows"]]
    assert len(order) == 30

    page.add_init_script("window.statewrightGridLazy = { cells: 1, firstRows: 2, margin: '0px' };")
    page.set_viewport_size({"width": 1280, "height": 400})
    page.goto(ui_server.url + "/dags/lazy_grid")
    page.locator("#grid table.grid button.cell").first.wait_for()
    rows = page.eval_on_selector_all("#grid table.grid tbody tr", ROWS)
    assert [r[0] for r in rows] == order  # every row, in the DAG's order
    assert rows[0][1:] == [1, 0] and rows[1][1:] == [1, 0]  # the first rows: drawn at once
    assert rows[-1][1:] == [0, 1]  # far below the window: waits, as one cell
    assert sum(r[2] for r in rows) > 10

    last = order[-1]
    page.locator("#grid table.grid tbody tr").last.scroll_into_view_if_needed()
    cell = page.locator(f"#grid button.cell[data-task-id='{last}']")
    cell.wait_for()
    assert cell.get_attribute("data-state") == "success"
    assert cell.get_attribute("data-run-id") == grid["dag_runs"][-1]["dag_run_id"]
    assert page.locator("#grid tbody tr:last-child td.lazy-cells").count() == 0
    rows = page.eval_on_selector_all("#grid table.grid tbody tr", ROWS)
    assert [r[0] for r in rows] == order  # still in order
    # a row drawn late looks as the others: the same height
    heights = page.eval_on_selector_all("#grid table.grid tbody tr",
                                        "trs => trs.map((tr) => tr.getBoundingClientRect().height)")
    assert max(heights) - min(heights) < 1, heights

    # A refresh draws the grid again (pausing the DAG refreshes at once; clicked from the page's
    # script, which does not scroll to the switch): the rows near the window get their cells
    # with the new table, not a moment later.
    page.locator("#grid table.grid").evaluate("t => { t.dataset.old = 'yes'; }")
    page.evaluate("""() => new Promise((done) => {
      const seen = new MutationObserver(() => {
        const table = document.querySelector('#grid table.grid:not([data-old])');
        if (!table) return;
        seen.disconnect();
        window.__lastRowOnRedraw = table.querySelector('tbody tr:last-child')
          .querySelectorAll('button.cell').length;
      });
      seen.observe(document.getElementById('grid'), { childList: true });
      done();
    })""")
    page.evaluate("document.getElementById('dag-pause').click()")
    page.wait_for_function("() => window.__lastRowOnRedraw !== undefined")
    assert page.evaluate("window.__lastRowOnRedraw") == len(grid["dag_runs"])
    page.locator("#dag-pause-label").filter(has_text="Paused").wait_for()
    page.evaluate("document.getElementById('dag-pause').click()")
    page.locator("#dag-pause-label").filter(has_text="Active").wait_for()

    cell = page.locator(f"#grid button.cell[data-task-id='{last}']")
    cell.click()  # its cells work as the others: the task instance's panel opens
    page.locator("#panel-task-id").filter(has_text=last).wait_for()

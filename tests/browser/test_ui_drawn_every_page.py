"""Every page of the web UI (and the DAG page's graph and details views, and the task panel's
tabs) loads in Chromium under the strict CSP with no console error, no CSP violation and no
failed request, at 1440 px."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from page_watch import listen
from ui_harness import UiServer

# (the code page is left out: the test DAGs' files are outside the DAGs folder, so it is a 404)
PAGES = ["/", "/dags/orders", "/import-errors", "/assets",
         "/required-actions", "/connections", "/variables", "/users", "/event-logs",
         "/backfills", "/triggers", "/pools", "/api/docs", "/login",
         "/dag-runs", "/task-instances", "/xcoms",
         "/?owner=nobody&last_run_state=failed&paused=&favorite=true"]


def test_every_page_loads_without_an_error_or_a_csp_violation(
        page: Any, ui_server: UiServer) -> None:
    problems = listen(page)
    run = quote(ui_server.failed_run_id, safe="")
    for path in [*PAGES, f"/dags/orders/runs/{run}", f"/dags/orders/runs/{run}/tasks/check"]:
        page.goto(ui_server.url + path)
        page.wait_for_load_state("networkidle")
        problems += [f"{path}: CSP {v}" for v in page.evaluate("window.__csp || []")]
    # the DAG page's other views, and the task panel's Log and Rendered tabs
    page.goto(ui_server.url + "/dags/orders")
    page.click("#view-graph")
    page.locator("#graph g.graph-node").first.wait_for()
    page.click("#view-details")
    page.click("#view-calendar")
    page.locator("#calendar-chart .cal-day").first.wait_for()
    page.click("#view-grid")
    page.locator("table.grid button.cell[data-task-id='check']").last.click()
    page.locator("#panel-log").wait_for()
    page.select_option("#log-level", "40")  # the log viewer's filter and search
    page.fill("#log-search", "amount")
    page.click("#panel-rendered-tab")
    page.locator("#panel-rendered p, #panel-rendered table").first.wait_for()
    page.wait_for_load_state("networkidle")
    problems += [f"dag views: CSP {v}" for v in page.evaluate("window.__csp || []")]
    assert problems == [], "\n".join(problems)

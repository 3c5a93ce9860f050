"""Small things drawn right, in Chromium: the nav bar on one line at 1440 px, a task's doc_md in
the task panel (a Markdown table's alignment through classes, not style attributes), the HITL
page's body as Markdown and its timeout in the page's date format, and an opened-then-cancelled
Clear dialog recorded in the audit log as a dry run, never as a real clear."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from tests.hitl_helpers import drive
from ui_harness import UiServer

from statewright.sdk import DAG, EmptyOperator, HITLOperator

WATCH_CSP = """
window.__csp = [];
document.addEventListener("securitypolicyviolation",
  (e) => window.__csp.push(`${e.violatedDirective} ${e.sourceFile}:${e.lineNumber}`));
"""
DOC = "# Loads the orders\n\nRuns **nightly**.\n\n| col | n |\n|:--|--:|\n| a | 1 |\n"


@pytest.fixture
def watched(page: Any) -> Iterator[Any]:
    """The page; at the end, no console error and no CSP violation."""
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("response", lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400
            else None)
    page.add_init_script(WATCH_CSP)
    yield page
    problems += page.evaluate("window.__csp || []")
    assert problems == []


def test_the_nav_bar_stays_on_one_line(watched: Any, ui_server: UiServer) -> None:
    page = watched
    for width in (1440, 1280):
        page.set_viewport_size({"width": width, "height": 800})
        page.goto(ui_server.url + "/")
        page.locator("#health span").first.wait_for()
        tops = page.eval_on_selector_all(
            ".topbar nav a", "links => links.map(a => [a.getBoundingClientRect().top,"
            " a.getBoundingClientRect().height])")
        assert len({round(t) for t, _ in tops}) == 1  # one row
        assert max(h for _, h in tops) < 40  # no link breaks into two lines
        assert page.locator(".topbar").bounding_box()["height"] == 48
        box = page.locator(".topbar").bounding_box()
        assert box["width"] <= width  # the bar is no wider than the window
        # every link fits: nothing scrolled out of sight
        assert page.evaluate("(() => { const n = document.querySelector('.topbar nav');"
                             " return n.scrollWidth <= n.clientWidth; })()")


def test_a_tasks_doc_md_is_shown_in_the_task_panel(watched: Any, ui_server: UiServer) -> None:
    page = watched
    with DAG("drawn_doc", schedule=None) as dag:
        EmptyOperator(task_id="load", doc_md=DOC)
    run_id = dag.test(engine=ui_server.engine, logs_folder=ui_server.logs_folder).run_id
    page.goto(f"{ui_server.url}/dags/drawn_doc/runs/{quote(run_id, safe='')}")
    page.locator("#tis tbody tr[data-task-id='load']").click()
    doc = page.locator("#panel-doc")
    doc.wait_for()
    assert doc.locator("h1").inner_text() == "Loads the orders"
    assert doc.locator("strong").inner_text() == "nightly"
    cell = doc.locator("td", has_text="1")
    assert cell.evaluate("c => getComputedStyle(c).textAlign") == "right"
    assert doc.locator("[style]").count() == 0


def test_the_hitl_page_renders_markdown_and_its_timeout_as_the_other_pages(
        watched: Any, ui_server: UiServer, tmp_path: Path) -> None:
    page = watched
    with DAG("drawn_hitl") as dag:
        HITLOperator(task_id="ask", subject="Ship it?", options=["Yes", "No"],
                     body="Totals are **final**:\n\n- eu: 3\n- us: <b>4</b>",
                     response_timeout=timedelta(hours=2))
    d = drive(ui_server.engine, dag, tmp_path)
    d.settle()
    page.goto(ui_server.url + "/required-actions?dag_id=drawn_hitl")
    card = page.locator("article.hitl-card[data-task='ask']")
    card.wait_for()
    assert card.locator(".hitl-body strong").inner_text() == "final"
    assert card.locator(".hitl-body li").all_inner_texts() == ["eu: 3", "us: <b>4</b>"]
    assert card.locator(".hitl-body b").count() == 0  # raw HTML stays text
    shown = card.locator(".hitl-timeout time")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", shown.inner_text())
    assert shown.get_attribute("datetime")


def test_a_cancelled_clear_dialog_is_a_dry_run_in_the_audit_log(
        watched: Any, ui_server: UiServer) -> None:
    page = watched
    with DAG("drawn_audit", schedule=None) as dag:
        EmptyOperator(task_id="only")
    run_id = dag.test(engine=ui_server.engine, logs_folder=ui_server.logs_folder).run_id
    page.goto(f"{ui_server.url}/dags/drawn_audit/runs/{quote(run_id, safe='')}")
    page.locator("#tis tbody tr[data-task-id='only']").click()
    page.locator("#panel .panel-actions button", has_text="Clear").click()
    page.locator("#control-preview").filter(has_text="only").wait_for()  # the dry run answered
    page.click("#control-cancel")
    events = httpx.get(f"{ui_server.url}/api/v1/eventLogs", params={"dag_id": "drawn_audit"},
                       headers=ui_server.headers).json()["event_logs"]
    names = [e["event"] for e in events]
    assert "clear_task_instance_dry_run" in names
    assert "clear_task_instance" not in names
    state = httpx.get(f"{ui_server.url}/api/v1/dags/drawn_audit/dagRuns/{quote(run_id, safe='')}"
                      "/taskInstances/only", headers=ui_server.headers).json()["state"]
    assert state == "success"  # nothing was cleared

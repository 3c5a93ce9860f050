"""The Browse pages in Chromium: DAG runs, task instances and XComs across DAGs, filtered,
ordered and paged through the address, each row linking to its run or task instance; the
Browse menu in a top bar that stays on one line at 1440 px; a bad filter shows the API's
answer. No console error or CSP violation where the input is good."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from page_watch import watching
from playwright.sync_api import expect
from ui_harness import UiServer

from statewright.core.clock import utcnow
from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.repositories import dags as dag_repo
from statewright.sdk import DAG, PythonOperator
from statewright.services.dag_runs import create_run
from statewright.services.dag_view import DagView

DASH = "\u2013"  # an en dash, as the page writes a range
ROWS_JS = """() => [...document.querySelectorAll('#browse-table tbody tr')].map(
  (tr) => [...tr.cells].map((td) => td.innerText.trim()))"""
NAV_JS = """() => { const n = document.querySelector('.topbar nav');
  const tops = [...n.children].map((c) => Math.round(c.getBoundingClientRect().top));
  return { fits: n.scrollWidth <= n.clientWidth, widths: [n.scrollWidth, n.clientWidth],
           tops: [...new Set(tops)],
           bar: document.querySelector('.topbar').getBoundingClientRect().height }; }"""


def _answer() -> dict[str, int]:
    return {"rows": 42}


@pytest.fixture(scope="module")
def browse_data(ui_server: UiServer) -> None:
    """``browse_many``: 60 queued runs; ``browse_xcom``: a run whose task returns an XCom."""
    with DAG("browse_xcom", schedule=None) as xdag:
        PythonOperator(task_id="count", python_callable=_answer)
    assert xdag.test(engine=ui_server.engine, run_id="x1",
                     logs_folder=ui_server.logs_folder).state.value == "success"
    with DAG("browse_many", schedule=None) as many:
        PythonOperator(task_id="one", python_callable=_answer)
    serialized = many.serialize()
    with transaction(ui_server.engine) as conn:
        dag_repo.upsert_dag(conn, serialized, now=utcnow())
        view = DagView(serialized, dag_repo.dag_hash(serialized))
        for i in range(60):
            create_run(conn, view, now=utcnow(), actor=Actor.SCHEDULER, run_id=f"m{i:02d}",
                       run_type="manual")
        create_run(conn, view, now=utcnow(), actor=Actor.USER, run_id="f00", run_type="flow")


@pytest.fixture
def watched(page: Any) -> Iterator[Any]:
    page.set_viewport_size({"width": 1440, "height": 900})
    with watching(page):
        yield page


def test_runs_are_filtered_ordered_and_paged(watched: Any, ui_server: UiServer,
                                             browse_data: None) -> None:
    page = watched
    page.goto(f"{ui_server.url}/dag-runs")
    page.fill("input[name=dag_id_pattern]", "browse_many")
    page.click("#browse-filters button[type=submit]")
    page.select_option("select[name=run_type]", "manual")
    page.click("#browse-filters button[type=submit]")
    expect(page.locator("#browse-range")).to_have_text(f"1{DASH}50 of 60")
    assert "dag_id_pattern=browse_many" in page.url
    page.click("#browse-table th[data-sort=run_id] button")
    expect(page.locator("#browse-table th[data-sort=run_id]")).to_have_attribute(
        "aria-sort", "ascending")
    expect(page.locator("#browse-table tbody tr").first).to_contain_text("m00")
    rows = page.evaluate(ROWS_JS)
    assert [r[1] for r in rows] == [f"m{i:02d}" for i in range(50)]
    page.click("#browse-next")
    expect(page.locator("#browse-range")).to_have_text(f"51{DASH}60 of 60")
    assert [r[1] for r in page.evaluate(ROWS_JS)] == [f"m{i:02d}" for i in range(50, 60)]
    page.click("#browse-table th[data-sort=run_id] button")  # descending, back to page 1
    expect(page.locator("#browse-table tbody tr").first).to_contain_text("m59")
    page.go_back()
    expect(page.locator("#browse-range")).to_have_text(f"51{DASH}60 of 60")
    # the failed run of ``orders``, by state, links to its run page
    page.goto(f"{ui_server.url}/dag-runs?state=failed")
    link = page.locator("#browse-table tbody a", has_text=ui_server.failed_run_id)
    expect(link).to_have_attribute(
        "href", f"/dags/orders/runs/{quote(ui_server.failed_run_id, safe='')}")
    assert page.locator("select[name=state]").input_value() == "failed"
    states = page.locator("#browse-table tbody td:nth-child(3) .badge")
    assert states.count() == len(page.evaluate(ROWS_JS)) >= 1
    assert states.evaluate_all("(bs) => bs.every((b) => b.classList.contains('s-failed'))")


def test_a_flows_run_shows_its_own_run_type_and_filters_by_it(
        watched: Any, ui_server: UiServer, browse_data: None) -> None:
    page = watched
    page.goto(f"{ui_server.url}/dag-runs?dag_id_pattern=browse_many&run_type=flow")
    expect(page.locator("#browse-range")).to_have_text(f"1{DASH}1 of 1")
    assert page.locator("select[name=run_type]").input_value() == "flow"
    [row] = page.evaluate(ROWS_JS)
    assert (row[1], row[3]) == ("f00", "flow")  # Airflow's API says "manual" in run_type


def test_task_instances_and_xcoms_link_to_their_task_instance(
        watched: Any, ui_server: UiServer, browse_data: None) -> None:
    page = watched
    page.goto(f"{ui_server.url}/task-instances?dag_id_pattern=orders&state=failed")
    task = page.locator("#browse-table tbody a", has_text="check")
    expect(task).to_have_count(1)
    run = quote(ui_server.failed_run_id, safe="")
    assert task.get_attribute("href") == f"/dags/orders/runs/{run}/tasks/check"
    page.goto(f"{ui_server.url}/xcoms?dag_id=browse_xcom")
    expect(page.locator("#browse-range")).to_have_text(f"1{DASH}1 of 1")
    rows = page.evaluate(ROWS_JS)
    assert rows[0][:5] == ["browse_xcom", "x1", "count", "", "return_value"]
    page.locator("#browse-table tbody a", has_text="count").click()
    page.wait_for_url("**/dags/browse_xcom/runs/x1/tasks/count")


def test_the_browse_menu_opens_under_its_button_in_a_one_line_top_bar(
        watched: Any, ui_server: UiServer) -> None:
    page = watched
    for width in (1280, 1440):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{ui_server.url}/dag-runs")
        nav = page.evaluate(NAV_JS)
        assert nav["fits"] and len(nav["tops"]) == 1 and nav["bar"] <= 56, (width, nav)
    button = page.locator("#nav-browse")
    assert "active" in (button.get_attribute("class") or "")
    button.click()
    item = page.locator("#nav-browse-list a", has_text="Task instances")
    expect(item).to_be_visible()
    under, at = button.bounding_box(), item.bounding_box()
    assert at["y"] >= under["y"] + under["height"] - 1
    assert abs(at["x"] - under["x"]) < 12
    # drawn on top, not clipped by the nav: the point at its middle is the link
    hit = page.evaluate("([x, y]) => document.elementFromPoint(x, y).textContent",
                        [at["x"] + at["width"] / 2, at["y"] + at["height"] / 2])
    assert hit == "Task instances"
    page.keyboard.press("Escape")
    expect(item).to_be_hidden()
    button.click()
    item.click()
    page.wait_for_url("**/task-instances")


def test_a_bad_filter_shows_the_api_answer(page: Any, ui_server: UiServer) -> None:
    page.goto(f"{ui_server.url}/task-instances?order_by=nonsense")
    error = page.locator("#browse-error")
    expect(error).to_be_visible()
    assert "nonsense" in error.inner_text()
    assert page.locator("#browse-table tbody tr").count() == 0

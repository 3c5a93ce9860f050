"""The DAG page's Calendar tab in Chromium: each day's square sits in its week's column and its
weekday's row, is split by its runs' states in proportion (read from the drawn rectangles),
tells its counts on hover and lists its runs on click; no console error or CSP violation."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from page_watch import watching
from playwright.sync_api import expect
from ui_harness import UiServer

from statewright.sdk import DAG, PythonOperator

MONDAY = datetime(2025, 3, 3, tzinfo=UTC)  # a Monday
WEDNESDAY = datetime(2025, 3, 5, tzinfo=UTC)
PARTS_JS = """(date) => [...document.querySelectorAll(`.cal-day[data-date="${date}"] .cal-part`)]
  .map((r) => { const b = r.getBoundingClientRect();
                return { state: r.dataset.state, top: b.top, height: b.height }; })"""
BOX_JS = """(date) => { const b = document.querySelector(
  `.cal-day[data-date="${date}"] .cal-empty`).getBoundingClientRect();
  return { left: b.left, top: b.top, width: b.width, height: b.height }; }"""


def _check(params: dict[str, Any]) -> None:
    if params["fail"]:
        raise ValueError("the day's data is missing")


@pytest.fixture(scope="module")
def calendar_runs(ui_server: UiServer) -> None:
    """``cal_ui``: on Monday 2025-03-03 one failed and three successful runs, on Wednesday one
    successful run."""
    with DAG("cal_ui", schedule=None, params={"fail": False}) as dag:
        PythonOperator(task_id="check", python_callable=_check)
    runs = [(MONDAY, True), (MONDAY, False), (MONDAY, False), (MONDAY, False),
            (WEDNESDAY, False)]
    for i, (day, fail) in enumerate(runs):
        result = dag.test(engine=ui_server.engine, conf={"fail": fail}, run_id=f"cal_{i}",
                          logical_date=day.replace(hour=i))
        assert result.state.value == ("failed" if fail else "success")


@pytest.fixture
def watched(page: Any) -> Iterator[Any]:
    with watching(page):
        yield page


def test_days_are_placed_by_week_and_split_by_state(watched: Any, ui_server: UiServer,
                                                    calendar_runs: None) -> None:
    page = watched
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{ui_server.url}/dags/cal_ui#calendar/2025")
    page.locator('.cal-day[data-date="2025-03-03"] .cal-part').first.wait_for()
    assert page.locator("#calendar-year").inner_text() == "2025"
    assert page.locator("#grid-wrap").is_hidden()
    assert page.locator(".cal-day").count() == 365
    monday, wednesday = page.evaluate(BOX_JS, "2025-03-03"), page.evaluate(BOX_JS, "2025-03-05")
    assert wednesday["left"] == pytest.approx(monday["left"], abs=0.5)  # the same week
    step = wednesday["top"] - monday["top"]
    assert step == pytest.approx(2 * (monday["height"] + 3), abs=1)  # two rows below
    next_monday = page.evaluate(BOX_JS, "2025-03-10")
    assert next_monday["top"] == pytest.approx(monday["top"], abs=0.5)
    assert next_monday["left"] > monday["left"] + monday["width"]
    parts = page.evaluate(PARTS_JS, "2025-03-03")
    assert [p["state"] for p in parts] == ["failed", "success"]
    failed, success = parts
    assert success["height"] == pytest.approx(3 * failed["height"], rel=0.05)  # 3 runs to 1
    assert failed["height"] + success["height"] == pytest.approx(monday["height"], abs=0.5)
    assert success["top"] == pytest.approx(failed["top"] + failed["height"], abs=0.5)
    only = page.evaluate(PARTS_JS, "2025-03-05")
    assert [p["state"] for p in only] == ["success"]
    assert only[0]["height"] == pytest.approx(wednesday["height"], abs=0.5)
    assert page.evaluate(PARTS_JS, "2025-03-04") == []
    assert "5 runs in 2025" in page.locator("#calendar-summary").inner_text()


def test_hover_tells_the_counts_and_click_lists_the_runs(watched: Any, ui_server: UiServer,
                                                         calendar_runs: None) -> None:
    page = watched
    page.goto(f"{ui_server.url}/dags/cal_ui#calendar/2025")
    day = page.locator('.cal-day[data-date="2025-03-03"]')
    day.locator(".cal-part").first.wait_for()
    day.hover()
    tip = page.locator(".cal-tip")
    tip.wait_for()
    assert tip.inner_text() == "2025-03-03: 1 failed, 3 success"
    day.click()
    links = page.locator("#calendar-day a")
    links.nth(3).wait_for()
    assert links.all_inner_texts() == ["cal_0", "cal_1", "cal_2", "cal_3"]
    assert page.locator("#calendar-day .badge.s-failed").count() == 1
    page.click("#calendar-prev")
    expect(page.locator("#calendar-year")).to_have_text("2024")
    assert page.evaluate("location.hash") == "#calendar/2024"
    assert page.locator(".cal-day").count() == 366  # a leap year
    assert page.locator(".cal-part").count() == 0
    page.click("#view-grid")
    assert page.locator("#grid-wrap").is_visible() and page.locator("#calendar-wrap").is_hidden()


def test_the_year_is_one_tab_stop_walked_with_the_arrows(watched: Any, ui_server: UiServer,
                                                         calendar_runs: None) -> None:
    page = watched
    page.goto(f"{ui_server.url}/dags/cal_ui#calendar/2025")
    page.locator('.cal-day[data-date="2025-03-03"] .cal-part').first.wait_for()
    stops = page.locator('.cal-day[tabindex="0"]')
    assert stops.count() == 1 and stops.get_attribute("data-date") == "2025-03-03"
    stops.focus()
    focused = "document.activeElement.dataset.date"
    page.keyboard.press("ArrowDown")
    assert page.evaluate(focused) == "2025-03-04"
    page.keyboard.press("ArrowRight")
    assert page.evaluate(focused) == "2025-03-11"
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowUp")
    assert page.evaluate(focused) == "2025-03-02"
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")  # Wednesday
    page.keyboard.press("Enter")
    expect(page.locator("#calendar-day a")).to_have_text(["cal_4"])
    assert page.locator('.cal-day[tabindex="0"]').count() == 1


def test_a_month_by_the_hour(watched: Any, ui_server: UiServer, calendar_runs: None) -> None:
    page = watched
    page.goto(f"{ui_server.url}/dags/cal_ui#calendar/2025")
    page.locator('.cal-day[data-date="2025-03-03"] .cal-part').first.wait_for()
    page.click('.cal-day[data-date="2025-03-03"]')
    page.select_option("#calendar-granularity", "hourly")
    expect(page.locator("#calendar-year")).to_have_text("Mar 2025")
    assert page.evaluate("location.hash") == "#calendar/2025-03"
    assert page.locator(".cal-day").count() == 31 * 24
    # the runs on the 3rd are at 00:00 (failed), 01:00, 02:00 and 03:00; the 5th's at 04:00
    filled = page.eval_on_selector_all(
        ".cal-day.cal-has-runs", "(gs) => gs.map((g) => g.dataset.date)")
    assert filled == ["2025-03-03T00", "2025-03-03T01", "2025-03-03T02", "2025-03-03T03",
                      "2025-03-05T04"]
    assert page.evaluate(PARTS_JS, "2025-03-03T00")[0]["state"] == "failed"
    one, two = page.evaluate(BOX_JS, "2025-03-03T00"), page.evaluate(BOX_JS, "2025-03-03T01")
    assert two["top"] == pytest.approx(one["top"], abs=0.5)  # an hour to the right
    assert two["left"] == pytest.approx(one["left"] + one["width"] + 3, abs=1)
    below = page.evaluate(BOX_JS, "2025-03-04T00")
    assert below["left"] == pytest.approx(one["left"], abs=0.5)  # a day below
    page.click('.cal-day[data-date="2025-03-05T04"]')
    expect(page.locator("#calendar-day a")).to_have_text(["cal_4"])
    page.click("#calendar-next")
    expect(page.locator("#calendar-year")).to_have_text("Apr 2025")
    assert page.locator(".cal-day").count() == 30 * 24

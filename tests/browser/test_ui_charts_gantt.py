"""The run page's Gantt chart, drawn by uPlot under the page's strict CSP: one lane per started
task instance in the order they started, a 4 s try's bar twice as long as a 2 s try's (read from
the canvas's pixels) and starting where the 2 s one ends, and no console error or CSP
violation."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from playwright.sync_api import expect
from ui_harness import UiServer

from statewright.core.clock import ManualClock

ARTIFACTS = Path(__file__).parent / "artifacts"
WATCH_CSP = """
window.__csp = [];
document.addEventListener("securitypolicyviolation",
  (e) => window.__csp.push(
    `${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`));
"""
# Where lane i's success-coloured pixels are on the canvas row through its middle.
LANE_JS = """(i) => {
  const u = window.statewrightGantt.chart();
  const n = window.statewrightGantt.lanes().length;
  const canvas = document.querySelector('#run-gantt canvas');
  const y = Math.round(u.valToPos(n - 1 - i, 'y', true));
  const row = canvas.getContext('2d').getImageData(0, y, canvas.width, 1).data;
  const xs = [];
  for (let x = 0; x < canvas.width; x++) {
    const [r, g, b] = [row[4 * x], row[4 * x + 1], row[4 * x + 2]];
    if (Math.abs(r - 0x1f) < 12 && Math.abs(g - 0x88) < 12 && Math.abs(b - 0x3d) < 12) xs.push(x);
  }
  return xs.length ? { left: xs[0], right: xs[xs.length - 1], count: xs.length } : null; }"""


@pytest.fixture(scope="module")
def gantt_run(ui_server: UiServer) -> str:
    """A run of ``gantt_timed``: ``short`` runs 2 s, then ``long`` 4 s."""
    from statewright.sdk import DAG, PythonOperator

    clock = ManualClock()
    with DAG("gantt_timed", schedule=None) as dag:
        PythonOperator(task_id="short", python_callable=lambda: clock.advance(2.0)) >> (
            PythonOperator(task_id="long", python_callable=lambda: clock.advance(4.0)))
    result = dag.test(engine=ui_server.engine, clock=clock, sleep=clock.advance,
                      run_id="gantt_2_4")
    assert result.state.value == "success"
    return str(result.run_id)


@pytest.fixture
def watched(page: Any) -> Iterator[Any]:
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
            if m.type == "error" else None)
    page.add_init_script(WATCH_CSP)
    yield page
    problems += [f"CSP: {v}" for v in page.evaluate("window.__csp || []")]
    assert problems == []


def test_gantt_bars_are_as_long_as_their_tries(watched: Any, ui_server: UiServer,
                                                gantt_run: str) -> None:
    page = watched
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{ui_server.url}/dags/gantt_timed/runs/{quote(gantt_run, safe='')}")
    canvas = page.locator("#run-gantt canvas")
    canvas.wait_for()
    size = canvas.bounding_box()
    assert size["width"] > 600 and size["height"] >= 100
    assert page.evaluate("window.statewrightGantt.lanes().map((l) => l.label)") == [
        "short", "long"]
    short, long = page.evaluate(LANE_JS, 0), page.evaluate(LANE_JS, 1)
    assert short["count"] > 100
    assert long["count"] == pytest.approx(2 * short["count"], rel=0.05)  # 4 s against 2 s
    assert long["left"] == pytest.approx(short["right"], abs=3)  # long starts as short ends
    page.locator("#run-gantt").screenshot(path=str(_artifact("run_gantt_1440.png")))


def test_hovering_a_bar_names_it(watched: Any, ui_server: UiServer, gantt_run: str) -> None:
    page = watched
    page.goto(f"{ui_server.url}/dags/gantt_timed/runs/{quote(gantt_run, safe='')}")
    page.locator("#run-gantt canvas").wait_for()
    # where the long bar's middle is, in the chart's plotting area (u.over): the hover is placed
    # against that element when it happens, so the page's later sections moving it lose nothing
    point = page.evaluate("""() => { const u = window.statewrightGantt.chart();
      const l = window.statewrightGantt.lanes()[1];
      return { x: u.valToPos((l.start + l.end) / 2, 'x'), y: u.valToPos(0, 'y') }; }""")
    over = page.locator("#run-gantt .u-over")
    over.hover(position=point)
    # the chart names the bar in its mousemove handler, after the move's event: wait for it
    expect(over).to_have_attribute(
        "title", re.compile(r"^long · success · try 1.*ran 4\.00 s"), timeout=60_000)


def _artifact(name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS / name


def test_a_run_before_any_start_says_so_on_both_charts(
        watched: Any, ui_server: UiServer) -> None:
    import httpx

    from statewright.core.clock import utcnow
    from statewright.db.engine import transaction
    from statewright.db.repositories import dags as dag_repo
    from statewright.sdk import DAG, EmptyOperator

    with DAG("gantt_waiting", schedule=None) as dag:
        EmptyOperator(task_id="wait")
    with transaction(ui_server.engine) as conn:
        dag_repo.upsert_dag(conn, dag.serialize(), now=utcnow())
    page = watched
    page.goto(f"{ui_server.url}/dags/gantt_waiting#durations")
    page.locator("#durations-chart p", has_text="No runs yet.").wait_for()
    r = httpx.post(f"{ui_server.url}/api/v1/dags/gantt_waiting/dagRuns",
                   json={"dag_run_id": "waiting"}, headers=ui_server.headers)
    assert r.status_code == 200, r.text
    page.goto(f"{ui_server.url}/dags/gantt_waiting/runs/waiting")
    page.locator("#run-gantt p", has_text="No task instance has started yet.").wait_for()
    assert page.locator("#run-gantt canvas").count() == 0
    page.goto(f"{ui_server.url}/dags/gantt_waiting#durations")
    page.locator("#durations-chart canvas").wait_for()  # a bar-less chart of the queued run
    assert page.locator("#durations-summary").text_content() == ""


FITS_JS = """() => { const box = document.querySelector('#run-gantt');
  const chart = box.querySelector('.uplot').getBoundingClientRect().width;
  return Math.abs(chart - box.clientWidth) <= 1; }"""


def test_the_gantt_follows_its_box_when_the_task_panel_opens(
        watched: Any, ui_server: UiServer, gantt_run: str) -> None:
    """The chart is drawn at its box's width in pixels; the task panel opening beside the run's
    sections narrows the box, and the chart is drawn again at the new width (it overflowed
    under the panel before), its bars still in proportion."""
    page = watched
    page.goto(f"{ui_server.url}/dags/gantt_timed/runs/{quote(gantt_run, safe='')}")
    page.locator("#run-gantt canvas").wait_for()
    assert page.evaluate(FITS_JS)
    wide = page.evaluate("() => document.querySelector('#run-gantt').clientWidth")
    page.locator("#tis tbody tr").first.click()
    page.locator("#panel").wait_for(state="visible")
    page.wait_for_function(FITS_JS)
    assert page.evaluate("() => document.querySelector('#run-gantt').clientWidth") < wide - 200
    short, long = page.evaluate(LANE_JS, 0), page.evaluate(LANE_JS, 1)
    assert long["count"] == pytest.approx(2 * short["count"], rel=0.05)
    assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth")


def test_a_run_of_milliseconds_fills_the_chart(watched: Any, ui_server: UiServer) -> None:
    """The time axis spans the run's lanes, however short: a task that runs 50 ms runs across
    the plot (not a sliver at its left, as under the one-second minimum the axis had)."""
    from statewright.sdk import DAG, PythonOperator

    clock = ManualClock()
    with DAG("gantt_quick", schedule=None) as dag:
        PythonOperator(task_id="quick", python_callable=lambda: clock.advance(0.05))
    result = dag.test(engine=ui_server.engine, clock=clock, sleep=clock.advance,
                      run_id="gantt_50ms")
    page = watched
    page.goto(f"{ui_server.url}/dags/gantt_quick/runs/{quote(str(result.run_id), safe='')}")
    page.locator("#run-gantt canvas").wait_for()
    share = page.evaluate("""() => { const u = window.statewrightGantt.chart();
      const [l] = window.statewrightGantt.lanes();
      const span = u.valToPos(l.end, 'x') - u.valToPos(l.queued ?? l.start, 'x');
      return { span: span / u.over.clientWidth, ran: l.end - l.start }; }""")
    assert share["ran"] == pytest.approx(0.05, abs=0.001)
    assert share["span"] > 0.9

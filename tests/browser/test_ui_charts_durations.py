"""The DAG page's Durations tab, drawn by uPlot (vendored, byte-identical to the published
package) under the page's strict CSP: the chart's canvas is there and sized, a 4 s run's bar is
twice as tall as a 2 s run's (read from the canvas's pixels), a chosen task gets its own bars,
a bar opens its run, and the page logs no console error and no CSP violation."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ui_harness import UiServer

from statewright.core.clock import ManualClock

VENDOR = Path(__file__).resolve().parents[2] / "src/statewright/api/ui/static/vendor"
ARTIFACTS = Path(__file__).parent / "artifacts"
WATCH_CSP = """
window.__csp = [];
document.addEventListener("securitypolicyviolation",
  (e) => window.__csp.push(
    `${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`));
"""
# How many canvas pixels of a colour the column through run i's bar of one series holds.
BAR_PIXELS_JS = """([i, series, rgb]) => {
  const u = window.statewrightDurations.chart();
  const canvas = document.querySelector('#durations-chart canvas');
  const ctx = canvas.getContext('2d');
  const shift = u.series.length > 2 ? (series === 1 ? -10 : 10) * devicePixelRatio : 0;
  const x = Math.round(u.valToPos(i, 'x', true) + shift);
  const col = ctx.getImageData(x, 0, 1, canvas.height).data;
  let n = 0;
  for (let y = 0; y < canvas.height; y++) {
    const [r, g, b] = [col[4 * y], col[4 * y + 1], col[4 * y + 2]];
    if (Math.abs(r - rgb[0]) < 12 && Math.abs(g - rgb[1]) < 12 && Math.abs(b - rgb[2]) < 12) n++;
  }
  return n; }"""
ACCENT = [0x09, 0x69, 0xDA]
TASK = [0x82, 0x50, 0xDF]


@pytest.fixture(scope="module")
def charted_runs(ui_server: UiServer) -> list[str]:
    """Runs of the DAG ``charted`` taking 2 s, 4 s and 2 s, oldest first."""
    from statewright.sdk import DAG, PythonOperator

    clock = ManualClock()
    took = {"s": 0.0}
    with DAG("charted", schedule=None) as dag:
        PythonOperator(task_id="work", python_callable=lambda: clock.advance(took["s"]))
    runs = []
    for n, seconds in enumerate((2.0, 4.0, 2.0)):
        took["s"] = seconds
        result = dag.test(engine=ui_server.engine, clock=clock, sleep=clock.advance,
                          run_id=f"charted_{n}_{int(seconds)}s")
        assert result.state.value == "success"
        runs.append(result.run_id)
        clock.advance(3600)
    return runs


@pytest.fixture
def watched(page: Any) -> Iterator[Any]:
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
            if m.type == "error" else None)
    page.add_init_script(WATCH_CSP)
    yield page
    problems += [f"CSP: {v}" for v in page.evaluate("window.__csp || []")]
    assert problems == []


def test_uplot_is_vendored_with_its_licence_and_recorded_hashes() -> None:
    manifest = json.loads((VENDOR / "vendored.json").read_text())
    (pkg,) = [p for p in manifest["packages"] if p["name"] == "uplot"]
    assert pkg["license"] == "MIT" and pkg["version"] == "1.6.32"
    for name, spec in pkg["files"].items():
        assert hashlib.sha256((VENDOR / name).read_bytes()).hexdigest() == spec["sha256"], name
    assert "Copyright" in (VENDOR / "uPlot.LICENSE").read_text()
    script = (VENDOR / "uPlot.iife.min.js").read_text()
    assert "eval(" not in script and "new Function" not in script


def _open_durations(page: Any, ui_server: UiServer) -> None:
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{ui_server.url}/dags/charted")
    page.click("#view-durations")
    page.locator("#durations-chart canvas").wait_for()
    assert "#durations" in page.url
    assert page.locator(".grid-layout").is_hidden()


def test_run_durations_are_drawn_to_scale(watched: Any, ui_server: UiServer,
                                          charted_runs: list[str]) -> None:
    page = watched
    _open_durations(page, ui_server)
    box = page.locator("#durations-chart canvas").bounding_box()
    assert box["width"] > 600 and box["height"] > 150
    assert page.locator("#durations-summary").text_content() == (
        "3 runs · median 2.00 s · longest 4.00 s")
    bars = [page.evaluate(BAR_PIXELS_JS, [i, 1, ACCENT]) for i in range(3)]
    assert bars[0] > 40
    assert bars[1] == pytest.approx(2 * bars[0], rel=0.1)  # 4 s against 2 s
    assert bars[2] == pytest.approx(bars[0], rel=0.05)
    page.screenshot(path=str(_artifact("durations_1440.png")), full_page=True)


def test_a_chosen_task_gets_its_own_bars(watched: Any, ui_server: UiServer,
                                         charted_runs: list[str]) -> None:
    page = watched
    _open_durations(page, ui_server)
    page.select_option("#durations-task", "work")
    page.wait_for_function("window.statewrightDurations.chart().series.length === 3")
    task = [page.evaluate(BAR_PIXELS_JS, [i, 2, TASK]) for i in range(3)]
    assert task[0] > 40
    assert task[1] == pytest.approx(2 * task[0], rel=0.1)
    assert "Task work" in page.locator("#durations-chart .u-legend").text_content()


def test_a_bar_opens_its_run_and_the_tab_survives_a_reload(
        watched: Any, ui_server: UiServer, charted_runs: list[str]) -> None:
    page = watched
    _open_durations(page, ui_server)
    page.reload()
    page.locator("#durations-chart canvas").wait_for()
    assert page.locator("#grid-wrap").is_hidden()
    # the second run's bar, placed against the chart's plotting area when the click happens
    # (sections that load later may still move the chart down the page)
    point = page.evaluate("""() => { const u = window.statewrightDurations.chart();
      return { x: u.valToPos(1, 'x'), y: u.valToPos(1, 'y') }; }""")
    page.locator("#durations-chart .u-over").click(position=point)
    page.wait_for_url(f"**/runs/{charted_runs[1]}")
    page.locator("#run-gantt canvas").wait_for()
    page.goto(f"{ui_server.url}/dags/charted#durations")
    page.locator("#durations-chart canvas").wait_for()
    page.click("#view-grid")
    assert page.locator("#grid-wrap").is_visible() and page.locator("#durations-wrap").is_hidden()


def _artifact(name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS / name


def test_the_chart_follows_the_window_when_it_narrows(
        watched: Any, ui_server: UiServer, charted_runs: list[str]) -> None:
    page = watched
    _open_durations(page, ui_server)
    fits = """() => { const box = document.querySelector('#durations-chart');
      const chart = box.querySelector('.uplot').getBoundingClientRect().width;
      return Math.abs(chart - box.clientWidth) <= 1; }"""
    assert page.evaluate(fits)
    page.set_viewport_size({"width": 1000, "height": 900})
    page.wait_for_function(fits)
    assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth")

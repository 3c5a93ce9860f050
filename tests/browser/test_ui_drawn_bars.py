"""What the UI draws, drawn right under the page's strict CSP (``style-src 'self'``): the run
page's timeline bars and the grid's run bars are as long as the time they stand for, and a page
visit logs no console error and no CSP violation. Screenshots go to tests/browser/artifacts/."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from ui_harness import UiServer

from statewright.core.clock import ManualClock

ARTIFACTS = Path(__file__).parent / "artifacts"
WATCH_CSP = """
window.__csp = [];
document.addEventListener("securitypolicyviolation",
  (e) => window.__csp.push(
    `${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`));
"""


def _timed_dag(unit: dict[str, float], clock: ManualClock) -> Any:
    """``short`` takes one unit of the run's clock, then ``long`` two units."""
    from statewright.sdk import DAG, PythonOperator

    def short() -> None:
        clock.advance(unit["s"])

    def long() -> None:
        clock.advance(2 * unit["s"])

    with DAG("timed", schedule=None) as dag:
        PythonOperator(task_id="short", python_callable=short) >> PythonOperator(
            task_id="long", python_callable=long)
    return dag


@pytest.fixture(scope="module")
def timed_runs(ui_server: UiServer) -> dict[float, str]:
    """Two runs of the DAG ``timed``: tries of 1 s and 2 s, then tries of 2 s and 4 s."""
    clock = ManualClock()
    unit: dict[str, float] = {}
    dag = _timed_dag(unit, clock)
    runs = {}
    for seconds in (1.0, 2.0):
        unit["s"] = seconds
        result = dag.test(engine=ui_server.engine, clock=clock, sleep=clock.advance,
                          run_id=f"timed_{int(seconds)}")
        assert result.state.value == "success"
        runs[seconds] = result.run_id
        clock.advance(60)
    return runs


@pytest.fixture
def watched(page: Any) -> Iterator[tuple[Any, list[str]]]:
    """The page, and the console errors and CSP violations it reports (checked at the end)."""
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
            if m.type == "error" else None)
    page.add_init_script(WATCH_CSP)
    yield page, problems
    problems += [f"CSP: {v}" for v in page.evaluate("window.__csp || []")]
    assert problems == []


def _bar(page: Any, lane: str) -> dict[str, float]:
    """Where one timeline lane's running bar is: left and width in px."""
    box = page.evaluate(
        """(lane) => { const row = [...document.querySelectorAll('#gantt .g-row')]
             .find((r) => r.querySelector('.g-label').textContent === lane);
           const r = row.querySelector('.g-seg.s-running').getBoundingClientRect();
           return { x: r.x, width: r.width }; }""", lane)
    return {"x": float(box["x"]), "width": float(box["width"])}


def test_timeline_bars_are_as_long_as_their_tries(watched: tuple[Any, list[str]],
                                                   ui_server: UiServer,
                                                   timed_runs: dict[float, str]) -> None:
    page, _ = watched
    page.goto(f"{ui_server.url}/dags/timed/runs/{quote(timed_runs[2.0], safe='')}")
    page.locator("#gantt .g-seg").first.wait_for()
    track = page.locator("#gantt .g-track").first.bounding_box()
    short, long = _bar(page, "short"), _bar(page, "long")
    assert long["width"] == pytest.approx(2 * short["width"], rel=0.1)  # 4 s against 2 s
    assert short["width"] + long["width"] > 0.8 * track["width"]  # the tries are the run
    assert long["x"] == pytest.approx(short["x"] + short["width"], abs=3)  # long follows short
    assert long["x"] > track["x"] + 0.25 * track["width"]
    page.set_viewport_size({"width": 1280, "height": 900})
    page.screenshot(path=str(_artifact("run_page_1280.png")), full_page=True)
    page.set_viewport_size({"width": 1920, "height": 1000})
    page.screenshot(path=str(_artifact("run_page_1920.png")), full_page=True)


def test_grid_run_bars_are_as_tall_as_their_runs(watched: tuple[Any, list[str]],
                                                 ui_server: UiServer,
                                                 timed_runs: dict[float, str]) -> None:
    page, _ = watched
    page.goto(f"{ui_server.url}/dags/timed")
    heights = {}
    for seconds, run_id in timed_runs.items():
        bar = page.locator(f"table.grid a.runbar[href$='/runs/{quote(run_id, safe='')}']")
        bar.wait_for()
        heights[seconds] = bar.bounding_box()["height"]
    assert heights[2.0] == pytest.approx(2 * heights[1.0], rel=0.1)  # 6 s against 3 s
    assert heights[2.0] >= 50
    page.set_viewport_size({"width": 1280, "height": 900})
    page.screenshot(path=str(_artifact("grid_1280.png")), full_page=True)
    page.set_viewport_size({"width": 1920, "height": 1000})
    page.screenshot(path=str(_artifact("grid_1920.png")), full_page=True)


def _artifact(name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS / name

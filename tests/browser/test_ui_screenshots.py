"""Screenshots of the web UI's main views at 1280 and 1920 px, kept for review: the DAG list, the
grid (with the task panel open), the graph, the durations and calendar charts, the run page with
its Gantt, a task instance's page, the assets, and the admin pages for pools and users.

They are written to ``$STATEWRIGHT_SCREENSHOTS_DIR`` when it is set (``test-artifacts/
screenshots``, ignored by git, is the usual one), else to ``screenshots/`` under pytest's base
temporary directory; the test prints where. At 1280 px no view may be wider than the window
(``document.documentElement.scrollWidth <= innerWidth``: nothing overflows horizontally)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from ui_harness import UiServer


@pytest.fixture(scope="module")
def screenshots_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    chosen = os.environ.get("STATEWRIGHT_SCREENSHOTS_DIR")
    folder = Path(chosen) if chosen else tmp_path_factory.getbasetemp() / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _views(server: UiServer) -> list[tuple[str, str, Callable[[Any], None]]]:
    """(name, path, what to do on the page before the shot)."""
    run = quote(server.failed_run_id, safe="")

    def wait_for(selector: str) -> Callable[[Any], None]:
        return lambda page: page.locator(selector).first.wait_for()

    def click(button: str, selector: str) -> Callable[[Any], None]:
        def act(page: Any) -> None:  # (the DAG page opens in the view last chosen)
            page.click(button)
            page.locator(selector).first.wait_for()
        return act

    def open_panel(page: Any) -> None:
        page.click("#view-grid")
        page.locator("table.grid button.cell[data-task-id='check']").last.click()
        page.locator("#panel-task-id").wait_for()

    return [
        ("dags", "/", wait_for("#dag-rows tr")),
        ("grid", "/dags/orders", open_panel),
        ("graph", "/dags/orders", click("#view-graph", "#graph g.graph-node")),
        ("durations", "/dags/orders", click("#view-durations", "#durations-chart canvas")),
        ("calendar", "/dags/orders", click("#view-calendar", "#calendar-chart .cal-day")),
        ("run_gantt", f"/dags/orders/runs/{run}", wait_for("#run-gantt canvas")),
        ("task_instance", f"/dags/orders/runs/{run}/tasks/check", wait_for("#panel-task-id")),
        ("assets", "/assets", wait_for("#asset-table")),
        ("admin_pools", "/pools", wait_for("#pools tbody tr")),
        ("admin_users", "/users", wait_for("#users tbody tr")),
    ]


@pytest.mark.parametrize("width", [1280, 1920])
def test_screenshots_of_the_main_views_and_nothing_overflows_at_1280(
        page: Any, ui_server: UiServer, screenshots_dir: Path, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    overflowing: list[str] = []
    taken: list[Path] = []
    for name, path, prepare in _views(ui_server):
        page.goto(ui_server.url + path)
        prepare(page)
        page.wait_for_load_state("networkidle")
        wide = page.evaluate("() => [document.documentElement.scrollWidth, innerWidth]")
        if width == 1280 and wide[0] > wide[1]:
            overflowing.append(f"{name} ({path}): {wide[0]} px wide in a {wide[1]} px window")
        shot = screenshots_dir / f"{name}_{width}.png"
        page.screenshot(path=str(shot), full_page=True)
        taken.append(shot)
    print(f"screenshots at {width} px: {screenshots_dir}")
    assert overflowing == [], "\n".join(overflowing)
    for shot in taken:  # real images, of the window's width
        data = shot.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        assert int.from_bytes(data[16:20], "big") == width, shot.name

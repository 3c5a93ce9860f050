"""The grid and the graph in Chromium (not a test). Prints one JSON line.

Builds, in a fresh SQLite database, a DAG of ``--tasks`` tasks with ``--runs`` finished runs
(``grid.py``'s build) and a DAG of ``--graph-tasks`` tasks in layers of 10 (each task wired to
two of the layer before), serves the web UI on a free port (uvicorn in this process) and drives
Debian's Chromium (``/usr/bin/chromium``) through Playwright, signed in as an admin:

- ``grid_open_ms``: from the start of the navigation to ``/dags/<dag>`` to the grid drawn: the
  page's ``grid:drawn`` event (the table of every cell built and in the document), then one
  animation frame and a task (the browser has laid the table out and painted it). The page
  tells it with a console message, so nothing of Playwright's runs in the page meanwhile. It
  includes the server's page (with the compact grid embedded), the scripts, decoding and
  drawing.
  ``grid_drawn_ms`` is the same up to the event only; ``grid_cells_drawn`` counts the cells in
  the document then, ``grid_scrolled_cells`` after scrolling to the grid's end.
- ``graph_layout_ms``: a click on the Graph tab to the graph laid out (dagre) and drawn (the
  click handler returns after drawing), as the browser test of the layout measures it.

Each figure is measured ``--repeat`` times (a fresh page for each open of the grid); the min
and median are printed. ``cpu_s`` covers every process while measuring: this one (the server's
threads), Playwright's driver and every Chromium process (``cpu_ms_per_open``: per open of the
grid; ``graph_cpu_ms_per_layout``: per layout of the graph), with the host's speed and load
(``_cpu.py``).

Usage: python bench/grid_browser.py [--tasks 1000] [--runs 25] [--graph-tasks 500] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import statistics
import tempfile
import time
from datetime import timedelta
from typing import Any

from _cpu import CpuMeter, host_speed
from grid import build

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
# Set before the page's scripts run: when the grid is drawn, and painted a frame later; an
# error (a script that failed to load, or failed) ends the wait.
MARK_DRAWN = """document.addEventListener("grid:drawn", () => {
  if (window.__gridDrawn) return;
  window.__gridDrawn = performance.now();
  const frame = (then) => requestAnimationFrame(() => setTimeout(then));
  frame(() => frame(() => {
    window.__gridPainted = performance.now();
    window.__gridWaiting = [...document.querySelectorAll("#grid td.lazy-cells")].filter((td) => {
      const r = td.getBoundingClientRect();
      return r.bottom > 0 && r.top < innerHeight; }).length;
    console.debug("grid:painted");
  }));
});
window.addEventListener("error", () => { console.debug("grid:failed"); }, true);"""
DONE = ("grid:painted", "grid:failed")
# Chromium's processes by type (before the default roles: a Chromium flag names "scheduler")
ROLES = (("--type=renderer", "chromium_renderer"), ("--type=gpu-process", "chromium_gpu"),
         ("--type=utility", "chromium_utility"), ("chromium", "chromium_browser"),
         ("playwright", "playwright"))
GRAPH_CLICK = """() => { document.getElementById('view-grid').click();
  const t0 = performance.now();
  document.getElementById('view-graph').click();
  return performance.now() - t0; }"""


def store_graph_dag(engine: Any, dag_id: str, n_tasks: int) -> None:
    from statewright.core.clock import utcnow
    from statewright.db.engine import transaction
    from statewright.db.repositories import dags as dag_repo

    layers = [[f"t{layer}_{i}" for i in range(10)] for layer in range(max(1, n_tasks // 10))]
    tasks = []
    for layer, names in enumerate(layers):
        before = layers[layer - 1] if layer else []
        after = layers[layer + 1] if layer + 1 < len(layers) else []
        for i, name in enumerate(names):
            tasks.append({"task_id": name, "upstream": before[i:i + 2],
                          "downstream": [d for j, d in enumerate(after) if i in (j, j - 1)]})
    with transaction(engine) as conn:
        dag_repo.upsert_dag(conn, {"dag_id": dag_id, "fileloc": None, "tasks": tasks},
                            now=utcnow())


def session_cookie(engine: Any, url: str) -> dict[str, Any]:
    from statewright.core.clock import utcnow
    from statewright.services.auth.accounts import create_token, create_user

    create_user(engine, "bench", "bench-password", "admin", utcnow())
    secret, _ = create_token(engine, "bench", kind="session", name="web UI", now=utcnow(),
                             lifetime=timedelta(hours=1))
    return {"name": "statewright_session", "value": secret, "url": url + "/",
            "httpOnly": True, "sameSite": "Lax"}


def open_grid(context: Any, url: str) -> tuple[float, float, int, int]:
    """One open of the grid in a fresh page: (painted ms, drawn ms, cells drawn, rows in view
    without their cells). A load that
    lost a request (Chromium's ERR_NETWORK_CHANGED when the host's interfaces change) is
    measured again, up to three times."""
    for _ in range(3):
        page = context.new_page()
        failed: list[str] = []
        page.on("requestfailed", lambda r, lost=failed: lost.append(r.url))
        page.add_init_script(MARK_DRAWN)
        # waits for the page's console message, not with wait_for_function: that evaluates
        # Playwright's injected script in the page while it loads (about 100 ms of the
        # renderer's main thread on a busy host, which the open's figure counted)
        with page.expect_console_message(lambda m: m.text in DONE, timeout=120_000):
            page.goto(url, wait_until="commit")
        drawn, painted, waiting = page.evaluate(
            "() => [window.__gridDrawn, window.__gridPainted, window.__gridWaiting]")
        n = page.locator("#grid table.grid button.cell").count()
        page.close()
        if painted and not failed:
            return painted, drawn, n, waiting
    raise RuntimeError(f"the grid was not drawn: requests failed: {failed}")


def scrolled_cells(context: Any, url: str) -> int:
    """The cells drawn after scrolling the grid to its last row."""
    page = context.new_page()
    page.goto(url)
    page.locator("#grid table.grid button.cell").first.wait_for(timeout=120_000)
    page.locator("#grid table.grid tbody tr").last.scroll_into_view_if_needed()
    page.locator("#grid table.grid tbody tr:last-child button.cell").first.wait_for()
    n = int(page.locator("#grid table.grid button.cell").count())
    page.close()
    return n


def _summary(name: str, values: list[float]) -> dict[str, float]:
    return {f"{name}_min": round(min(values), 1),
            f"{name}_median": round(statistics.median(values), 1)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=25)
    parser.add_argument("--graph-tasks", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    host_speed()
    from playwright.sync_api import sync_playwright

    from statewright.api.server import make_server
    from statewright.config import load_settings
    from statewright.db.engine import make_engine
    from statewright.db.migrate import migrate

    logging.disable(logging.WARNING)
    tmp = tempfile.mkdtemp(prefix="sw-bench-grid-browser-")
    engine = make_engine(f"sqlite:///{tmp}/bench.db")
    server = None
    try:
        migrate(engine)
        t0 = time.perf_counter()
        build(engine, "grid", args.tasks, args.runs)
        store_graph_dag(engine, "graph", args.graph_tasks)
        build_seconds = time.perf_counter() - t0
        server = make_server(engine, load_settings({"STATEWRIGHT_HOME": tmp}),
                             host="127.0.0.1", port=0)
        thread = server.start_thread()
        url = server.url.rstrip("/")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport={"width": 1920, "height": 1000})
            context.add_cookies([session_cookie(engine, url)])
            scrolled = scrolled_cells(context, f"{url}/dags/grid")  # and a warm-up
            graph = context.new_page()
            graph.goto(f"{url}/dags/graph")
            graph.locator("table.grid").wait_for()
            graph.evaluate(GRAPH_CLICK)  # warm-up
            with CpuMeter(roles=ROLES) as cpu:
                opens = [open_grid(context, f"{url}/dags/grid") for _ in range(args.repeat)]
            with CpuMeter(roles=ROLES) as graph_cpu:
                layouts = [graph.evaluate(GRAPH_CLICK) for _ in range(args.repeat)]
            nodes = graph.locator("#graph g.graph-node").count()
            browser.close()
        assert nodes == args.graph_tasks, f"{nodes} graph nodes of {args.graph_tasks}"
        print(json.dumps({
            "bench": "grid_browser", "tasks": args.tasks, "runs": args.runs,
            "cells": args.tasks * args.runs, "graph_tasks": args.graph_tasks,
            "build_seconds": round(build_seconds, 2), "grid_cells_drawn": opens[0][2],
            "rows_in_view_without_cells": max(o[3] for o in opens),
            "grid_scrolled_cells": scrolled,
            **_summary("grid_open_ms", [o[0] for o in opens]),
            **_summary("grid_drawn_ms", [o[1] for o in opens]),
            **_summary("graph_layout_ms", layouts),
            **cpu.figures(args.repeat, "open"),
            "graph_cpu_ms_per_layout": graph_cpu.figures(args.repeat, "layout")[
                "cpu_ms_per_layout"]}))
        server.stop()
        thread.join(10)
    finally:
        engine.dispose()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

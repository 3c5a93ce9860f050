"""Live updates in a real browser: a run's success reaches the grid from the live stream, not
from a poll.

The page's polls are lengthened to ten minutes (``window.statewrightPollMs``, read by app.js), so
what the grid shows within the generous bounds below can only have come from the action's own
refresh or from a live event: the bounds prove the cause without racing the 2 s poll."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from ui_harness import UiServer, add_user, serving

from statewright.config import load_settings
from statewright.core.clock import utcnow
from statewright.db.engine import make_engine, transaction
from statewright.db.migrate import migrate
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import runs as run_repo
from statewright.db.tables import state_transition
from statewright.sdk import DAG, EmptyOperator
from statewright.services.dag_view import DagViewCache
from statewright.services.executors.inprocess import InProcessExecutor
from statewright.services.scheduler.scheduler import Scheduler, SchedulerConfig


def live_dag() -> DAG:
    with DAG("live_pipe", schedule=None, tags=["live"]) as dag:
        EmptyOperator(task_id="first") >> EmptyOperator(task_id="second")
    return dag


@pytest.fixture(scope="module")
def ui_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    """Overrides the shared one: a DAG that only this module runs, unpaused (the browser
    fixture skips the module where Chromium is missing)."""
    home = tmp_path_factory.mktemp("live")
    settings = load_settings({"STATEWRIGHT_HOME": str(home),
                              "STATEWRIGHT_LOGS_FOLDER": str(home / "logs")})
    engine = make_engine(settings.database_url)
    migrate(engine)
    with transaction(engine) as conn:
        dag_repo.upsert_dag(conn, live_dag().serialize(), now=utcnow())
        dag_repo.set_paused(conn, "live_pipe", False)
    headers = add_user(engine, "admin", "admin")
    with serving(engine, settings) as url:
        yield UiServer(url, engine, "", headers, settings.logs_folder)
    engine.dispose()


def _run_to_the_end(server: UiServer, run_id: str, logs: Path) -> None:
    views = DagViewCache()
    executor = InProcessExecutor(server.engine, dags={"live_pipe": live_dag()}, views=views,
                                 logs_folder=logs)
    scheduler = Scheduler(server.engine, executor, views=views,
                          config=SchedulerConfig(idle_seconds=0.0))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        scheduler.run_once()
        with server.engine.connect() as conn:
            run = run_repo.get_by_run_id(conn, "live_pipe", run_id)
        if run is not None and run.state == "success":
            return
        time.sleep(0.05)
    pytest.fail(f"run {run_id} did not succeed")


def _committed_at_ms(server: UiServer, run_id: str) -> float:
    st = state_transition
    with server.engine.connect() as conn:
        at = conn.execute(select(st.c.at).where(
            st.c.dag_id == "live_pipe", st.c.run_id == run_id, st.c.entity == "dag_run",
            st.c.to_state == "success")).scalar_one()
    return float(at.timestamp() * 1000)


NO_POLL = "window.statewrightPollMs = { live: 600000, idle: 600000 };"
BOUND_MS = 60_000
"""Well under the ten-minute polls: a change shown within it was not a poll's."""


def test_the_grid_shows_a_runs_success_before_its_next_poll(
        page: Any, ui_server: UiServer, tmp_path: Path) -> None:
    page.add_init_script(NO_POLL)
    page.goto(ui_server.url + "/dags/live_pipe")
    page.locator("body[data-live='open']").wait_for()
    page.evaluate("""() => {
      window.seen = {};
      const look = () => {
        for (const bar of document.querySelectorAll("#grid .runbar")) {
          const state = [...bar.classList].find((c) => c.startsWith("s-"));
          const key = bar.getAttribute("aria-label").split(":")[0] + " " + state;
          if (!(key in window.seen)) window.seen[key] = Date.now();
        }
      };
      new MutationObserver(look).observe(document.querySelector("#grid"),
        { childList: true, subtree: true, attributes: true });
    }""")
    page.click("#dag-trigger")
    page.fill("#trigger-run-id", "live_1")
    clicked = page.evaluate("() => Date.now()")
    page.click("#trigger-submit")
    # The action refreshes its view at once: the new run's column comes without waiting a poll.
    page.wait_for_function(
        "() => Object.keys(window.seen).some((k) => k.startsWith('run live_1'))",
        timeout=BOUND_MS)
    seen = page.evaluate("() => window.seen")
    shown = min(v for k, v in seen.items() if k.startswith("run live_1"))
    assert shown - clicked < BOUND_MS, f"the new run showed {shown - clicked} ms after the click"

    _run_to_the_end(ui_server, "live_1", tmp_path / "logs")
    page.wait_for_function("() => 'run live_1 s-success' in window.seen", timeout=BOUND_MS)
    lag = page.evaluate("() => window.seen['run live_1 s-success']") - _committed_at_ms(
        ui_server, "live_1")
    print(f"grid showed the success {lag:.0f} ms after its commit")
    assert lag < BOUND_MS, f"the grid showed the success {lag:.0f} ms after its commit"
    assert page.locator("button.cell.s-success[data-run-id='live_1']").count() == 2


def test_a_hidden_tab_closes_its_stream_and_reopens_it_when_shown(
        page: Any, ui_server: UiServer) -> None:
    page.goto(ui_server.url + "/dags/live_pipe")
    page.locator("body[data-live='open']").wait_for()

    def visibility(hidden: bool) -> None:
        page.evaluate("""(hidden) => {
          Object.defineProperty(document, "hidden", { value: hidden, configurable: true });
          document.dispatchEvent(new Event("visibilitychange"));
        }""", hidden)

    visibility(True)
    page.locator("body[data-live='paused']").wait_for()
    visibility(False)
    page.locator("body[data-live='open']").wait_for()

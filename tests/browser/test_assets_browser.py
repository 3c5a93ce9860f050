"""The assets page in a real browser: the asset graph (producer DAG → asset → consumer DAG),
the assets table, a DAG's pending condition, and a run's triggering events on its run page.
Names from DAG files are shown as text, never as HTML."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from ui_harness import UiServer

from conftest import _chromium_or_skip
from statewright.api.server import make_server
from statewright.config import load_settings
from statewright.db.engine import make_engine, transaction
from statewright.db.migrate import migrate
from statewright.sdk import DAG, Asset
from statewright.sdk.operators import EmptyOperator
from statewright.services.dag_processor.importer import ImportOutcome
from statewright.services.dag_processor.sync import FileSync
from statewright.services.scheduler.asset_runs import AssetRunCreation

ODD = Asset(name="<b>odd</b>", uri="s3://b/odd")
ORDERS = Asset("s3://b/orders")


@pytest.fixture(scope="module")
def asset_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    _chromium_or_skip()
    home = tmp_path_factory.mktemp("assets-ui")
    settings = load_settings({"STATEWRIGHT_HOME": str(home)})
    engine = make_engine(settings.database_url)
    migrate(engine)
    with DAG("producer", schedule=None) as producer:
        EmptyOperator(task_id="write", outlets=[ORDERS, ODD])
    with DAG("consumer", schedule=[ORDERS]) as consumer:
        EmptyOperator(task_id="read")
    with DAG("waiting", schedule=ORDERS & ODD & Asset("s3://b/never")) as waiting:
        EmptyOperator(task_id="read")
    path = str(home / "dags.py")
    with transaction(engine) as conn:
        FileSync(conn, now=datetime.now(UTC), folder_prefix=str(home), present_files={path},
                 paused_at_creation=False).file(
            path, ImportOutcome(path, dags=[d.serialize() for d in (producer, consumer, waiting)]),
            mtime=0.0, size=0, content_hash="x")
    producer.test(engine=engine)
    AssetRunCreation().create_runs(engine, datetime.now(UTC))
    server = make_server(engine, settings, host="127.0.0.1", port=0)
    thread = server.start_thread()
    deadline = time.monotonic() + 20
    while True:
        try:
            if httpx.get(server.url + "api/v1/health", timeout=2).status_code == 200:
                break
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            pytest.fail("the UI server did not start")
        time.sleep(0.1)
    yield UiServer(server.url.rstrip("/"), engine, "")
    server.stop()
    thread.join(10)
    engine.dispose()


@pytest.fixture
def asset_page(browser_for_assets: Any) -> Iterator[Any]:
    context = browser_for_assets.new_context(viewport={"width": 1400, "height": 900})
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.on("dialog", lambda d: errors.append(f"a dialog opened: {d.message}"))
    yield pg
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


@pytest.fixture(scope="module")
def browser_for_assets(asset_server: UiServer) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    from conftest import CHROMIUM_ARGS

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=_chromium_or_skip(), args=CHROMIUM_ARGS)
        yield b
        b.close()


def test_the_asset_graph_and_tables(asset_page: Any, asset_server: UiServer,
                                    tmp_path: Path) -> None:
    page = asset_page
    page.goto(asset_server.url + "/assets")
    page.locator("#asset-graph svg").wait_for()
    labels = page.locator("#asset-graph svg g.ag-node text").all_text_contents()
    assert {"producer", "consumer", "waiting", "s3://b/orders", "<b>odd</b>"} <= set(labels)
    assert page.locator("#asset-graph svg path.ag-edge").count() >= 5
    assert page.locator("#asset-graph b").count() == 0  # the odd name is text, not markup
    row = page.locator("#asset-table tbody tr", has_text="s3://b/orders")
    assert "producer" in row.inner_text() and "consumer" in row.inner_text()
    waiting = page.locator("#asset-conditions li", has_text="waiting")
    assert "… s3://b/never" in waiting.inner_text() and "✓ s3://b/orders" in waiting.inner_text()
    assert page.locator("#asset-events tbody tr").count() == 2
    page.screenshot(path=str(tmp_path / "assets.png"), full_page=True)
    assert (tmp_path / "assets.png").stat().st_size > 10_000


def test_a_run_page_shows_its_triggering_events(asset_page: Any, asset_server: UiServer) -> None:
    runs = httpx.get(asset_server.url + "/api/v1/dags/consumer/dagRuns").json()["dag_runs"]
    (run,) = runs
    assert run["run_type"] == "asset_triggered"
    asset_page.goto(f"{asset_server.url}/dags/consumer/runs/{quote(run['dag_run_id'], safe='')}")
    box = asset_page.locator("#run-asset-events")
    box.locator("table tbody tr").first.wait_for()
    assert "Triggering asset events (1)" in box.inner_text()
    assert "s3://b/orders" in box.inner_text() and "producer.write" in box.inner_text()

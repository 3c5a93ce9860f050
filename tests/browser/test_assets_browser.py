"""The assets page in a real browser: the asset graph (producer DAG → asset → consumer DAG),
the assets table, a DAG's pending condition, and a run's triggering events on its run page.
Names from DAG files are shown as text, never as HTML."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from tests.browser.conftest import _chromium_or_skip
from ui_harness import UiServer, add_user, serving

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
def ui_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    """This module's server (the shared ``browser`` and ``page`` fixtures use it)."""
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
    headers = add_user(engine, "admin", "admin")
    with serving(engine, settings) as url:
        yield UiServer(url, engine, "", headers)
    engine.dispose()


def test_the_asset_graph_and_tables(page: Any, ui_server: UiServer,
                                    tmp_path: Path) -> None:
    page.goto(ui_server.url + "/assets")
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


def test_a_run_page_shows_its_triggering_events(page: Any, ui_server: UiServer) -> None:
    runs = httpx.get(ui_server.url + "/api/v1/dags/consumer/dagRuns",
                     headers=ui_server.headers).json()["dag_runs"]
    (run,) = runs
    assert run["run_type"] == "asset_triggered"
    page.goto(f"{ui_server.url}/dags/consumer/runs/{quote(run['dag_run_id'], safe='')}")
    box = page.locator("#run-asset-events")
    box.locator("table tbody tr").first.wait_for()
    assert "Triggering asset events (1)" in box.inner_text()
    assert "s3://b/orders" in box.inner_text() and "producer.write" in box.inner_text()

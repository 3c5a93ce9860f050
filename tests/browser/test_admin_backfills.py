"""The Backfills page in a real browser: preview (dry run), create, pause, cancel; errors shown
as the API's words; nothing created by a preview."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
from ui_harness import UiServer

from statewright.core.clock import utcnow
from statewright.db.engine import transaction
from statewright.db.repositories import dags as dag_repo
from statewright.sdk import DAG, EmptyOperator


def _store_nightly(ui_server: UiServer) -> None:
    with DAG("nightly", schedule="@daily", start_date=datetime(2026, 1, 1, tzinfo=UTC)) as dag:
        EmptyOperator(task_id="load")
    with transaction(ui_server.engine) as conn:
        dag_repo.upsert_dag(conn, dag.serialize(), now=utcnow())
        dag_repo.set_paused(conn, "nightly", False)


def _backfills(ui_server: UiServer) -> list[dict[str, Any]]:
    r = httpx.get(ui_server.url + "/api/v1/backfills", headers=ui_server.headers)
    return list(r.json()["backfills"])


def _fill(page: Any, start: str, end: str) -> Any:
    form = page.locator("#backfill-form")
    form.locator("select[name=dag_id]").select_option("nightly")
    form.locator("input[name=from_date]").fill(start)
    form.locator("input[name=to_date]").fill(end)
    form.locator("input[name=max_active_runs]").fill("1")
    return form


def test_preview_create_pause_and_cancel_a_backfill(page: Any, ui_server: UiServer) -> None:
    _store_nightly(ui_server)
    page.goto(ui_server.url + "/backfills")
    page.locator("#backfills").filter(has_text="No backfills yet").wait_for()

    form = _fill(page, "2026-01-03T00:00:00", "2026-01-01T00:00:00")
    form.locator("#backfill-preview").click()
    form.locator(".form-error").filter(has_text="before the start date").wait_for()

    form = _fill(page, "2026-01-01T00:00:00", "2026-01-03T00:00:00")
    form.locator("textarea[name=dag_run_conf]").fill("{nope")
    form.locator("#backfill-preview").click()
    form.locator(".form-error").filter(has_text="dag_run.conf is not valid JSON").wait_for()
    form.locator("textarea[name=dag_run_conf]").fill('{"region": "<b>eu</b>"}')

    form.locator("#backfill-preview").click()
    plan = page.locator("#backfill-plan")
    plan.filter(has_text="3 date(s); 3 would run").wait_for()
    assert plan.locator("tbody tr").count() == 3
    assert "null" not in plan.inner_text()
    assert _backfills(ui_server) == []  # a preview changes nothing

    form.locator("#backfill-create").click()
    row = page.locator("#backfills tbody tr").first
    row.filter(has_text="nightly").wait_for()
    assert "0/3" in row.inner_text() and "running" in row.inner_text()
    [created] = _backfills(ui_server)
    assert created["dag_run_conf"] == {"region": "<b>eu</b>"}
    assert created["max_active_runs"] == 1

    row.locator("button.pause").click()
    row.locator(".op-state", has_text="paused").wait_for()
    assert _backfills(ui_server)[0]["is_paused"] is True

    page.on("dialog", lambda dialog: dialog.accept())
    row.locator("button.cancel").click()
    row.locator(".op-state", has_text="cancelled").wait_for()
    assert row.locator("button").count() == 0
    assert _backfills(ui_server)[0]["completed_at"] is not None

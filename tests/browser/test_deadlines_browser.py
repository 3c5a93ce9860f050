"""A run's deadlines on its page, in Chromium: missed and still ahead."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from playwright.sync_api import expect
from ui_harness import UiServer

from statewright.core.clock import utcnow
from statewright.core.transitions import Actor
from statewright.db.engine import transaction
from statewright.db.repositories import dags as dag_repo
from statewright.sdk import DAG, DeadlineAlert, DeadlineReference, EmptyOperator, SyncCallback
from statewright.services.dag_runs import trigger_dag
from statewright.services.scheduler.deadlines import check_deadlines


def notify(**_: object) -> None:
    """A deadline callback."""


def test_the_run_page_shows_missed_and_pending_deadlines(page: Any, ui_server: UiServer) -> None:
    with DAG("sla_page", deadline=[
        DeadlineAlert(reference=DeadlineReference.DAGRUN_QUEUED_AT,
                      interval=timedelta(minutes=5), callback=SyncCallback(notify)),
        DeadlineAlert(reference=DeadlineReference.DAGRUN_QUEUED_AT,
                      interval=timedelta(days=1), callback=SyncCallback(notify)),
    ]) as dag:
        EmptyOperator(task_id="t")
    now = utcnow()
    with transaction(ui_server.engine) as conn:
        dag_repo.upsert_dag(conn, dag.serialize(), now=now)
        trigger_dag(conn, "sla_page", now=now, actor=Actor.USER, run_id="late <run>")
    assert check_deadlines(ui_server.engine, now + timedelta(minutes=6)) == 1
    page.goto(ui_server.url + "/dags/sla_page/runs/late%20%3Crun%3E")
    rows = page.locator("#deadline-table tbody tr")
    expect(rows).to_have_count(2)
    assert [rows.nth(i).get_attribute("data-status") for i in range(2)] == ["missed", "pending"]
    expect(rows.nth(0)).to_contain_text("missed")
    expect(rows.nth(0)).to_contain_text("DAGRUN_QUEUED_AT")
    expect(rows.nth(1)).to_contain_text("ahead")

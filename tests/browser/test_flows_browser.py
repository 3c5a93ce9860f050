"""Flows in the web UI, in Chromium: a flow run's type mark on the grid, the trigger form built
from the flow function's typed signature (checked before a run exists), and the Resume button
of a crashed durable flow run."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

import httpx
import pytest
from sqlalchemy import select
from ui_harness import UiServer

from statewright.db.tables import dag_run
from statewright.flows import flow, task, use_backend
from statewright.services.flows.recorder import DbBackend


@task
def count(n: int) -> int:
    return n


@flow
def typed_report(days: int = 7, region: Literal["eu", "us"] = "eu", dry_run: bool = False,
                 owner: str = "ops") -> int:
    return count(days)


@flow(durable=True)
def durable_report(days: int = 3) -> int:
    count(days)
    raise KeyboardInterrupt  # its process going down: the run ends Crashed


@pytest.fixture
def recorded(ui_server: UiServer) -> Iterator[None]:
    use_backend(lambda: DbBackend(ui_server.engine, logs_folder=ui_server.logs_folder))
    yield
    use_backend(None)


def test_a_flows_runs_are_marked_and_its_trigger_form_follows_its_signature(
        page: Any, ui_server: UiServer, recorded: None) -> None:
    assert typed_report() == 7
    with ui_server.engine.connect() as conn:
        run_id = conn.execute(select(dag_run.c.run_id).where(
            dag_run.c.dag_id == "typed-report")).scalar()
    page.goto(f"{ui_server.url}/dags/typed-report/runs/{run_id}")
    page.locator("#run-log pre.log").wait_for()
    assert "Finished in state Completed()" in page.inner_text("#run-log")
    page.goto(f"{ui_server.url}/dags/orders/runs/{ui_server.failed_run_id}")  # a DAG run
    page.locator("#tis tbody tr").first.wait_for()
    assert page.locator("#run-log").is_hidden()
    page.goto(ui_server.url + "/dags/typed-report")
    page.locator("table.grid .rt-flow").first.wait_for()
    assert page.locator("table.grid .rt-flow").first.inner_text() == "F"
    page.click("#dag-trigger")
    page.locator("#param-days").wait_for()
    assert page.input_value("#param-days") == "7"
    assert page.locator("#param-region option").all_inner_texts() == ["eu", "us"]
    assert page.locator("#param-dry_run").get_attribute("type") == "checkbox"
    page.fill("#param-days", "2.5")
    page.click("#trigger-submit")
    assert "Some params are not valid" in page.inner_text("#trigger-error")
    refused = httpx.post(f"{ui_server.url}/api/v1/dags/typed-report/dagRuns",
                         json={"conf": {"days": "many"}}, headers=ui_server.headers)
    assert refused.status_code == 400 and "'days'" in refused.json()["detail"]
    with ui_server.engine.connect() as conn:
        runs = conn.execute(select(dag_run.c.id).where(dag_run.c.dag_id == "typed-report")).all()
    assert len(runs) == 1  # nothing was created


def test_a_crashed_durable_run_has_a_resume_button(
        page: Any, ui_server: UiServer, recorded: None) -> None:
    with pytest.raises(KeyboardInterrupt):
        durable_report()
    with ui_server.engine.connect() as conn:
        run = conn.execute(select(dag_run).where(dag_run.c.dag_id == "durable-report")).one()
    assert run.state_name == "Crashed"
    page.goto(f"{ui_server.url}/dags/durable-report/runs/{run.run_id}")
    page.get_by_role("button", name="↻ Resume").click()
    page.get_by_text("resumes: the scheduler starts its flow again").wait_for()
    with ui_server.engine.connect() as conn:
        now = conn.execute(select(dag_run).where(dag_run.c.id == run.id)).one()
    assert (now.state, now.state_name) == ("queued", "Resuming")
    page.locator("#run-state").get_by_text("Resuming").wait_for()

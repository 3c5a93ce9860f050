"""The clear and mark dialogs in a real browser: options, the dry-run preview, then confirm."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx
import pytest
from ui_harness import UiServer, orders_dag


@pytest.fixture
def failed_run(ui_server: UiServer) -> str:
    """A new failed run of ``orders``: check failed, publish upstream_failed."""
    return orders_dag(fail=True).test(engine=ui_server.engine,
                                      logs_folder=ui_server.logs_folder).run_id


@pytest.fixture
def no_native_dialogs(page: Any) -> list[str]:
    seen: list[str] = []
    page.on("dialog", lambda d: (seen.append(d.message), d.dismiss()))
    return seen


def _states(server: UiServer, run_id: str) -> dict[str, str]:
    url = f"{server.url}/api/v1/dags/orders/dagRuns/{quote(run_id, safe='')}/taskInstances"
    tis = httpx.get(url, headers=server.headers).json()["task_instances"]
    return {t["task_id"]: t["state"] for t in tis}


def _preview(page: Any) -> set[tuple[str, str]]:
    rows = page.locator("#control-preview tr.change")
    return {(rows.nth(i).get_attribute("data-run-id"), rows.nth(i).get_attribute("data-task-id"))
            for i in range(rows.count())}


def _wait_preview(page: Any, n: int) -> None:
    page.locator("#control-count").filter(has_text=f"({n} task instance").wait_for()


def test_clear_dialog_previews_with_its_options_then_clears(
        page: Any, ui_server: UiServer, failed_run: str, no_native_dialogs: list[str]) -> None:
    page.goto(f"{ui_server.url}/dags/orders?run_id={quote(failed_run)}&task_id=check")
    page.locator("#panel-state").wait_for()
    page.locator("#panel .panel-actions button", has_text="Clear").click()
    page.locator("#control-dialog").wait_for(state="visible")
    assert page.inner_text("#control-title") == "Clear check"
    assert page.is_checked("#control-options input[name='include_downstream']")
    _wait_preview(page, 2)
    assert _preview(page) == {(failed_run, "check"), (failed_run, "publish")}
    page.uncheck("#control-options input[name='include_downstream']")
    _wait_preview(page, 1)
    assert _preview(page) == {(failed_run, "check")}
    assert "the run" in page.inner_text("#control-preview")  # failed -> queued
    assert _states(ui_server, failed_run) == {"check": "failed", "publish": "upstream_failed"}
    page.check("#control-options input[name='include_downstream']")
    _wait_preview(page, 2)
    page.click("#control-confirm")
    page.locator("#toast.show").wait_for()
    assert page.locator("#control-dialog").is_hidden()
    assert _states(ui_server, failed_run) == {"check": "none", "publish": "none"}
    assert not no_native_dialogs


def test_clear_dialog_with_past_lists_other_runs_and_cancel_changes_nothing(
        page: Any, ui_server: UiServer, failed_run: str) -> None:
    later = orders_dag(fail=True).test(engine=ui_server.engine,
                                       logs_folder=ui_server.logs_folder).run_id
    page.goto(f"{ui_server.url}/dags/orders?run_id={quote(later)}&task_id=check")
    page.locator("#panel-state").wait_for()
    page.locator("#panel .panel-actions button", has_text="Clear").click()
    page.uncheck("#control-options input[name='include_downstream']")
    page.check("#control-options input[name='only_failed']")
    page.check("#control-options input[name='include_past']")
    page.wait_for_function(
        "(id) => [...document.querySelectorAll('#control-preview tr.change')]"
        ".some((r) => r.dataset.runId === id)", arg=failed_run)
    runs = {r for r, _ in _preview(page)}
    assert {failed_run, later} <= runs
    assert all(t == "check" for _, t in _preview(page))
    page.click("#control-cancel")
    assert _states(ui_server, later)["check"] == "failed"
    assert _states(ui_server, failed_run)["check"] == "failed"


def test_mark_dialog_with_upstream_previews_then_marks(
        page: Any, ui_server: UiServer, failed_run: str, no_native_dialogs: list[str]) -> None:
    page.goto(f"{ui_server.url}/dags/orders?run_id={quote(failed_run)}&task_id=publish")
    page.locator("#panel-state").wait_for()
    page.locator("#panel .panel-actions button", has_text="Mark success").click()
    page.locator("#control-dialog").wait_for(state="visible")
    assert page.inner_text("#control-title") == "Mark publish success"
    assert page.locator("#control-options input[name='only_failed']").is_hidden()
    _wait_preview(page, 1)
    page.check("#control-options input[name='include_upstream']")
    _wait_preview(page, 2)
    assert _preview(page) == {(failed_run, "check"), (failed_run, "publish")}
    page.click("#control-confirm")
    page.locator("#toast.show").filter(has_text="marked success").wait_for()
    assert _states(ui_server, failed_run) == {"check": "success", "publish": "success"}
    assert not no_native_dialogs


def test_run_clear_only_failed_and_run_mark_use_dialogs(
        page: Any, ui_server: UiServer, failed_run: str, no_native_dialogs: list[str]) -> None:
    page.goto(f"{ui_server.url}/dags/orders/runs/{quote(failed_run, safe='')}")
    page.locator("#run-actions button", has_text="Clear failed").click()
    page.locator("#control-dialog").wait_for(state="visible")
    assert page.is_checked("#control-options input[name='only_failed']")
    assert page.locator("#control-options input[name='include_past']").is_hidden()
    _wait_preview(page, 2)
    page.click("#control-cancel")
    assert _states(ui_server, failed_run) == {"check": "failed", "publish": "upstream_failed"}

    page.locator("#run-actions button", has_text="Mark success").click()
    page.locator("#control-dialog").wait_for(state="visible")
    assert "Mark success: run" in page.inner_text("#control-title")
    assert "becomes success" in page.inner_text("#control-words")
    page.click("#control-confirm")
    page.locator("#run-state").filter(has_text="Success").wait_for()
    assert _states(ui_server, failed_run) == {"check": "success", "publish": "success"}
    assert not no_native_dialogs

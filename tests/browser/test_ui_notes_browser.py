"""Notes in Chromium: an admin adds and edits the note of a run and of a task instance, the
page shows the note with who wrote it and the history of every version, and so does the DAG
page's task panel; a viewer sees the note and no way to change it. No console error or CSP
violation."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from page_watch import watching
from playwright.sync_api import expect
from ui_harness import UiServer, add_user, orders_dag, sign_in


@pytest.fixture
def watched(page: Any) -> Iterator[Any]:
    page.set_viewport_size({"width": 1440, "height": 900})
    with watching(page):
        yield page


def _history(server: UiServer, path: str) -> list[tuple[str | None, str | None]]:
    body = httpx.get(f"{server.url}/api/v1{path}/noteHistory", headers=server.headers,
                     timeout=30).json()
    return [(n["content"], n["username"]) for n in body["notes"]]


def _write(page: Any, text: str, box: str = "#notes") -> None:
    page.click(f"{box} .note-edit")
    page.fill(f"{box} .note-input", text)
    page.click(f"{box} .note-save")
    expect(page.locator(f"{box} .note-edit")).to_be_visible()


def test_an_admin_writes_and_edits_a_runs_note(watched: Any, ui_server: UiServer) -> None:
    page = watched
    run = quote(ui_server.failed_run_id, safe="")
    page.goto(f"{ui_server.url}/dags/orders/runs/{run}")
    expect(page.locator("#notes .note-edit")).to_have_text("Add a note")
    assert page.locator("#notes").inner_text().split() == [
        "Note", "Add", "a", "note", "No", "note", "on", "this", "run", "yet."]
    _write(page, "The amount column came in empty.\nAsked the vendor.")
    expect(page.locator("#notes .note-text")).to_have_text(
        "The amount column came in empty.\nAsked the vendor.")
    assert page.locator("#notes .note-by").inner_text().startswith("Written by admin, ")
    _write(page, "Vendor re-sent the file.")
    expect(page.locator("#notes .note-text")).to_have_text("Vendor re-sent the file.")
    page.click("#notes .note-history summary")
    entries = page.locator("#notes .note-history .note-entry")
    expect(entries).to_have_count(2)
    assert "Vendor re-sent" in entries.nth(0).inner_text()  # newest first
    assert "came in empty" in entries.nth(1).inner_text()
    assert _history(ui_server, f"/dags/orders/dagRuns/{run}") == [
        ("The amount column came in empty.\nAsked the vendor.", "admin"),
        ("Vendor re-sent the file.", "admin")]
    # a note is text, never markup
    _write(page, "<b>bold</b>")
    expect(page.locator("#notes .note-text")).to_have_text("<b>bold</b>")
    assert page.locator("#notes .note-text b").count() == 0
    # an empty note clears it, and the history says so
    _write(page, "")
    expect(page.locator("#notes .note-edit")).to_have_text("Add a note")
    page.click("#notes .note-history summary")
    expect(page.locator("#notes .note-history .note-entry").first).to_contain_text(
        "cleared the note")


def test_a_task_instances_note_and_a_viewer_who_cannot_write(
        watched: Any, ui_server: UiServer, browser: Any) -> None:
    page = watched
    run = quote(ui_server.failed_run_id, safe="")
    page.goto(f"{ui_server.url}/dags/orders/runs/{run}/tasks/check")
    _write(page, "Fails on purpose: the test data has nulls.")
    expect(page.locator("#notes .note-text")).to_have_text(
        "Fails on purpose: the test data has nulls.")
    assert _history(ui_server, f"/dags/orders/dagRuns/{run}/taskInstances/check") == [
        ("Fails on purpose: the test data has nulls.", "admin")]
    add_user(ui_server.engine, "note_viewer", "viewer")
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        sign_in(context, ui_server, "note_viewer")
        viewer = context.new_page()
        with watching(viewer):
            viewer.goto(f"{ui_server.url}/dags/orders/runs/{run}/tasks/check")
            expect(viewer.locator("#notes .note-text")).to_have_text(
                "Fails on purpose: the test data has nulls.")
            assert viewer.locator("#notes .note-edit").count() == 0
    finally:
        context.close()


def test_the_dag_pages_task_panel_shows_and_writes_the_note(watched: Any,
                                                           ui_server: UiServer) -> None:
    page = watched
    run = quote(ui_server.failed_run_id, safe="")
    page.goto(f"{ui_server.url}/dags/orders?run_id={run}&task_id=publish")
    box = page.locator("#panel .panel-notes")
    expect(box.locator(".note-edit")).to_have_text("Add a note")
    _write(page, "Skipped: upstream failed.", box="#panel .panel-notes")
    expect(box.locator(".note-text")).to_have_text("Skipped: upstream failed.")
    assert _history(ui_server, f"/dags/orders/dagRuns/{run}/taskInstances/publish") == [
        ("Skipped: upstream failed.", "admin")]
    expect(page.locator("#panel .panel-notes")).to_have_count(1)


def test_the_run_page_does_not_move_when_its_note_comes(watched: Any,
                                                        ui_server: UiServer) -> None:
    """The note's box is drawn at once, at an empty note's height: what is below it (the task
    instances, the charts) stays where it was when the (empty) note's history arrives."""
    page = watched
    fresh = orders_dag(fail=False).test(engine=ui_server.engine,
                                        logs_folder=ui_server.logs_folder)  # never noted
    held: list[Any] = []
    page.route("**/noteHistory", lambda route: held.append(route))
    run = quote(str(fresh.run_id), safe="")
    page.goto(f"{ui_server.url}/dags/orders/runs/{run}")
    page.locator("#run-gantt canvas").wait_for()
    page.wait_for_function("() => document.querySelector('#notes').children.length > 0")
    top = "() => document.querySelector('#tis').getBoundingClientRect().top"
    before = page.evaluate(top)
    assert len(held) == 1  # the note is not there yet
    expect(page.locator("#notes .note-edit")).to_have_count(0)
    held[0].continue_()
    expect(page.locator("#notes .note-edit")).to_have_text("Add a note")
    assert page.evaluate(top) == before

"""The trigger dialog's logical date, as in Airflow 3's trigger form: now by default (in the
browser's time zone), the chosen date sent as UTC, and a second run at the same logical date
refused with the server's message; the run id is kept too."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
from playwright.sync_api import expect
from ui_harness import UiServer, sign_in


def test_the_trigger_form_sends_a_logical_date(browser: Any, ui_server: UiServer) -> None:
    context = browser.new_context(viewport={"width": 1400, "height": 900},
                                  timezone_id="Europe/Paris")
    sign_in(context, ui_server, "admin")
    page = context.new_page()
    try:
        # the browser's clock, fixed: the default is "now" as the browser reads it
        page.clock.set_fixed_time(datetime(2025, 7, 1, 8, 30, 15, tzinfo=UTC))
        page.goto(ui_server.url + "/")
        page.click("button[data-trigger='orders']")
        expect(page.locator("#trigger-dialog")).to_be_visible()
        assert page.input_value("#trigger-logical-date") == "2025-07-01T10:30:15"  # Paris, CEST
        expect(page.locator("#trigger-logical-zone")).to_have_text("(your time zone, UTC+02:00)")
        page.fill("#trigger-run-id", "picked_date")
        page.fill("#trigger-logical-date", "2024-03-05T10:00:00")
        page.click("#trigger-submit")
        expect(page.locator("#trigger-dialog")).to_be_hidden()
        run = httpx.get(f"{ui_server.url}/api/v1/dags/orders/dagRuns/picked_date",
                        headers=ui_server.headers).json()
        assert datetime.fromisoformat(run["logical_date"]) == datetime(2024, 3, 5, 9, 0,
                                                                        tzinfo=UTC)
        page.click("button[data-trigger='orders']")
        page.fill("#trigger-logical-date", "2024-03-05T10:00:00")
        page.click("#trigger-submit")
        expect(page.locator("#trigger-error")).not_to_be_empty()
        assert page.locator("#trigger-dialog").is_visible()  # refused: the dialog stays open
        page.fill("#trigger-logical-date", "")  # empty: the server's now
        page.click("#trigger-submit")
        expect(page.locator("#trigger-dialog")).to_be_hidden()
    finally:
        context.close()

"""The connections and variables admin pages in a real browser: passwords are write-only."""

from __future__ import annotations

from typing import Any

import httpx
from ui_harness import UiServer

PASSWORD = "browser-pass-w0rd"


def test_add_a_connection_and_never_see_its_password(page: Any, ui_server: UiServer) -> None:
    page.goto(ui_server.url + "/connections")
    form = page.locator("#connection-form")
    form.locator("input[name=connection_id]").fill("warehouse")
    form.locator("input[name=conn_type]").fill("postgres")
    form.locator("input[name=host]").fill("<b>db.example.org</b>")
    form.locator("input[name=port]").fill("5432")
    form.locator("input[name=password]").fill(PASSWORD)
    form.locator("textarea[name=extra]").fill('{"sslmode": "require"}')
    with page.expect_navigation():
        form.locator("button[type=submit]").click()
    row = page.locator("tr[data-id='warehouse']")
    row.wait_for()
    assert "<b>db.example.org</b>" in row.inner_text()  # shown as text, not as markup
    assert "***" in row.inner_text() and PASSWORD not in page.content()
    stored = httpx.get(ui_server.url + "/api/v1/connections/warehouse",
                       headers=ui_server.headers).json()
    assert stored["has_password"] is True and stored["port"] == 5432

    # saving again without a password keeps the stored one
    form = page.locator("#connection-form")
    form.locator("input[name=connection_id]").fill("warehouse")
    form.locator("input[name=conn_type]").fill("postgres")
    form.locator("input[name=host]").fill("other.example.org")
    with page.expect_navigation():
        form.locator("button[type=submit]").click()
    again = httpx.get(ui_server.url + "/api/v1/connections/warehouse",
                      headers=ui_server.headers).json()
    assert again["host"] == "other.example.org" and again["has_password"] is True

    # bad input is shown as the API's message, nothing stored
    form = page.locator("#connection-form")
    form.locator("input[name=connection_id]").fill("broken")
    form.locator("input[name=conn_type]").fill("postgres")
    form.locator("textarea[name=extra]").fill("{not json")
    form.locator("button[type=submit]").click()
    error = form.locator(".form-error")
    error.filter(has_text="extra is not valid JSON").wait_for()
    assert httpx.get(ui_server.url + "/api/v1/connections/broken",
                     headers=ui_server.headers).status_code == 404

    page.on("dialog", lambda dialog: dialog.accept())
    with page.expect_navigation():
        page.locator("button.delete-connection[data-id='warehouse']").click()
    assert httpx.get(ui_server.url + "/api/v1/connections/warehouse",
                     headers=ui_server.headers).status_code == 404


def test_set_variables_sensitive_ones_are_masked(page: Any, ui_server: UiServer) -> None:
    page.goto(ui_server.url + "/variables")
    for key, value in (("threshold", "10"), ("vendor_token", "tok-browser-1")):
        form = page.locator("#variable-form")
        form.locator("input[name=key]").fill(key)
        form.locator("textarea[name=value]").fill(value)
        with page.expect_navigation():
            form.locator("button[type=submit]").click()
    assert "10" in page.locator("tr[data-key='threshold']").inner_text()
    assert "***" in page.locator("tr[data-key='vendor_token']").inner_text()
    assert "tok-browser-1" not in page.content()

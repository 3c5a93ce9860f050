"""The Pools page in a real browser: add, change and delete a pool with its occupancy bar;
default_pool cannot be deleted; a viewer sees the pools but no form."""

from __future__ import annotations

from typing import Any

import httpx
from ui_harness import UiServer, add_user, sign_in


def _pool(ui_server: UiServer, name: str) -> httpx.Response:
    return httpx.get(f"{ui_server.url}/api/v1/pools/{name}", headers=ui_server.headers)


def test_add_change_and_delete_a_pool(page: Any, ui_server: UiServer) -> None:
    page.goto(ui_server.url + "/pools")
    default = page.locator("tr[data-name='default_pool']")
    default.wait_for()
    assert default.locator("button.delete").count() == 0  # default_pool stays

    form = page.locator("#pool-form")
    form.locator("input[name=name]").fill("warehouse")
    form.locator("input[name=slots]").fill("3")
    form.locator("input[name=description]").fill("<i>the db</i>")
    form.locator("button[type=submit]").click()
    row = page.locator("tr[data-name='warehouse']")
    row.wait_for()
    assert "0/3" in row.inner_text() and "<i>the db</i>" in row.inner_text()
    assert _pool(ui_server, "warehouse").json()["slots"] == 3

    row.locator("button.edit").click()
    assert form.locator("input[name=name]").input_value() == "warehouse"
    assert form.locator("input[name=description]").input_value() == "<i>the db</i>"
    form.locator("input[name=slots]").fill("5")
    form.locator("input[name=description]").fill("")
    form.locator("input[name=include_deferred]").check()
    form.locator("button[type=submit]").click()
    row.filter(has_text="0/5").wait_for()
    changed = _pool(ui_server, "warehouse").json()
    assert changed["include_deferred"] is True and not changed["description"]

    form.locator("input[name=name]").fill("   ")
    form.locator("input[name=slots]").fill("1")
    form.locator("button[type=submit]").click()
    form.locator(".form-error").filter(has_text="pool name must be").wait_for()

    page.on("dialog", lambda dialog: dialog.accept())
    row.locator("button.delete").click()
    row.wait_for(state="detached")
    assert _pool(ui_server, "warehouse").status_code == 404


def test_a_viewer_sees_pools_without_the_form(browser: Any, ui_server: UiServer) -> None:
    add_user(ui_server.engine, "pool_viewer", "viewer")
    context = browser.new_context()
    sign_in(context, ui_server, "pool_viewer")
    page = context.new_page()
    try:
        page.goto(ui_server.url + "/pools")
        page.locator("tr[data-name='default_pool']").wait_for()
        assert page.locator("#pool-form").count() == 0
        assert page.locator("button.edit").count() == 0
    finally:
        context.close()

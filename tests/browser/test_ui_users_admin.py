"""The users and roles page, driven in the browser by an admin: add a user, change its role,
deactivate and reactivate it; every role is listed with what it may do."""

from __future__ import annotations

from typing import Any

import httpx
from playwright.sync_api import expect
from ui_harness import UiServer


def _user(ui_server: UiServer, username: str) -> dict[str, Any]:
    users = httpx.get(f"{ui_server.url}/api/v1/users", headers=ui_server.headers).json()["users"]
    return next(u for u in users if u["username"] == username)


def test_an_admin_adds_changes_and_deactivates_a_user(page: Any, ui_server: UiServer) -> None:
    page.goto(ui_server.url + "/users")
    roles = page.eval_on_selector_all("#roles tr[data-role]", "rs => rs.map(r => r.dataset.role)")
    assert roles == ["viewer", "operator", "admin"]
    may = page.locator("#roles tr[data-role='admin'] li").all_text_contents()
    assert any("Manage users" in m for m in may) and len(may) == 4
    assert page.locator("#roles tr[data-role='viewer'] li").count() == 2

    page.click("#user-create-open")
    page.fill("#user-new-name", "nina")
    page.fill("#user-new-password", "short")
    page.click("#user-create-submit")
    expect(page.locator("#user-create-error")).to_contain_text("too short")
    page.fill("#user-new-password", "a-long-password")
    page.select_option("#user-new-role", "operator")
    page.click("#user-create-submit")
    row = page.locator("#users tr[data-username='nina']")
    row.wait_for()
    assert _user(ui_server, "nina")["role"] == "operator"

    page.click("#user-create-open")  # a taken name: the server's message, the dialog stays
    page.fill("#user-new-name", "nina")
    page.fill("#user-new-password", "a-long-password")
    page.click("#user-create-submit")
    expect(page.locator("#user-create-error")).to_contain_text("exists already")
    page.click("#user-create-cancel")

    with page.expect_navigation():
        page.select_option("#users .role-select[data-username='nina']", "viewer")
    expect(page.locator("#users tr[data-username='nina'] .pill.role")).to_have_text("viewer")
    assert _user(ui_server, "nina")["role"] == "viewer"

    with page.expect_navigation():
        page.click("#users .user-active[data-username='nina']")
    expect(page.locator("#users tr[data-username='nina'] .status")).to_have_text("deactivated")
    assert _user(ui_server, "nina")["active"] is False
    assert httpx.post(f"{ui_server.url}/api/v1/auth/token", json={
        "username": "nina", "password": "a-long-password"}).status_code == 401
    with page.expect_navigation():
        page.click("#users .user-active[data-username='nina']")
    expect(page.locator("#users tr[data-username='nina'] .status")).to_have_text("active")
    assert _user(ui_server, "nina")["active"] is True

    page.select_option("#users .role-select[data-username='admin']", "viewer")  # the only admin
    expect(page.locator("#users-error")).to_contain_text("only admin")
    assert page.locator("#users .role-select[data-username='admin']").input_value() == "admin"

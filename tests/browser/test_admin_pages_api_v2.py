"""The admin pages write through Airflow's /api/v2 (connections, variables, pools): what the
browser sends, and a variable saved again is replaced (PATCH) rather than refused as existing."""

from __future__ import annotations

from typing import Any

import httpx
from ui_harness import UiServer


def _writes(page: Any) -> list[str]:
    """The method and path of every API call the page makes that is not a GET."""
    sent: list[str] = []
    page.on("request", lambda r: sent.append(f"{r.method} {r.url.split('/', 3)[3]}")
            if "/api/" in r.url and r.method != "GET" else None)
    return sent


def test_a_variable_saved_twice_is_replaced_through_api_v2(page: Any,
                                                           ui_server: UiServer) -> None:
    sent = _writes(page)
    page.goto(ui_server.url + "/variables")
    for value in ("first", "second"):
        form = page.locator("#variable-form")
        form.locator("input[name=key]").fill("v2_saved_twice")
        form.locator("textarea[name=value]").fill(value)
        with page.expect_navigation():
            form.locator("button[type=submit]").click()
    assert "second" in page.locator("tr[data-key='v2_saved_twice']").inner_text()
    assert sent == ["POST api/v2/variables", "PATCH api/v2/variables/v2_saved_twice"]
    stored = httpx.get(ui_server.url + "/api/v2/variables/v2_saved_twice",
                       headers=ui_server.headers).json()
    assert stored["value"] == "second"
    page.on("dialog", lambda dialog: dialog.accept())
    with page.expect_navigation():
        page.locator("button.delete-variable[data-key='v2_saved_twice']").click()
    assert sent[-1] == "DELETE api/v2/variables/v2_saved_twice"


def test_connections_and_pools_are_written_through_api_v2(page: Any,
                                                          ui_server: UiServer) -> None:
    sent = _writes(page)
    page.goto(ui_server.url + "/connections")
    form = page.locator("#connection-form")
    form.locator("input[name=connection_id]").fill("v2_conn")
    form.locator("input[name=conn_type]").fill("http")
    with page.expect_navigation():
        form.locator("button[type=submit]").click()
    page.locator("tr[data-id='v2_conn']").wait_for()
    assert sent == ["POST api/v2/connections"]

    page.goto(ui_server.url + "/pools")
    form = page.locator("#pool-form")
    form.locator("input[name=name]").fill("v2_pool")
    form.locator("input[name=slots]").fill("2")
    form.locator("button[type=submit]").click()
    page.locator("tr[data-name='v2_pool']").filter(has_text="0/2").wait_for()
    assert sent[-1] == "POST api/v2/pools"
    page.on("dialog", lambda dialog: dialog.accept())
    page.locator("tr[data-name='v2_pool'] button.delete").click()
    page.locator("tr[data-name='v2_pool']").wait_for(state="detached")
    assert sent[-1] == "DELETE api/v2/pools/v2_pool"
    assert httpx.get(ui_server.url + "/api/v2/pools/v2_pool",
                     headers=ui_server.headers).status_code == 404

"""The DAG list's filters (owner, last run state, paused, favourites: kept in the URL) and its
stars (kept per user on the server), and dark mode: the system's choice, or the user menu's
toggle kept in localStorage; read from the computed colours of several pages."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlparse

from ui_harness import UiServer


def _rows(page: Any) -> list[str]:
    return page.eval_on_selector_all("#dag-rows tr[data-dag-id]",
                                     "rs => rs.map(r => r.dataset.dagId)")


_PRESSED = ("(want) => document.querySelector(\"button[data-favorite='orders']\")"
            ".getAttribute('aria-pressed') === want")


def test_filters_stay_in_the_url_and_stars_are_kept(page: Any, ui_server: UiServer) -> None:
    page.goto(ui_server.url + "/")
    page.locator("#dag-rows tr[data-dag-id='orders']").wait_for()
    star = page.locator("button[data-favorite='orders']")
    assert star.get_attribute("aria-pressed") == "false"
    star.click()
    page.wait_for_function(_PRESSED, arg="true")
    page.select_option("#filter-favorite", "true")
    page.wait_for_url("**favorite=true**")
    assert _rows(page) == ["orders"]
    page.reload()  # the star is the server's, not the page's
    assert page.locator("button[data-favorite='orders']").get_attribute("aria-pressed") == "true"
    page.select_option("#filter-favorite", "false")
    page.wait_for_url("**favorite=false**")
    assert "orders" not in _rows(page)
    # the newest run of orders failed: the state filter finds it, "success" does not
    page.goto(ui_server.url + "/?last_run_state=failed")
    assert _rows(page) == ["orders"]
    assert page.locator("#filter-last-run-state").input_value() == "failed"
    page.select_option("#filter-last-run-state", "success")
    page.wait_for_url("**last_run_state=success**")
    assert _rows(page) == []
    # owner: every filter kept in the URL together
    page.goto(ui_server.url + "/?owner=nobody-owns-this&paused=false")
    assert _rows(page) == []
    page.select_option("#filter-paused", "true")
    page.wait_for_url("**paused=true**")
    query = parse_qs(urlparse(page.url).query)
    assert query["owner"] == ["nobody-owns-this"] and query["paused"] == ["true"]
    page.goto(ui_server.url + "/")
    page.locator("button[data-favorite='orders']").click()
    page.wait_for_function(_PRESSED, arg="false")


_COLOURS = """() => {
  const bg = (sel) => {
    const n = document.querySelector(sel); return n && getComputedStyle(n).backgroundColor; };
  const luma = (c) => {
    const [r, g, b] = c.match(/[0-9.]+/g).map(Number); return 0.2126*r + 0.7152*g + 0.0722*b; };
  const body = getComputedStyle(document.body);
  return { body: luma(body.backgroundColor), ink: luma(body.color),
           card: document.querySelector('.table, .panel, .grid-wrap') ?
             luma(bg('.table, .panel, .grid-wrap')) : null,
           success: bg('.logo .s-success'), failed: bg('.logo .s-failed'),
           theme: document.documentElement.dataset.theme || 'auto' };
}"""


def _pages(ui_server: UiServer) -> list[str]:
    return ["/", "/dags/orders", f"/dags/orders/runs/{ui_server.failed_run_id}", "/pools",
            "/users"]


def _context(browser: Any, ui_server: UiServer, scheme: str) -> Any:
    from ui_harness import sign_in

    context = browser.new_context(viewport={"width": 1400, "height": 900}, color_scheme=scheme)
    sign_in(context, ui_server, "admin")
    return context


def _every_page_reads(page: Any, ui_server: UiServer, dark: bool) -> None:
    for path in _pages(ui_server):
        page.goto(ui_server.url + path)
        c = page.evaluate(_COLOURS)
        if dark:  # light text on a dark ground
            assert c["body"] < 60 and c["ink"] > 180, (path, c)
            assert c["card"] is None or c["card"] < 80, (path, c)
        else:
            assert c["body"] > 200 and c["ink"] < 80, (path, c)
        assert c["success"] != c["failed"]  # the state colours stay apart


def test_dark_mode_follows_the_system_and_the_toggle(browser: Any, ui_server: UiServer) -> None:
    context = _context(browser, ui_server, "dark")
    page = context.new_page()
    try:
        _every_page_reads(page, ui_server, dark=True)
        page.goto(ui_server.url + "/")
        toggle = page.locator("#theme-toggle")
        assert toggle.get_attribute("data-mode") == "auto"
        toggle.click()  # auto → light, whatever the system says
        assert page.evaluate(_COLOURS)["body"] > 200
        page.goto(ui_server.url + "/pools")  # kept across pages (localStorage)
        c = page.evaluate(_COLOURS)
        assert c["theme"] == "light" and c["body"] > 200 and c["ink"] < 80
        page.locator("#theme-toggle").click()  # light → dark
        assert page.evaluate(_COLOURS)["body"] < 60
        page.locator("#theme-toggle").click()  # dark → auto: the system's (dark) again
        assert page.evaluate("localStorage.getItem('statewright-theme')") is None
    finally:
        context.close()
    light = _context(browser, ui_server, "light")
    page = light.new_page()
    try:
        _every_page_reads(page, ui_server, dark=False)
        page.evaluate("localStorage.setItem('statewright-theme', 'dark')")
        page.goto(ui_server.url + "/")
        assert page.evaluate(_COLOURS)["body"] < 60  # the stored choice beats the system's
    finally:
        light.close()
